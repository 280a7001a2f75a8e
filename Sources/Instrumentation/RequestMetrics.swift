// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Per-request HTTP metrics, recorded once per response from the server's access-log hook on the connection's
/// loop: requests by route and status, duration by route, and the responses' cache outcome (`X-Cache`).
///
/// Labels stay bounded: the route is one of the registered patterns given at `init` or `other` (never the raw
/// path, never the query), the status one of 100...599, the outcome one of the given notes.
///
/// The cost per response is a few string compares and three relaxed atomic adds on the thread's own shard
/// (BENCHMARKS.md, "Metrics on the hit path").
package final class RequestMetrics: Sendable {
    /// The route labels, in slot order: the exact routes, the prefix routes, then `other`.
    package let routes: [String]
    /// Routes before this index match exactly; from it to `other`, also their subpaths.
    private let firstPrefixRoute: Int
    /// `routes[i].utf8.count`.
    private let routeLengths: [Int]
    /// `(access-log note, outcome label)` pairs, e.g. `("HIT-MEMORY", "hit_memory")`.
    package let outcomes: [(note: String, label: String)]
    private let statusCounts: CounterGrid
    private let outcomeCounts: CounterGrid
    /// Request durations, one series per route.
    package let durations: DurationHistogram

    private static let statusSlots = 600

    /// - Parameters:
    ///   - routes: the paths that get their own label when matched exactly (e.g. `/thumb`).
    ///   - prefixRoutes: the paths that get their own label for themselves and their subpaths (`/prefetch` also
    ///     for `/prefetch/<id>`). Every other path counts as `other`.
    ///   - outcomes: the access-log notes counted as cache outcomes, with their label values.
    package init(routes: [String], prefixRoutes: [String] = [], outcomes: [(note: String, label: String)]) {
        self.routes = routes + prefixRoutes + ["other"]
        routeLengths = self.routes.map(\.utf8.count)
        firstPrefixRoute = routes.count
        self.outcomes = outcomes
        statusCounts = CounterGrid(slots: self.routes.count * Self.statusSlots)
        outcomeCounts = CounterGrid(slots: max(1, outcomes.count))
        durations = DurationHistogram(series: self.routes.count, bounds: DurationHistogram.requestBounds)
    }

    /// The route slot of `path` (the last slot, `other`, when no route matches).
    @inline(__always)
    package func routeIndex(_ path: String) -> Int {
        var index = 0
        let count = routes.count - 1
        let length = path.utf8.count
        while index < count {
            // Lengths first (O(1) for native strings): a long path, such as a thumbor or imgproxy URL, differs
            // from every route without a full string comparison each.
            if routeLengths[index] == length && routes[index] == path { return index }
            index &+= 1
        }
        return prefixRouteIndex(path)
    }

    /// The prefix route whose subpath `path` is, else `other` (off the hot path: `/thumb` matched exactly).
    @inline(never)
    private func prefixRouteIndex(_ path: String) -> Int {
        let count = routes.count - 1
        var path = path
        return path.withUTF8 { bytes in
            for index in firstPrefixRoute..<count {
                let length = routeLengths[index]
                guard bytes.count > length, bytes[length] == UInt8(ascii: "/") else { continue }
                var route = routes[index]
                let same = route.withUTF8 { route in
                    guard let a = route.baseAddress, let b = bytes.baseAddress else { return length == 0 }
                    return memcmp(a, b, length) == 0
                }
                if same { return index }
            }
            return count
        }
    }

    /// Counts one response. Any thread; no lock, no allocation.
    package func record(path: String, status: Int, duration: Duration, note: String?) {
        let shard = ThreadShard.index
        let route = routeIndex(path)
        let statusSlot = (100..<Self.statusSlots).contains(status) ? status : 0
        statusCounts.add(route &* Self.statusSlots &+ statusSlot, 1, shard: shard)
        // Answers sent in the wake-up that read their request take no measurable time (the loop reads its clock
        // once per wake-up); skipping `components` (a 128-bit division) for them is most of this call's cost.
        var nanoseconds: Int64 = 0
        if duration != .zero {
            let (seconds, attoseconds) = duration.components
            nanoseconds = seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
        }
        durations.observe(route, nanoseconds: nanoseconds, shard: shard)
        if let note {
            for index in outcomes.indices where outcomes[index].note == note {
                outcomeCounts.add(index, 1, shard: shard)
                break
            }
        }
    }

    /// Requests answered so far for `route` (a label from ``routes``) with `status`.
    package func count(route: String, status: Int) -> Int {
        guard let index = routes.firstIndex(of: route) else { return 0 }
        return statusCounts.value(index * Self.statusSlots + status)
    }

    /// Writes `thumbd_http_requests_total`, `thumbd_http_request_duration_seconds` and
    /// `thumbd_cache_outcomes_total`.
    package func write(to text: inout PrometheusText) {
        let counts = statusCounts.values()
        text.family(MetricNames.httpRequests, .counter, "HTTP responses sent, by route and status.")
        for (route, label) in routes.enumerated() {
            for status in 0..<Self.statusSlots {
                let value = counts[route * Self.statusSlots + status]
                if value > 0 {
                    text.sample(
                        MetricNames.httpRequests,
                        [("route", label), ("status", status == 0 ? "other" : String(status))],
                        value)
                }
            }
        }
        text.family(
            MetricNames.httpRequestDuration, .histogram,
            "From the complete request head to the response queued for sending, by route.")
        for (route, label) in routes.enumerated() {
            text.histogram(
                MetricNames.httpRequestDuration, [("route", label)], boundsNanoseconds: durations.boundsNanoseconds,
                durations.snapshot(route))
        }
        let outcomeTotals = outcomeCounts.values()
        text.family(
            MetricNames.cacheOutcomes, .counter, "/thumb responses by cache outcome (the X-Cache header).")
        for (index, outcome) in outcomes.enumerated() {
            text.sample(MetricNames.cacheOutcomes, [("outcome", outcome.label)], outcomeTotals[index])
        }
    }
}
