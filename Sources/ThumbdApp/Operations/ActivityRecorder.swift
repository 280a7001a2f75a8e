// SPDX-License-Identifier: Apache-2.0
import Glibc
import HTTP1
import OriginFetch
import Synchronization

/// What the `/status` page shows that no component counts: requests per 10 s over the last 10 minutes, the
/// last 20 errors, and the most requested sources.
///
/// Fed from the request path, so the common case is kept to a few nanoseconds:
/// - ``record(_:)`` (the access-log hook, every response) reads a coarse clock, loads one atomic and adds one
///   to the calling thread's own counter stripe (padded, so the `http-N` threads never share a cache line).
///   Only the first response of a new 10 s period takes the lock, to note the running total; only error
///   responses (status ≥ 400) take it to keep the error.
/// - ``noteSource(_:)`` (every `/thumb` request that knows its source) loads the thread's stripe and, for one
///   request in ``sourceSamplePeriod``, takes the lock to count the source (Space-Saving top-k, decayed).
///
/// Per-period counts come from totals noted at the first response of each period: a period that saw no
/// response has no note and counted zero, so nothing has to tick while the server is idle.
final class ActivityRecorder: Sendable {
    /// Length of one chart bucket.
    static let bucketSeconds = 10
    /// Buckets kept (10 minutes).
    static let bucketCount = 60
    /// Errors kept.
    static let errorCapacity = 20
    /// Sources tracked (Space-Saving counters); the page shows the top 10.
    static let sourceCapacity = 64
    /// Source counts are halved this often, so the list follows recent traffic.
    static let sourceDecaySeconds = 60

    /// One request in this many has its source counted (a power of two).
    let sourceSamplePeriod: Int
    /// Inline in the object (no array buffer or stripe object whose reference count every thread would bump).
    private let stripes: InlineArray<8, CounterStripe>
    /// The 10 s period of the last noted total; -1 before the first response.
    private let lastPeriod = Atomic<Int>(-1)
    private let state = Mutex(State())
    private let startedAt: Int

    /// One error response, as the page shows it.
    struct ErrorEntry: Sendable, Equatable {
        /// Wall-clock seconds since 1970.
        var unixTime: Int
        var status: Int
        var method: String
        /// The path only: the access-log record never holds the query, so no signature or source URL.
        var route: String
        var message: String
    }

    /// A source and how many requests named it (estimated: sampled counts × the sample period).
    struct SourceCount: Sendable, Equatable {
        var name: String
        var requests: Int
    }

    /// What the page shows.
    struct Snapshot: Sendable, Equatable {
        /// Responses since start.
        var totalRequests: Int
        /// Responses per 10 s bucket, oldest first; the last is the current, unfinished bucket.
        var buckets: [Int]
        /// Most recent first.
        var errors: [ErrorEntry]
        var topHosts: [SourceCount]
        var topURLs: [SourceCount]
        var uptimeSeconds: Int
    }

    private struct State {
        /// (period, total at the first response of that period), oldest first.
        var notes: [(period: Int, total: Int)] = []
        var errors: [ErrorEntry] = []
        var nextError = 0
        var hosts = SpaceSaving(capacity: ActivityRecorder.sourceCapacity)
        var urls = SpaceSaving(capacity: ActivityRecorder.sourceCapacity)
        var lastDecay = 0

        /// Halves every count once per ``ActivityRecorder/sourceDecaySeconds``, so old traffic fades.
        mutating func decayIfDue(now: Int) {
            guard now - lastDecay >= ActivityRecorder.sourceDecaySeconds else { return }
            let halvings = min(62, (now - lastDecay) / ActivityRecorder.sourceDecaySeconds)
            hosts.decay(halvings: halvings)
            urls.decay(halvings: halvings)
            lastDecay = now
        }
    }

    /// - Parameter sourceSamplePeriod: one `/thumb` request in this many is counted in the top sources (a
    ///   power of two; 1 counts every request, for tests).
    init(sourceSamplePeriod: Int = 16) {
        precondition(sourceSamplePeriod > 0 && sourceSamplePeriod & (sourceSamplePeriod - 1) == 0)
        self.sourceSamplePeriod = sourceSamplePeriod
        stripes = InlineArray { _ in CounterStripe() }
        startedAt = Self.monotonicSeconds()
    }

    // MARK: - Recording (request path)

