// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// The shared tier (`cache.shared`) and `s3://` sources against moto's S3 server with its signature checks on
    /// (``MotoServer``): two whole services on separate disks share one bucket, with one counting origin. Every
    /// request to moto is signed by libcurl (`CURLOPT_AWS_SIGV4`) on the fetch thread; a wrong secret is refused by
    /// moto itself.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct SharedTierTests {
        static let bucket = "shared"
        static let sourceBucket = "photos"

        /// The keys a node of the shared tier adds to the base configuration. The sources' analysis records, which a
        /// render writes to the tier after its answer, are off: these tests count the writes of thumbnails and
        /// originals (`analysesTravelBetweenNodes` turns them on).
        static func overrides(_ moto: MotoServer, credentials: String, _ extra: [String: String] = [:]) -> [String:
            String]
        {
            [
                "image.analysis": "false",
                "s3.endpoint": moto.endpoint,
                "s3.credentials_file": credentials,
                "s3.source_buckets": "[\(sourceBucket)]",
                "cache.shared.enabled": "true",
                "cache.shared.bucket": bucket,
                "cache.shared.prefix": "test/",
                "cache.shared.breaker_failures": "3",
                "cache.shared.breaker_pause": "30s",
            ].merging(extra) { _, new in new }
        }

        static func credentials(_ moto: MotoServer, secret: String? = nil) throws -> (TempDirectory, String) {
            let directory = try TempDirectory(prefix: "thumbd-s3-credentials")
            let path = directory.appending("credentials")
            try moto.writeCredentials(to: path, secret: secret)
            return (directory, path)
        }

        /// Waits until `harness` has no write to the shared tier under way and has made at least `stored` (stored
        /// or already there).
        static func settled(_ harness: Harness, stored: Int) -> Bool {
            waitUntil(timeout: .seconds(20)) {
                guard let counters = harness.service.sharedTier?.counters else { return false }
                return counters.putsUnderWay == 0
                    && (counters.puts[.stored] ?? 0) + (counters.puts[.exists] ?? 0) >= stored
            }
        }

        @Test func aThumbnailRenderedByOneNodeIsAnotherNodesSharedHitAndItsOriginalServesOtherSizes() async throws {
            let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
            let (keep, credentials) = try Self.credentials(moto)
            // Given node A and node B on their own disks, one bucket, one counting origin
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/shared.jpg", .ok(Fixtures.orientation(1), contentType: "image/jpeg"))
            let nodeA = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let nodeB = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let target = nodeA.thumbTarget("/shared.jpg", "w=32&format=png")

            // When node A renders a thumbnail and has written it (and its original) to the shared tier
            let first = try await nodeA.request(target)
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            #expect(Self.settled(nodeA, stored: 2))
            let stored = try #require(nodeA.service.sharedTier?.counters)
            #expect(stored.puts[.stored] == 2)
            #expect(stored.lookups(.variant, .miss) == 1 && stored.lookups(.source, .miss) == 1)

            // Then node B answers it from the shared tier: the same bytes, no render, no origin fetch
            let second = try await nodeB.request(target)
            #expect(second.status == 200)
            #expect(second.header("x-cache") == "HIT-SHARED")
            #expect(second.body == first.body)
            #expect(second.header("etag") == first.header("etag"))
            #expect(nodeB.service.renderCounters.rendersStarted == 0)
            #expect(origin.hits("/shared.jpg") == 1)
            // and promotes it: the next ask is a memory hit, without a second lookup
            let third = try await nodeB.request(target)
            #expect(third.header("x-cache") == "HIT-MEMORY")
            #expect(nodeB.service.sharedTier?.counters.lookups(.variant, .hit) == 1)

            // When node B is asked another size of that source
            let other = try await nodeB.request(nodeB.thumbTarget("/shared.jpg", "w=16&format=png"))

            // Then it renders from the shared original: still one origin fetch
            #expect(other.status == 200 && other.header("x-cache") == "MISS")
            let image = try DecodedImage(decoding: other.body)
            #expect(image.width == 16 && image.height == 12)
            #expect(origin.hits("/shared.jpg") == 1)
            #expect(nodeB.service.sharedTier?.counters.lookups(.source, .hit) == 1)
            #expect(nodeB.service.renderCounters.rendersStarted == 1)
            // and /status.json says so (two hits: the thumbnail and the original; one miss: the 16 px thumbnail)
            let status = try await nodeB.request("/status.json")
            let report = try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any]
            let shared = report?["shared_tier"] as? [String: Any]
            #expect(shared?["enabled"] as? Bool == true && shared?["breaker_open"] as? Bool == false)
            #expect(shared?["hits"] as? Int == 2 && shared?["misses"] as? Int == 1)
            withExtendedLifetime(keep) {}
        }

        @Test func aCorruptObjectIsIgnoredRenderedAgainAndOverwritten() async throws {
            let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
            let (keep, credentials) = try Self.credentials(moto)
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/corrupt.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let nodeA = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let target = nodeA.thumbTarget("/corrupt.png", "w=24&format=png")
            let first = try await nodeA.request(target)
            #expect(first.status == 200)
            #expect(Self.settled(nodeA, stored: 2))

            // Given the stored thumbnail's bytes altered in the bucket (its metadata, checksum included, kept)
            let altered = try await blocking {
                try moto.corrupt(bucket: Self.bucket, prefix: "test/src/", containing: "/v/")
            }
            #expect(altered == 1)

            // When node B asks for it
            let nodeB = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let second = try await nodeB.request(target)

            // Then the corrupt object is never served: B renders (from the shared original) the same bytes as A
            #expect(second.status == 200 && second.header("x-cache") == "MISS")
            #expect(second.body == first.body)
            #expect(nodeB.service.sharedTier?.counters.lookups(.variant, .corrupt) == 1)
            #expect(origin.hits("/corrupt.png") == 1)
            // and overwrites it without a condition, so node C gets a good copy
            #expect(Self.settled(nodeB, stored: 1))
            #expect(nodeB.service.sharedTier?.counters.puts[.stored] == 1)
            let nodeC = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let third = try await nodeC.request(target)
            #expect(third.header("x-cache") == "HIT-SHARED")
            #expect(third.body == first.body)
            withExtendedLifetime(keep) {}
        }

        @Test func aWrongSecretIsRefusedByTheServerAndTheNodeStillAnswersFromItsOwnRender() async throws {
            let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
            let (keep, credentials) = try Self.credentials(moto, secret: "not-the-secret-at-all")
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            for index in 0..<6 {
                origin.route("/wrong-\(index).png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            }
            let node = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)

            // When six thumbnails are asked with a secret moto does not know
            for index in 0..<6 {
                let response = try await node.request(node.thumbTarget("/wrong-\(index).png", "w=32&format=png"))
                // Then every one is rendered and answered
                #expect(response.status == 200 && response.header("x-cache") == "MISS")
                #expect(try DecodedImage(decoding: response.body).width == 32)
            }
            // and moto refused the signed lookups (errors; a failed thumbnail lookup skips the original's), until the
            // breaker stopped asking after three
            let counters = try #require(node.service.sharedTier?.counters)
            #expect(counters.lookups(.variant, .error) == 3)
            #expect(counters.lookups(.variant, .skipped) == 3)
            #expect(counters.isOpen && counters.breakerOpenings == 1)
            #expect(counters.puts[.stored] == 0)
            withExtendedLifetime(keep) {}
        }

        @Test func withTheStoreDownEveryRequestIsAnsweredAndAttemptsAreBoundedByTheBreaker() async throws {
            let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
            let (keep, credentials) = try Self.credentials(moto)
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            for index in 0..<40 {
                origin.route("/down-\(index).png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            }
            for index in 0..<40 {
                origin.route("/base-\(index).png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            }
            let node = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
            let baseline = try Harness(origin: origin)
            // Given the store stopped
            try await blocking { moto.stop() }

            // When 40 new thumbnails are asked of a node of the tier, and 40 others of a node without one
            var statuses: [Int] = []
            var latencies: [Duration] = []
            var baseLatencies: [Duration] = []
            for index in 0..<40 {
                let start = ContinuousClock.now
                statuses.append(try await node.request(node.thumbTarget("/down-\(index).png", "w=16")).status)
                latencies.append(ContinuousClock.now - start)
                let baseStart = ContinuousClock.now
                _ = try await baseline.request(baseline.thumbTarget("/base-\(index).png", "w=16"))
                baseLatencies.append(ContinuousClock.now - baseStart)
            }

            // Then all are answered, within one render + 50 ms of the node without a tier at the 95th percentile
            #expect(statuses == Array(repeating: 200, count: 40))
            func percentile(_ values: [Duration], _ share: Double) -> Duration {
                values.sorted()[min(values.count - 1, Int(Double(values.count) * share))]
            }
            let render = percentile(baseLatencies, 0.5)
            #expect(percentile(latencies, 0.95) <= percentile(baseLatencies, 0.95) + render + .milliseconds(50))
            print(
                "SharedTierTests: store down: p95 \(percentile(latencies, 0.95)) against \(percentile(baseLatencies, 0.95)) "
                    + "without a shared tier (a render: \(render))")
            // and the store was tried three times, then skipped
            let counters = try #require(node.service.sharedTier?.counters)
            #expect(counters.lookups(.variant, .error) == 3)
            #expect(counters.lookups(.variant, .skipped) == 37)
            #expect(counters.isOpen)
            withExtendedLifetime(keep) {}
        }

        @Test func anS3SourceIsFetchedSignedAndCachedAndOtherBucketsAreRefused() async throws {
            let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket, "private"]) }
            let (keep, credentials) = try Self.credentials(moto)
            let fixture = Fixtures.url("quadrants.png").path
            // (one object kept the default day, so that nothing about it expires while the test runs, and one that
            // says max-age=1, so that its thumbnail expires)
            try await blocking {
                try moto.put(
                    bucket: Self.sourceBucket, key: "pictures/a b+c.png", file: fixture, contentType: "image/png")
                try moto.put(
                    bucket: Self.sourceBucket, key: "brief.png", file: fixture, contentType: "image/png",
                    cacheControl: "max-age=1")
                try moto.put(bucket: "private", key: "x.png", file: fixture, contentType: "image/png")
            }
            let node = try Harness(
                Self.overrides(
                    moto, credentials: credentials, ["cache.shared.enabled": "false", "cache.min_ttl": "0s"]))

            // When a listed bucket's object is asked (its key needs percent-encoding)
            let target = Harness.thumbTarget(url: "s3://photos/pictures/a%20b%2Bc.png", "w=32&format=png")
            let first = try await node.request(target)

            // Then it is fetched (signed), rendered, and the next size comes from the source cache
            #expect(first.status == 200, "\(String(decoding: first.body, as: UTF8.self))")
            let image = try DecodedImage(decoding: first.body)
            #expect(image.width == 32 && image.height == 24)
            let second = try await node.request(Harness.thumbTarget(url: "s3://photos/pictures/a%20b%2Bc.png", "w=16"))
            #expect(second.status == 200)
            #expect(node.service.renderCounters.sourceCacheHits == 1)

            // When a thumbnail has expired (its object says max-age=1), it is served stale and revalidated once: a
            // signed conditional GET with the object's ETag, which moto answers 304
            let brief = Harness.thumbTarget(url: "s3://photos/brief.png", "w=32&format=png")
            let fresh = try await node.request(brief)
            #expect(fresh.status == 200)
            try await Task.sleep(for: .milliseconds(1_500))
            let stale = try await node.request(brief)
            #expect(stale.header("x-cache") == "STALE")
            #expect(waitUntil(timeout: .seconds(10)) { node.service.fetchCounters.notModified == 1 })
            let refreshed = try await node.request(brief)
            #expect(refreshed.header("x-cache") == "HIT-MEMORY" && refreshed.body == fresh.body)

            // And a bucket not in s3.source_buckets is 403, a missing key 404, both with a JSON reason
            let refused = try await node.request(Harness.thumbTarget(url: "s3://private/x.png"))
            #expect(refused.status == 403)
            #expect(String(decoding: refused.body, as: UTF8.self).contains("source not allowed"))
            let missing = try await node.request(Harness.thumbTarget(url: "s3://photos/none.png"))
            #expect(missing.status == 404)

            // And five sizes of a new object asked at once are one signed GET (coalesced like an HTTP source)
            try await blocking {
                try moto.put(bucket: Self.sourceBucket, key: "burst.png", file: fixture, contentType: "image/png")
            }
            let transfersBefore = node.service.fetchCounters.transfersStarted
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for width in [8, 12, 16, 20, 24] {
                    group.addTask {
                        try await node.request(Harness.thumbTarget(url: "s3://photos/burst.png", "w=\(width)")).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 5))
            #expect(node.service.fetchCounters.transfersStarted == transfersBefore + 1)
            withExtendedLifetime(keep) {}
        }
    }
}

