// SPDX-License-Identifier: Apache-2.0
import Foundation
import OriginFetch
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `cache.tag_header`: every thumbnail answer (every URL form, misses and every kind of hit) and `/info` carry the
    /// source's tag in the header the operator names; off, none does. (The shared tier's hits: `PurgeTests`.)
    @Suite(.timeLimit(.minutes(2))) struct SourceTagHeaderTests {
        static let on = [
            "cache.tag_header": "Surrogate-Key", "imgproxy.enabled": "true", "thumbor.enabled": "true",
            "thumbor.allow_unsafe": "true",
        ]

        static func tag(_ harness: Harness, _ path: String) throws -> String {
            SourceTag.of(try SourceURL(harness.origin.url(path)))
        }

        @Test func everyFormAndEveryHitCarriesTheSourceTagAndInfoToo() async throws {
            // Given the header on and a photo at the origin
            let harness = try Harness(Self.on)
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let expected = try Self.tag(harness, "/photo.jpg")
            #expect(SourceTag.isSourceTag(expected))

            // When it is asked at five sizes through /thumb, thumbor's and imgproxy's forms (misses)
            let targets = PlaceholderHeaderTests.targets(harness, "/photo.jpg")
            for target in targets {
                let answer = try await harness.request(target)
                #expect(answer.status == 200 && answer.header("x-cache") == "MISS", "\(target)")
                // Then each carries the tag
                #expect(answer.header("surrogate-key") == expected, "\(target)")
            }
            // and so do memory hits (every form) and the hot set's copies
            for target in targets {
                let memory = try await harness.request(target)
                #expect(memory.header("x-cache") == "HIT-MEMORY", "\(target)")
                #expect(memory.header("surrogate-key") == expected, "\(target)")
            }
            let hot = try await HotSetTests.hotHit(harness, targets[0])
            #expect(hot.header("surrogate-key") == expected)
            // and a disk hit once memory is emptied
            _ = harness.service.cache.trimMemory(toBytes: 0)
            let disk = try await harness.request(targets[1])
            #expect(disk.header("x-cache") == "HIT-DISK")
            #expect(disk.header("surrogate-key") == expected)
            // and /info, computed and prepared
            let (info, _) = try await AnalysisTests.info(harness, "/photo.jpg")
            #expect(info.header("surrogate-key") == expected)
            let (preparedInfo, _) = try await AnalysisTests.info(harness, "/photo.jpg")
            #expect(preparedInfo.header("surrogate-key") == expected)
            // while another source carries its own
            harness.origin.route("/other.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let other = try await harness.request(harness.thumbTarget("/other.jpg", "w=40"))
            #expect(other.header("surrogate-key") == (try Self.tag(harness, "/other.jpg")))
            #expect(other.header("surrogate-key") != expected)
        }

        @Test func withTheMemoryTierOffAnOpenBlobHitCarriesIt() async throws {
            let harness = try Harness(Self.on.merging(["cache.memory.max_bytes": "0"]) { _, new in new })
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/photo.jpg", "w=40")
            let expected = try Self.tag(harness, "/photo.jpg")
            #expect(try await harness.request(target).header("surrogate-key") == expected)
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })
            for _ in 0..<3 {
                let disk = try await harness.request(target)
                #expect(disk.header("x-cache") == "HIT-DISK")
                #expect(disk.header("surrogate-key") == expected)
            }
        }

        @Test func offNoAnswerCarriesIt() async throws {
            let harness = try Harness(Self.on.merging(["cache.tag_header": ""]) { _, new in new })
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let targets = PlaceholderHeaderTests.targets(harness, "/photo.jpg")
            for target in targets + [targets[0], targets[0], targets[0]] {
                let answer = try await harness.request(target)
                #expect(answer.status == 200)
                #expect(answer.header("surrogate-key") == nil, "\(target)")
                #expect(answer.header("cache-tag") == nil, "\(target)")
            }
            let (info, _) = try await AnalysisTests.info(harness, "/photo.jpg")
            #expect(info.header("surrogate-key") == nil)
        }

        @Test func aHeaderNameThatIsNotOneStopsTheStart() throws {
            for bad in ["Surrogate Key", "-Tag", "Cache-Tag:", String(repeating: "x", count: 65)] {
                #expect(throws: (any Error).self, "\(bad)") {
                    _ = try Harness(["cache.tag_header": bad])
                }
            }
        }
    }
}
