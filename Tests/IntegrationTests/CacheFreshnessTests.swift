// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// The freshness rules of issue 4 through real sockets: hits, stale-while-revalidate with exactly one
    /// conditional request, the 304 and 200 answers to it, origin failures within and past `stale_if_error`
    /// (this file); `no-store`/`private`, negative caching, the source cache and lifetimes from the origin's
    /// headers (CacheFreshnessTests+Origin.swift).
    ///
    /// Entries are made to expire with one-second lifetimes (`cache.min_ttl: 0s`); a test then sleeps well
    /// past the deadline, or polls with a bound, and never asserts that something happened *before* a
    /// deadline with less than seconds to spare. An origin answer that must not arrive too early is held
    /// behind a gate instead of timed.
    @Suite(.timeLimit(.minutes(1))) struct CacheFreshnessTests {
        // MARK: - Hits

        @Test func secondRequestIsAMemoryHitWithTheSameETagAndBothCarryAge() async throws {
            // Given a source
            let harness = try Harness()
            harness.origin.route("/hit.jpg", .ok(Self.source))
            let target = harness.thumbTarget("/hit.jpg", "w=32&format=png")

            // When its thumbnail is asked for twice
            let first = try await harness.request(target)
            let second = try await harness.request(target)

            // Then the first is rendered, the second comes from memory, identical, without an origin hit
            #expect(first.status == 200 && second.status == 200)
            #expect(first.header("x-cache") == "MISS")
            #expect(second.header("x-cache") == "HIT-MEMORY")
            #expect(first.header("etag") != nil)
            #expect(second.header("etag") == first.header("etag"))
            #expect(second.body == first.body)
            #expect(harness.origin.hits("/hit.jpg") == 1)
            #expect(harness.service.renderCounters.rendersStarted == 1)
            // And both say how old they are: just validated (a generous bound for a loaded machine)
            for response in [first, second] {
                let age = try #require(Self.age(response), "Age: \(response.header("age") ?? "missing")")
                #expect((0...5).contains(age))
            }
        }

        @Test func entryEvictedFromMemoryIsADiskHitThenPromoted() async throws {
            // Given a thumbnail written to the disk tier
            let harness = try Harness()
            harness.origin.route("/disk.jpg", .ok(Self.source))
            let target = harness.thumbTarget("/disk.jpg", "w=32&format=png")
            let first = try await harness.request(target)
            #expect(first.header("x-cache") == "MISS")
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })

            // When the memory tier is emptied
            #expect(harness.service.cache.trimMemory(toBytes: 0) == 1)

            // Then the next answer comes from disk, the one after from memory (promoted), both identical
            let fromDisk = try await harness.request(target)
            #expect(fromDisk.status == 200)
            #expect(fromDisk.header("x-cache") == "HIT-DISK")
            #expect(fromDisk.body == first.body)
            #expect(fromDisk.header("etag") == first.header("etag"))
            #expect(Self.age(fromDisk) != nil)
            let promoted = try await harness.request(target)
            #expect(promoted.header("x-cache") == "HIT-MEMORY")
            #expect(promoted.body == first.body)
            #expect(harness.origin.hits("/disk.jpg") == 1)
        }

        // MARK: - Stale while revalidate

        @Test func staleEntryIsServedAtOnceWhileExactlyOneConditionalRequestRevalidatesIt() async throws {
            // Given a thumbnail whose source may be kept one second
            let harness = try Harness(["cache.min_ttl": "0s"])
            let path = "/swr.jpg"
            harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
            let target = harness.thumbTarget(path, "w=32&format=png")
            let first = try await harness.request(target)
            #expect(first.header("x-cache") == "MISS")
            let rendersBefore = harness.service.renderCounters.rendersStarted

            // When it has expired and the origin holds its answer (a 304 granting a minute) behind a gate,
            // and ten clients ask at the same time
            harness.origin.route(path, .gate("revalidate", then: Self.conditional(cacheControl: "max-age=60")))
            try await Task.sleep(for: Self.pastOneSecondLifetime)
            let clients = try (0..<10).map { _ in try harness.client() }
            for client in clients { try client.send(Harness.requestText(target)) }
            let stale = try await responses(of: clients, timeout: .seconds(30))

            // Then all ten got the old thumbnail at once (the origin has not answered), marked STALE
            for response in stale {
                #expect(response.status == 200)
                #expect(response.header("x-cache") == "STALE")
                #expect(response.header("etag") == first.header("etag"))
                #expect(response.body == first.body)
                #expect((Self.age(response) ?? -1) >= 1)
            }
            // And exactly one request, a conditional one, reached the origin; a later request adds none
            #expect(await eventually { harness.origin.hits(path) == 2 })
            let eleventh = try await harness.request(target)
            #expect(eleventh.header("x-cache") == "STALE")
            #expect(harness.origin.hits(path) == 2)
            let conditionals = Self.conditionalRequests(harness.origin, path)
            #expect(conditionals.count == 1)
            #expect(conditionals.first?.headers["if-none-match"] == Self.etag)
            #expect(harness.service.revalidator.revalidationsStarted == 1)

            // When the origin answers 304
            harness.origin.openGate("revalidate")

            // Then the entry is fresh again: the same bytes from memory, younger, with no render and no other fetch
            let fresh = try #require(try await Self.poll(harness, target) { $0.header("x-cache") == "HIT-MEMORY" })
            #expect(fresh.header("etag") == first.header("etag"))
            #expect(fresh.body == first.body)
            #expect((Self.age(fresh) ?? .max) <= (Self.age(eleventh) ?? -1))
            #expect(harness.origin.hits(path) == 2)
            #expect(harness.service.renderCounters.rendersStarted == rendersBefore)
            #expect(harness.service.revalidator.revalidationsStarted == 1)
        }

        /// The validators an origin may give, and the request header that must carry each back.
        static let validatorCases: [(etag: String?, lastModified: String?, header: String, value: String)] = [
            (etag, nil, "if-none-match", etag),
            (nil, "Wed, 21 Oct 2015 07:28:00 GMT", "if-modified-since", "Wed, 21 Oct 2015 07:28:00 GMT"),
        ]

        @Test(arguments: validatorCases)
        func expiredPastStaleIfErrorWaitsForTheRevalidationAndA304IsRevalidated(
            etag: String?, lastModified: String?, header: String, value: String
        ) async throws {
            // Given a thumbnail that may be kept one second and never served stale
            let harness = try Harness(["cache.min_ttl": "0s", "cache.stale_if_error": "0s"])
            let path = "/revalidated.jpg"
            harness.origin.route(
                path, Self.conditional(etag: etag, lastModified: lastModified, cacheControl: "max-age=1"))
            let target = harness.thumbTarget(path, "w=32&format=png")
            let first = try await harness.request(target)
            #expect(first.header("x-cache") == "MISS")

            // When it is asked for after expiry, and the origin confirms it with a 304 granting a minute
            harness.origin.route(
                path, Self.conditional(etag: etag, lastModified: lastModified, cacheControl: "max-age=60"))
            try await Task.sleep(for: Self.pastOneSecondLifetime)
            let revalidated = try await harness.request(target)

            // Then the request waited for the origin and got the same thumbnail, just validated, not rendered
            #expect(revalidated.status == 200)
            #expect(revalidated.header("x-cache") == "REVALIDATED")
            #expect(revalidated.header("etag") == first.header("etag"))
            #expect(revalidated.body == first.body)
            #expect((0...5).contains(Self.age(revalidated) ?? -1))
            #expect(harness.service.renderCounters.rendersStarted == 1)
            // And the origin was asked once more, conditionally, with the validator it gave
            #expect(harness.origin.hits(path) == 2)
            let conditionals = Self.conditionalRequests(harness.origin, path)
            #expect(conditionals.count == 1)
            #expect(conditionals.first?.headers[header] == value)
            // And the 304's lifetime holds: the next answer is a memory hit
            let next = try await harness.request(target)
            #expect(next.header("x-cache") == "HIT-MEMORY")
            #expect(next.body == first.body)
            #expect(harness.origin.hits(path) == 2)
        }

        @Test func backgroundRevalidationThatGetsNewBytesReplacesTheThumbnail() async throws {
            // Given a thumbnail that may be kept one second
            let harness = try Harness(["cache.min_ttl": "0s"])
            let path = "/changed.jpg"
            harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
            let target = harness.thumbTarget(path, "w=32&format=png")
            let first = try await harness.request(target)
            #expect(try first.image().height == 24)

            // When the source changes (new ETag, square picture) and the old thumbnail has expired
            harness.origin.route(path, Self.changedSource)
            try await Task.sleep(for: Self.pastOneSecondLifetime)
            let stale = try await harness.request(target)

            // Then the old thumbnail is served once more, and the new one replaces it when rendered
            #expect(stale.header("x-cache") == "STALE")
            #expect(stale.header("etag") == first.header("etag"))
            let replaced = try #require(
                try await Self.poll(harness, target) { $0.header("etag") != first.header("etag") })
            #expect(replaced.status == 200)
            #expect(replaced.header("x-cache") == "HIT-MEMORY")
            let image = try replaced.image()
            #expect(image.width == 32 && image.height == 32)
            // And the origin was asked conditionally, with the old validator, once
            let conditionals = Self.conditionalRequests(harness.origin, path)
            #expect(conditionals.count == 1)
            #expect(conditionals.first?.headers["if-none-match"] == Self.etag)
        }

        @Test func waitingRevalidationThatGetsNewBytesRendersThemForThatRequest() async throws {
            // Given a thumbnail that may be kept one second and never served stale
            let harness = try Harness(["cache.min_ttl": "0s", "cache.stale_if_error": "0s"])
            let path = "/changed-waiting.jpg"
            harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
            let target = harness.thumbTarget(path, "w=32&format=png")
            let first = try await harness.request(target)

            // When the source changes and the thumbnail is asked for after expiry
            harness.origin.route(path, Self.changedSource)
            try await Task.sleep(for: Self.pastOneSecondLifetime)
            let changed = try await harness.request(target)

            // Then that request gets the new thumbnail, rendered for it, and the next one finds it in memory
            #expect(changed.status == 200)
            #expect(changed.header("x-cache") == "MISS")
            #expect(changed.header("etag") != first.header("etag"))
            let image = try changed.image()
            #expect(image.width == 32 && image.height == 32)
            let next = try await harness.request(target)
            #expect(next.header("x-cache") == "HIT-MEMORY")
            #expect(next.header("etag") == changed.header("etag"))
            #expect(Self.conditionalRequests(harness.origin, path).count == 1)
        }

        @Test(arguments: [("1h", "STALE"), ("0s", "REVALIDATED")])
        func withTheMemoryTierOffAnExpiredDiskEntryIsRevalidatedOnDisk(
            staleIfError: String, outcome: String
        ) async throws {
            // Given a thumbnail kept one second on disk only (sent with sendfile; that a fresh one is a disk hit shows
            // at the end: asking it here, within its second, would race that second on a slow machine)
            let harness = try Harness(
                ["cache.min_ttl": "0s", "cache.memory.max_bytes": "0", "cache.stale_if_error": staleIfError])
            let path = "/disk-only.jpg"
            harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
            let target = harness.thumbTarget(path, "w=32&format=png")
            let first = try await harness.request(target)
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })

            // When it has expired and the origin confirms it with a 304 granting a minute
            harness.origin.route(path, Self.conditional(cacheControl: "max-age=60"))
            try await Task.sleep(for: Self.pastOneSecondLifetime)
            let expired = try await harness.request(target)

            // Then the disk copy is served (at once, or after the 304), and soon fresh again on disk
            #expect(expired.status == 200)
            #expect(expired.header("x-cache") == outcome)
            #expect(expired.body == first.body)
            let fresh = try #require(try await Self.poll(harness, target) { $0.header("x-cache") == "HIT-DISK" })
            #expect(fresh.body == first.body)
            #expect(fresh.header("etag") == first.header("etag"))
            // And one conditional request did it, without a render
            #expect(Self.conditionalRequests(harness.origin, path).count == 1)
            #expect(harness.origin.hits(path) == 2)
            #expect(harness.service.renderCounters.rendersStarted == 1)
        }

        // MARK: - Origin failures

        /// How the origin fails a revalidation.
        enum OriginFailure: String, Sendable, CaseIterable {
            /// It answers 500.
            case serverError
            /// It is gone: connections are refused.
            case down
        }

        @Test(arguments: OriginFailure.allCases)
        func failingRevalidationKeepsServingStaleUntilStaleIfErrorRunsOutThenAnswers502(
            _ failure: OriginFailure
        ) async throws {
            // Given a thumbnail that expires after one second and may be served stale five more
            let harness = try Harness(["cache.min_ttl": "0s", "cache.stale_if_error": "5s"])
            let path = "/failing.jpg"
            harness.origin.route(path, Self.conditional(cacheControl: "max-age=1"))
            let target = harness.thumbTarget(path, "w=32&format=png")
            let first = try await harness.request(target)
            #expect(first.header("x-cache") == "MISS")

            // When the origin fails and the entry has expired
            switch failure {
            case .serverError: harness.origin.route(path, .status(500))
            case .down: harness.origin.stop()
            }
            try await Task.sleep(for: Self.pastOneSecondLifetime)

            // Then the old thumbnail is still served, also after a revalidation has failed
            let revalidator = harness.service.revalidator
            let afterFailure = try #require(
                try await Self.poll(harness, target, every: .milliseconds(100)) {
                    $0.header("x-cache") != "STALE" || revalidator.revalidationsStarted >= 2
                })
            #expect(afterFailure.status == 200)
            #expect(afterFailure.header("x-cache") == "STALE")
            #expect(afterFailure.body == first.body)
            #expect(afterFailure.header("etag") == first.header("etag"))

            // And once stale_if_error has run out, the request waits for the origin and gets its error
            let error = try #require(
                try await Self.poll(harness, target, every: .milliseconds(100)) {
                    $0.header("x-cache") != "STALE"
                })
            expectJSONError(error, status: 502)
            #expect(error.header("x-cache") == "MISS")
            #expect(Self.age(error) == 0)
            // And it stays an error: the expired entry is never served again
            let again = try await harness.request(target)
            #expect(again.status == 502)
        }
    }
}

