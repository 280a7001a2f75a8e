// SPDX-License-Identifier: Apache-2.0
import Glibc
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Clients that leave: one leaving disturbs nobody; all leaving stops the transfer, and the origin sees it.
    @Suite(.timeLimit(.minutes(2))) struct CancellationTests {
        @Test func oneWaiterLeavingDoesNotCancelTheOthers() async throws {
            // Given three clients waiting for one gated thumbnail
            let harness = try Harness()
            harness.origin.route("/shared.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let target = harness.thumbTarget("/shared.jpg", "w=50")
            let clients = try (0..<3).map { _ in try harness.client() }
            for client in clients { try client.send(Harness.requestText(target)) }
            #expect(await eventually { harness.service.renderCounters.coalescedJoins == 2 })

            // When the first one hangs up, and only then the source arrives
            clients[0].close()
            #expect(await eventually { harness.service.renderCounters.waitersLeft == 1 })
            harness.origin.openGate("go")

            // Then the other two get their thumbnail from the one transfer, which was never cut
            for client in clients.dropFirst() {
                let response = try await client.response(timeout: .seconds(30))
                #expect(response.status == 200)
                #expect(try response.image().width == 50)
            }
            #expect(harness.origin.hits("/shared.jpg") == 1)
            #expect(harness.origin.clientCloses("/shared.jpg") == 0)
            #expect(harness.service.renderCounters.fetchCancellations == 0)
        }

        @Test func everyWaiterLeavingCancelsTheTransferAndTheOriginSeesTheClose() async throws {
            // Given three clients waiting for a source the origin never sends (and a fetch timeout too long to
            // close the transfer during the test: only cancellation can)
            let harness = try Harness(["fetch.timeout": "60s"])
            harness.origin.route("/abandoned.jpg", .hang)
            let target = harness.thumbTarget("/abandoned.jpg", "w=50")
            let clients = try (0..<3).map { _ in try harness.client() }
            for client in clients { try client.send(Harness.requestText(target)) }
            #expect(await eventually { harness.service.renderCounters.coalescedJoins == 2 })
            #expect(await eventually { harness.origin.hits("/abandoned.jpg") == 1 })

            // When all of them hang up
            for client in clients { client.close() }
            let closed = ContinuousClock.now

            // Then the transfer is removed and its connection closed: the origin sees the hang-up promptly
            // (the goal is 100 ms; 2 s leaves room for a loaded machine and still fails a transfer left to time out)
            #expect(await eventually(timeout: .seconds(10)) { harness.origin.clientCloses("/abandoned.jpg") == 1 })
            #expect(ContinuousClock.now - closed < .seconds(2))
            // (the cancellation is counted once the fetcher has said it won, which the fetch loop's close of the
            // transfer can precede: wait for the count rather than read it at once)
            #expect(await eventually { harness.service.renderCounters.fetchCancellations == 1 })
            let counters = harness.service.renderCounters
            #expect(counters.waitersLeft == 3)
            #expect(counters.fetchCancellations == 1)
            #expect(counters.rendersStarted == 0)

            // And the key is free again: the next request starts a new fetch rather than joining the dead one
            harness.origin.route("/abandoned.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let again = try await harness.request(target)
            #expect(again.status == 200)
            #expect(again.header("x-cache") == "MISS")
            #expect(harness.origin.hits("/abandoned.jpg") == 2)
        }

        @Test func aSharedTransferStopsOnlyWhenEveryVariantHasLostItsWaiters() async throws {
            // Given two sizes of one source waiting on one transfer (that no timeout ends during the test)
            let harness = try Harness(["fetch.timeout": "60s"])
            harness.origin.route("/two-sizes.jpg", .hang)
            let small = try harness.client()
            let large = try harness.client()
            try small.send(Harness.requestText(harness.thumbTarget("/two-sizes.jpg", "w=20")))
            try large.send(Harness.requestText(harness.thumbTarget("/two-sizes.jpg", "w=60")))
            #expect(await eventually { harness.service.renderCounters.flightsStarted == 2 })
            #expect(await eventually { harness.origin.hits("/two-sizes.jpg") == 1 })

            // When the small one's client leaves
            small.close()
            #expect(await eventually { harness.service.renderCounters.fetchCancellations == 1 })

            // Then the transfer goes on for the large one
            try await Task.sleep(for: .milliseconds(200))
            #expect(harness.origin.clientCloses("/two-sizes.jpg") == 0)

            // And when that client leaves too, the origin sees the close
            large.close()
            let closed = ContinuousClock.now
            #expect(await eventually(timeout: .seconds(10)) { harness.origin.clientCloses("/two-sizes.jpg") == 1 })
            #expect(ContinuousClock.now - closed < .seconds(2))
            #expect(harness.service.renderCounters.fetchCancellations == 2)
            #expect(harness.origin.hits("/two-sizes.jpg") == 1)
        }

        @Test func aRenderWhoseWaitersLeftStillFinishes() async throws {
            // Given one client waiting for a slow render (a 4096x4096 PNG, about a second of libvips work)
            let harness = try Harness()
            harness.origin.route("/slow-render.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let client = try harness.client()
            try client.send(
                Harness.requestText(
                    harness.thumbTarget("/slow-render.png", "w=4096&h=4096&fit=fill&enlarge=1&format=png")))
            #expect(await eventually { harness.service.renderCounters.rendersStarted == 1 })

            // When the client leaves while libvips is at work
            client.close()
            #expect(await eventually { harness.service.renderCounters.waitersLeft == 1 })

            // Then the render still runs to its end (the source is paid for; the result is for the cache)
            #expect(await eventually { harness.service.renderCounters.rendersFinished == 1 })
            // Counted after `rendersFinished`, once the coordinator has found nobody to answer: waited for, not
            // read at once (a loaded machine ran the read between the two counts).
            #expect(await eventually { harness.service.renderCounters.rendersUnattended == 1 })
            let counters = harness.service.renderCounters
            #expect(counters.renderFailures == 0)
            #expect(counters.fetchCancellations == 0)
            try await harness.stop()
        }
    }
}
