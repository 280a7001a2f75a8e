// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `image.placeholder_header`: every thumbnail answer (every URL form, every tier) carries its source's BlurHash
    /// and average colour, equal to what `/info?analysis=1` answers for the source; off, none does.
    @Suite(.timeLimit(.minutes(2))) struct PlaceholderHeaderTests {
        static let on = [
            "image.placeholder_header": "true", "imgproxy.enabled": "true", "thumbor.enabled": "true",
            "thumbor.allow_unsafe": "true",
        ]

        /// The header `/info?analysis=1` says the thumbnails of `path` should carry.
        static func expected(_ harness: Harness, _ path: String) async throws -> String {
            let (_, answer) = try await AnalysisTests.info(harness, path)
            let analysis = try #require(answer.analysis)
            #expect(analysis.average_colour.hasPrefix("#") && analysis.average_colour.count == 7)
            return "blurhash=\"\(analysis.blurhash)\", colour=\"\(analysis.average_colour)\""
        }

        static func targets(_ harness: Harness, _ path: String) -> [String] {
            let source = Harness.percentEncoded(harness.origin.url(path))
            let host = "\(originHost):\(harness.origin.port)"
            return [
                "/thumb?url=\(source)&w=40", "/thumb?url=\(source)&w=120&h=90&fit=cover",
                "/thumb?url=\(source)&w=300&format=png", "/thumb?url=\(source)&w=16&h=16",
                "/thumb?url=\(source)&w=200&h=200&fit=contain",
                "/thumbor/unsafe/100x100/\(host)\(path)", "/imgproxy/_/rs:fit:64:64/plain/\(source)",
            ]
        }

        @Test func everySizeAndFormCarriesTheSourcesPlaceholderFromEveryTier() async throws {
            // Given the header on and a photo at the origin
            let harness = try Harness(Self.on)
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))

            // When it is asked at five sizes through /thumb and through thumbor's and imgproxy's forms (misses:
            // the record is made before each answer)
            var misses: [String: String] = [:]
            for target in Self.targets(harness, "/photo.jpg") {
                let answer = try await harness.request(target)
                #expect(answer.status == 200, "\(target): \(answer.text.prefix(200))")
                #expect(answer.header("x-cache") == "MISS", "\(target)")
                misses[target] = answer.header("x-thumbd-placeholder")
            }

            // Then every answer carries /info's BlurHash and average colour, one analysis for all
            let expected = try await Self.expected(harness, "/photo.jpg")
            for target in Self.targets(harness, "/photo.jpg") {
                #expect(misses[target] == expected, "\(target)")
            }
            #expect(try await AnalysisTests.analyses(harness, "made") == 1)
            #expect(harness.origin.hits("/photo.jpg") == 1)

            // and so do memory hits and the hot set's copies (the second and third identical request)
            let target = Self.targets(harness, "/photo.jpg")[0]
            let memory = try await harness.request(target)
            #expect(memory.header("x-cache") == "HIT-MEMORY")
            #expect(memory.header("x-thumbd-placeholder") == expected)
            let hot = try await HotSetTests.hotHit(harness, target)
            #expect(hot.header("x-thumbd-placeholder") == expected)
            let hotAgain = try await HotSetTests.hotHit(harness, target)
            #expect(hotAgain.header("x-thumbd-placeholder") == expected)
        }

        @Test func aDiskHitAfterARestartCarriesIt() async throws {
            // Given thumbnails rendered with the header on, and the service stopped
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let directory = try TempDirectory(prefix: "thumbd-placeholder")
            var first: Harness? = try Harness(Self.on, directory: directory, origin: origin)
            let targets = Self.targets(try #require(first), "/photo.jpg")
            let rendered = try await #require(first).request(targets[1])
            let expected = try await Self.expected(try #require(first), "/photo.jpg")
            #expect(rendered.header("x-thumbd-placeholder") == expected)
            try await first?.stop()
            first = nil

            // When a new process on the same cache answers them from disk, then from memory
            let second = try Harness(Self.on, directory: directory, origin: origin)
            let fromDisk = try await second.request(targets[1])
            let fromMemory = try await second.request(targets[1])

            // Then both carry the header the disk's record gives, and the origin is not asked again
            #expect(fromDisk.header("x-cache") == "HIT-DISK")
            #expect(fromDisk.header("x-thumbd-placeholder") == expected)
            #expect(fromMemory.header("x-cache") == "HIT-MEMORY")
            #expect(fromMemory.header("x-thumbd-placeholder") == expected)
            #expect(origin.hits("/photo.jpg") == 1)
            #expect(try await AnalysisTests.analyses(second, "made") == 0)
        }

        @Test func newBytesAtTheOriginGetTheNewPlaceholder() async throws {
            // Given a source that may be kept one second, rendered with the header on
            let harness = try Harness(Self.on.merging(["cache.min_ttl": "0s"]) { _, new in new })
            let maxAge = [LoopbackOrigin.Header("Cache-Control", "max-age=1")]
            harness.origin.route(
                "/swap.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png", headers: maxAge))
            let target = harness.thumbTarget("/swap.png", "w=100")
            let before = try await harness.request(target)
            #expect(before.header("x-thumbd-placeholder") == (try await Self.expected(harness, "/swap.png")))

            // When the origin answers other bytes once it has expired, and the thumbnail is asked until the new
            // bytes' variant answers
            harness.origin.route(
                "/swap.png", .ok(Fixtures.bytes("rgba.png"), contentType: "image/png", headers: maxAge))
            try await Task.sleep(for: .milliseconds(1300))
            var after = try await harness.request(target)
            for _ in 0..<50 where after.header("etag") == before.header("etag") {
                try await Task.sleep(for: .milliseconds(50))
                after = try await harness.request(target)
            }
            #expect(after.header("etag") != before.header("etag"))

            // Then the new variant carries the new bytes' record, the one /info answers now
            let (_, answer) = try await AnalysisTests.info(harness, "/swap.png")
            let analysis = try #require(answer.analysis)
            #expect(
                after.header("x-thumbd-placeholder")
                    == "blurhash=\"\(analysis.blurhash)\", colour=\"\(analysis.average_colour)\"")
            #expect(try await AnalysisTests.analyses(harness, "made") == 2)
        }

        @Test func offNoAnswerCarriesIt() async throws {
            let harness = try Harness(Self.on.merging(["image.placeholder_header": "false"]) { _, new in new })
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let targets = Self.targets(harness, "/photo.jpg")
            for target in targets + [targets[0], targets[0], targets[0]] {
                let answer = try await harness.request(target)
                #expect(answer.status == 200)
                #expect(answer.header("x-thumbd-placeholder") == nil, "\(target)")
            }
            _ = try await Self.expected(harness, "/photo.jpg")
            #expect(try await harness.request(targets[0]).header("x-thumbd-placeholder") == nil)
        }
    }
}
