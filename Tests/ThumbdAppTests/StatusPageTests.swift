// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Foundation
import OriginFetch
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

/// The pieces behind /status: the activity recorder's counts, error ring and top sources, and the redaction of
/// source URLs. (The page's HTML escaping is tested with the page, in PagesTests.)
@Suite(.timeLimit(.minutes(1))) struct StatusPageTests {
    @Test func responsesAreCountedInTheCurrentBucket() {
        // Given a new recorder
        let recorder = ActivityRecorder()

        // When 25 responses are counted
        for _ in 0..<25 { recorder.countResponse() }

        // Then the total is 25, all of them in the last (current) bucket or, at a 10 s boundary, the one before
        let snapshot = recorder.snapshot()
        #expect(snapshot.totalRequests == 25)
        #expect(snapshot.buckets.count == ActivityRecorder.bucketCount)
        #expect(snapshot.buckets.reduce(0, +) == 25)
        #expect(snapshot.buckets.dropLast(2).allSatisfy { $0 == 0 })
    }

    @Test func theErrorRingKeepsTheLastTwentyNewestFirst() {
        // Given a recorder
        let recorder = ActivityRecorder()

        // When 25 errors are kept
        for index in 0..<25 {
            recorder.keepError(
                status: 400 + index % 5, method: "GET", route: "/r\(index)", note: index == 24 ? "MISS" : nil)
        }

        // Then the last 20 remain, newest first, with a short message
        let errors = recorder.snapshot().errors
        #expect(errors.count == ActivityRecorder.errorCapacity)
        #expect(errors.map(\.route) == (5..<25).reversed().map { "/r\($0)" })
        #expect(errors.first?.message == "Not Found (X-Cache: MISS)")
        #expect(errors.last?.message == "Bad Request")
    }

    @Test func topSourcesCountHostsAndURLsWithinABoundedTable() throws {
        // Given a recorder that counts every source (period 1)
        let recorder = ActivityRecorder(sourceSamplePeriod: 1)
        let hot = try SourceURL("http://images.example/hot.jpg")

        // When one URL is asked 50 times, among 200 others asked once each
        for index in 0..<200 {
            let other = try SourceURL("http://other\(index % 3).example/\(index).jpg")
            recorder.noteSource(other)
            if index % 4 == 0 { recorder.noteSource(hot) }
        }

        // Then the hot URL is first, its host is among the hosts, and the tables stay bounded
        let snapshot = recorder.snapshot(top: 10)
        #expect(snapshot.topURLs.first == .init(name: "http://images.example/hot.jpg", requests: 50))
        #expect(snapshot.topURLs.count == 10)
        #expect(snapshot.topHosts.map(\.name).contains("images.example"))
        #expect(snapshot.topHosts.count == 4)
    }

    @Test func spaceSavingKeepsAFrequentNameWhenTheTableIsFull() {
        // Given a table of 4 counters
        var table = SpaceSaving(capacity: 4)

        // When a frequent name is interleaved with a stream of distinct names
        for index in 0..<100 {
            table.add("frequent", weight: 1)
            table.add("rare\(index)", weight: 1)
        }

        // Then the frequent name is still counted, first, and the table never grew
        #expect(table.counts.count == 4)
        #expect(table.top(1).first?.name == "frequent")
        #expect((table.top(1).first?.requests ?? 0) >= 100)

        // When the counts decay twice
        table.decay(halvings: 2)

        // Then they are quartered
        #expect((table.top(1).first?.requests ?? 0) >= 25)
    }

    @Test func secretQueryParametersAreRedactedFromSourceURLs() {
        // Given source URLs with credentials in their queries
        let cases = [
            (
                "http://a.example/x.jpg?id=7&X-Amz-Signature=abc&X-Amz-Credential=def",
                "http://a.example/x.jpg?id=7&X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"
            ),
            ("http://a.example/x.jpg?%73ig=abc&token=t", "http://a.example/x.jpg?%73ig=REDACTED&token=REDACTED"),
            ("http://a.example/x.jpg?id=7", "http://a.example/x.jpg?id=7"),
            ("http://a.example/x.jpg", "http://a.example/x.jpg"),
        ]
        for (url, expected) in cases {
            // When redacted / Then only the secret values are gone
            #expect(LoggingRedaction.redactingSecrets(in: url) == expected)
        }
    }

    @Test func theStatusShowsTheCPUsWhereTheyCameFromAndTheThreads() throws {
        // Given a quota of 1.5 CPUs on 64 (v1), and a process without a quota
        let v1 = try FakeCGroupTree([
            "/proc/self/cgroup": "4:cpu,cpuacct:/\n",
            "/proc/self/mountinfo": "36 24 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "150000\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        ])

        // When the status's part is made from each
        let limited = StatusService.cpus(v1.allowance(affinity: 64), httpThreads: 2, renderThreads: 3)
        let free = StatusService.cpus(CPUAllowance(affinity: 4), httpThreads: 4, renderThreads: 5)

        // Then it carries the count, the affinity, the quota and where the count came from
        #expect(
            limited
                == .init(
                    count: 2, affinity: 64, quota: 1.5,
                    origin: "cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us 150000/100000 at /sys/fs/cgroup/cpu,cpuacct; "
                        + "affinity 64", httpThreads: 2, renderThreads: 3))
        #expect(free == .init(count: 4, affinity: 4, origin: "affinity", httpThreads: 4, renderThreads: 5))
    }
}
