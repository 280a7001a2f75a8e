// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

/// One scrape of `/metrics`, parsed: every sample by its series (`name{labels}` exactly as exposed).
struct Scrape {
    let text: String
    let samples: [String: Double]

    init(_ response: RawHTTPClient.Response) throws {
        text = response.text
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let cut = try #require(line.lastIndex(of: " "), "no value in \(line)")
            let value = try #require(
                PrometheusFormat.value(String(line[line.index(after: cut)...])), "bad value: \(line)")
            samples[String(line[..<cut])] = value
        }
        self.samples = samples
    }

    /// The value of `series` (0 when absent: a labelled series appears when it first moves).
    subscript(_ series: String) -> Double { samples[series] ?? 0 }
}

extension Harness {
    /// `GET /metrics` on `port` (thumbd's own by default).
    func scrape(port: Int? = nil) async throws -> Scrape {
        let port = port ?? self.port
        let response = try await blocking {
            let client = try RawHTTPClient(host: "127.0.0.1", port: port)
            try client.send(Harness.requestText("/metrics"))
            return try client.readResponse(timeout: .seconds(30))
        }
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/plain; version=0.0.4; charset=utf-8")
        return try Scrape(response)
    }

    /// Scrapes until `condition` holds on a scrape (counters published by other threads land a moment after the
    /// response that caused them); returns the last scrape.
    func scrape(until condition: (Scrape) -> Bool, timeout: Duration = .seconds(15)) async throws -> Scrape {
        let deadline = ContinuousClock.now + timeout
        var last = try await scrape()
        while !condition(last) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            last = try await scrape()
        }
        return last
    }
}

