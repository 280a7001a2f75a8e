// SPDX-License-Identifier: Apache-2.0
import Glibc
import OriginFetch
import Synchronization
import Testing
import ThumbdTestSupport

/// Throughput and cancellation latency, measured against LoopbackOrigin. Opt-in (it takes a
/// while and its numbers mean something only on an otherwise idle machine):
/// `THUMBD_FETCH_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter FetchThroughputBenchmark`.
/// Prints figures; asserts only that every transfer succeeded.
@Suite(.enabled(if: Environment.isBenchmarking), .timeLimit(.minutes(5)), .serialized)
struct FetchThroughputBenchmark {
    /// `delay` 0: the origin answers at once (the test origin is the bottleneck at high concurrency).
    /// `delay` 200 ms: slow origins, so most transfers sit idle at once (what a proxy in front of
    /// slow origins sees; a loop that walks every transfer per event pays for it here).
    @Test(arguments: [(16, 0), (256, 0), (2000, 0), (2000, 200)])
    func distinctURLs(concurrency: Int, delayMilliseconds: Int) async throws {
        let origin = try LoopbackOrigin(host: allowedOriginHost)
        let body = LoopbackOrigin.Script.ok(sampleBody(2048))
        origin.route("/bench", delayMilliseconds == 0 ? body : .delay(.milliseconds(delayMilliseconds), then: body))
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxPerHost = min(concurrency, 1024) })
        let total = 10_000
        let done = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let issued = Atomic<Int>(0)
        // Keeps `concurrency` fetches in flight: each completion issues the next one.
        @Sendable func issue() {
            let index = issued.add(1, ordering: .relaxed).newValue
            guard index <= total else { return }
            fetcher.fetch(FetchRequest(url: origin.url("/bench?i=\(index)"))) { result in
                if result.failure != nil { failures.add(1, ordering: .relaxed) }
                done.add(1, ordering: .relaxed)
                issue()
            }
        }
        let cpuBefore = fetchThreadCPUSeconds()
        let start = ContinuousClock.now
        for _ in 0..<concurrency { issue() }
        #expect(await eventually(timeout: .seconds(240)) { done.load(ordering: .relaxed) == total })
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = fetchThreadCPUSeconds() - cpuBefore
        print(
            "fetch-bench concurrency=\(concurrency) delay=\(delayMilliseconds)ms transfers=\(total)",
            "seconds=\(String(format: "%.2f", seconds))",
            "rate=\(Int(Double(total) / seconds))/s fetch-thread-cpu=\(String(format: "%.2f", cpu))s",
            "(\(String(format: "%.0f", cpu / seconds * 100))% of a core)",
            "origin-max-concurrent=\(origin.maxConcurrentRequests)"
        )
        #expect(failures.load(ordering: .relaxed) == 0)
        fetcher.shutdown()
    }

    @Test func cancellationLatency() async throws {
        let origin = try LoopbackOrigin(host: allowedOriginHost)
        let fetcher = try OriginFetcher(configuration: testConfiguration())
        var samples: [Duration] = []
        for index in 0..<20 {
            let path = "/hang\(index)"
            origin.route(path, .hang)
            let ticket = fetcher.fetch(FetchRequest(url: origin.url(path))) { _ in }
            #expect(await eventually { origin.hits(path) == 1 })
            let start = ContinuousClock.now
            fetcher.cancel(ticket)
            #expect(await eventually { origin.clientCloses(path) == 1 })
            samples.append(ContinuousClock.now - start)
        }
        samples.sort()
        print("fetch-bench cancel→origin-close p50=\(samples[10]) max=\(samples.last!) (origin polls every 10 ms)")
    }

    /// utime + stime of the thread named "fetch" (the newest one), from /proc.
    private func fetchThreadCPUSeconds() -> Double {
        var best = 0.0
        guard let directory = opendir("/proc/self/task") else { return 0 }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.first?.isNumber == true, let stat = readText("/proc/self/task/\(name)/stat"),
                stat.contains("(fetch)")
            else { continue }
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            // After "(comm)": state is field 0, utime field 11, stime field 12 (clock ticks).
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            best = max(best, (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))))
        }
        return best
    }

    private func readText(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 1024)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

enum Environment {
    static var isBenchmarking: Bool { getenv("THUMBD_FETCH_BENCH") != nil }
}