extension Integration.SharedTierTests {
    @Test func analysesTravelBetweenNodes() async throws {
        let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
        let (keep, credentials) = try Self.credentials(moto)
        defer { _ = keep }
        // Given node A and node B on their own disks with the analysis on, one bucket, one counting origin
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        origin.route("/analysed.jpg", .ok(Fixtures.bytes("progressive.jpg"), contentType: "image/jpeg"))
        let overrides = Self.overrides(moto, credentials: credentials, ["image.analysis": "true"])
        let nodeA = try Harness(overrides, origin: origin)
        let nodeB = try Harness(overrides, origin: origin)

        // When node A renders a thumbnail, and has written it, its original and the source's analysis record
        #expect(try await nodeA.request(nodeA.thumbTarget("/analysed.jpg", "w=64")).status == 200)
        #expect(Self.settled(nodeA, stored: 3))
        #expect(nodeA.service.sharedTier?.counters.puts[.stored] == 3)

        // Then node B answers /info's analysis from the shared tier: no fetch, no analysis of its own
        let target =
            "/info?analysis=1&url=" + Harness.percentEncoded(origin.url("/analysed.jpg"))
        let fromB = try await nodeB.request(target)
        #expect(fromB.status == 200 && fromB.header("x-source") == "analysis", "\(fromB.text.prefix(200))")
        let fromA = try await nodeA.request(target)
        #expect(fromA.body == fromB.body)
        #expect(origin.hits("/analysed.jpg") == 1)
        #expect(nodeB.service.sharedTier?.counters.lookups(.analysis, .hit) == 1)
        #expect(nodeB.service.analysisCounters?.made == 0)
        // and keeps it on its own disk: the next ask needs no lookup
        let again = try await nodeB.request(target)
        #expect(again.header("x-source") == "analysis")
        #expect(nodeB.service.sharedTier?.counters.lookups(.analysis, .hit) == 1)
    }
}

