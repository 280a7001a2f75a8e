// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct CoalescingTests {
    let origin: LoopbackOrigin
    let fetcher: OriginFetcher

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
        fetcher = try OriginFetcher(configuration: testConfiguration())
    }

    @Test func deliversBodyStatusTypeAndFreshnessHeaders() async throws {
        // Given an image with caching headers
        let body = sampleBody(10_000)
        origin.route(
            "/a.jpg",
            .ok(
                body, contentType: "image/jpeg",
                headers: [
                    .init("Cache-Control", "public, max-age=600"), .init("Cache-Control", "s-maxage=60"),
                    .init("ETag", "\"v1\""), .init("Last-Modified", "Tue, 01 Jul 2025 10:00:00 GMT"),
                    .init("Expires", "Wed, 02 Jul 2025 10:00:00 GMT"), .init("Age", "12"),
                    .init("Date", "Tue, 01 Jul 2025 10:05:00 GMT"),
                ]))
        // When it is fetched
        let source = try await fetcher.fetch(origin.url("/a.jpg")).get()
        // Then everything the cache needs comes back
        #expect(source.body == body)
        #expect(source.status == 200)
        #expect(source.contentType == "image/jpeg")
        #expect(source.finalURL == origin.url("/a.jpg"))
        #expect(source.requestedURL == origin.url("/a.jpg"))
        #expect(source.headers.cacheControl == "public, max-age=600, s-maxage=60")
        #expect(source.headers.etag == "\"v1\"")
        #expect(source.headers.lastModified == "Tue, 01 Jul 2025 10:00:00 GMT")
        #expect(source.headers.expires == "Wed, 02 Jul 2025 10:00:00 GMT")
        #expect(source.headers.age == "12")
        #expect(source.headers.date == "Tue, 01 Jul 2025 10:05:00 GMT")
        // And the origin saw an image-preferring Accept, our User-Agent, and no credentials
        let request = try #require(origin.requests.last)
        #expect(request.headers["accept"]?.hasPrefix("image/avif") == true)
        #expect(request.headers["user-agent"] == "thumbd/0.1.0")
        #expect(request.headers["cookie"] == nil)
        #expect(request.headers["authorization"] == nil)
        #expect(request.headers["accept-encoding"] == nil)
    }

    @Test func twoHundredConcurrentFetchesMakeOneTransfer() async throws {
        // Given a source held back until every waiter has joined
        let body = sampleBody(200_000)
        origin.route("/stampede.jpg", .gate("go", then: .ok(body)))
        let results = Collector<Result<FetchedSource, FetchError>>()
        // When 200 callers fetch it at once
        for _ in 0..<200 {
            fetcher.fetch(FetchRequest(url: origin.url("/stampede.jpg"))) { results.append($0) }
        }
        #expect(await eventually { fetcher.counters.coalescedJoins == 199 })
        origin.openGate("go")
        // Then there is one origin hit and 200 answers sharing one immutable source
        #expect(await eventually { results.count == 200 })
        #expect(origin.hits("/stampede.jpg") == 1)
        let sources = results.all.compactMap(\.success)
        #expect(sources.count == 200)
        let first = try #require(sources.first)
        #expect(first.body == body)
        #expect(sources.allSatisfy { $0 === first })
        #expect(fetcher.counters.transfersStarted == 1)
    }

    @Test func differentSpellingsOfOneURLCoalesce() async throws {
        // Given an origin on 127.0.0.1, reached by name, with loopback allowed for this fetcher
        let local = try LoopbackOrigin(host: "127.0.0.1")
        let fetcher = try OriginFetcher(
            configuration: testConfiguration { $0.allowedNetworks = [IPNetwork("127.0.0.0/8")!] })
        local.route("/Case.jpg", .gate("go", then: .ok(sampleBody(100))))
        let spellings = [
            "http://localhost:\(local.port)/Case.jpg", "HTTP://LOCALHOST:\(local.port)/Case.jpg",
            "hTtP://LocalHost:\(local.port)/Case.jpg#fragment", "http://localhost:\(local.port)/./Case.jpg",
        ]
        let results = Collector<Result<FetchedSource, FetchError>>()
        // When each spelling is fetched concurrently
        for url in spellings { fetcher.fetch(FetchRequest(url: url)) { results.append($0) } }
        #expect(await eventually { fetcher.counters.coalescedJoins == 3 })
        local.openGate("go")
        // Then they shared one transfer; a different path case is a different source
        #expect(await eventually { results.count == 4 })
        #expect(local.hits("/Case.jpg") == 1)
        #expect(results.all.allSatisfy { $0.success?.requestedURL == "http://localhost:\(local.port)/Case.jpg" })
        #expect(await fetcher.fetch("http://localhost:\(local.port)/case.jpg").failure == .originNotFound(status: 404))
    }

    @Test func aFetchAfterCompletionStartsANewTransfer() async throws {
        origin.route("/again.jpg", .ok(sampleBody(10)))
        _ = try await fetcher.fetch(origin.url("/again.jpg")).get()
        _ = try await fetcher.fetch(origin.url("/again.jpg")).get()
        #expect(origin.hits("/again.jpg") == 2)
        #expect(fetcher.counters.transfersStarted == 2)
    }

    @Test func aFetchReadAfterATransferEndedReusesWhatItsCompletionStored() async throws {
        // Given a caller that keeps each fetched source in a store, and whose first completion asks for the
        // same URL again before storing (the race of two sizes of one source: the second's cache lookup
        // missed, its fetch command is read after the transfer was retired)
        origin.route("/reused.jpg", .ok(sampleBody(1_000)))
        let url = origin.url("/reused.jpg")
        let store = Collector<FetchedSource>()
        let reuse: @Sendable () -> FetchedSource? = { store.all.last }
        let second = Collector<Result<FetchedSource, FetchError>>()
        let fetcher = self.fetcher
        fetcher.fetch(FetchRequest(url: url), reuse: reuse) { result in
            fetcher.fetch(FetchRequest(url: url), reuse: reuse) { second.append($0) }
            if case .success(let source) = result { store.append(source) }
        }

        // When the second fetch is answered
        #expect(await eventually { second.count == 1 })

        // Then it got the stored source without a second transfer, and counts as coalesced
        let reused = try #require(second.all.first?.success)
        #expect(reused === store.all.first)
        #expect(origin.hits("/reused.jpg") == 1)
        #expect(fetcher.counters.transfersStarted == 1)
        #expect(await eventually { fetcher.counters.coalescedJoins == 1 })
    }

    @Test func reuseIsAskedOnlyWhenATransferWouldStart() async throws {
        // Given a transfer held open, and a reuse that counts its calls and has nothing
        origin.route("/held.jpg", .gate("go", then: .ok(sampleBody(100))))
        let url = origin.url("/held.jpg")
        let asked = Collector<Int>()
        let reuse: @Sendable () -> FetchedSource? = {
            asked.append(1)
            return nil
        }
        let results = Collector<Result<FetchedSource, FetchError>>()

        // When one fetch starts the transfer and a second joins it
        fetcher.fetch(FetchRequest(url: url), reuse: reuse) { results.append($0) }
        fetcher.fetch(FetchRequest(url: url), reuse: reuse) { results.append($0) }
        #expect(await eventually { fetcher.counters.coalescedJoins == 1 })
        origin.openGate("go")

        // Then reuse was asked once (before the transfer started), not by the joiner, and one transfer ran
        #expect(await eventually { results.count == 2 })
        #expect(asked.count == 1)
        #expect(origin.hits("/held.jpg") == 1)
        #expect(results.all.allSatisfy { $0.success?.body == sampleBody(100) })
    }

    @Test func conditionalAndUnconditionalFetchesDoNotCoalesce() async throws {
        origin.route(
            "/cond.jpg",
            .gate(
                "go",
                then: .conditional(
                    etag: "\"e1\"", lastModified: nil, headers: [], body: sampleBody(50), contentType: "image/png")))
        let plain = Collector<Result<FetchedSource, FetchError>>()
        let conditional = Collector<Result<Revalidation, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/cond.jpg"))) { plain.append($0) }
        fetcher.revalidate(FetchRequest(url: origin.url("/cond.jpg")), validators: Validators(etag: "\"e1\"")) {
            conditional.append($0)
        }
        #expect(await eventually { origin.hits("/cond.jpg") == 2 })
        origin.openGate("go")
        #expect(await eventually { plain.count == 1 && conditional.count == 1 })
        #expect(plain.all[0].success?.body == sampleBody(50))
        guard case .success(.notModified) = conditional.all[0] else {
            Issue.record("expected 304, got \(conditional.all[0])")
            return
        }
    }

    @Test func aCompletionMayFetchAgainFromTheFetchThread() async throws {
        // Given a completion that starts another fetch of the same URL (re-entrancy)
        origin.route("/reentrant.jpg", .ok(sampleBody(10)))
        let second = Collector<Result<FetchedSource, FetchError>>()
        let fetcher = self.fetcher
        let url = origin.url("/reentrant.jpg")
        fetcher.fetch(FetchRequest(url: url)) { _ in
            fetcher.fetch(FetchRequest(url: url)) { second.append($0) }
        }
        // Then the second fetch is a new transfer and completes
        #expect(await eventually { second.count == 1 })
        #expect(second.all[0].success != nil)
        #expect(origin.hits("/reentrant.jpg") == 2)
    }
}
