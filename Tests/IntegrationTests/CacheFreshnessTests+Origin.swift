// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration.CacheFreshnessTests {
    // MARK: - What the origin forbids

    @Test(arguments: ["no-store", "private", "private, max-age=600", "max-age=600, no-store", "Private"])
    func responseTheOriginForbidsStoringIsNeverAHitAndForbidsClientsToo(_ cacheControl: String) async throws {
        // Given a source the origin forbids shared caches to keep
        let harness = try Harness()
        harness.origin.route(
            "/forbidden.jpg", .ok(Self.source, headers: [LoopbackOrigin.Header("Cache-Control", cacheControl)]))
        let target = harness.thumbTarget("/forbidden.jpg", "w=32&format=png")

        // When its thumbnail is asked for three times
        var responses: [RawHTTPClient.Response] = []
        for _ in 0..<3 { responses.append(try await harness.request(target)) }

        // Then each is fetched and rendered again, and told not to be stored downstream either
        for response in responses {
            #expect(response.status == 200)
            #expect(response.header("x-cache") == "MISS")
            #expect(response.header("cache-control") == "no-store")
            #expect(Self.age(response) != nil)
            #expect(response.body == responses[0].body)
        }
        #expect(harness.origin.hits("/forbidden.jpg") == 3)
        #expect(harness.service.renderCounters.rendersStarted == 3)

        // And neither it nor its source reached the disk: a cacheable thumbnail rendered afterwards is stored
        // (the disk writer works in order), and it is the only entry of each cache
        harness.origin.route("/allowed.jpg", .ok(Self.source))
        #expect(try await harness.request(harness.thumbTarget("/allowed.jpg", "w=32&format=png")).status == 200)
        let variants = try #require(harness.service.cache.variants)
        let sources = try #require(harness.service.cache.sources)
        #expect(await eventually { variants.statistics.currentEntries >= 1 && sources.statistics.currentEntries >= 1 })
        #expect(variants.statistics.currentEntries == 1)
        #expect(sources.statistics.currentEntries == 1)
    }

    // MARK: - Negative caching

    @Test(arguments: [404, 410])
    func originNotFoundIsRememberedForNegativeTTLThenAskedAgain(_ status: Int) async throws {
        // Given an origin without the source, remembered one second
        let harness = try Harness(["cache.negative_ttl": "1s"])
        let path = "/missing.jpg"
        harness.origin.route(path, .status(status))

        // When the thumbnail is asked for, again, and in another size
        let first = try await harness.request(harness.thumbTarget(path, "w=32"))
        let second = try await harness.request(harness.thumbTarget(path, "w=32"))
        let otherSize = try await harness.request(harness.thumbTarget(path, "w=48"))

        // Then the origin was asked once; the later answers are the remembered 404
        expectJSONError(first, status: 404)
        #expect(first.header("x-cache") == "MISS")
        for response in [second, otherSize] {
            expectJSONError(response, status: 404)
            #expect(response.header("x-cache") == "HIT-MEMORY")
            #expect((0...5).contains(Self.age(response) ?? -1))
        }
        #expect(harness.origin.hits(path) == 1)

        // And once negative_ttl is over, the origin is asked again (and now has it)
        harness.origin.route(path, .ok(Self.source))
        let found = try #require(
            try await Self.poll(harness, harness.thumbTarget(path, "w=32")) { $0.status != 404 })
        #expect(found.status == 200)
        #expect(found.header("x-cache") == "MISS")
        #expect(harness.origin.hits(path) == 2)
    }

    @Test func negativeTTLZeroAsksTheOriginEveryTime() async throws {
        let harness = try Harness(["cache.negative_ttl": "0s"])
        harness.origin.route("/missing.jpg", .status(404))
        for _ in 0..<3 {
            let response = try await harness.request(harness.thumbTarget("/missing.jpg"))
            expectJSONError(response, status: 404)
            #expect(response.header("x-cache") == "MISS")
        }
        #expect(harness.origin.hits("/missing.jpg") == 3)
    }

    @Test func revalidationThatFindsTheSourceGoneRemovesTheEntryAndRemembersTheNotFound() async throws {
        // Given a thumbnail that may be kept one second
        let harness = try Harness(["cache.min_ttl": "0s"])
        let path = "/removed.jpg"
        harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
        let target = harness.thumbTarget(path, "w=32&format=png")
        let first = try await harness.request(target)
        #expect(first.header("x-cache") == "MISS")

        // When the source is deleted at the origin and the thumbnail has expired
        harness.origin.route(path, .status(404))
        try await Task.sleep(for: Self.pastOneSecondLifetime)
        let stale = try await harness.request(target)

        // Then the old thumbnail is served once more while the origin is asked
        #expect(stale.header("x-cache") == "STALE")
        #expect(stale.body == first.body)
        // And after the origin's 404 the thumbnail is gone: the remembered 404 answers, without the origin
        let gone = try #require(try await Self.poll(harness, target) { $0.status != 200 })
        expectJSONError(gone, status: 404)
        #expect(gone.header("x-cache") == "HIT-MEMORY")
        #expect(harness.origin.hits(path) == 2)
    }

    // MARK: - Source cache

    @Test(arguments: [true, false])
    func newSizeOfAKnownSourceNeedsNoFetchWhenSourcesAreKept(_ keepsSources: Bool) async throws {
        // Given a thumbnail rendered from a source (and, when sources are kept, that source on disk)
        let harness = try Harness(["cache.sources": "\(keepsSources)"])
        let path = "/sizes.jpg"
        harness.origin.route(path, .ok(Self.source))
        let small = try await harness.request(harness.thumbTarget(path, "w=32&format=png"))
        #expect(small.header("x-cache") == "MISS")
        if keepsSources {
            let sources = try #require(harness.service.cache.sources)
            #expect(await eventually { sources.statistics.currentEntries == 1 })
        } else {
            #expect(harness.service.cache.sources == nil)
        }

        // When another size is asked for
        let large = try await harness.request(harness.thumbTarget(path, "w=48&format=png"))

        // Then it is rendered at its own size, from the kept source or from a new fetch
        #expect(large.status == 200)
        #expect(large.header("x-cache") == "MISS")
        let image = try large.image()
        #expect(image.width == 48 && image.height == 36)
        #expect(harness.origin.hits(path) == (keepsSources ? 1 : 2))
        #expect(harness.service.renderCounters.sourceCacheHits == (keepsSources ? 1 : 0))
        #expect(harness.service.renderCounters.rendersStarted == 2)
    }

    @Test func newSizeOfAnExpiredSourceIsFetchedAgain() async throws {
        // Given a source kept on disk for one second
        let harness = try Harness(["cache.min_ttl": "0s"])
        let path = "/expired-source.jpg"
        harness.origin.route(path, .ok(Self.source, headers: [LoopbackOrigin.Header("Cache-Control", "max-age=1")]))
        _ = try await harness.request(harness.thumbTarget(path, "w=32&format=png"))
        let sources = try #require(harness.service.cache.sources)
        #expect(await eventually { sources.statistics.currentEntries == 1 })

        // When another size is asked for after that second
        try await Task.sleep(for: Self.pastOneSecondLifetime)
        let large = try await harness.request(harness.thumbTarget(path, "w=48&format=png"))

        // Then the source is fetched again rather than rendered from the expired copy
        #expect(large.status == 200)
        #expect(harness.origin.hits(path) == 2)
        #expect(harness.service.renderCounters.sourceCacheHits == 0)
    }

    // MARK: - One revalidation, also when only the disk tier holds the entry

    /// How the origin answers the revalidation.
    enum RevalidationAnswer: String, Sendable, CaseIterable {
        /// 304: the same thumbnail, fresh for a minute.
        case notModified
        /// 200 with another picture.
        case modified
    }

    @Test(arguments: RevalidationAnswer.allCases)
    func withTheMemoryTierOffBackToBackRequestsStillMakeOneRevalidation(_ answer: RevalidationAnswer) async throws {
        // Given an expired thumbnail on disk only, being revalidated (the origin holds its answer behind a gate)
        let harness = try Harness(["cache.min_ttl": "0s", "cache.memory.max_bytes": "0"])
        let path = "/disk-race.jpg"
        harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
        let target = harness.thumbTarget(path, "w=32&format=png")
        let first = try await harness.request(target)
        let variants = try #require(harness.service.cache.variants)
        #expect(await eventually { variants.statistics.currentEntries == 1 })
        let revalidated = answer == .notModified ? Self.conditional(cacheControl: "max-age=60") : Self.changedSource
        harness.origin.route(path, .gate("answer", then: revalidated))
        try await Task.sleep(for: Self.pastOneSecondLifetime)
        #expect(try await harness.request(target).header("x-cache") == "STALE")
        #expect(await eventually { harness.origin.hits(path) == 2 })

        // When three keep-alive clients ask back to back while the origin answers, until the entry is fresh
        let port = harness.port
        let clients = (0..<3).map { _ in
            onThread { () throws -> [String] in
                let client = try RawHTTPClient(host: "127.0.0.1", port: port)
                var outcomes: [String] = []
                let deadline = ContinuousClock.now + .seconds(10)
                while ContinuousClock.now < deadline, outcomes.suffix(20).filter({ $0 == "HIT-DISK" }).count < 20 {
                    try client.send(Harness.requestText(target))
                    outcomes.append(try client.readResponse(timeout: .seconds(10)).header("x-cache") ?? "-")
                }
                return outcomes
            }
        }
        try await Task.sleep(for: .milliseconds(100))
        harness.origin.openGate("answer")
        var outcomes: [String] = []
        for client in clients { outcomes += try await client.value() }

        // Then they saw the stale entry, then the fresh one, and the origin was asked exactly once more: no
        // request found the old deadline on disk after the revalidation had ended
        #expect(outcomes.allSatisfy { $0 == "STALE" || $0 == "HIT-DISK" }, "\(Set(outcomes))")
        #expect(outcomes.suffix(20) == Array(repeating: "HIT-DISK", count: 20))
        #expect(Self.conditionalRequests(harness.origin, path).count == 1)
        #expect(harness.origin.hits(path) == 2)
        let fresh = try await harness.request(target)
        #expect((fresh.header("etag") == first.header("etag")) == (answer == .notModified))
    }

    // MARK: - Lifetimes from the origin's headers

    @Test func lifetimeComesFromExpiresAndDateOrSMaxAgeOrTheDefaultAndAgeCountsFromTheOrigin() async throws {
        // Given sources with every kind of lifetime, and a default of three seconds
        let harness = try Harness(["cache.min_ttl": "0s", "cache.default_ttl": "3s"])
        let now = Date()
        let header = LoopbackOrigin.Header.init
        let sources: [(path: String, headers: [LoopbackOrigin.Header], expires: Bool)] = [
            // Sent two hours ago, valid three hours: one hour left, Age two hours (Expires − Date, not − now)
            (
                "/dated.jpg",
                [header("Date", Self.httpDate(now - 7_200)), header("Expires", Self.httpDate(now + 3_600))], false
            ),
            // An hour's max-age of which 100 s were spent upstream
            ("/aged.jpg", [header("Cache-Control", "max-age=3600"), header("Age", "100")], false),
            // s-maxage (shared caches) wins over max-age
            ("/shared.jpg", [header("Cache-Control", "s-maxage=3, max-age=3600")], true),
            // Expires three seconds after Date
            ("/expires.jpg", [header("Date", Self.httpDate(now)), header("Expires", Self.httpDate(now + 3))], true),
            // Nothing: cache.default_ttl
            ("/plain.jpg", [], true),
        ]
        for source in sources { harness.origin.route(source.path, .ok(Self.source, headers: source.headers)) }
        let targets = sources.map { harness.thumbTarget($0.path, "w=32&format=png") }

        // When each is fetched, then asked for again at once
        var firsts: [RawHTTPClient.Response] = []
        for target in targets { firsts.append(try await harness.request(target)) }
        var seconds: [RawHTTPClient.Response] = []
        for target in targets { seconds.append(try await harness.request(target)) }

        // Then each is fresh at first (seconds to spare), with an Age that counts the origin's
        for (index, source) in sources.enumerated() {
            #expect(firsts[index].header("x-cache") == "MISS", "\(source.path)")
            #expect(seconds[index].header("x-cache") == "HIT-MEMORY", "\(source.path)")
        }
        #expect((7_195...7_300).contains(Self.age(seconds[0]) ?? -1), "Age \(seconds[0].header("age") ?? "-")")
        #expect((100...160).contains(Self.age(firsts[1]) ?? -1), "Age \(firsts[1].header("age") ?? "-")")
        #expect((100...160).contains(Self.age(seconds[1]) ?? -1))

        // And the short-lived ones expire (STALE), while the long-lived ones are still hits
        for (index, source) in sources.enumerated() where source.expires {
            let stale = try await Self.poll(harness, targets[index], every: .milliseconds(100)) {
                $0.header("x-cache") == "STALE"
            }
            #expect(stale != nil, "\(source.path) never expired")
        }
        for (index, source) in sources.enumerated() where !source.expires {
            #expect(try await harness.request(targets[index]).header("x-cache") == "HIT-MEMORY", "\(source.path)")
        }
    }

    @Test func lifetimesAreClampedByMinTTLAndMaxTTL() async throws {
        // Given one service that keeps everything at most three seconds, and one that keeps it at least an hour
        let capped = try Harness(["cache.min_ttl": "0s", "cache.max_ttl": "3s", "cache.default_ttl": "3s"])
        let floored = try Harness(["cache.min_ttl": "1h"])
        capped.origin.route(
            "/long.jpg", .ok(Self.source, headers: [LoopbackOrigin.Header("Cache-Control", "max-age=86400")]))
        floored.origin.route(
            "/short.jpg", .ok(Self.source, headers: [LoopbackOrigin.Header("Cache-Control", "max-age=1")]))
        let long = capped.thumbTarget("/long.jpg", "w=32&format=png")
        let short = floored.thumbTarget("/short.jpg", "w=32&format=png")
        #expect(try await capped.request(long).header("x-cache") == "MISS")
        #expect(try await floored.request(short).header("x-cache") == "MISS")

        // When the origin's day has been cut to three seconds, and its second raised to an hour
        let expired = try await Self.poll(capped, long, every: .milliseconds(100)) { $0.header("x-cache") == "STALE" }

        // Then the day-long thumbnail expired, and the one-second one (now older than a second) did not
        #expect(expired != nil)
        #expect(try await floored.request(short).header("x-cache") == "HIT-MEMORY")
        #expect(floored.origin.hits("/short.jpg") == 1)
    }
}

extension Integration.CacheFreshnessTests {
    /// `Date`/`Expires` format (IMF-fixdate, RFC 9110 §5.6.7).
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
