// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Foundation
import Logging
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

extension Integration {
    /// The fallback image (`image.fallback`) through the whole service: sent, rendered with the request's plan,
    /// instead of the error body for source errors (404, 413, 422, 502, 504) with the error's status by default,
    /// never for request errors or overload, never stored as the source's variant (a fixed origin is seen at once).
    @Suite(.timeLimit(.minutes(2))) struct FallbackTests {
        /// `grey.png`: 64x48, left half grey 40, right half grey 200 (nothing like the quadrants).
        static let dark = RGB(40, 40, 40)
        static let light = RGB(200, 200, 200)

        /// A service whose fallback is `grey.png` (a copy in its directory, so a test can replace it), with
        /// `overrides`.
        static func harness(_ overrides: [String: String] = [:]) throws -> Harness {
            let directory = try TempDirectory(prefix: "thumbd-fallback")
            let fallback = directory.appending("fallback.png")
            try Data(Fixtures.bytes("grey.png")).write(to: URL(fileURLWithPath: fallback))
            var values = ["image.fallback": fallback, "cache.negative_ttl": "0"]
            values.merge(overrides) { _, new in new }
            return try Harness(values, directory: directory)
        }

        /// Checks that `response` is the fallback: its pixels at `width`x`height`, no ETag, `X-Cache: FALLBACK`.
        static func expectFallback(
            _ response: RawHTTPClient.Response, status: Int, reason: String, width: Int, height: Int,
            format: String = "image/png", sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
            #expect(response.header("content-type") == format, sourceLocation: sourceLocation)
            #expect(response.header("x-cache") == "FALLBACK", sourceLocation: sourceLocation)
            #expect(response.header("x-thumbd-fallback") == reason, sourceLocation: sourceLocation)
            #expect(response.header("etag") == nil, sourceLocation: sourceLocation)
            let image = try response.image()
            #expect(image.mimeType == format, sourceLocation: sourceLocation)
            #expect(image.width == width && image.height == height, sourceLocation: sourceLocation)
            let probes = [(width / 4, height / 2, dark), (width * 3 / 4, height / 2, light)]
            #expect(image.mismatch(in: probes) == nil, sourceLocation: sourceLocation)
        }

        @Test func aMissingSourceGetsTheFallbackWithItsPlanAndAFixedOriginGetsTheRealImage() async throws {
            // Given a fallback image and a source the origin does not have
            let harness = try Self.harness()
            harness.origin.route("/a.png", .status(404))
            let target = harness.thumbTarget("/a.png", "w=32&h=24&format=png")

            // When it is asked twice
            let first = try await harness.request(target)
            let second = try await harness.request(target)

            // Then both are the fallback rendered 32x24 PNG, with the original status, the fallback's
            // Cache-Control and the reason; and the origin was asked each time (nothing stored as the variant)
            try Self.expectFallback(first, status: 404, reason: "404 source not found", width: 32, height: 24)
            #expect(first.header("cache-control") == "public, max-age=60")
            try Self.expectFallback(second, status: 404, reason: "404 source not found", width: 32, height: 24)
            #expect(harness.origin.hits("/a.png") == 2)
            // (and the fallback was rendered once for this plan)
            #expect(harness.service.thumbnails.fallback?.renderCount == 1)

            // When the origin gets the image
            harness.origin.route("/a.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let fixed = try await harness.request(target)
            let again = try await harness.request(target)

            // Then the real picture is rendered and cached as usual
            #expect(fixed.status == 200 && fixed.header("x-cache") == "MISS")
            #expect(try fixed.image().mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24)) == nil)
            #expect(fixed.header("cache-control") == "public, max-age=31536000")
            #expect(again.header("x-cache") == "HIT-MEMORY" && again.body == fixed.body)
        }

        @Test func eachSourceErrorClassGetsTheFallbackWithItsOwnStatus() async throws {
            // Given a fallback, a 1 s fetch timeout, and sources that fail in each way
            let harness = try Self.harness(["fetch.timeout": "1s", "fetch.connect_timeout": "1s"])
            harness.origin.route("/page", .ok(Fixtures.bytes("page.html"), contentType: "text/html"))
            harness.origin.route("/broken.jpg", .ok(Fixtures.bytes("truncated.jpg")))
            harness.origin.route("/bomb.png", .ok(Fixtures.bytes("bomb.png"), contentType: "image/png"))
            harness.origin.route("/error", .status(500))
            harness.origin.route("/gone", .status(410))
            harness.origin.route("/hang", .hang)
            let refusing = try RefusingPort()

            // When each is asked with one plan
            func ask(_ target: String) async throws -> RawHTTPClient.Response {
                try await harness.request(target, timeout: .seconds(20))
            }
            let cases: [(target: String, status: Int, reason: String)] = [
                (harness.thumbTarget("/page", "w=20&h=10&format=png&fit=fill"), 422, "422 source is not an image"),
                (
                    harness.thumbTarget("/broken.jpg", "w=20&h=10&format=png&fit=fill"), 422,
                    "422 source image is damaged"
                ),
                (
                    harness.thumbTarget("/bomb.png", "w=20&h=10&format=png&fit=fill"), 422,
                    "422 source has too many pixels"
                ),
                (harness.thumbTarget("/error", "w=20&h=10&format=png&fit=fill"), 502, "502 source failed"),
                (harness.thumbTarget("/gone", "w=20&h=10&format=png&fit=fill"), 404, "404 source not found"),
                (
                    Harness.thumbTarget(
                        url: "http://\(originHost):\(refusing.port)/x.png", "w=20&h=10&format=png&fit=fill"),
                    502, "502 source unreachable"
                ),
                (harness.thumbTarget("/hang", "w=20&h=10&format=png&fit=fill"), 504, "504 source timed out"),
            ]
            for (target, status, reason) in cases {
                let response = try await ask(target)
                // Then each is the fallback, 20x10 as asked (fill), with the error's status and reason
                try Self.expectFallback(response, status: status, reason: reason, width: 20, height: 10)
            }
            // And the one plan was rendered from the fallback once, then answered from its copy
            #expect(harness.service.thumbnails.fallback?.renderCount == 1)
        }

        @Test func aFixedStatusAndTTLAndTheNegotiatedFormatApply() async throws {
            // Given fallback_status 200 and a 5 minute TTL
            let harness = try Self.harness(["image.fallback_status": "200", "image.fallback_ttl": "5m"])
            harness.origin.route("/a.png", .status(404))

            // When a browser that accepts WebP asks without a format, by GET and by HEAD
            let target = harness.thumbTarget("/a.png", "w=40")
            let response = try await harness.request(target, headers: [("Accept", "image/webp,*/*")])
            let head = try await harness.request(target, method: "HEAD", headers: [("Accept", "image/webp,*/*")])

            // Then it is a 200 WebP (40x30, the fallback's aspect ratio), varying on Accept, kept 5 minutes
            try Self.expectFallback(
                response, status: 200, reason: "404 source not found", width: 40, height: 30, format: "image/webp")
            #expect(response.header("cache-control") == "public, max-age=300")
            #expect(response.header("vary") == "Accept")
            // And HEAD has the same head and no body
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.header("content-length") == String(response.body.count))
            #expect(head.header("x-cache") == "FALLBACK")
        }

        @Test func requestErrorsForbiddenSourcesAndPlanErrorsKeepTheirJSONError() async throws {
            // Given a fallback
            let harness = try Self.harness()
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))

