// SPDX-License-Identifier: Apache-2.0
//
// thumbd-metrics-bench: what the metric updates of one /thumb memory hit cost (a request counter by route and
// status, a duration histogram by route, a cache-outcome counter), with `Instrumentation` (per-thread sharded
// atomics) against swift-prometheus 2.4.1, on 2 threads in parallel (the default two `http` loops).
//
//   THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-metrics-bench
//   .build-bench/release/thumbd-metrics-bench [iterations per thread, default 5000000]
import Foundation
import Instrumentation
import Prometheus
import Synchronization

/// Everything the measured closures share (static lets: not main-actor globals, so threads may read them).
enum Bench {
    static let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 5_000_000 : 5_000_000
    static let routes = ["/thumb", "/health", "/ready", "/metrics", "/cache", "/prefetch"]
    static let outcomes: [(note: String, label: String)] = [
        ("HIT-MEMORY", "hit_memory"), ("HIT-DISK", "hit_disk"), ("MISS", "miss"), ("COALESCED", "coalesced"),
        ("STALE", "stale"), ("REVALIDATED", "revalidated"),
    ]
    /// What the access-log hook gets for a memory hit; built at run time so that the compiler cannot fold them.
    static let paths = (0..<16).map { _ in String("/thumb".utf8.map { Character(Unicode.Scalar($0)) }) }
    static let notes = (0..<16).map { _ in String("HIT-MEMORY".utf8.map { Character(Unicode.Scalar($0)) }) }
    static let duration = Duration.microseconds(40)

    static let ours = RequestMetrics(routes: routes, outcomes: outcomes)

    static let registry = PrometheusCollectorRegistry()
    // `nonisolated(unsafe)`: MetricNameDescriptor is an immutable struct that swift-prometheus 2.4.1 does not
    // mark Sendable; these are never written after initialisation.
    nonisolated(unsafe) static let requests = MetricNameDescriptor(
        namespace: "thumbd", metricName: "http_requests", unitName: "total", helpText: "Requests.")
    nonisolated(unsafe) static let durationName = MetricNameDescriptor(
        namespace: "thumbd", metricName: "http_request_duration", unitName: "seconds", helpText: "Duration.")
    nonisolated(unsafe) static let outcome = MetricNameDescriptor(
        namespace: "thumbd", metricName: "cache_outcomes", unitName: "total", helpText: "Outcomes.")

    /// swift-prometheus as its API is meant to be used: the registry finds the labelled series.
    static func prometheusLookup(path: String, status: Int, note: String) {
        let route = routes.contains(path) ? path : "other"
        registry.makeCounter(descriptor: requests, labels: [("route", route), ("status", String(status))]).increment()
        registry.makeDurationHistogram(
            descriptor: durationName, labels: [("route", route)], buckets: DurationHistogram.requestBounds
        ).record(duration)
        if let outcome = outcomes.first(where: { $0.note == note }) {
            registry.makeCounter(descriptor: Bench.outcome, labels: [("outcome", outcome.label)]).increment()
        }
    }

    /// swift-prometheus, best case: handles resolved once (an app would need its own table per route x status).
    static let cachedCounter = registry.makeCounter(
        descriptor: requests, labels: [("route", "/thumb"), ("status", "200")])
    static let cachedHistogram = registry.makeDurationHistogram(
        descriptor: durationName, labels: [("route", "/thumb")], buckets: DurationHistogram.requestBounds)
    static let cachedOutcome = registry.makeCounter(descriptor: outcome, labels: [("outcome", "hit_memory")])

    static func prometheusCached(path: String, note: String) {
        _ = ours.routeIndex(path)  // the route still has to be found
        cachedCounter.increment()
        cachedHistogram.record(duration)
        if note == "HIT-MEMORY" { cachedOutcome.increment() }
    }

    static let unsharded = Unsharded()
}

/// One unsharded relaxed atomic per counter (what sharding saves).
final class Unsharded: Sendable {
    let requests = Atomic<Int>(0)
    let bucket = Atomic<Int>(0)
    let sum = Atomic<Int>(0)
    let outcome = Atomic<Int>(0)
}

/// Start and finish lines for the threads of one measurement, and their CPU time.
final class Gate: Sendable {
    let ready = Atomic<Int>(0)
    let start = Atomic<Bool>(false)
    let done = Atomic<Int>(0)
    let cpuNanoseconds = Atomic<Int>(0)
}

/// This thread's CPU time, ns (CPU rather than wall time: the machine is shared, and a descheduled thread's
/// wall time says nothing about the code).
func threadCPUNanoseconds() -> Int {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return spec.tv_sec * 1_000_000_000 + spec.tv_nsec
}

/// Runs `body(i)` `iterations` times on each of `threads` threads started together; prints the CPU time per
/// call (mean over the threads) and the wall time per call per thread, in ns.
@discardableResult
func measure(
    _ name: String, threads: Int, iterations: Int = Bench.iterations, _ body: @escaping @Sendable (Int) -> Void
) -> Double {
    let gate = Gate()
    for _ in 0..<threads {
        Thread {
            gate.ready.add(1, ordering: .relaxed)
            while !gate.start.load(ordering: .acquiring) {}
            let cpu = threadCPUNanoseconds()
            for index in 0..<iterations { body(index) }
            gate.cpuNanoseconds.add(threadCPUNanoseconds() - cpu, ordering: .relaxed)
            gate.done.add(1, ordering: .releasing)
        }.start()
    }
    while gate.ready.load(ordering: .relaxed) < threads { usleep(100) }
    let begin = DispatchTime.now().uptimeNanoseconds
    gate.start.store(true, ordering: .releasing)
    while gate.done.load(ordering: .acquiring) < threads { usleep(200) }
    let wall = Double(DispatchTime.now().uptimeNanoseconds - begin) / Double(iterations)
    let cpu = Double(gate.cpuNanoseconds.load(ordering: .relaxed)) / Double(threads * iterations)
    print(
        "\(name), \(threads) thread(s): CPU \(String(format: "%.1f", cpu)) ns/op, wall "
            + "\(String(format: "%.1f", wall)) ns/op")
    return cpu
}

for threads in [1, 2] {
    measure("instrumentation (sharded atomics)", threads: threads) { index in
        Bench.ours.record(
            path: Bench.paths[index & 15], status: 200, duration: Bench.duration, note: Bench.notes[index & 15])
    }
    measure("unsharded atomics", threads: threads) { index in
        _ = Bench.ours.routeIndex(Bench.paths[index & 15])
        Bench.unsharded.requests.add(1, ordering: .relaxed)
        Bench.unsharded.bucket.add(1, ordering: .relaxed)
        Bench.unsharded.sum.add(40_000, ordering: .relaxed)
        if Bench.notes[index & 15] == "HIT-MEMORY" { Bench.unsharded.outcome.add(1, ordering: .relaxed) }
    }
    measure("swift-prometheus cached handles", threads: threads) { index in
        Bench.prometheusCached(path: Bench.paths[index & 15], note: Bench.notes[index & 15])
    }
    // 20x fewer: each call takes microseconds.
    measure("swift-prometheus registry lookup", threads: threads, iterations: Bench.iterations / 20) { index in
        Bench.prometheusLookup(path: Bench.paths[index & 15], status: 200, note: Bench.notes[index & 15])
    }
}
// Checks that every variant counted (and keeps the work alive).
let expected = 3 * Bench.iterations
print(
    "check: instrumentation \(Bench.ours.count(route: "/thumb", status: 200)) (expected \(expected)), unsharded "
        + "\(Bench.unsharded.requests.load(ordering: .relaxed)) (expected \(expected))")