extension Integration.SharedTierTests {
    @Test func aSharedHitOnANodeWithoutTheRecordCarriesThePlaceholder() async throws {
        let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
        let (keep, credentials) = try Self.credentials(moto)
        defer { _ = keep }
        // Given node A and node B with the placeholder header on, one bucket, one counting origin
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        origin.route("/placed.jpg", .ok(Fixtures.bytes("progressive.jpg"), contentType: "image/jpeg"))
        let overrides = Self.overrides(
            moto, credentials: credentials, ["image.analysis": "true", "image.placeholder_header": "true"])
        let nodeA = try Harness(overrides, origin: origin)
        let nodeB = try Harness(overrides, origin: origin)

        // When node A renders a thumbnail (its header made before the answer) and has written it, its original and
        // the record
        let target = nodeA.thumbTarget("/placed.jpg", "w=64")
        let rendered = try await nodeA.request(target)
        let expected = try #require(rendered.header("x-thumbd-placeholder"))
        #expect(Self.settled(nodeA, stored: 3))

        // Then node B, which has no record of the source in memory or on disk, answers the thumbnail from the shared
        // tier with the same header (written beside the thumbnail), and its memory hit keeps it; no render, no fetch
        let fromShared = try await nodeB.request(nodeB.thumbTarget("/placed.jpg", "w=64"))
        #expect(fromShared.header("x-cache") == "HIT-SHARED")
        #expect(fromShared.header("x-thumbd-placeholder") == expected)
        let fromMemory = try await nodeB.request(nodeB.thumbTarget("/placed.jpg", "w=64"))
        #expect(fromMemory.header("x-cache") == "HIT-MEMORY")
        #expect(fromMemory.header("x-thumbd-placeholder") == expected)
        #expect(origin.hits("/placed.jpg") == 1)
        #expect(nodeB.service.analysisCounters?.made == 0)
    }
}