            // When a request is malformed, its source is forbidden, or its plan does not fit the source
            let bad = try await harness.request(harness.thumbTarget("/q.png", "w=abc"))
            let forbidden = try await harness.request(Harness.thumbTarget(url: "http://127.0.0.1:9/a.png"))
            let crop = try await harness.request(harness.thumbTarget("/q.png", "w=20&crop=500,500,10,10"))

            // Then each is the usual JSON error, never the picture
            expectJSONError(bad, status: 400, mentioning: "w")
            expectJSONError(forbidden, status: 403, mentioning: "source not allowed")
            expectJSONError(crop, status: 422, mentioning: "crop region")
            #expect(harness.service.thumbnails.fallback?.renderCount == 0)
        }

        @Test func whenTheFallbackCannotBeRenderedTheOriginalErrorIsAnsweredNotA503() async throws {
            // Given one render thread that is busy and a queue of one that is full, and a missing source
            let harness = try Self.harness(["image.render_threads": "1", "image.queue_limit": "1"])
            harness.origin.route("/a.png", .status(404))
            let release = DispatchSemaphore(value: 0)
            defer {
                release.signal()
                release.signal()
            }
            let pool = harness.service.renderPool
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            #expect(await eventually { pool.runningCount == 1 })
            try pool.submit { _ = release.wait(timeout: .now() + 30) }

            // When the missing source is asked, and the fallback's render is refused by the full queue
            let response = try await harness.request(harness.thumbTarget("/a.png", "w=20&format=png"))

            // Then the answer is the source's own error, not an overload error and not an unrendered picture
            expectJSONError(response, status: 404, mentioning: "source not found")
            #expect(response.header("x-cache") == "MISS")
        }

        @Test func aRememberedNotFoundGetsTheFallbackToo() async throws {
            // Given a fallback and origin 404s remembered for a minute
            let harness = try Self.harness(["cache.negative_ttl": "1m"])
            harness.origin.route("/a.png", .status(404))
            let target = harness.thumbTarget("/a.png", "w=16&h=12&format=png")

            // When the missing source is asked twice
            let first = try await harness.request(target)
            let second = try await harness.request(target)

            // Then the second comes from the remembered 404 (no fetch), with the fallback all the same
            try Self.expectFallback(first, status: 404, reason: "404 source not found", width: 16, height: 12)
            try Self.expectFallback(second, status: 404, reason: "404 source not found", width: 16, height: 12)
            #expect(harness.origin.hits("/a.png") == 1)
        }

        @Test func aReloadReadsANewFileUnderTheSamePathAndABadOneIsRefused() async throws {
            // Given a service with the grey fallback
            let logs = LogRecorder()
            let directory = try TempDirectory(prefix: "thumbd-fallback-reload")
            let fallback = directory.appending("fallback.png")
            try Data(Fixtures.bytes("grey.png")).write(to: URL(fileURLWithPath: fallback))
            let harness = try Harness(
                ["image.fallback": fallback, "cache.negative_ttl": "0"], directory: directory, logs: logs)
            harness.origin.route("/a.png", .status(404))
            let target = harness.thumbTarget("/a.png", "w=32&h=24&format=png")
            try Self.expectFallback(
                try await harness.request(target), status: 404, reason: "404 source not found", width: 32, height: 24)
            let path = directory.appending("thumbd.yaml")
            let file = ConfigFile(path: path, environment: [:])

            // When the file under the same path becomes the quadrants and the configuration is reloaded
            try Data(Fixtures.bytes("quadrants.png")).write(to: URL(fileURLWithPath: fallback), options: .atomic)
            let outcome = harness.service.reload(from: file)

            // Then the reload reports the fallback as changed, and the next answer is the new picture
            #expect(outcome?.changedKeys == ["image.fallback"])
            let renewed = try await harness.request(target)
            #expect(renewed.status == 404 && renewed.header("x-cache") == "FALLBACK")
            #expect(try renewed.image().mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24)) == nil)

            // When the file is replaced by something that is not an image
            try Data(Fixtures.bytes("page.html")).write(to: URL(fileURLWithPath: fallback), options: .atomic)

            // Then the reload is refused naming the key, and the quadrants stay
            #expect(harness.service.reload(from: file) == nil)
            let warning = try #require(logs.matching("config reload refused", atLeast: .warning).last)
            #expect(warning.metadata["key"] == "image.fallback")
            let kept = try await harness.request(target)
            #expect(try kept.image().mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24)) == nil)
        }

        @Test func aServiceWithABadFallbackDoesNotStart() throws {
            // Given a configuration whose fallback is an HTML page
            let directory = try TempDirectory(prefix: "thumbd-fallback-bad")
            let path = directory.appending("thumbd.yaml")
            var values = Harness.baseConfiguration
            values["cache.disk.path"] = directory.appending("cache")
            values["image.fallback"] = Fixtures.url("page.html").path
            try Data(Harness.yaml(values).utf8).write(to: URL(fileURLWithPath: path))
            let settings = try ConfigFile(path: path, environment: [:]).load()

            // When the service is built, then it refuses with a configuration error naming the key
            #expect(throws: SettingsError.self) {
                _ = try ThumbdService(
                    settings: settings, logger: .init(label: "test") { _ in SwiftLogNoOpLogHandler() })
            }
        }
    }
}
