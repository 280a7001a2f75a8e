// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// Two spellings of one plan through a real server (FrontDoorTests.Fixture: real fetcher, render thread, libvips):
/// one origin fetch, one render, and the second spelling answered from memory.
@Suite(.timeLimit(.minutes(1))) struct PlanSpellingTests {
    @Test func twoSpellingsOfOnePlanAreOneFetchOneRenderAndAHit() throws {
        // Given a source and one plan written two ways (order, defaults written out, centre/center, 0.5/0.50,
        // a vertical flip as a half turn and a mirror, padding shorthand, colour case)
        let fixture = try FrontDoorTests.Fixture()
        fixture.origin.route("/p.png", .ok(Fixtures.bytes("quadrants.png")))
        let url = FrontDoorTests.percentEncoded(fixture.origin.url("/p.png"))
        let first =
            "/thumb?url=\(url)&w=40&h=40&fit=pad&gravity=centre&flip=v&blur=0.5&padding=2&bg=FF00FF&crop=0,0,64,48"
        let second =
            "/thumb?bg=ff00ff&padding=2,2,2,2&rotate=180&flip=h&crop=0,0,64,48&blur=0.50&gravity=center&fit=pad"
            + "&autorotate=1&contrast=1&h=40&w=40&url=\(url)"

        // When both are asked
        let outcomes = try fixture.xCache([first, second])

        // Then the second is the first's render, from memory
        #expect(outcomes == ["MISS", "HIT-MEMORY"])
        #expect(fixture.origin.hits("/p.png") == 1)
        #expect(fixture.coordinator.counters.rendersStarted == 1)
    }

    @Test func thePlanReachesThePixels() throws {
        // Given the quadrants turned 90° through /thumb
        let fixture = try FrontDoorTests.Fixture()
        fixture.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png")))
        let url = FrontDoorTests.percentEncoded(fixture.origin.url("/q.png"))
        let client = try RawHTTPClient(port: try #require(fixture.server.port))
        defer { client.close() }
        try client.send("GET /thumb?url=\(url)&w=48&h=64&rotate=90&format=png HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        // Then the picture is portrait with red top-right
        let image = try DecodedImage(decoding: response.body)
        #expect(image.width == 48 && image.height == 64)
        #expect(image.colour(x: 36, y: 16).isClose(to: Fixtures.red))
        #expect(image.colour(x: 12, y: 16).isClose(to: Fixtures.blue))
    }

    @Test func theFrameBombIs422InUnderFiveSeconds() throws {
        let fixture = try FrontDoorTests.Fixture()
        fixture.origin.route("/bomb.gif", .ok(Fixtures.bytes("frame-bomb.gif")))
        let url = FrontDoorTests.percentEncoded(fixture.origin.url("/bomb.gif"))
        let client = try RawHTTPClient(port: try #require(fixture.server.port))
        defer { client.close() }
        let started = ContinuousClock.now
        try client.send("GET /thumb?url=\(url)&w=200 HTTP/1.1\r\nHost: t\r\nAccept: image/webp\r\n\r\n")
        let refused = try client.readResponse()
        #expect(refused.status == 422)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("source has too many frames"))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func aCropOutsideThePictureIs422AndTheServerGoesOn() throws {
        let fixture = try FrontDoorTests.Fixture()
        fixture.origin.route("/r.png", .ok(Fixtures.bytes("quadrants.png")))
        let url = FrontDoorTests.percentEncoded(fixture.origin.url("/r.png"))
        let client = try RawHTTPClient(port: try #require(fixture.server.port))
        defer { client.close() }
        try client.send("GET /thumb?url=\(url)&w=10&crop=100,100,10,10 HTTP/1.1\r\nHost: t\r\n\r\n")
        let refused = try client.readResponse()
        #expect(refused.status == 422)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("crop region lies outside the image"))
        try client.send("GET /thumb?url=\(url)&w=10&crop=10,10,10,10 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }

    /// A plan that redacts faces whose render has no detection fails, naming `redact`, and is not cached: the picture
    /// is never answered unredacted. (This fixture's coordinator has no detector, as a service with `image.faces`
    /// off or its cascade unreadable.)
    @Test func redactWithoutFaceDetectionIs503AndNeverThePicture() throws {
        let fixture = try FrontDoorTests.Fixture()
        fixture.origin.route("/f.png", .ok(Fixtures.bytes("grid.png")))
        let url = FrontDoorTests.percentEncoded(fixture.origin.url("/f.png"))
        let client = try RawHTTPClient(port: try #require(fixture.server.port))
        defer { client.close() }
        for _ in 0..<2 {
            try client.send("GET /thumb?url=\(url)&w=100&redact=faces HTTP/1.1\r\nHost: t\r\n\r\n")
            let refused = try client.readResponse()
            #expect(refused.status == 503)
            #expect(
                String(decoding: refused.body, as: UTF8.self)
                    == "{\"status\": 503, \"error\": \"redact: face detection is off (image.faces)\"}")
        }
        // The same picture without redact renders.
        try client.send("GET /thumb?url=\(url)&w=100 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
    }
}
