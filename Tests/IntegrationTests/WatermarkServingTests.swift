// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Watermarks through the whole service: a named one from `image.watermarks`, one from a URL fetched through the
    /// same guarded fetcher as sources. grid.png (300x300, 3x3 cells) under quadrants.png (64x48).
    @Suite(.timeLimit(.minutes(2))) struct WatermarkServingTests {
        static func harness() throws -> Harness {
            let directory = try TempDirectory(prefix: "thumbd-watermark")
            let mark = directory.appending("mark.png")
            try Data(Fixtures.bytes("quadrants.png")).write(to: URL(fileURLWithPath: mark))
            return try Harness(["image.watermarks": "[\"logo=\(mark)\"]"], directory: directory)
        }

        @Test func aNamedWatermarkIsLaidOverTheThumbnail() async throws {
            let harness = try Self.harness()
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let response = try await harness.request(
                harness.thumbTarget("/grid.png", "w=300&format=png&wm=logo&wm_pos=northwest&wm_x=10&wm_y=20"))
            #expect(response.status == 200)
            let image = try response.image()
            // The mark's red quadrant at (10, 20) + (16, 12); the grid around it
            #expect(image.colour(x: 26, y: 32).isClose(to: Fixtures.red, tolerance: 8))
            #expect(image.colour(x: 5, y: 5).isClose(to: Fixtures.grid[0][0], tolerance: 8))
            // An unknown name is a 400 naming wm
            let unknown = try await harness.request(harness.thumbTarget("/grid.png", "w=300&wm=nope"))
            expectJSONError(unknown, status: 400, mentioning: "wm")
        }

        @Test func aWatermarkURLIsFetchedOnceThroughTheGuard() async throws {
            let harness = try Harness()
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            harness.origin.route("/mark.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let mark = Harness.percentEncoded(harness.origin.url("/mark.png"))
            // Two sizes with the same mark URL: each mark in its corner, the mark fetched once (then a recent source)
            for width in [300, 150] {
                let response = try await harness.request(
                    harness.thumbTarget("/grid.png", "w=\(width)&format=png&wm_url=\(mark)&wm_pos=southeast"))
                #expect(response.status == 200)
                let image = try response.image()
                #expect(image.colour(x: width - 64 + 48, y: width - 48 + 36).isClose(to: Fixtures.yellow, tolerance: 8))
            }
            #expect(harness.origin.hits("/mark.png") == 1)

            // A mark the guard refuses (loopback 127.0.0.1 is outside fetch.allowed_networks) is a 403, fetched never
            let forbidden = Harness.percentEncoded("http://127.0.0.1:\(harness.port)/x.png")
            let refused = try await harness.request(harness.thumbTarget("/grid.png", "w=100&wm_url=\(forbidden)"))
            expectJSONError(refused, status: 403, mentioning: "watermark not allowed")
            // A mark the origin does not have is a 502 about the watermark
            let missing = Harness.percentEncoded(harness.origin.url("/missing.png"))
            harness.origin.route("/missing.png", .status(404))
            let absent = try await harness.request(harness.thumbTarget("/grid.png", "w=100&wm_url=\(missing)"))
            expectJSONError(absent, status: 502, mentioning: "watermark unavailable")
            // And the service goes on
            #expect(try await harness.request(harness.thumbTarget("/grid.png", "w=100")).status == 200)
        }
    }
}
