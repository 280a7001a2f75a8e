// SPDX-License-Identifier: Apache-2.0
import Foundation
import Instrumentation
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1)))
struct CounterGridTests {
    @Test func countsFromManyThreadsAddUp() {
        // Given a grid and more threads than shards (so some share a shard)
        let grid = CounterGrid(slots: 3)
        let threads = ThreadShard.count + 4
        let perThread = 10_000
        // When each adds to slot 1 and slot 2
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                for _ in 0..<perThread {
                    grid.add(1)
                    grid.add(2, 3)
                }
                done.leave()
            }.start()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        // Then no increment is lost
        #expect(grid.values() == [0, threads * perThread, 3 * threads * perThread])
        #expect(grid.value(1) == threads * perThread)
    }
}

@Suite struct DurationHistogramTests {
    @Test func bucketsAreCumulativeAndBoundsInclusive() {
        // Given bounds 1 ms, 10 ms
        let histogram = DurationHistogram(series: 2, bounds: [.milliseconds(1), .milliseconds(10)])
        // When 0.5 ms, exactly 1 ms, 5 ms and 20 ms are observed in series 1
        histogram.observe(1, .microseconds(500))
        histogram.observe(1, .milliseconds(1))
        histogram.observe(1, .milliseconds(5))
        histogram.observe(1, .milliseconds(20))
        // Then le=1ms holds 2 (upper bounds are inclusive), le=10ms 3, +Inf 4; series 0 is untouched
        let snapshot = histogram.snapshot(1)
        #expect(snapshot.cumulativeCounts == [2, 3])
        #expect(snapshot.count == 4)
        #expect(snapshot.sumNanoseconds == 26_500_000)
        #expect(histogram.snapshot(0).count == 0)
    }
}

@Suite struct PrometheusTextTests {
    @Test func familiesSamplesAndEscaping() {
        var text = PrometheusText()
        text.family("thumbd_x_total", .counter, "Line one\\two\nthree.")
        text.sample("thumbd_x_total", [("a", "q\"uo\\te\n"), ("b", "2")], 7)
        text.sample("thumbd_x_total", 1.5)
        #expect(
            String(decoding: text.bytes, as: UTF8.self) == """
                # HELP thumbd_x_total Line one\\\\two\\nthree.
                # TYPE thumbd_x_total counter
                thumbd_x_total{a="q\\"uo\\\\te\\n",b="2"} 7
                thumbd_x_total 1.5

                """)
    }

    @Test func histogramLinesEndWithInfSumAndCount() {
        let histogram = DurationHistogram(series: 1, bounds: [.microseconds(500), .seconds(1)])
        histogram.observe(0, .milliseconds(250))
        var text = PrometheusText()
        text.family("h_seconds", .histogram, "H.")
        text.histogram(
            "h_seconds", [("route", "/thumb")], boundsNanoseconds: histogram.boundsNanoseconds, histogram.snapshot(0))
        let lines = String(decoding: text.bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "# HELP h_seconds H.", "# TYPE h_seconds histogram",
                "h_seconds_bucket{route=\"/thumb\",le=\"0.0005\"} 0", "h_seconds_bucket{route=\"/thumb\",le=\"1.0\"} 1",
                "h_seconds_bucket{route=\"/thumb\",le=\"+Inf\"} 1", "h_seconds_sum{route=\"/thumb\"} 0.25",
                "h_seconds_count{route=\"/thumb\"} 1",
            ])
    }

    @Test func specialFloats() {
        #expect(PrometheusText.format(.infinity) == "+Inf")
        #expect(PrometheusText.format(-.infinity) == "-Inf")
        #expect(PrometheusText.format(.nan) == "NaN")
        #expect(PrometheusText.format(0.001) == "0.001")
    }
}

@Suite struct RequestMetricsTests {
    let metrics = RequestMetrics(
        routes: ["/thumb", "/health"], prefixRoutes: ["/prefetch"], outcomes: [("HIT-MEMORY", "hit_memory")])

    @Test func routesAreThePatternsOrOther() {
        #expect(metrics.routes == ["/thumb", "/health", "/prefetch", "other"])
        #expect(metrics.routeIndex("/thumb") == 0)
        #expect(metrics.routeIndex("/health") == 1)
        #expect(metrics.routeIndex("/thumb/x") == 3)  // exact routes only match exactly
        #expect(metrics.routeIndex("/thumbnail") == 3)
        #expect(metrics.routeIndex("/") == 3)
        #expect(metrics.routeIndex("/prefetch") == 2)
        #expect(metrics.routeIndex("/prefetch/0123abcd") == 2)
        #expect(metrics.routeIndex("/prefetching") == 3)
    }

    @Test func recordCountsStatusDurationAndOutcome() {
        // When three responses are recorded
        metrics.record(path: "/thumb", status: 200, duration: .microseconds(40), note: "HIT-MEMORY")
        metrics.record(path: "/thumb", status: 404, duration: .milliseconds(3), note: "MISS")
        metrics.record(path: "/nope?x", status: 404, duration: .microseconds(10), note: nil)
        // Then each shows in its series, and the unknown path under `other`
        #expect(metrics.count(route: "/thumb", status: 200) == 1)
        #expect(metrics.count(route: "/thumb", status: 404) == 1)
        #expect(metrics.count(route: "other", status: 404) == 1)
        #expect(metrics.durations.snapshot(0).count == 2)
        var text = PrometheusText()
        metrics.write(to: &text)
        let body = String(decoding: text.bytes, as: UTF8.self)
        #expect(body.contains("thumbd_http_requests_total{route=\"/thumb\",status=\"200\"} 1\n"))
        #expect(body.contains("thumbd_http_requests_total{route=\"other\",status=\"404\"} 1\n"))
        #expect(body.contains("thumbd_cache_outcomes_total{outcome=\"hit_memory\"} 1\n"))
        #expect(!body.contains("/nope"))
    }
}

@Suite struct ProcessMetricsTests {
    @Test func residentMemoryAndCPUAreRead() throws {
        let resident = try #require(ProcessMetrics.residentMemoryBytes())
        #expect(resident > 1 << 20)
        #expect(ProcessMetrics.cpuSeconds() > 0)
        let process = ProcessMetrics()
        #expect(process.startTimeSeconds > 1_700_000_000)
    }
}