    /// Counts one response; keeps it when it is an error. Called on the connection's loop.
    func record(_ record: AccessLogRecord) {
        countResponse()
        if record.status >= 400 {
            keepError(status: record.status, method: record.method.description, route: record.path, note: record.note)
        }
    }

    /// Counts one response in the current 10 s bucket.
    func countResponse() {
        let period = Self.monotonicSeconds() / Self.bucketSeconds
        if lastPeriod.load(ordering: .relaxed) != period { notePeriod(period) }
        stripes[stripeIndex()].count.add(1, ordering: .relaxed)
    }

    /// Counts `source` for one request in ``sourceSamplePeriod``. Called on the connection's loop.
    /// `source` is evaluated for sampled requests only: a hot-set hit's source shares its strings with the
    /// other loops, and copying it would retain them.
    func noteSource(_ source: @autoclosure () -> SourceURL) {
        // The stripe advances once per response on this thread, which is as good as a request counter here
        // and costs no write.
        guard stripes[stripeIndex()].count.load(ordering: .relaxed) & (sourceSamplePeriod - 1) == 0 else { return }
        let source = source()
        let now = Self.monotonicSeconds()
        let weight = sourceSamplePeriod
        state.withLock { state in
            state.decayIfDue(now: now)
            state.hosts.add(source.host, weight: weight)
            state.urls.add(source.string, weight: weight)
        }
    }

    private func notePeriod(_ period: Int) {
        state.withLock { state in
            guard lastPeriod.load(ordering: .relaxed) != period else { return }
            state.notes.append((period, totalRequests))
            let oldest = period - Self.bucketCount
            if let first = state.notes.firstIndex(where: { $0.period > oldest }), first > 0 {
                state.notes.removeFirst(first - 1)  // keep one note before the window: it closes the oldest bucket
            }
            lastPeriod.store(period, ordering: .relaxed)
        }
    }

    /// Keeps one error response (the oldest of ``errorCapacity`` goes).
    func keepError(status: Int, method: String, route: String, note: String?) {
        let entry = ErrorEntry(
            unixTime: Int(time(nil)), status: status, method: method, route: String(route.prefix(80)),
            message: HTTPStatus(code: status).reasonPhrase + (note.map { " (X-Cache: \($0.prefix(40)))" } ?? ""))
        state.withLock { state in
            if state.errors.count < Self.errorCapacity {
                state.errors.append(entry)
            } else {
                state.errors[state.nextError] = entry
            }
            state.nextError = (state.nextError + 1) % Self.errorCapacity
        }
    }

    // MARK: - Reading

    /// Responses since start.
    var totalRequests: Int {
        var total = 0
        for index in stripes.indices { total += stripes[index].count.load(ordering: .relaxed) }
        return total
    }

    /// The current counts, errors and top sources (`top` of each).
    func snapshot(top: Int = 10) -> Snapshot {
        let now = Self.monotonicSeconds()
        let current = now / Self.bucketSeconds
        let total = totalRequests
        return state.withLock { state in
            state.decayIfDue(now: now)
            var buckets = [Int](repeating: 0, count: Self.bucketCount)
            for (index, note) in state.notes.enumerated() {
                let end = index + 1 < state.notes.count ? state.notes[index + 1].total : total
                let slot = Self.bucketCount - 1 - (current - note.period)
                if (0..<Self.bucketCount).contains(slot) { buckets[slot] = max(0, end - note.total) }
            }
            let errors =
                state.errors.count < Self.errorCapacity
                ? Array(state.errors.reversed())
                : Array((state.errors[state.nextError...] + state.errors[..<state.nextError]).reversed())
            return Snapshot(
                totalRequests: total, buckets: buckets, errors: errors, topHosts: state.hosts.top(top),
                topURLs: state.urls.top(top), uptimeSeconds: now - startedAt)
        }
    }

    // MARK: - Internals

    /// The calling thread's stripe: `pthread_self` is the thread's control block, whose address differs by at
    /// least a stack size between threads; hashed, the few `http-N` threads rarely share a stripe (and when
    /// they do the counts stay exact, only slower).
    private func stripeIndex() -> Int {
        let thread = UInt(pthread_self()) >> 12
        return Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 61)  // 0..<8
    }

    private static func monotonicSeconds() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &spec)
        return spec.tv_sec
    }
}

/// One thread's request counter, padded to 72 bytes so that two stripes' counters are never in one cache line.
private struct CounterStripe: ~Copyable, Sendable {
    let count = Atomic<Int>(0)
    private let padding: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
}
