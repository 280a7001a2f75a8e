// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct CancellationTests {
    let origin: LoopbackOrigin
    let fetcher: OriginFetcher

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
        fetcher = try OriginFetcher(configuration: testConfiguration())
    }

    @Test func oneWaiterLeavingDoesNotDisturbTheOthers() async throws {
        // Given three waiters on a held-back source
        origin.route("/shared.jpg", .gate("go", then: .ok(sampleBody(1000))))
        let kept = Collector<Result<FetchedSource, FetchError>>()
        let cancelled = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/shared.jpg"))) { kept.append($0) }
        let ticket = fetcher.fetch(FetchRequest(url: origin.url("/shared.jpg"))) { cancelled.append($0) }
        fetcher.fetch(FetchRequest(url: origin.url("/shared.jpg"))) { kept.append($0) }
        #expect(await eventually { origin.hits("/shared.jpg") == 1 && fetcher.counters.coalescedJoins == 2 })
        // When one leaves
        #expect(fetcher.cancel(ticket))
        #expect(await eventually { fetcher.counters.waitersCancelled == 1 })
        origin.openGate("go")
        // Then the others get the bytes from the same single transfer, and the leaver hears nothing
        #expect(await eventually { kept.count == 2 })
        #expect(kept.all.allSatisfy { $0.success?.body == sampleBody(1000) })
        #expect(origin.hits("/shared.jpg") == 1)
        #expect(origin.clientCloses("/shared.jpg") == 0)
        try await Task.sleep(for: .milliseconds(100))
        #expect(cancelled.count == 0)
        #expect(!fetcher.cancel(ticket))  // already cancelled
    }

    @Test func lastWaiterLeavingClosesTheOriginConnection() async throws {
        // Given two waiters on a source that never answers
        origin.route("/hang.jpg", .hang)
        let answers = Collector<Result<FetchedSource, FetchError>>()
        let first = fetcher.fetch(FetchRequest(url: origin.url("/hang.jpg"))) { answers.append($0) }
        let second = fetcher.fetch(FetchRequest(url: origin.url("/hang.jpg"))) { answers.append($0) }
        #expect(await eventually { origin.hits("/hang.jpg") == 1 })
        // When both leave
        #expect(fetcher.cancel(first))
        try await Task.sleep(for: .milliseconds(50))
        #expect(origin.clientCloses("/hang.jpg") == 0)  // one waiter still there
        let start = ContinuousClock.now
        #expect(fetcher.cancel(second))
        // Then the origin sees the connection close promptly (the budget is 100 ms; the bound here is
        // loose because this machine is shared), and no callback runs
        #expect(await eventually(timeout: .seconds(5)) { origin.clientCloses("/hang.jpg") == 1 })
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(2), "origin saw the close after \(elapsed)")
        // (counters are published at the end of the fetch thread's iteration, which may be after the close)
        #expect(await eventually { fetcher.counters.transfersAbandoned == 1 })
        #expect(answers.count == 0)
        // And the in-flight entry is gone: a new fetch starts a new transfer
        origin.route("/hang.jpg", .ok(sampleBody(10)))
        #expect(await fetcher.fetch(origin.url("/hang.jpg")).success?.body == sampleBody(10))
        #expect(origin.hits("/hang.jpg") == 2)
    }

    @Test func cancellingDuringTheBodyStopsTheDownload() async throws {
        // Given a body arriving slowly (an endless one would hit maxSourceBytes first on loopback)
        origin.route(
            "/stream.jpg", .trickle(body: sampleBody(1000), interval: .milliseconds(20), contentType: "image/jpeg"))
        let ticket = fetcher.fetch(FetchRequest(url: origin.url("/stream.jpg"))) { _ in }
        #expect(await eventually { origin.hits("/stream.jpg") == 1 })
        try await Task.sleep(for: .milliseconds(100))
        // When its only waiter leaves mid-body, then the origin sees the close
        #expect(fetcher.cancel(ticket))
        #expect(await eventually { origin.clientCloses("/stream.jpg") == 1 })
    }

    @Test func cancelAfterDeliveryReturnsFalse() async throws {
        origin.route("/done.jpg", .ok(sampleBody(10)))
        let answers = Collector<Result<FetchedSource, FetchError>>()
        let ticket = fetcher.fetch(FetchRequest(url: origin.url("/done.jpg"))) { answers.append($0) }
        #expect(await eventually { answers.count == 1 })
        #expect(!fetcher.cancel(ticket))
    }

    @Test func cancelRacingDeliveryCallsEachCompletionAtMostOnce() async throws {
        // Given many fetches cancelled at arbitrary moments around their completion
        origin.route("/race.jpg", .ok(sampleBody(100)))
        let calls = Collector<Int>()
        var cancelledCount = 0
        for index in 0..<200 {
            let ticket = fetcher.fetch(FetchRequest(url: origin.url("/race.jpg"))) { _ in calls.append(index) }
            if index % 3 == 0 { try await Task.sleep(for: .microseconds(200)) }
            if fetcher.cancel(ticket) { cancelledCount += 1 }
        }
        // Then every fetch was either cancelled or answered, never both, never twice
        #expect(await eventually { calls.count + cancelledCount == 200 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.count + cancelledCount == 200)
        #expect(Set(calls.all).count == calls.count)
    }

    @Test func releasingTheLastReferenceInsideACompletionStopsTheFetcher() async throws {
        // Given a fetcher whose only remaining reference is held by a completion
        origin.route("/last.jpg", .ok(sampleBody(10)))
        let answers = Collector<Result<FetchedSource, FetchError>>()
        var fetcher: OriginFetcher? = try OriginFetcher(configuration: testConfiguration())
        fetcher?.fetch(FetchRequest(url: origin.url("/last.jpg"))) { [fetcher] result in
            _ = fetcher
            answers.append(result)
        }
        fetcher = nil
        // Then the fetch completes, and the fetcher's deinit on its own thread neither deadlocks nor traps
        #expect(await eventually { answers.count == 1 })
        #expect(answers.all.first?.success != nil)
    }

    @Test func shutdownAnswersEveryWaiterAndClosesConnections() async throws {
        // Given transfers in flight, one of them shared
        origin.route("/s1.jpg", .hang)
        origin.route("/s2.jpg", .hang)
        let fetcher = try OriginFetcher(configuration: testConfiguration())
        let answers = Collector<Result<FetchedSource, FetchError>>()
        for path in ["/s1.jpg", "/s1.jpg", "/s2.jpg"] {
            fetcher.fetch(FetchRequest(url: origin.url(path))) { answers.append($0) }
        }
        #expect(await eventually { origin.hits("/s1.jpg") == 1 && origin.hits("/s2.jpg") == 1 })
        // When the fetcher shuts down
        fetcher.shutdown()
        // Then every waiter got .cancelled, the origin saw both connections close, and later fetches fail at once
        #expect(answers.count == 3)
        #expect(answers.all.allSatisfy { $0.failure == .cancelled })
        #expect(await eventually { origin.clientCloses("/s1.jpg") == 1 && origin.clientCloses("/s2.jpg") == 1 })
        let late = Collector<Result<FetchedSource, FetchError>>()
        fetcher.fetch(FetchRequest(url: origin.url("/s1.jpg"))) { late.append($0) }
        #expect(late.all.first?.failure == .cancelled)
        fetcher.shutdown()  // idempotent
    }
}
