// SPDX-License-Identifier: Apache-2.0
import Foundation
import OriginFetch
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `POST /purge` and the purge a changed source triggers, through whole services on moto's S3 server with its
    /// signature checks on: what the answer counts is what went, in memory, on disk and in the bucket (listed by
    /// boto3, not by thumbd), and other sources stay.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct PurgeTests {
        static let token = AdminRoutesTests.token
        static var authorized: [(String, String)] { AdminRoutesTests.authorized }

        static func overrides(_ moto: MotoServer, credentials: String, _ extra: [String: String] = [:]) -> [String:
            String]
        {
            SharedTierTests.overrides(moto, credentials: credentials, ["admin.token": token].merging(extra) { $1 })
        }

        /// The shared tier's objects of `url` (under its source prefix), by key, with their SHA-256.
        static func objects(_ moto: MotoServer, of url: String) async throws -> [String: String] {
            let prefix = SharedTier.sourcePrefix(try SourceURL(url), prefix: "test/")
            return try await blocking { try moto.objects(bucket: SharedTierTests.bucket, prefix: prefix) }
        }

        static func purge(_ harness: Harness, _ body: String) async throws -> [String: Any] {
            let response = try await harness.request("/purge", method: "POST", headers: authorized, body: body)
            #expect(response.status == 200, "body: \(response.text)")
            #expect(response.header("content-type") == "application/json")
            return AdminRoutesTests.json(response) ?? [:]
        }

        @Test func purgeByTagThenBySourceThenByPrefixRemovesWhatWasStoredInEveryTierAndNothingElse() async throws {
            let moto = try await blocking { try MotoServer(buckets: [SharedTierTests.bucket]) }
            let (keep, credentials) = try SharedTierTests.credentials(moto)
            // Given one node with a shared tier: two sizes of source A, one of source B, rendered and shared
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/a.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            origin.route("/b.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let harness = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let targetsA = [32, 16].map { harness.thumbTarget("/a.png", "w=\($0)&format=png") }
            let targetB = harness.thumbTarget("/b.png", "w=32&format=png")
            for target in targetsA + [targetB] {
                #expect(try await harness.request(target).header("x-cache") == "MISS")
            }
            // (two originals and three thumbnails written)
            #expect(SharedTierTests.settled(harness, stored: 5))
            let urlA = origin.url("/a.png")
            let urlB = origin.url("/b.png")
            #expect(try await Self.objects(moto, of: urlA).count == 3)
            #expect(try await Self.objects(moto, of: urlB).count == 2)
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 3 })

            // When A is purged by its source tag
            let tagA = SourceTag.of(try SourceURL(urlA))
            let byTag = try await Self.purge(harness, "{\"tags\": [\"\(tagA)\"]}")

            // Then the answer counts its two thumbnails in memory and on disk, its original, its three objects
            let counts = byTag["purged"] as? [String: Int]
            #expect(counts == ["memory": 2, "disk": 2, "sources": 1, "analyses": 0, "shared": 3, "shared_errors": 0])
            #expect(byTag["truncated"] as? Bool == false)
            let listed = byTag["sources"] as? [[String: String]]
            #expect(listed == [["url": urlA, "tag": tagA]])
            // and they are gone from the bucket, while B's are all there
            #expect(try await Self.objects(moto, of: urlA).isEmpty)
            #expect(try await Self.objects(moto, of: urlB).count == 2)
            // and from disk; B is still a memory hit, A renders again from a new fetch
            #expect(variants.statistics.currentEntries == 1)
            #expect(try await harness.request(targetB).header("x-cache") == "HIT-MEMORY")
            let fetchesOfA = origin.hits("/a.png")
            let again = try await harness.request(targetsA[0])
            #expect(again.header("x-cache") == "MISS")
            #expect(origin.hits("/a.png") == fetchesOfA + 1)
            #expect(
                try DecodedImage(decoding: again.body).mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24))
                    == nil)

            // When B is purged by its URL
            #expect(SharedTierTests.settled(harness, stored: 7))
            let bySource = try await Self.purge(harness, "{\"sources\": [\"\(urlB)\"]}")

            // Then its thumbnail, original and two objects go; A's new ones stay
            #expect(
                bySource["purged"] as? [String: Int]
                    == ["memory": 1, "disk": 1, "sources": 1, "analyses": 0, "shared": 2, "shared_errors": 0])
            #expect(try await Self.objects(moto, of: urlB).isEmpty)
            #expect(try await Self.objects(moto, of: urlA).count == 2)

            // When every source under the origin's root is purged by prefix
            let byPrefix = try await Self.purge(harness, "{\"prefixes\": [\"\(origin.url("/"))\"]}")

            // Then only A is left to find (B's index rows went with its purge), and then nothing is in the bucket
            #expect((byPrefix["sources"] as? [[String: String]])?.map { $0["url"] } == [urlA])
            #expect((byPrefix["purged"] as? [String: Int])?["shared"] == 2)
            let left = try await blocking {
                try moto.objects(bucket: SharedTierTests.bucket, prefix: "test/")
            }
            #expect(left.isEmpty, "left: \(left)")
            // and the counters say so
            let counters = harness.service.purger.counters
            #expect(counters.purges[.tag] == 1 && counters.purges[.source] == 1 && counters.purges[.prefix] == 1)
            #expect(counters.sharedObjects == 7)
            withExtendedLifetime(keep) {}
        }

        @Test func aChangedSourceIsPurgedEverywhereAndEverySizeRendersTheNewPixels() async throws {
            let moto = try await blocking { try MotoServer(buckets: [SharedTierTests.bucket]) }
            let (keep, credentials) = try SharedTierTests.credentials(moto)
            // Given two sizes of a source kept one second (ETag "v1"), shared with its original
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            let path = "/changing.png"
            origin.route(
                path,
                CacheFreshnessTests.conditional(
                    cacheControl: "max-age=1", body: Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let harness = try Harness(
                Self.overrides(moto, credentials: credentials, ["cache.min_ttl": "0s"]), origin: origin)
            let targets = [30, 15].map { harness.thumbTarget(path, "w=\($0)&format=png") }
            var oldDigests: Set<String> = []
            for target in targets {
                let first = try await harness.request(target)
                #expect(first.header("x-cache") == "MISS")
                oldDigests.insert(SharedObject.sha256Hex(first.body))
            }
            #expect(SharedTierTests.settled(harness, stored: 3))
            let url = origin.url(path)
            let stored = try await Self.objects(moto, of: url)
            #expect(stored.count == 3)
            oldDigests.insert(SharedObject.sha256Hex(Fixtures.bytes("quadrants.png")))
            #expect(Set(stored.values) == oldDigests)

            // When the origin's picture changes (grid.png, ETag "v2") and the thumbnails have expired
            origin.route(path, CacheFreshnessTests.changedSource)
            try await Task.sleep(for: CacheFreshnessTests.pastOneSecondLifetime)

            // Then the revalidation of one size purges the source: that size comes back with the new pixels
            let renewed = try #require(
                try await CacheFreshnessTests.poll(harness, targets[0]) { response in
                    (try? DecodedImage(decoding: response.body))?.height == 30
                })
            let cell = 30 / 3
            let gridProbes = (0..<3).flatMap { row in
                (0..<3).map { column in
                    (x: column * cell + cell / 2, y: row * cell + cell / 2, colour: Fixtures.grid[row][column])
                }
            }
            #expect(try DecodedImage(decoding: renewed.body).mismatch(in: gridProbes) == nil)
            #expect(harness.service.purger.counters.purges[.changed] == 1)
            // and the other size, never asked since, is rendered from the new bytes too (not served stale)
            let other = try await harness.request(targets[1])
            #expect(
                other.status == 200 && other.header("x-cache") == "MISS", "x-cache: \(other.header("x-cache") ?? "-")")
            let otherImage = try DecodedImage(decoding: other.body)
            #expect(otherImage.width == 15 && otherImage.height == 15)
            #expect(
                otherImage.mismatch(in: [
                    (x: 2, y: 2, colour: Fixtures.grid[0][0]), (x: 12, y: 12, colour: Fixtures.grid[2][2]),
                ]) == nil)

            // And the shared tier holds no object of the old bytes
            // (the new 15 px thumbnail written; the revalidated one is not shared by a revalidation)
            #expect(SharedTierTests.settled(harness, stored: 4))
            let now = try await Self.objects(moto, of: url)
            #expect(!now.isEmpty)
            #expect(Set(now.values).isDisjoint(with: oldDigests), "objects: \(now)")
            withExtendedLifetime(keep) {}
        }

        @Test func aSharedHitCarriesTheSourceTagHeader() async throws {
            let moto = try await blocking { try MotoServer(buckets: [SharedTierTests.bucket]) }
            let (keep, credentials) = try SharedTierTests.credentials(moto)
            // Given node A rendering with cache.tag_header on, and node B on its own disk
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/tagged.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let extra = ["cache.tag_header": "Cache-Tag"]
            let nodeA = try Harness(Self.overrides(moto, credentials: credentials, extra), origin: origin)
            let nodeB = try Harness(Self.overrides(moto, credentials: credentials, extra), origin: origin)
            let target = nodeA.thumbTarget("/tagged.png", "w=32&format=png")
            let expected = SourceTag.of(try SourceURL(origin.url("/tagged.png")))
            #expect(try await nodeA.request(target).header("cache-tag") == expected)
            #expect(SharedTierTests.settled(nodeA, stored: 2))

            // When node B answers it from the shared tier
            let shared = try await nodeB.request(target)

            // Then the answer carries the tag too
            #expect(shared.header("x-cache") == "HIT-SHARED")
            #expect(shared.header("cache-tag") == expected)
            withExtendedLifetime(keep) {}
        }

        @Test func aPurgeIsPushedToTheWebhookWithItsTokenAndTriedAgainUntilTheWebhookAnswers() async throws {
            // Given a webhook that fails (503) and a service that pushes purges to it with a token
            let hooks = try LoopbackOrigin(host: "127.0.0.1")
            defer { hooks.stop() }
            hooks.route("/hook", .respond(status: 503, headers: [], body: []))
            let webhookToken = "hook-token-0123456789"
            let harness = try Harness([
                "admin.token": Self.token, "cache.purge.webhook": hooks.url("/hook"),
                "cache.purge.webhook_token": webhookToken,
            ])
            let notifier = try #require(harness.service.purger.notifier)

            // When two tags are purged (no source stored under them: the tags themselves are pushed)
            _ = try await Self.purge(harness, "{\"tags\": [\"product-7\", \"home.page\"]}")

            // Then the webhook is asked, refuses, and is asked again (after 0.5 s) with the same batch
            #expect(await eventually(timeout: .seconds(10)) { notifier.counters.retries["webhook"] ?? 0 >= 1 })
            #expect(notifier.counters.sent["webhook"] == nil)
            hooks.route("/hook", .ok(Array("{}".utf8), contentType: "application/json"))
            #expect(await eventually(timeout: .seconds(10)) { notifier.counters.sent["webhook"] == 1 })
            let posts = hooks.requests.filter { $0.method == "POST" && $0.path == "/hook" }
            #expect(posts.count == (notifier.counters.retries["webhook"] ?? 0) + 1)
            for post in posts {
                #expect(post.headers["authorization"] == "Bearer \(webhookToken)")
                #expect(post.headers["content-type"] == "application/json")
                let body = try JSONSerialization.jsonObject(with: Data(post.body)) as? [String: [String]]
                #expect(body == ["tags": ["product-7", "home.page"], "urls": []])
            }
            let counters = notifier.counters
            #expect(counters.tagsSent["webhook"] == 2 && counters.pendingTags["webhook"] == 0)
            #expect(counters.failedTags["webhook"] == nil && counters.droppedTags["webhook"] == nil)
            // and /metrics says so
            let metrics = try await harness.request("/metrics").text
            #expect(metrics.contains("thumbd_purge_pushes_total{endpoint=\"webhook\"} 1"))
            #expect(metrics.contains("thumbd_purge_pushed_tags_total{endpoint=\"webhook\"} 2"))
        }

        @Test func aWebhookThatNeverAnswersHoldsAtMostTheQueueAndTheRestIsDroppedAndCounted() async throws {
            // Given a webhook that never answers, and a queue of two tags
            let hooks = try LoopbackOrigin(host: "127.0.0.1")
            defer { hooks.stop() }
            hooks.route("/hook", .hang)
            let harness = try Harness([
                "admin.token": Self.token, "cache.purge.webhook": hooks.url("/hook"), "cache.purge.queue_limit": "2",
                "cache.purge.timeout": "30s",
            ])
            let notifier = try #require(harness.service.purger.notifier)

            // When five tags are purged at once, then three more while the first push hangs
            _ = try await Self.purge(harness, "{\"tags\": [\"a\", \"b\", \"c\", \"d\", \"e\"]}")
            #expect(await eventually(timeout: .seconds(10)) { hooks.requests.count == 1 })
            _ = try await Self.purge(harness, "{\"tags\": [\"f\", \"g\", \"h\"]}")

            // Then two went into the push under way, two wait, and four were dropped and counted
            let counters = notifier.counters
            #expect(counters.droppedTags["webhook"] == 4)
            #expect(counters.pendingTags["webhook"] == 4)
            let body = try JSONSerialization.jsonObject(with: Data(hooks.requests[0].body)) as? [String: [String]]
            #expect(body?["tags"] == ["a", "b"])
        }

        @Test func purgeAnswers404WithoutAdmin403WithoutTheTokenAnd400NamingWhatIsWrong() async throws {
            // Given a service without admin.token: the route does not exist
            let off = try Harness.shared()
            expectJSONError(
                try await off.request("/purge", method: "POST", headers: Self.authorized, body: "{\"tags\": [\"a\"]}"),
                status: 404)

            // Given one with a token: without it, or with another, 403
            let harness = try Harness(["admin.token": Self.token])
            for headers in [[], [("Authorization", "Bearer wrong-token-0123456789")]] {
                expectJSONError(
                    try await harness.request("/purge", method: "POST", headers: headers, body: "{\"tags\": [\"a\"]}"),
                    status: 403)
            }

            // And bad bodies are refused, each naming what was wrong
            let tooMany = "[" + (0...100).map { "\"t\($0)\"" }.joined(separator: ",") + "]"
            let long = String(repeating: "x", count: 65)
            let cases: [(String, String)] = [
                ("not json", "JSON object"),
                ("{}", "nothing to purge"),
                ("{\"urls\": []}", "unknown field \"urls\""),
                ("{\"tags\": \"a\"}", "tags must be an array of strings"),
                ("{\"tags\": [\"has space\"]}", "tags: \"has space\" has a character outside"),
                ("{\"tags\": [\"\(long)\"]}", "longer than 64 bytes"),
                ("{\"tags\": [\"\"]}", "a tag is empty"),
                ("{\"tags\": \(tooMany)}", "tags has 101 entries, at most 100"),
                ("{\"sources\": [\"ftp://example.com/a.jpg\"]}", "sources: \"ftp://example.com/a.jpg\" is not"),
                ("{\"prefixes\": [\"https://example.com\"]}", "prefixes: \"https://example.com\" must be"),
                ("{\"prefixes\": [\"example.com/\"]}", "prefixes: \"example.com/\" must be"),
            ]
            for (body, mention) in cases {
                let response = try await harness.request("/purge", method: "POST", headers: Self.authorized, body: body)
                expectJSONError(response, status: 400, mentioning: mention)
            }
        }
    }
}
