// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct SchedulingTests {
    let origin: LoopbackOrigin

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
    }

    @Test func perHostCapQueuesTheRestAndStillCompletesThem() async throws {
        // Given a cap of 2 and six different sources held back by the origin
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxPerHost = 2 })
        let paths = (0..<6).map { "/cap/\($0).jpg" }
        for path in paths { origin.route(path, .gate("go", then: .ok(sampleBody(32)))) }
        let results = Collector<Result<FetchedSource, FetchError>>()
        for path in paths { fetcher.fetch(FetchRequest(url: origin.url(path))) { results.append($0) } }
        // Then only two reach the origin while the others wait their turn
        #expect(await eventually { origin.currentRequests == 2 && fetcher.counters.queued == 4 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(origin.currentRequests == 2)
        #expect(fetcher.counters.running == 2)
        origin.openGate("go")
        // And every queued one still completes, never more than two at a time
        #expect(await eventually { results.count == 6 })
        #expect(results.all.allSatisfy { $0.success != nil })
        #expect(origin.maxConcurrentRequests == 2)
        #expect(origin.maxConcurrentConnections <= 2)
    }

    @Test func interactiveFetchesLeaveTheQueueBeforeBackgroundOnes() async throws {
        // Given a cap of 1, held by a first request
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxPerHost = 1 })
        for path in ["/first", "/bg1", "/bg2", "/i1", "/i2", "/promoted"] {
            origin.route(path, .gate("go", then: .ok(sampleBody(4))))
        }
        let results = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/first"))) { results.append($0) }
        #expect(await eventually { origin.hits("/first") == 1 })
        // When background and interactive fetches queue up (and an interactive waiter joins a background one)
        for (path, priority) in [
            ("/bg1", FetchPriority.background), ("/bg2", .background), ("/promoted", .background),
            ("/i1", .interactive), ("/i2", .interactive), ("/promoted", .interactive),
        ] {
            fetcher.fetch(FetchRequest(url: origin.url(path), priority: priority)) { results.append($0) }
        }
        #expect(await eventually { fetcher.counters.queued == 5 && fetcher.counters.coalescedJoins == 1 })
        #expect(fetcher.counters.transfersPromoted == 1)
        origin.openGate("go")
        // Then the interactive ones (the promoted one included) go first, FIFO within each class
        #expect(await eventually { results.count == 7 })
        #expect(origin.requests.map(\.path) == ["/first", "/i1", "/i2", "/promoted", "/bg1", "/bg2"])
    }

    @Test func promotingAQueuedBackgroundTicketMovesItsTransferAhead() async throws {
        // Given a cap of 1, held by a first request, and two background fetches queued behind it
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxPerHost = 1 })
        for path in ["/p-first", "/p-bg1", "/p-bg2"] { origin.route(path, .gate("p", then: .ok(sampleBody(4)))) }
        let results = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/p-first"))) { results.append($0) }
        #expect(await eventually { origin.hits("/p-first") == 1 })
        fetcher.fetch(FetchRequest(url: origin.url("/p-bg1"), priority: .background)) { results.append($0) }
        let second = fetcher.fetch(FetchRequest(url: origin.url("/p-bg2"), priority: .background)) {
            results.append($0)
        }
        #expect(await eventually { fetcher.counters.queued == 2 })
        // When the second one's ticket is promoted (a client now waits on what it started)
        fetcher.promote(second)
        #expect(await eventually { fetcher.counters.transfersPromoted == 1 })
        origin.openGate("p")
        // Then it reaches the origin before the older background fetch, and each runs once
        #expect(await eventually { results.count == 3 })
        #expect(origin.requests.map(\.path) == ["/p-first", "/p-bg2", "/p-bg1"])
    }

    @Test func aTransferCancelledWhileQueuedNeverReachesTheOrigin() async throws {
        // Given a cap of 1 held by a first request, and a second fetch waiting in the queue
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxPerHost = 1 })
        origin.route("/holder", .gate("go", then: .ok(sampleBody(4))))
        origin.route("/queued", .ok(sampleBody(4)))
        origin.route("/after", .ok(sampleBody(4)))
        let results = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/holder"))) { results.append($0) }
        #expect(await eventually { origin.hits("/holder") == 1 })
        let ticket = fetcher.fetch(FetchRequest(url: origin.url("/queued"))) { results.append($0) }
        fetcher.fetch(FetchRequest(url: origin.url("/after"))) { results.append($0) }
        #expect(await eventually { fetcher.counters.queued == 2 })
        // When the queued one is cancelled and the slot frees
        #expect(fetcher.cancel(ticket))
        #expect(await eventually { fetcher.counters.queued == 1 && fetcher.counters.transfersAbandoned == 1 })
        origin.openGate("go")
        // Then the next queued transfer takes the slot and the cancelled one never runs
        #expect(await eventually { results.count == 2 })
        #expect(origin.hits("/after") == 1)
        #expect(origin.hits("/queued") == 0)
        #expect(fetcher.counters.transfersStarted == 2)
    }

    @Test func aRedirectToAnotherHostGivesUpItsSlot() async throws {
        // Given a cap of 1 per host; host B (localhost) is busy with a held request
        let other = try LoopbackOrigin(host: "127.0.0.1")
        let fetcher = try OriginFetcher(
            configuration: testConfiguration {
                $0.maxPerHost = 1
                $0.allowedNetworks.append(IPNetwork("127.0.0.1/32")!)
            })
        other.route("/held", .gate("b", then: .ok(sampleBody(4))))
        other.route("/img", .ok(sampleBody(8)))
        origin.route("/to-b", .redirect(to: "http://localhost:\(other.port)/img"))
        origin.route("/next", .ok(sampleBody(2)))
        let held = Collector<Result<FetchedSource, FetchError>>()
        let redirected = Collector<Result<FetchedSource, FetchError>>()
        let next = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: "http://localhost:\(other.port)/held")) { held.append($0) }
        #expect(await eventually { other.hits("/held") == 1 })
        // When a fetch on host A redirects to B, with another A fetch queued behind it
        fetcher.fetch(FetchRequest(url: origin.url("/to-b"))) { redirected.append($0) }
        fetcher.fetch(FetchRequest(url: origin.url("/next"))) { next.append($0) }
        // Then A's slot passes to the next A fetch while the redirect waits for B's slot
        #expect(await eventually { next.count == 1 })
        #expect(redirected.count == 0)
        #expect(other.hits("/img") == 0)
        other.openGate("b")
        #expect(await eventually { redirected.count == 1 && held.count == 1 })
        #expect(redirected.all.first?.success?.finalURL == "http://localhost:\(other.port)/img")
    }

    @Test func distinctHostsDoNotShareACap() async throws {
        // 127.0.0.2 and localhost are different hosts for the cap (one per host name)
        let other = try LoopbackOrigin(host: "127.0.0.1")
        let fetcher = try OriginFetcher(
            configuration: testConfiguration {
                $0.maxPerHost = 1
                $0.allowedNetworks.append(IPNetwork("127.0.0.1/32")!)
            })
        origin.route("/held", .gate("go", then: .ok(sampleBody(4))))
        other.route("/free", .ok(sampleBody(4)))
        let held = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/held"))) { held.append($0) }
        #expect(await eventually { origin.hits("/held") == 1 })
        #expect(await fetcher.fetch("http://localhost:\(other.port)/free").success != nil)
        origin.openGate("go")
        #expect(await eventually { held.count == 1 })
    }
}

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct RevalidationTests {
    let origin: LoopbackOrigin
    let fetcher: OriginFetcher

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
        fetcher = try OriginFetcher(configuration: testConfiguration())
        origin.route(
            "/v.jpg",
            .conditional(
                etag: "\"abc\"", lastModified: "Tue, 01 Jul 2025 10:00:00 GMT",
                headers: [.init("Cache-Control", "max-age=300")], body: sampleBody(500), contentType: "image/jpeg"))
    }

    @Test func matchingETagGivesNotModifiedWithFreshHeaders() async throws {
        let result = try await fetcher.revalidate(origin.url("/v.jpg"), validators: Validators(etag: "\"abc\"")).get()
        guard case .notModified(let headers) = result else {
            Issue.record("expected notModified, got \(result)")
            return
        }
        #expect(headers.cacheControl == "max-age=300")
        #expect(headers.etag == "\"abc\"")
        #expect(origin.requests.last?.headers["if-none-match"] == "\"abc\"")
        #expect(fetcher.counters.notModified == 1)
    }

    @Test func matchingLastModifiedGivesNotModified() async throws {
        let validators = Validators(lastModified: "Tue, 01 Jul 2025 10:00:00 GMT")
        let result = try await fetcher.revalidate(origin.url("/v.jpg"), validators: validators).get()
        guard case .notModified = result else {
            Issue.record("expected notModified, got \(result)")
            return
        }
        #expect(origin.requests.last?.headers["if-modified-since"] == "Tue, 01 Jul 2025 10:00:00 GMT")
    }

    @Test func changedSourceGivesTheNewBody() async throws {
        let result = try await fetcher.revalidate(origin.url("/v.jpg"), validators: Validators(etag: "\"old\"")).get()
        guard case .modified(let source) = result else {
            Issue.record("expected modified, got \(result)")
            return
        }
        #expect(source.body == sampleBody(500))
        #expect(source.headers.etag == "\"abc\"")
    }

    @Test func unconditionalFetchSendsNoValidators() async throws {
        _ = try await fetcher.fetch(origin.url("/v.jpg")).get()
        #expect(origin.requests.last?.headers["if-none-match"] == nil)
        #expect(origin.requests.last?.headers["if-modified-since"] == nil)
    }
}
