// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Foundation
import Synchronization
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `POST/GET/DELETE /prefetch` through the whole service, against a counting loopback origin: prefetch fills
    /// both tiers once per source, DELETE stops what is pending but not what a client waits for, and prefetch work
    /// waits behind client work in the render pool.
    @Suite(.timeLimit(.minutes(2))) struct PrefetchTests {
        static let token = "integration-prefetch-token-01"
        static var authorized: [(String, String)] { [("Authorization", "Bearer \(token)")] }

        /// `{"items": [...]}` with one `{"url": ..., <parameters>}` per path.
        static func body(_ harness: Harness, _ paths: [String], _ parameters: String = "\"w\": 40") -> String {
            let items = paths.map { "{\"url\": \"\(harness.origin.url($0))\", \(parameters)}" }
            return "{\"items\": [\(items.joined(separator: ", "))]}"
        }

        static func json(_ response: RawHTTPClient.Response) -> [String: Any]? {
            try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        }

        /// Posts a job and returns its id.
        static func start(_ harness: Harness, _ body: String, headers: [(String, String)] = []) async throws -> String {
            let response = try await harness.request(
                "/prefetch", method: "POST", headers: authorized + headers, body: body)
            #expect(response.status == 202, "body: \(response.text)")
            return try #require(json(response)?["id"] as? String)
        }

        /// The job's counts, read in process.
        static func counts(_ harness: Harness, _ id: String) -> [String: Any] {
            guard let text = harness.service.prefetch.statusJSON(of: id),
                let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            else { return [:] }
            return object
        }

        static func count(_ harness: Harness, _ id: String, _ name: String) -> Int {
            counts(harness, id)[name] as? Int ?? -1
        }

        @Test func prefetchFillsBothTiersOnceAndLaterRequestsHit() async throws {
            // Given five sources on a counting origin
            let harness = try Harness(["admin.token": Self.token])
            let paths = (0..<5).map { "/warm-\($0).jpg" }
            for path in paths { harness.origin.route(path, .ok(Fixtures.bytes("progressive.jpg"))) }

            // When they are prefetched and the job is read back over HTTP
            let id = try await Self.start(harness, Self.body(harness, paths))
            #expect(id.count == 32)
            #expect(await eventually { Self.count(harness, id, "done") == 5 })
            let status = try await harness.request("/prefetch/\(id)", headers: Self.authorized)
            #expect(status.status == 200)
            let object = try #require(Self.json(status))
            #expect(object["total"] as? Int == 5)
            #expect(object["done"] as? Int == 5)
            #expect(object["failed"] as? Int == 0)
            #expect(object["pending"] as? Int == 0)
            #expect(object["cancelled"] as? Int == 0)

            // Then each thumbnail is served from memory, and the origin saw each source once
            for path in paths {
                let response = try await harness.request(harness.thumbTarget(path, "w=40"))
                #expect(response.status == 200)
                #expect(response.header("x-cache") == "HIT-MEMORY")
                #expect(try response.image().width == 40)
                #expect(harness.origin.hits(path) == 1)
            }
            // And the disk tier has them too
            #expect(await eventually { harness.service.cache.variants?.statistics.currentEntries == 5 })

            // And prefetching them again is done at once without any work
            let flights = harness.service.renderCounters.flightsStarted
            let again = try await Self.start(harness, Self.body(harness, paths))
            #expect(await eventually { Self.count(harness, again, "done") == 5 })
            #expect(harness.service.renderCounters.flightsStarted == flights)
            for path in paths { #expect(harness.origin.hits(path) == 1) }
        }

        @Test func itemsWithoutAFormatAreNegotiatedFromThePostsAccept() async throws {
            // Given a prefetch sent with the Accept header of a WebP-capable client, one item without `format`
            // and one asking for PNG
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/negotiated.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let url = harness.origin.url("/negotiated.jpg")
            let body =
                "{\"items\": [{\"url\": \"\(url)\", \"w\": 40}, {\"url\": \"\(url)\", \"w\": 40, \"format\": \"png\"}]}"
            let id = try await Self.start(harness, body, headers: [("Accept", "image/webp,*/*")])
            #expect(await eventually { Self.count(harness, id, "done") == 2 })

            // When that client asks without `format`, and another asks for PNG
            let webp = try await harness.request(
                harness.thumbTarget("/negotiated.jpg", "w=40"), headers: [("Accept", "image/webp,*/*")])
            let png = try await harness.request(harness.thumbTarget("/negotiated.jpg", "w=40&format=png"))

            // Then both were prefetched: memory hits in the format each asked for, from one fetch
            #expect(webp.header("x-cache") == "HIT-MEMORY")
            #expect(webp.header("content-type") == "image/webp")
            #expect(png.header("x-cache") == "HIT-MEMORY")
            #expect(png.header("content-type") == "image/png")
            #expect(harness.origin.hits("/negotiated.jpg") == 1)
        }

        @Test func itemsAlreadyOnDiskCountAsDoneWithoutAFetch() async throws {
            // Given a thumbnail on disk only (memory trimmed)
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/disk.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let id = try await Self.start(harness, Self.body(harness, ["/disk.jpg"]))
            #expect(await eventually { Self.count(harness, id, "done") == 1 })
            #expect(await eventually { harness.service.cache.variants?.statistics.currentEntries == 1 })
            _ = harness.service.cache.trimMemory(toBytes: 0)

            // When it is prefetched again
            let again = try await Self.start(harness, Self.body(harness, ["/disk.jpg"]))

            // Then it is done from the disk tier (promoted to memory), with no second fetch
            #expect(await eventually { Self.count(harness, again, "done") == 1 })
            #expect(harness.origin.hits("/disk.jpg") == 1)
            #expect(harness.service.renderCounters.flightsStarted == 1)
        }

        @Test func deleteStopsPendingItems() async throws {
            // Given twenty slow sources (each answer takes 3 s) being prefetched, at most 4 at a time
            let harness = try Harness(["admin.token": Self.token, "fetch.timeout": "30s"])
            let paths = (0..<20).map { "/slow-\($0).jpg" }
            for path in paths {
                harness.origin.route(path, .delay(.seconds(3), then: .ok(Fixtures.bytes("progressive.jpg"))))
            }
            let id = try await Self.start(harness, Self.body(harness, paths))
            #expect(await eventually { harness.origin.currentRequests >= 1 })

            // When the job is cancelled
            let deleted = try await harness.request("/prefetch/\(id)", method: "DELETE", headers: Self.authorized)

            // Then every item is cancelled, the transfers under way are closed, and no other source is asked for
            #expect(deleted.status == 200)
            let object = try #require(Self.json(deleted))
            #expect(object["cancelled"] as? Int == 20)
            #expect(object["pending"] as? Int == 0)
            #expect(object["state"] as? String == "cancelled")
            #expect(await eventually { harness.origin.currentRequests == 0 })
            try await Task.sleep(for: .milliseconds(500))
            let hits = paths.map { harness.origin.hits($0) }.reduce(0, +)
            #expect(hits <= 4)
            #expect(harness.service.renderCounters.rendersStarted == 0)
            let read = try await harness.request("/prefetch/\(id)", headers: Self.authorized)
            #expect(Self.json(read)?["cancelled"] as? Int == 20)
        }

        @Test func aClientWaitingOnAPrefetchedItemStillGetsItsAnswerAfterDelete() async throws {
            // Given a prefetch waiting for a gated source, and a client that joined the same thumbnail
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/joined.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let id = try await Self.start(harness, Self.body(harness, ["/joined.jpg"]))
            #expect(await eventually { harness.origin.hits("/joined.jpg") == 1 })
            let client = try harness.client()
            try client.send(Harness.requestText(harness.thumbTarget("/joined.jpg", "w=40")))
            #expect(await eventually { harness.service.renderCounters.coalescedJoins == 1 })

            // When the prefetch is cancelled, and only then the source arrives
            let deleted = try await harness.request("/prefetch/\(id)", method: "DELETE", headers: Self.authorized)
            #expect(Self.json(deleted)?["cancelled"] as? Int == 1)
            harness.origin.openGate("go")

            // Then the client gets its thumbnail from the one transfer, which was never cut
            let response = try await client.response(timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(response.header("x-cache") == "COALESCED")
            #expect(try response.image().width == 40)
            #expect(harness.origin.hits("/joined.jpg") == 1)
            #expect(harness.origin.clientCloses("/joined.jpg") == 0)
            #expect(harness.service.renderCounters.fetchCancellations == 0)
        }

        /// Occupies the render pool's regular thread and its background thread; returns their blockers.
        static func occupy(_ pool: WorkerPool) async throws -> (regular: BlockingJob, background: BlockingJob) {
            let regular = BlockingJob()
            let background = BlockingJob()
            // Background first: the background thread starts nothing while a client job runs.
            try pool.submit(priority: .background) { background.run() }
            #expect(await eventually { background.isRunning })
            try pool.submit { regular.run() }
            #expect(await eventually { regular.isRunning })
            return (regular, background)
        }

        @Test func aClientRenderQueuedAfterPrefetchRendersRunsFirst() async throws {
            // Given one render thread and the background thread, both busy, and three prefetch renders queued
            let harness = try Harness(["admin.token": Self.token, "image.render_threads": "1"])
            let pool = harness.service.renderPool
            let (regular, background) = try await Self.occupy(pool)
            let paths = (0..<3).map { "/queued-\($0).jpg" }
            for path in paths + ["/client.jpg"] { harness.origin.route(path, .ok(Fixtures.bytes("progressive.jpg"))) }
            let id = try await Self.start(harness, Self.body(harness, paths))
            #expect(await eventually { pool.queueDepth.background == 3 })

            // When a client asks for another thumbnail (its render queues after them) and the regular thread frees
            let client = try harness.client()
            try client.send(Harness.requestText(harness.thumbTarget("/client.jpg", "w=40")))
            #expect(await eventually { pool.queueDepth.interactive == 1 })
            regular.release()

            // Then the client's render runs first: it is answered while every prefetch render still waits
            let response = try await client.response(timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(response.header("x-cache") == "MISS")
            #expect(Self.count(harness, id, "done") == 0)
            #expect(pool.queueDepth.background == 3)

            // And the prefetch renders run once the background thread is free
            background.release()
            #expect(await eventually { Self.count(harness, id, "done") == 3 })
        }

        @Test func aClientJoiningAQueuedPrefetchRenderMovesItToTheInteractiveLane() async throws {
            // Given one render thread and the background thread, both busy, and two prefetch renders queued
            let harness = try Harness(["admin.token": Self.token, "image.render_threads": "1"])
            let pool = harness.service.renderPool
            let (regular, background) = try await Self.occupy(pool)
            for path in ["/a.jpg", "/b.jpg"] { harness.origin.route(path, .ok(Fixtures.bytes("progressive.jpg"))) }
            let id = try await Self.start(harness, Self.body(harness, ["/a.jpg", "/b.jpg"]))
            #expect(await eventually { pool.queueDepth.background == 2 })

            // When a client asks for the second one (the stampede case: it joins the queued render)
            let client = try harness.client()
            try client.send(Harness.requestText(harness.thumbTarget("/b.jpg", "w=40")))
            #expect(await eventually { harness.service.renderCounters.renderPromotions == 1 })
            #expect(pool.queueDepth == .init(interactive: 1, background: 1))
            regular.release()

            // Then that render runs on the regular thread before the other prefetch render, and the client gets it
            let response = try await client.response(timeout: .seconds(30))
            #expect(response.status == 200)
            #expect(response.header("x-cache") == "COALESCED")
            #expect(Self.count(harness, id, "done") == 1)
            #expect(Self.count(harness, id, "pending") == 1)
            background.release()
            #expect(await eventually { Self.count(harness, id, "done") == 2 })
            #expect(harness.origin.hits("/b.jpg") == 1)
        }

        @Test func aClientJoiningAQueuedPrefetchFetchMovesItAheadInTheHostQueue() async throws {
            // Given one transfer per host, held by a client, and two prefetch fetches queued behind it
            let harness = try Harness(["admin.token": Self.token, "fetch.max_per_host": "1"])
            harness.origin.route("/hold.jpg", .gate("hold", then: .ok(Fixtures.bytes("progressive.jpg"))))
            for path in ["/pa.jpg", "/pb.jpg"] { harness.origin.route(path, .ok(Fixtures.bytes("progressive.jpg"))) }
            let holder = try harness.client()
            try holder.send(Harness.requestText(harness.thumbTarget("/hold.jpg", "w=40")))
            #expect(await eventually { harness.origin.hits("/hold.jpg") == 1 })
            let id = try await Self.start(harness, Self.body(harness, ["/pa.jpg", "/pb.jpg"]))
            #expect(await eventually { harness.service.fetchCounters.queued == 2 })

            // When a client asks for the second prefetched thumbnail (it joins the prefetch's flight)
            let client = try harness.client()
            try client.send(Harness.requestText(harness.thumbTarget("/pb.jpg", "w=40")))
            #expect(await eventually { harness.service.fetchCounters.transfersPromoted == 1 })
            harness.origin.openGate("hold")

            // Then its source is fetched before the other prefetched one, once, and the client gets it
            #expect(try await client.response(timeout: .seconds(30)).status == 200)
            #expect(try await holder.response(timeout: .seconds(30)).status == 200)
            #expect(await eventually { Self.count(harness, id, "done") == 2 })
            #expect(harness.origin.requests.map(\.path) == ["/hold.jpg", "/pb.jpg", "/pa.jpg"])
        }

        @Test func theRoutesNeedTheAdminToken() async throws {
            // Given a service without admin.token, and one with it
            let without = try Harness.shared()
            let with = try Harness(["admin.token": Self.token])
            let body = Self.body(with, ["/x.jpg"])
            let id = String(repeating: "a", count: 32)

            // Then without a token configured the routes do not exist
            expectJSONError(
                try await without.request("/prefetch", method: "POST", headers: Self.authorized, body: body),
                status: 404)
            expectJSONError(try await without.request("/prefetch/\(id)", headers: Self.authorized), status: 404)

            // And with one, a missing or wrong token is 403 and nothing starts
            for headers in [[], [("Authorization", "Bearer wrong-token-wrong-token-00")]] {
                expectJSONError(
                    try await with.request("/prefetch", method: "POST", headers: headers, body: body), status: 403)
                expectJSONError(try await with.request("/prefetch/\(id)", headers: headers), status: 403)
                expectJSONError(
                    try await with.request("/prefetch/\(id)", method: "DELETE", headers: headers), status: 403)
            }
            #expect(with.origin.hits("/x.jpg") == 0)
            // And an unknown or malformed id is 404
            expectJSONError(try await with.request("/prefetch/\(id)", headers: Self.authorized), status: 404)
            expectJSONError(try await with.request("/prefetch/nope", headers: Self.authorized), status: 404)
        }

        @Test func badBodiesAreRefused() async throws {
            // Given a service with a 48 KiB body limit
            let harness = try Harness(["admin.token": Self.token, "server.max_body_bytes": "48KiB"])
            func post(_ body: String) async throws -> RawHTTPClient.Response {
                try await harness.request("/prefetch", method: "POST", headers: Self.authorized, body: body)
            }
            let item = "{\"url\": \"\(harness.origin.url("/i.jpg"))\", \"w\": 40}"

            // Then broken JSON, a wrong shape, no items, too many items and an invalid item are 400
            expectJSONError(try await post("{\"items\": ["), status: 400)
            expectJSONError(try await post("{\"things\": []}"), status: 400)
            expectJSONError(try await post("{\"items\": [{\"url\": [1]}]}"), status: 400, mentioning: "items[0]")
            expectJSONError(try await post("{\"items\": []}"), status: 400, mentioning: "1...1000")
            let many = Array(repeating: "{\"url\": \"http://127.0.0.2/\", \"w\": 1}", count: 1001)  // ~37 KB
            expectJSONError(try await post("{\"items\": [\(many.joined(separator: ","))]}"), status: 400)
            let invalid = "{\"items\": [\(item), {\"url\": \"\(harness.origin.url("/j.jpg"))\", \"w\": 0}]}"
            expectJSONError(try await post(invalid), status: 400, mentioning: "items[1]: invalid w")
            let unknown = "{\"items\": [{\"url\": \"\(harness.origin.url("/j.jpg"))\", \"w\": 9, \"zoom\": 2}]}"
            expectJSONError(try await post(unknown), status: 400, mentioning: "items[0]: unknown parameter: zoom")
            // And a body over server.max_body_bytes is 413
            let huge = Array(repeating: item, count: 2000).joined(separator: ",")  // ~90 KB
            let tooLarge = try await post("{\"items\": [\(huge)]}")
            #expect(tooLarge.status == 413)
            #expect(harness.origin.hits("/i.jpg") == 0)
        }
    }
}

/// A render-pool job that holds its worker until released (bounded: it gives up after 60 s).
final class BlockingJob: Sendable {
    private let released = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)

    var isRunning: Bool { running.load(ordering: .sequentiallyConsistent) }

    func run() {
        running.store(true, ordering: .sequentiallyConsistent)
        let deadline = ContinuousClock.now + .seconds(60)
        while !released.load(ordering: .sequentiallyConsistent), ContinuousClock.now < deadline {
            usleep(1_000)
        }
        running.store(false, ordering: .sequentiallyConsistent)
    }

    func release() { released.store(true, ordering: .sequentiallyConsistent) }
}
