// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Liveness, readiness and graceful shutdown of the whole service.
    @Suite(.timeLimit(.minutes(2))) struct LifecycleTests {
        /// Sends one request on a new connection and returns how long the answer took.
        private func timedRequest(
            _ harness: Harness, _ target: String
        ) async throws -> (RawHTTPClient.Response, Duration) {
            let start = ContinuousClock.now
            let response = try await harness.request(target, timeout: .seconds(10))
            return (response, ContinuousClock.now - start)
        }

        @Test func healthAnswersQuicklyWhileRendersFillThePool() async throws {
            // Given two render threads busy with slow renders (4096x4096 PNGs, upscaled from a small source) and
            // more of them queued
            let harness = try Harness(["image.render_threads": "2", "image.queue_limit": "16"])
            harness.origin.route("/big.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let slowRenders = 3  // two running, one queued: enough to keep the pool full while /health is probed
            let clients = try (0..<slowRenders).map { index in
                let client = try harness.client()
                let target = harness.thumbTarget("/big.png", "w=\(4096 - index)&h=4096&fit=fill&enlarge=1&format=png")
                try client.send(Harness.requestText(target))
                return client
            }
            #expect(await eventually { harness.service.renderPool.runningCount == 2 })

            // When /health is asked five times meanwhile
            var timings: [Duration] = []
            for _ in 0..<5 {
                let (response, elapsed) = try await timedRequest(harness, "/health")
                #expect(response.status == 200 && response.text == "ok\n")
                timings.append(elapsed)
            }
            let poolWasFull = harness.service.renderPool.runningCount == 2

            // Then it answered at once each time: it is never queued behind renders (the median must be under
            // 100 ms; every answer under 1 s, leaving room for a loaded machine's scheduling hiccups)
            #expect(poolWasFull, "the renders finished too early to prove anything")
            let sorted = timings.sorted()
            #expect(sorted[sorted.count / 2] < .milliseconds(100), "timings: \(timings)")
            #expect(sorted.last! < .seconds(1), "timings: \(timings)")
            for client in clients { client.close() }
            try await harness.stop()  // waits for the renders: on a thread, not in the test's deinit
        }

        @Test func readyIs200AfterStart() async throws {
            let harness = try Harness.shared()
            let response = try await harness.request("/ready")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json")
            #expect(try await harness.request("/health").status == 200)
        }

        @Test func gracefulShutdownFinishesTheThumbnailInFlightAndAnswersReady503() async throws {
            // Given a thumbnail request in flight (its source held back by the origin)
            let harness = try Harness()
            harness.origin.route("/inflight.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let client = try harness.client()
            try client.send(Harness.requestText(harness.thumbTarget("/inflight.jpg", "w=64")))
            #expect(await eventually { harness.origin.hits("/inflight.jpg") == 1 })
            // And a /ready request whose head the server has read (it answered 100 Continue) but whose body is
            // still to come: a connection in the middle of a request is not idle, so shutdown does not close it
            let probe = try harness.client()
            try probe.send(
                "GET /ready HTTP/1.1\r\nHost: thumbd.test\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
            #expect(try await probe.response(timeout: .seconds(10)).status == 100)

            // When the service is asked to stop
            let service = harness.service
            let stopping = onThread { service.shutdown() }
            #expect(await eventually { (try? harness.client()) == nil })  // the listener is closed: shutdown has begun

            // Then /ready, completed during the drain, is 503
            try probe.send("{}")
            expectJSONError(try await probe.response(timeout: .seconds(10)), status: 503)

            // And the request in flight still completes with its thumbnail once the source arrives
            #expect(!stopping.isFinished)
            harness.origin.openGate("go")
            let response = try await client.response(timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(try response.image().width == 64)
            #expect(response.header("connection") == "close")
            try await stopping.value()
        }

        @Test func shutdownWithNothingInFlightIsQuick() async throws {
            let harness = try Harness()
            #expect(try await harness.request("/health").status == 200)
            let start = ContinuousClock.now
            try await harness.stop()
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(throws: (any Error).self) { try harness.client() }
        }
    }
}
