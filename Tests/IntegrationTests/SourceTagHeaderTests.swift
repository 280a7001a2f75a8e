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
            // and a disk hit once memory is emptied (after the disk thread has written every one)
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == targets.count })
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

        @Test func operatorTagsFollowTheSourceTagStayOutOfTheKeyAndAPurgeByOneFindsTheSource() async throws {
            // Given the header on (Surrogate-Key: spaces between tags), an admin token, and a photo
            let harness = try Harness(Self.on.merging(["admin.token": PurgeTests.token]) { $1 })
            harness.origin.route("/tagged.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let own = try Self.tag(harness, "/tagged.png")

            // When it is asked with operator tags, then with others, then with none, then with the first ones again
            let first = try await harness.request(harness.thumbTarget("/tagged.png", "w=32&tags=product-7,home.page"))
            let other = try await harness.request(harness.thumbTarget("/tagged.png", "w=32&tags=sale:2026&max_age=60"))
            let none = try await harness.request(harness.thumbTarget("/tagged.png", "w=32"))
            let again = try await harness.request(harness.thumbTarget("/tagged.png", "w=32&tags=product-7,home.page"))

            // Then each answer carries the source's tag and its own tags after it, and all four are one cache entry
            #expect(first.header("x-cache") == "MISS")
            #expect(first.header("surrogate-key") == "\(own) product-7 home.page")
            #expect(other.header("x-cache") == "HIT-MEMORY")
            #expect(other.header("surrogate-key") == "\(own) sale:2026")
            #expect(other.header("cache-control") == "public, max-age=60")
            #expect(none.header("x-cache") == "HIT-MEMORY" && none.header("surrogate-key") == own)
            #expect(again.header("x-cache") == "HIT-MEMORY")
            #expect(again.header("surrogate-key") == "\(own) product-7 home.page")
            #expect(first.body == none.body)

            // When the source is purged by one operator tag
            let purged = try await PurgeTests.purge(harness, "{\"tags\": [\"sale:2026\"]}")

            // Then that finds it, and its thumbnail goes
            #expect(
                (purged["sources"] as? [[String: String]])?.map { $0["url"] } == [harness.origin.url("/tagged.png")])
            #expect((purged["purged"] as? [String: Int])?["memory"] == 1)
            let after = try await harness.request(harness.thumbTarget("/tagged.png", "w=32&tags=home.page"))
            #expect(after.header("x-cache") == "MISS")
            // and the tags it is asked with from then on are recorded afresh
            let byHome = try await PurgeTests.purge(harness, "{\"tags\": [\"home.page\"]}")
            #expect((byHome["purged"] as? [String: Int])?["memory"] == 1)
        }

        @Test func aPresetCanCarryOperatorTagsAndTheRequestsOwnReplaceThem() async throws {
            // Given a preset that tags its thumbnails
            let harness = try PresetServingTests.harness(["card": "\"w=40&tags=cards,catalogue\""], Self.on)
            harness.origin.route("/p.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let own = try Self.tag(harness, "/p.png")
            // When it is asked through the preset, then with tags of the request's own
            let preset = try await harness.request(harness.thumbTarget("/p.png", "preset=card"))
            let own2 = try await harness.request(harness.thumbTarget("/p.png", "preset=card&tags=front"))
            // Then the preset's tags follow the source's, and the request's replace them (as any preset value)
            #expect(preset.header("surrogate-key") == "\(own) cards catalogue")
            #expect(own2.header("surrogate-key") == "\(own) front")
            #expect(own2.header("x-cache") == "HIT-MEMORY")
        }

        @Test func operatorTagsAreCheckedAndCommaSeparatedForCacheTag() async throws {
            // Given the header named Cache-Tag (Cloudflare: commas between tags)
            let harness = try Harness(["cache.tag_header": "Cache-Tag"])
            harness.origin.route("/c.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let own = try Self.tag(harness, "/c.png")
            let answer = try await harness.request(harness.thumbTarget("/c.png", "w=16&tags=a,b,a"))
            #expect(answer.header("cache-tag") == "\(own),a,b")

            // And tags that are not tags are refused, each naming what was wrong
            let nine = (1...9).map { "t\($0)" }.joined(separator: ",")
            let cases: [(String, String)] = [
                ("tags=" + nine, "at most 8 tags"),
                ("tags=a%20b", "A-Z a-z 0-9 - _ . :"),
                ("tags=a,,b", "1...64 bytes"),
                ("tags=" + String(repeating: "x", count: 65), "1...64 bytes"),
                ("tags=s0123456789abcdef", "shape of a source tag"),
            ]
            for (parameters, mention) in cases {
                let refused = try await harness.request(harness.thumbTarget("/c.png", "w=16&" + parameters))
                expectJSONError(refused, status: 400, mentioning: mention)
            }
        }
    }
}
