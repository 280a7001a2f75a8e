// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import Pages

/// The /status page's HTML: everything a client can choose is escaped, and the numbers carry their raw values.
@Suite struct StatusPageTests {
    @Test func everythingAClientChoseIsEscapedInThePage() {
        // Given a report whose top source and error route hold markup
        let hostile = "http://x.example/\"><script>alert(1)</script>&q='"
        let report = StatusReport(
            generatedAt: "2026-11-22T15:00:00Z", uptimeSeconds: 42,
            cpus: .init(count: 8, affinity: 8, origin: "affinity", httpThreads: 8, renderThreads: 10), signing: false,
            hitRatio: .init(memoryHits: 3, diskHits: 1, misses: 0),
            tiers: [.init(name: "memory", enabled: true, entries: 2, bytes: 2048, maxBytes: 4096)],
            requests: .init(total: 5, bucketSeconds: 10, buckets: [0, 5], perSecondLastMinute: 0.5),
            inFlight: .init(
                fetchesRunning: 0, fetchesQueued: 0, renderFlights: 0, rendersRunning: 0, renderQueueDepth: 0,
                transfersStarted: 1, coalescedRequests: 0, coalescedFetches: 0),
            topSources: .init(kind: "url", sampleEvery: 16, items: [.init(name: hostile, requests: 16)]),
            recentErrors: [
                .init(
                    time: "2026-11-22T15:00:00Z", status: 404, method: "GET", route: "/<img src=x>",
                    message: "Not Found")
            ])

        // When the page is rendered
        let html = StatusPage.render(report, nonce: "NONCE")

        // Then no client text became markup, and the numbers carry their raw values
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<img src=x>"))
        #expect(html.contains("http://x.example/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;q=&#39;"))
        #expect(html.contains("GET /&lt;img src=x&gt;"))
        #expect(html.contains("<td data-value=\"3\">3</td><td>75.0 %</td>"))
        #expect(html.contains("<td class=\"bytes\" data-value=\"2048\">2.0 KiB</td>"))
        #expect(html.contains("<script nonce=\"NONCE\">"))
        // And the JSON has the same numbers under snake_case keys
        let json = String(decoding: report.json(), as: UTF8.self)
        #expect(json.contains("\"memory_hits\" : 3"))
        #expect(json.contains("\"per_second_last_minute\" : 0.5"))
    }

    @Test func theCPUsSayWhereTheirNumberCameFrom() {
        // Given a report of a process limited by a cgroup quota of 1.5 CPUs on 64
        let origin = "cgroup v2 cpu.max 150000/100000 at /sys/fs/cgroup/kubepods/<pod>; affinity 64"
        let report = StatusReport(
            generatedAt: "2026-11-22T15:00:00Z", uptimeSeconds: 1,
            cpus: .init(count: 2, affinity: 64, quota: 1.5, origin: origin, httpThreads: 2, renderThreads: 3),
            signing: false, hitRatio: .init(memoryHits: 0, diskHits: 0, misses: 0), tiers: [],
            requests: .init(total: 0, bucketSeconds: 10, buckets: [0], perSecondLastMinute: 0),
            inFlight: .init(
                fetchesRunning: 0, fetchesQueued: 0, renderFlights: 0, rendersRunning: 0, renderQueueDepth: 0,
                transfersStarted: 0, coalescedRequests: 0, coalescedFetches: 0),
            topSources: .init(kind: "host", sampleEvery: 16, items: []), recentErrors: [])

        // When the page and the JSON are made
        let html = StatusPage.render(report, nonce: "NONCE")
        let json = String(decoding: report.json(), as: UTF8.self)

        // Then the page shows the count, its origin (escaped) and the thread counts
        #expect(
            html.contains(
                "CPUs: <b data-value=\"2\">2</b> (cgroup v2 cpu.max 150000/100000 at /sys/fs/cgroup/kubepods/&lt;pod&gt;; "
                    + "affinity 64); <span id=\"http-threads\" data-value=\"2\">2</span> event loops, "
                    + "<span id=\"render-threads\" data-value=\"3\">3</span> render threads."))
        // And the JSON has the same under snake_case keys
        #expect(json.contains("\"cpus\" : {"))
        #expect(
            json.contains(
                "\"origin\" : \"cgroup v2 cpu.max 150000/100000 at /sys/fs/cgroup/kubepods/<pod>; affinity 64\""))
        #expect(json.contains("\"quota\" : 1.5"))
        #expect(json.contains("\"affinity\" : 64"))
        #expect(json.contains("\"http_threads\" : 2"))
        #expect(json.contains("\"render_threads\" : 3"))
    }
}
