// SPDX-License-Identifier: Apache-2.0

/// Prometheus histograms of durations, one per series (e.g. per route), sharing bucket bounds, recorded into a
/// ``CounterGrid``: an observation is two relaxed atomic adds on the calling thread's shard (its bucket, and
/// the sum in nanoseconds). Buckets are stored per bucket and made cumulative when read.
///
/// ```swift
/// let renders = DurationHistogram(series: 1, bounds: DurationHistogram.renderBounds)
/// renders.observe(0, nanoseconds: 12_000_000)
/// ```
package final class DurationHistogram: Sendable {
    /// Upper bounds of the finite buckets, in nanoseconds, ascending (`+Inf` is implicit).
    package let boundsNanoseconds: [Int64]
    /// How many histograms (series) this holds.
    package let series: Int
    /// Per series: one slot per finite bucket, one for `+Inf`, one for the sum in nanoseconds.
    private let grid: CounterGrid
    private let seriesStride: Int

    /// Bounds for HTTP request durations: 0.5 ms to 10 s (a memory hit takes tens of µs, a cold render tens of ms).
    package static let requestBounds: [Duration] = [
        .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Bounds for render durations (one libvips job): 2.5 ms to 10 s.
    package static let renderBounds: [Duration] = [
        .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
        .seconds(5), .seconds(10),
    ]

    /// `series` histograms with the given finite bucket bounds (ascending, positive).
    package init(series: Int, bounds: [Duration]) {
        precondition(series > 0 && !bounds.isEmpty, "a histogram needs a series and a bucket")
        let nanoseconds = bounds.map { Self.nanoseconds($0) }
        precondition(zip(nanoseconds, nanoseconds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        boundsNanoseconds = nanoseconds
        self.series = series
        seriesStride = bounds.count + 2
        grid = CounterGrid(slots: series * seriesStride)
    }

    /// Records one observation of `nanoseconds` in histogram `series`. Any thread; no lock.
    @inline(__always)
    package func observe(_ series: Int, nanoseconds: Int64, shard: Int = ThreadShard.index) {
        var bucket = 0
        let bounds = boundsNanoseconds
        while bucket < bounds.count && nanoseconds > bounds[bucket] { bucket &+= 1 }
        let start = series &* seriesStride
        grid.add(start &+ bucket, 1, shard: shard)
        grid.add(start &+ bounds.count &+ 1, Int(max(0, nanoseconds)), shard: shard)
    }

    /// Records one observation of `duration` in histogram `series`.
    package func observe(_ series: Int, _ duration: Duration) {
        observe(series, nanoseconds: Self.nanoseconds(duration))
    }

    /// One histogram's state as Prometheus exposes it.
    package struct Snapshot: Sendable, Equatable {
        /// Cumulative counts per finite bound (same order as the bounds).
        package var cumulativeCounts: [Int]
        /// All observations (the `+Inf` bucket and `_count`).
        package var count: Int
        /// Sum of the observed durations, in nanoseconds.
        package var sumNanoseconds: Int
    }

    /// The cumulative state of histogram `series`.
    package func snapshot(_ series: Int) -> Snapshot {
        let values = grid.values()
        let start = series * seriesStride
        var cumulative: [Int] = []
        cumulative.reserveCapacity(boundsNanoseconds.count)
        var running = 0
        for bucket in 0..<boundsNanoseconds.count {
            running += values[start + bucket]
            cumulative.append(running)
        }
        running += values[start + boundsNanoseconds.count]
        return Snapshot(
            cumulativeCounts: cumulative, count: running, sumNanoseconds: values[start + boundsNanoseconds.count + 1])
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000
    }
}
