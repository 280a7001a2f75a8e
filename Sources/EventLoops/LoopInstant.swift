// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// An instant that can move by whole nanoseconds without going through `Duration`, whose `components`
/// cost a 128-bit division (~100 instructions): for deadlines recomputed on every request (a connection's
/// state machine). The default goes through `advanced(by:)`.
package protocol NanosecondInstant: InstantProtocol where Duration == Swift.Duration {
    /// The instant `nanoseconds` later (earlier when negative).
    func advanced(byNanoseconds nanoseconds: Int64) -> Self
}

extension NanosecondInstant {
    package func advanced(byNanoseconds nanoseconds: Int64) -> Self { advanced(by: .nanoseconds(nanoseconds)) }
}

/// A point on the monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
///
/// Event loops read the clock once per wake-up and hand the same value to everything they run
/// in that iteration (``EventLoop/now``), so timeouts cost no extra system call. State machines
/// are generic over `InstantProtocol`, which lets tests drive them with a manual clock.
package struct LoopInstant: NanosecondInstant, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Nanoseconds since an unspecified origin (boot, on Linux).
    package var nanoseconds: UInt64

    /// Creates an instant from raw nanoseconds.
    package init(nanoseconds: UInt64) {
        self.nanoseconds = nanoseconds
    }

    /// Reads `CLOCK_MONOTONIC`.
    package static func now() -> LoopInstant {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return LoopInstant(nanoseconds: UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec))
    }

    /// The instant `duration` later (earlier when negative), saturating at the clock's range.
    package func advanced(by duration: Duration) -> LoopInstant {
        advanced(byNanoseconds: duration.nanoseconds)
    }

    /// The instant `delta` nanoseconds later (earlier when negative), saturating at the clock's range.
    package func advanced(byNanoseconds delta: Int64) -> LoopInstant {
        if delta >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(delta))
            return LoopInstant(nanoseconds: overflow ? .max : sum)
        }
        let magnitude = delta.magnitude
        return LoopInstant(nanoseconds: nanoseconds > magnitude ? nanoseconds - magnitude : 0)
    }

    /// The signed time from `self` to `other`.
    package func duration(to other: LoopInstant) -> Duration {
        if other.nanoseconds >= nanoseconds {
            return .nanoseconds(Int64(clamping: other.nanoseconds - nanoseconds))
        }
        return .nanoseconds(-Int64(clamping: nanoseconds - other.nanoseconds))
    }

    package static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    package var description: String { "LoopInstant(\(nanoseconds)ns)" }
}

extension Duration {
    /// The duration in whole nanoseconds, clamped to `Int64`.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (secNanos, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = secNanos.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return total
    }
}
