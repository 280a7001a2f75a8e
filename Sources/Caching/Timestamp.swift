// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A wall-clock instant, in milliseconds since the Unix epoch, as stored in the disk index.
///
/// Wall time (not a monotonic clock) because these values survive restarts: creation time for `Age`,
/// expiry and stale-if-error deadlines.
package struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    package var millisecondsSinceEpoch: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    package init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// The current wall-clock time (`CLOCK_REALTIME`).
    package static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(millisecondsSinceEpoch: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    /// This instant moved by `duration` (negative durations move it back), to millisecond precision.
    package func advanced(by duration: Duration) -> Timestamp {
        let (seconds, attoseconds) = duration.components
        return Timestamp(
            millisecondsSinceEpoch: millisecondsSinceEpoch + seconds * 1000 + attoseconds / 1_000_000_000_000_000
        )
    }

    /// Earlier instants are smaller.
    package static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// Milliseconds since the epoch, e.g. `1700000000000ms`.
    package var description: String { "\(millisecondsSinceEpoch)ms" }
}