// MARK: - Helpers

extension Integration.CacheFreshnessTests {
    /// 320x240: a 32-wide thumbnail is 32x24.
    static let source = Fixtures.bytes("progressive.jpg")
    /// The origin's ETag for ``source``.
    static let etag = "\"v1\""
    /// How long a test sleeps for a one-second lifetime to be over, with room for a slow machine.
    static let pastOneSecondLifetime = Duration.milliseconds(1_500)

    /// ``source`` replaced by a square picture with a new ETag, fresh for a minute.
    static var changedSource: LoopbackOrigin.Script {
        conditional(
            etag: "\"v2\"", cacheControl: "max-age=60", body: Fixtures.bytes("grid.png"), contentType: "image/png")
    }

    /// 200 with `body`, validators and `Cache-Control`; 304 with the same headers when the validators match.
    static func conditional(
        etag: String? = etag, lastModified: String? = nil, cacheControl: String?, body: [UInt8] = source,
        contentType: String = "image/jpeg"
    ) -> LoopbackOrigin.Script {
        .conditional(
            etag: etag, lastModified: lastModified,
            headers: cacheControl.map { [LoopbackOrigin.Header("Cache-Control", $0)] } ?? [], body: body,
            contentType: contentType)
    }

    /// The `Age` header as a number; nil when missing or not a whole number.
    static func age(_ response: RawHTTPClient.Response) -> Int? {
        response.header("age").flatMap { Int($0) }
    }

    /// The requests for `path` that carried a validator.
    static func conditionalRequests(_ origin: LoopbackOrigin, _ path: String) -> [LoopbackOrigin.ReceivedRequest] {
        origin.requests.filter {
            $0.path == path && ($0.headers["if-none-match"] != nil || $0.headers["if-modified-since"] != nil)
        }
    }

    /// Requests `target` until an answer satisfies `condition` (returned) or `timeout` passes (nil).
    static func poll(
        _ harness: Harness, _ target: String, timeout: Duration = .seconds(20),
        every interval: Duration = .milliseconds(20),
        until condition: (RawHTTPClient.Response) -> Bool
    ) async throws -> RawHTTPClient.Response? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let response = try await harness.request(target)
            if condition(response) { return response }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: interval)
        }
    }
}
