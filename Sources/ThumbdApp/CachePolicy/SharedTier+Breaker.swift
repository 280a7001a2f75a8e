// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// Skips the shared tier while it is failing: after `failures` failures in a row it opens for `pause`; then one
/// request (a lookup: the probe) may try, and its outcome closes it or opens it for another pause. A 404 or a
/// 412 is a success (the store answered). Writes never probe: while the breaker is open or probing, they are
/// skipped. Thread-safe; a few nanoseconds under an uncontended lock per request.
final class CircuitBreaker: Sendable {
    private struct State {
        var failuresInARow = 0
        var openUntil: ContinuousClock.Instant?
        var isProbing = false
        var opened = 0
    }

    private let failures: Int
    private let pause: Duration
    private let state = Mutex(State())

    init(failures: Int, pause: Duration) {
        self.failures = failures
        self.pause = pause
    }

    /// Whether a request may go to the tier now. With `probing`, a request arriving after the pause becomes the
    /// one probe; without it, nothing passes until the probe has closed the breaker.
    func admit(probing: Bool = true) -> Bool {
        state.withLock { state in
            guard let openUntil = state.openUntil else { return true }
            guard probing, !state.isProbing, ContinuousClock.now >= openUntil else { return false }
            state.isProbing = true
            return true
        }
    }

    /// Records the outcome of an admitted request.
    func record(success: Bool) {
        state.withLock { state in
            if success {
                state = State(opened: state.opened)
                return
            }
            state.failuresInARow += 1
            if state.isProbing || (state.openUntil == nil && state.failuresInARow >= failures) {
                state.openUntil = .now + pause
                state.isProbing = false
                state.opened += 1
            }
        }
    }

    /// Whether the tier is being skipped.
    var isOpen: Bool { state.withLock { $0.openUntil != nil } }

    /// How many times it has opened since start.
    var openings: Int { state.withLock { $0.opened } }
}

/// The shared tier's totals since start, for /metrics and /status.
final class SharedTierCounters: Sendable {
    /// What was looked up.
    enum Kind: Int, Sendable, CaseIterable {
        case variant, source, analysis

        var label: String {
            switch self {
            case .variant: "thumbnail"
            case .source: "source"
            case .analysis: "analysis"
            }
        }
    }

    /// How a lookup ended.
    enum LookupResult: Int, Sendable, CaseIterable {
        /// A good, fresh object: no render (thumbnail) or no origin fetch (source).
        case hit
        /// No object.
        case miss
        /// An object whose bytes did not match its checksum, or whose metadata was unusable.
        case corrupt
        /// A good object past its freshness (rendered again and overwritten).
        case stale
        /// The store failed or timed out.
        case error
        /// Not asked: the breaker was open.
        case skipped

        var label: String {
            switch self {
            case .hit: "hit"
            case .miss: "miss"
            case .corrupt: "corrupt"
            case .stale: "stale"
            case .error: "error"
            case .skipped: "skipped"
            }
        }
    }

    /// How a write ended.
    enum PutResult: Int, Sendable, CaseIterable {
        /// Stored.
        case stored
        /// Another node had stored it first (412).
        case exists
        /// The store failed or timed out.
        case error
        /// Not sent: `put_queue` writes were under way, or the fetcher shut down.
        case dropped
        /// Not sent: the breaker was open.
        case skipped

        var label: String {
            switch self {
            case .stored: "stored"
            case .exists: "exists"
            case .error: "error"
            case .dropped: "dropped"
            case .skipped: "skipped"
            }
        }
    }

    /// A copy of every count.
    struct Snapshot: Sendable, Equatable {
        /// Lookups by kind and result.
        var lookups: [Kind: [LookupResult: Int]]
        /// Writes by result.
        var puts: [PutResult: Int]
        /// Whether the breaker is open now.
        var isOpen: Bool
        /// Times the breaker opened.
        var breakerOpenings: Int
        /// Writes under way now.
        var putsUnderWay: Int

        /// Lookups of `kind` that ended with `result`.
        func lookups(_ kind: Kind, _ result: LookupResult) -> Int { lookups[kind]?[result] ?? 0 }
    }

    /// One short lock per count: the tier is asked on misses only, never on the hit path.
    private let counts = Mutex(
        (
            lookups: [Int](repeating: 0, count: Kind.allCases.count * LookupResult.allCases.count),
            puts: [Int](repeating: 0, count: PutResult.allCases.count)
        ))

    init() {}

    func count(_ kind: Kind, _ result: LookupResult) {
        counts.withLock { $0.lookups[kind.rawValue * LookupResult.allCases.count + result.rawValue] += 1 }
    }

    func countPut(_ result: PutResult) {
        counts.withLock { $0.puts[result.rawValue] += 1 }
    }

    func snapshot(isOpen: Bool, putsUnderWay: Int, openings: Int) -> Snapshot {
        let (lookupCounts, putCounts) = counts.withLock { ($0.lookups, $0.puts) }
        var lookups: [Kind: [LookupResult: Int]] = [:]
        for kind in Kind.allCases {
            for result in LookupResult.allCases {
                lookups[kind, default: [:]][result] =
                    lookupCounts[kind.rawValue * LookupResult.allCases.count + result.rawValue]
            }
        }
        var puts: [PutResult: Int] = [:]
        for result in PutResult.allCases { puts[result] = putCounts[result.rawValue] }
        return Snapshot(
            lookups: lookups, puts: puts, isOpen: isOpen, breakerOpenings: openings, putsUnderWay: putsUnderWay)
    }
}