extension Integration {
    /// `/metrics` against a running service: each metric moves when its event happens (scrape before and after),
    /// the text parses as Prometheus exposition format 0.0.4, and `metrics.listen` moves it to its own port.
    @Suite(.timeLimit(.minutes(2))) struct MetricsTests {
        static let thumb = "route=\"/thumb\""

        @Test func prefetchJobsAndItemsMoveWithTheirEvents() async throws {
            // Given a service with an admin token, two quick sources and three slow ones
            let harness = try Harness(["admin.token": Integration.PrefetchTests.token, "fetch.timeout": "30s"])
            let quick = ["/q0.jpg", "/q1.jpg"]
            let slow = ["/s0.jpg", "/s1.jpg", "/s2.jpg"]
            for path in quick { harness.origin.route(path, .ok(Fixtures.bytes("progressive.jpg"))) }
            for path in slow {
                harness.origin.route(path, .delay(.seconds(3), then: .ok(Fixtures.bytes("progressive.jpg"))))
            }
            let before = try await harness.scrape()

            // When a job of the quick ones finishes
            _ = try await Integration.PrefetchTests.start(harness, Integration.PrefetchTests.body(harness, quick))
            let finished = try await harness.scrape { $0["thumbd_prefetch_items_total{result=\"done\"}"] >= 2 }

            // Then the job and its items are counted, and nothing is under way any more
            #expect(finished["thumbd_prefetch_jobs_total"] - before["thumbd_prefetch_jobs_total"] == 1)
            #expect(finished["thumbd_prefetch_items_total{result=\"accepted\"}"] == 2)
            #expect(finished["thumbd_prefetch_items_total{result=\"done\"}"] == 2)
            #expect(finished["thumbd_prefetch_active_jobs"] == 0)

            // When a job of the slow ones is under way, then cancelled
            let id = try await Integration.PrefetchTests.start(harness, Integration.PrefetchTests.body(harness, slow))
            let running = try await harness.scrape { $0["thumbd_prefetch_items_in_flight"] >= 1 }
            #expect(running["thumbd_prefetch_active_jobs"] == 1)
            let deleted = try await harness.request(
                "/prefetch/\(id)", method: "DELETE", headers: Integration.PrefetchTests.authorized)
            #expect(deleted.status == 200)

            // Then its three items are counted cancelled, and the job is no longer active
            let cancelled = try await harness.scrape {
                $0["thumbd_prefetch_items_total{result=\"cancelled\"}"] >= 3 && $0["thumbd_prefetch_active_jobs"] == 0
            }
            #expect(cancelled["thumbd_prefetch_items_total{result=\"cancelled\"}"] == 3)
            #expect(cancelled["thumbd_prefetch_items_total{result=\"accepted\"}"] == 5)
            #expect(cancelled["thumbd_prefetch_active_jobs"] == 0)
            #expect(cancelled["thumbd_prefetch_items_total{result=\"failed\"}"] == 0)
        }

        @Test func aMissThenAMemoryHitThenADiskHit() async throws {
            let harness = try Harness()
            harness.origin.route("/tiers.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/tiers.jpg", "w=48")
            let before = try await harness.scrape()

            // When: a miss (fetch + render)
            #expect(try await harness.request(target).header("x-cache") == "MISS")
            let miss = try await harness.scrape { $0["thumbd_renders_total{result=\"success\"}"] == 1 }
            // Then the request, its outcome, the fetch, the render and the stored thumbnail show
            #expect(miss["thumbd_http_requests_total{\(Self.thumb),status=\"200\"}"] == 1)
            #expect(
                miss["thumbd_http_request_duration_seconds_count{\(Self.thumb)}"]
                    == before["thumbd_http_request_duration_seconds_count{\(Self.thumb)}"] + 1)
            #expect(miss["thumbd_cache_outcomes_total{outcome=\"miss\"}"] == 1)
            #expect(
                miss["thumbd_cache_misses_total{tier=\"memory\"}"]
                    > before["thumbd_cache_misses_total{tier=\"memory\"}"])
            #expect(
                miss["thumbd_cache_misses_total{tier=\"disk\"}"] == before["thumbd_cache_misses_total{tier=\"disk\"}"]
                    + 1)
            #expect(miss["thumbd_origin_fetches_started_total"] == 1)
            #expect(miss["thumbd_origin_fetches_total{result=\"success\"}"] == 1)
            #expect(miss["thumbd_render_duration_seconds_count"] == 1)
            #expect(miss["thumbd_render_duration_seconds_sum"] > 0)
            #expect(miss["thumbd_cache_entries{tier=\"memory\"}"] == 1)
            #expect(miss["thumbd_cache_bytes{tier=\"memory\"}"] > 0)

            // When: the same request again (a memory hit)
            #expect(try await harness.request(target).header("x-cache") == "HIT-MEMORY")
            let hit = try await harness.scrape()
            #expect(hit["thumbd_cache_outcomes_total{outcome=\"hit_memory\"}"] == 1)
            #expect(
                hit["thumbd_cache_hits_total{tier=\"memory\"}"] == miss["thumbd_cache_hits_total{tier=\"memory\"}"] + 1)
            #expect(hit["thumbd_http_requests_total{\(Self.thumb),status=\"200\"}"] == 2)
            #expect(hit["thumbd_origin_fetches_started_total"] == 1)

            // When: the memory tier is emptied and the thumbnail, on disk by then, is asked again (a disk hit)
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })
            _ = harness.service.cache.trimMemory(toBytes: 0)
            let trimmed = try await harness.scrape()
            #expect(trimmed["thumbd_cache_entries{tier=\"memory\"}"] == 0)
            #expect(trimmed["thumbd_cache_evictions_total{tier=\"memory\"}"] >= 1)
            #expect(trimmed["thumbd_cache_entries{tier=\"disk\"}"] == 1)
            #expect(trimmed["thumbd_cache_bytes{tier=\"disk\"}"] > 0)
            #expect(try await harness.request(target).header("x-cache") == "HIT-DISK")
            let disk = try await harness.scrape()
            #expect(disk["thumbd_cache_outcomes_total{outcome=\"hit_disk\"}"] == 1)
            #expect(
                disk["thumbd_cache_hits_total{tier=\"disk\"}"] == trimmed["thumbd_cache_hits_total{tier=\"disk\"}"] + 1)
            #expect(disk["thumbd_origin_fetches_started_total"] == 1)
        }

        @Test func coalescedRequestsAreCounted() async throws {
            // Given three clients asking for one thumbnail whose source is held back
            let harness = try Harness()
            harness.origin.route("/gated.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let target = harness.thumbTarget("/gated.jpg", "w=40")
            let clients = try (0..<3).map { _ in try harness.client() }
            for client in clients { try client.send(Harness.requestText(target)) }
            // Then two of them show as joined before the source arrives
            // (the fetch thread publishes its gauges after its loop iteration: wait for both)
            let joined = try await harness.scrape {
                $0["thumbd_coalesced_requests_total{stage=\"render\"}"] == 2
                    && $0["thumbd_origin_fetches_in_flight"] == 1
            }
            #expect(joined["thumbd_coalesced_requests_total{stage=\"render\"}"] == 2)
            #expect(joined["thumbd_origin_fetches_in_flight"] == 1)
            // And once it does, one MISS and two COALESCED answers
            harness.origin.openGate("go")
            for client in clients { #expect(try await client.response(timeout: .seconds(30)).status == 200) }
            let done = try await harness.scrape()
            #expect(done["thumbd_cache_outcomes_total{outcome=\"miss\"}"] == 1)
            #expect(done["thumbd_cache_outcomes_total{outcome=\"coalesced\"}"] == 2)
            #expect(done["thumbd_origin_fetches_started_total"] == 1)
        }

        @Test func anotherSizeOfASourceBeingFetchedJoinsTheFetch() async throws {
            // Given two sizes of one source whose transfer is held back
            let harness = try Harness()
            harness.origin.route("/two.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let small = try harness.client()
            let large = try harness.client()
            try small.send(Harness.requestText(harness.thumbTarget("/two.jpg", "w=20")))
            try large.send(Harness.requestText(harness.thumbTarget("/two.jpg", "w=60")))
            // Then the second render flight shows as joining the first one's fetch, not as a render join
            let joined = try await harness.scrape { $0["thumbd_coalesced_requests_total{stage=\"fetch\"}"] == 1 }
            #expect(joined["thumbd_coalesced_requests_total{stage=\"fetch\"}"] == 1)
            #expect(joined["thumbd_coalesced_requests_total{stage=\"render\"}"] == 0)
            harness.origin.openGate("go")
            #expect(try await small.response(timeout: .seconds(30)).status == 200)
            #expect(try await large.response(timeout: .seconds(30)).status == 200)
            #expect(harness.origin.hits("/two.jpg") == 1)
        }

        @Test func aCorruptBlobIsCountedWhenDropped() async throws {
            // Given a thumbnail on disk only (the memory tier emptied)
            let harness = try Harness()
            harness.origin.route("/corrupt.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/corrupt.jpg", "w=56&format=png")
            let original = try await harness.request(target)
            #expect(original.status == 200)
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })
            _ = harness.service.cache.trimMemory(toBytes: 0)
            // And its blob overwritten with other bytes of the same size (only the checksum can tell)
            let blobs = Integration.CacheTierTests.blobFiles(in: harness.cacheDirectory())
            try #require(blobs.count == 1, "blobs: \(blobs)")
            try Data(original.body.map { $0 ^ 0x5A }).write(to: URL(fileURLWithPath: blobs[0]))
            let before = try await harness.scrape()
            #expect(before["thumbd_cache_blobs_dropped_total{tier=\"disk\",reason=\"corrupt\"}"] == 0)
            // When it is asked for again
            let again = try await harness.request(target)
            // Then it is rendered again, never served, and the dropped blob is counted
            #expect(again.header("x-cache") == "MISS")
            #expect(again.body == original.body)
            let after = try await harness.scrape()
            #expect(after["thumbd_cache_blobs_dropped_total{tier=\"disk\",reason=\"corrupt\"}"] == 1)
            #expect(after["thumbd_cache_blobs_dropped_total{tier=\"disk\",reason=\"missing\"}"] == 0)
        }

        @Test func aFetchCancelledBecauseEveryClientLeft() async throws {
            // Given two clients waiting for a source that never comes
            let harness = try Harness(["fetch.timeout": "60s"])
            harness.origin.route("/never.jpg", .hang)
            let target = harness.thumbTarget("/never.jpg", "w=40")
            let clients = try (0..<2).map { _ in try harness.client() }
            for client in clients { try client.send(Harness.requestText(target)) }
            #expect(await eventually { harness.origin.hits("/never.jpg") == 1 })
            let before = try await harness.scrape()
            #expect(before["thumbd_origin_fetches_cancelled_total"] == 0)
            // When both leave
            for client in clients { client.close() }
            // Then the cancelled fetch, the clients gone and the abandoned transfer show
            let after = try await harness.scrape { $0["thumbd_origin_fetches_total{result=\"abandoned\"}"] == 1 }
            #expect(after["thumbd_origin_fetches_cancelled_total"] == 1)
            #expect(after["thumbd_clients_gone_total"] == 2)
            #expect(after["thumbd_origin_fetches_total{result=\"abandoned\"}"] == 1)
        }

        @Test func upstreamErrorsByClass() async throws {
            // Given an origin that answers 404 for one path and nothing for another, with a short timeout
            let harness = try Harness(["fetch.timeout": "1s", "fetch.connect_timeout": "1s"])
            harness.origin.route("/missing.jpg", .status(404))
            harness.origin.route("/hang.jpg", .hang)
            let before = try await harness.scrape()
            // When both are asked for
            #expect(try await harness.request(harness.thumbTarget("/missing.jpg")).status == 404)
            #expect(try await harness.request(harness.thumbTarget("/hang.jpg")).status == 504)
            // Then each error class moved once, and the responses by status
            let after = try await harness.scrape { $0["thumbd_origin_errors_total{class=\"timed_out\"}"] == 1 }
            #expect(after["thumbd_origin_errors_total{class=\"origin_not_found\"}"] == 1)
            #expect(after["thumbd_origin_errors_total{class=\"timed_out\"}"] == 1)
            #expect(before["thumbd_origin_errors_total{class=\"timed_out\"}"] == 0)
            #expect(after["thumbd_origin_fetches_total{result=\"error\"}"] == 2)
            #expect(after["thumbd_http_requests_total{\(Self.thumb),status=\"404\"}"] == 1)
            #expect(after["thumbd_http_requests_total{\(Self.thumb),status=\"504\"}"] == 1)
        }

        @Test func ssrfRefusalsAreCounted() async throws {
            // Given an origin on 127.0.0.1, which the SSRF guard refuses (only 127.0.0.2 is allowed)
            let harness = try Harness()
            let forbidden = try LoopbackOrigin(host: "127.0.0.1")
            defer { forbidden.stop() }
            forbidden.route("/secret.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let before = try await harness.scrape()
            #expect(before["thumbd_origin_ssrf_refusals_total"] == 0)
            // When it is asked for
            #expect(try await harness.request(Harness.thumbTarget(url: forbidden.url("/secret.jpg"))).status == 403)
            // Then the refusal shows, as a refused connection and as the transfer's error class
            let after = try await harness.scrape { $0["thumbd_origin_errors_total{class=\"address_forbidden\"}"] == 1 }
            #expect(after["thumbd_origin_ssrf_refusals_total"] >= 1)
            #expect(after["thumbd_origin_errors_total{class=\"address_forbidden\"}"] == 1)
            #expect(forbidden.hits("/secret.jpg") == 0)
        }

        @Test func aFullRenderQueueShowsItsDepthAndThe503() async throws {
            // Given one render thread that is busy and a queue of one that is full
            let harness = try Harness(["image.render_threads": "1", "image.queue_limit": "1"])
            harness.origin.route("/busy.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let release = DispatchSemaphore(value: 0)
            defer {
                release.signal()
                release.signal()
            }
            let pool = harness.service.renderPool
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            #expect(await eventually { pool.runningCount == 1 })
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            let full = try await harness.scrape()
            #expect(full["thumbd_render_queue_depth{priority=\"interactive\"}"] == 1)
            #expect(full["thumbd_render_running"] == 1)
            // When a thumbnail's source arrives
            #expect(try await harness.request(harness.thumbTarget("/busy.jpg", "w=40")).status == 503)
            // Then the rejection and the 503 show
            let after = try await harness.scrape()
            #expect(after["thumbd_render_queue_rejections_total"] == 1)
            #expect(after["thumbd_http_requests_total{\(Self.thumb),status=\"503\"}"] == 1)
        }

        @Test func openConnectionsFollowClients() async throws {
            let harness = try Harness()
            let open = "thumbd_http_open_connections{listener=\"main\"}"
            // Given no client but the scrape itself (earlier scrapes' connections close a moment after them)
            #expect(try await harness.scrape { $0[open] == 1 }[open] == 1)
            // When three clients connect
            var clients = try (0..<3).map { _ in try harness.client() }
            // Then they are counted
            #expect(try await harness.scrape { $0[open] == 4 }[open] == 4)
            // And when they leave, they are not any more
            for client in clients { client.close() }
            clients.removeAll()
            #expect(try await harness.scrape { $0[open] == 1 }[open] == 1)
        }

        @Test func routesAreThePatternsNeverTheRawPath() async throws {
            let harness = try Harness()
            #expect(try await harness.request("/health").status == 200)
            #expect(try await harness.request("/no/such/path?secret=1").status == 404)
            #expect(try await harness.request("/prefetch/0123abcd").status == 404)  // no such route here (yet)
            let scrape = try await harness.scrape()
            #expect(scrape["thumbd_http_requests_total{route=\"/prefetch\",status=\"404\"}"] == 1)
            #expect(scrape["thumbd_http_requests_total{route=\"/health\",status=\"200\"}"] == 1)
            #expect(scrape["thumbd_http_requests_total{route=\"other\",status=\"404\"}"] == 1)
            #expect(!scrape.text.contains("no/such"))
            #expect(!scrape.text.contains("secret"))
        }

        @Test func metricsListenServesMetricsOnItsOwnPortOnly() async throws {
            // Given metrics.listen on a port of its own
            let harness = try Harness(["metrics.listen": "127.0.0.1:0"])
            let metricsPort = try #require(harness.service.metrics.ownAddresses.first?.port)
            #expect(metricsPort != harness.port)
            // When /metrics is asked on both ports
            let main = try await harness.request("/metrics")
            let scrape = try await harness.scrape(port: metricsPort)
            // Then the main port does not know it, the metrics port serves it
            #expect(main.status == 404)
            #expect(scrape["thumbd_http_open_connections{listener=\"metrics\"}"] >= 1)
            // (the main port's 404 is counted under the path's route label: one set of counters for both servers)
            #expect(scrape["thumbd_http_requests_total{route=\"/metrics\",status=\"404\"}"] == 1)
            #expect(scrape.text.contains("# TYPE thumbd_process_resident_memory_bytes gauge"))
        }

        @Test(arguments: [
            // buckets not cumulative
            "# TYPE thumbd_h_seconds histogram\nthumbd_h_seconds_bucket{le=\"1.0\"} 2\n"
                + "thumbd_h_seconds_bucket{le=\"+Inf\"} 1\nthumbd_h_seconds_sum 1.0\nthumbd_h_seconds_count 1\n",
            // no +Inf bucket
            "# TYPE thumbd_h_seconds histogram\nthumbd_h_seconds_bucket{le=\"1.0\"} 1\n"
                + "thumbd_h_seconds_sum 1.0\nthumbd_h_seconds_count 1\n",
            // a counter without _total, a sample before its TYPE
            "# TYPE thumbd_x counter\nthumbd_x 1\nthumbd_y 2\n",
            // a bad escape in a label value
            "# TYPE thumbd_x_total counter\nthumbd_x_total{a=\"\\q\"} 1\n",
        ])
        func theFormatCheckerRejectsBrokenText(_ text: String) {
            withKnownIssue { try PrometheusFormat.check(text) }
        }

        @Test func theExpositionParsesAsPrometheusText() async throws {
            // Given a service that has answered a few requests (so histograms and labelled series have data)
            let harness = try Harness()
            harness.origin.route("/format.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            for _ in 0..<2 { #expect(try await harness.request(harness.thumbTarget("/format.jpg")).status == 200) }
            let scrape = try await harness.scrape()
            try PrometheusFormat.check(scrape.text, minimumFamilies: 33)  // every family in MetricNames
            #expect(scrape["thumbd_process_resident_memory_bytes"] > 1_000_000)
            // Every error class is listed (so a dashboard sees zeros), in snake case
            #expect(scrape.text.contains("thumbd_origin_errors_total{class=\"invalid_url\"} 0\n"))
            #expect(scrape.text.contains("thumbd_origin_errors_total{class=\"origin_server_error\"} 0\n"))
            #expect(scrape["thumbd_process_start_time_seconds"] > 1_700_000_000)
        }
    }
}
