// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Instrumentation
import OriginFetch
import Synchronization
import ThumbdSettings
import Thumbnailing

/// Coalesces thumbnail work by variant: the first request for a key starts a flight, later ones join it, and every
/// one of them is answered with the same result (Nuke's task pool, one per stage; the fetch stage coalesces again by
/// source URL inside `OriginFetcher`).
///
/// What a flight does, step by step, and when (a waiter leaving, a client joining a prefetch, a cancel losing its
/// race) is decided by its ``Flight/StateMachine``, a value with no I/O. This class is the table of machines, under
/// one lock, and the runner of the actions they return (RenderCoordinator+Steps.swift), outside it.
///
/// - Thread-safe: the table is guarded by one `Mutex`, never held while calling out (the fetcher may call back
///   synchronously after shutdown, and answers go to clients). ThreadSanitizer on Linux cannot see a contended
///   `Synchronization.Mutex` (the kernel takes the futex) and reports false races here; with a pthread lock
///   substituted, `RenderCoordinatorTests` and `IntegrationTests` ran clean under `swift test --sanitize=thread`.
final class RenderCoordinator: Sendable {
    /// Receives the result and how this waiter entered (for `X-Cache: MISS` or `COALESCED`).
    typealias Completion = @Sendable (Result<RenderedVariant, ServiceError>, Admission) -> Void

    /// How a request entered: it started the work, or joined work already under way; or (whichever it was) its
    /// answer came from the shared tier, rendered by another node.
    enum Admission: Sendable { case started, joined, shared }

    /// Identifies one waiter, to let it leave.
    struct Ticket: Sendable {
        fileprivate let flightID: UInt64
        fileprivate let waiterID: UInt64
    }

    /// One flight's machine, with the handles the fetcher and the render pool give back.
    typealias Machine = Flight.StateMachine<FetchTicket, WorkerPool.Job, Completion>

    let fetcher: OriginFetcher
    let renderPool: WorkerPool
    let thumbnailer: Thumbnailer
    let cache: ThumbnailCache?
    let intermediates: IntermediateCache?
    let policy: SharedFreshnessPolicy
    let watermarks: WatermarkSource
    let shared: SharedTier?
    let counts = RenderCounters()
    private let table = Mutex(Table())

    /// Every flight with work outstanding, by an identity of its own (an abandoned flight is no longer its key's,
    /// but a source that arrives anyway is still rendered for it), and the one flight a request for a key joins.
    private struct Table {
        struct Entry {
            let key: VariantKey
            var machine: Machine
        }
        var flights: [UInt64: Entry] = [:]
        var joinable: [VariantKey: UInt64] = [:]
        var lastFlightID: UInt64 = 0
        var lastWaiterID: UInt64 = 0
        var isShutDown = false

        /// Feeds one event to flight `id`, then keeps the table in step with its machine: out of `joinable` once it
        /// is abandoned or finished, forgotten once finished. Nil when the flight is already forgotten.
        mutating func apply<Outcome>(
            _ id: UInt64, _ event: (inout Machine) -> Outcome
        ) -> (key: VariantKey, outcome: Outcome)? {
            guard var entry = flights.removeValue(forKey: id) else { return nil }
            let outcome = event(&entry.machine)
            if !entry.machine.isJoinable, joinable[entry.key] == id { joinable[entry.key] = nil }
            if !entry.machine.isFinished { flights[id] = entry }
            return (entry.key, outcome)
        }
    }

    /// - Parameters:
    ///   - cache: where rendered variants and fetched sources are kept, and sources looked up before a
    ///     fetch; `nil` for none.
    ///   - policy: turns the origin's caching headers into each variant's freshness.
    ///   - intermediates: decoded intermediates kept for other sizes of the same source; `nil` for none
    ///     (the output bytes are the same either way).
    ///   - watermarks: where a plan's watermark comes from (its URL is fetched after the source, on the same
    ///     flight: a client that leaves cancels it like the source's fetch).
    ///   - shared: the shared tier, asked for the thumbnail and then for the original before the origin, and
    ///     given what this node rendered and fetched; `nil` for none.
    init(
        fetcher: OriginFetcher, renderPool: WorkerPool, thumbnailer: Thumbnailer, cache: ThumbnailCache? = nil,
        policy: SharedFreshnessPolicy = SharedFreshnessPolicy(FreshnessPolicy(Settings.Cache())),
        intermediates: IntermediateCache? = nil, watermarks: WatermarkSource = .none, shared: SharedTier? = nil
    ) {
        self.shared = shared
        self.watermarks = watermarks
        self.intermediates = intermediates
        self.fetcher = fetcher
        self.renderPool = renderPool
        self.thumbnailer = thumbnailer
        self.cache = cache
        self.policy = policy
    }

    /// Number of keys with work under way (for /metrics and tests).
    var inFlightCount: Int { table.withLock { $0.joinable.count } }

    /// Number of flights with work outstanding, abandoned ones included (for tests: none once all has settled).
    var outstandingFlightCount: Int { table.withLock { $0.flights.count } }

    /// A snapshot of the totals since start.
    var counters: Counters { counts.snapshot }

    /// The intermediate cache's totals (hits, made, joined) and its LRU's sizes and evictions, for /metrics;
    /// `nil` without one.
    var intermediateStatistics: (counters: IntermediateCache.Counters, bytes: Int, entries: Int, evictions: Int)? {
        intermediates.map { intermediates in
            let memory = intermediates.memoryStatistics
            return (
                intermediates.counters, memory?.currentBytes ?? 0, memory?.currentEntries ?? 0, memory?.evictions ?? 0
            )
        }
    }

    /// The per-source detections' totals (`nil` with `image.faces` off), for /metrics and tests.
    var detectionCounters: SourceDetections.Counters? { intermediates?.detections?.counters }

    /// The per-source analyses' totals, for /metrics and tests.
    var analysisCounters: SourceAnalyses.Counters? { intermediates?.analyses?.counters }

    /// Durations of the renders run for requests (one series), for /metrics.
    var renderDurations: DurationHistogram { counts.renderDurations }

    /// Asks for the thumbnail `key`; `completion` is called exactly once, on a fetch or render thread,
    /// unless the waiter leaves first (then never). After ``shutdown()`` (or once the fetcher has shut
    /// down) it is called at once, on the caller's thread, before this returns.
    func request(
        _ key: VariantKey, priority: FetchPriority, completion: @escaping Completion
    ) -> (Ticket, Admission) {
        let route = Flight.Route(
            sharedThumbnails: shared != nil, sharedSources: shared?.keepsSources ?? false, sourceCache: cache != nil,
            watermark: Overlays.needed(by: key.spec))
        let (ticket, admission, actions) = table.withLock { table -> (Ticket, Admission, [Machine.Action]) in
            table.lastWaiterID += 1
            let waiterID = table.lastWaiterID
            if let id = table.joinable[key] {
                let waiter = Machine.Waiter(id: waiterID, admission: .joined, completion: completion)
                let actions = table.apply(id) { $0.join(waiter, priority: priority) }?.outcome ?? []
                return (Ticket(flightID: id, waiterID: waiterID), .joined, actions)
            }
            let waiter = Machine.Waiter(id: waiterID, admission: .started, completion: completion)
            guard !table.isShutDown else { return (Ticket(flightID: 0, waiterID: 0), .started, [.refuse(waiter)]) }
            table.lastFlightID += 1
            let id = table.lastFlightID
            var machine = Machine(first: waiter, priority: priority, route: route)
            let actions = machine.begin()
            table.flights[id] = Table.Entry(key: key, machine: machine)
            table.joinable[key] = id
            return (Ticket(flightID: id, waiterID: waiterID), .started, actions)
        }
        if case .refuse = actions.first {  // after shutdown: by the table for a new key, by the machine for a join
            perform(actions, key: key, flight: 0)
            return (Ticket(flightID: 0, waiterID: 0), .started)  // never admitted: leaving it does nothing
        }
        switch admission {
        case .started: counts.flightsStarted.increment()
        case .joined, .shared: counts.coalescedJoins.increment()  // (.shared is only ever an answer's)
        }
        perform(actions, key: key, flight: ticket.flightID)
        return (ticket, admission)
    }

    /// Removes one waiter; its completion will not be called. Cancels the current fetch or lookup when it was the
    /// last waiter and the source has not arrived yet.
    func leave(_ ticket: Ticket) {
        guard let left = table.withLock({ $0.apply(ticket.flightID) { $0.leave(ticket.waiterID) } }),
            let actions = left.outcome
        else { return }  // already answered (the response is on its way) or never admitted
        counts.waitersLeft.increment()
        perform(actions, key: left.key, flight: ticket.flightID)
    }

    /// Refuses new work; work under way finishes.
    func shutdown() {
        table.withLock { table in
            table.isShutDown = true
            for id in table.flights.keys { table.flights[id]?.machine.shutdown() }
        }
    }

    /// Feeds an event to flight `id` and performs what it returns.
    func handle(_ id: UInt64, _ event: (inout Machine) -> [Machine.Action]) {
        guard let applied = table.withLock({ $0.apply(id, event) }) else { return }
        perform(applied.outcome, key: applied.key, flight: id)
    }

    /// Performs a machine's actions, in order, outside the lock; their answers come back through ``handle(_:_:)``.
    func perform(_ actions: [Machine.Action], key: VariantKey, flight id: UInt64) {
        for action in actions {
            switch action {
            case .lookUpSharedThumbnail: lookUpSharedThumbnail(key, flight: id)
            case .lookUpSourceCache: lookUpSourceCache(key, flight: id)
            case .lookUpSharedSource: lookUpSharedSource(key, flight: id)
            case .fetchOrigin(let priority): fetchOrigin(key, flight: id, priority: priority)
            case .fetchWatermark(let priority): fetchWatermark(key, flight: id, priority: priority)
            case .submitRender(let priority, let source, let overlays):
                submitRender(key, flight: id, priority: priority, source: source, overlays: overlays)
            case .cancel(let ticket, let step):
                // False when the answer is already on its way: the machine then takes it as it comes.
                guard fetcher.cancel(ticket) else { continue }
                counts.fetchCancellations.increment()
                handle(id) { $0.cancelled(step) }
            case .promoteFetch(let ticket): fetcher.promote(ticket)
            case .promoteRender(let job): if renderPool.promote(job) { counts.renderPromotions.increment() }
            case .answer(let waiters, let result, let fromSharedTier):
                for waiter in waiters { waiter.completion(result, fromSharedTier ? .shared : waiter.admission) }
            case .refuse(let waiter): waiter.completion(.failure(.shuttingDown), .started)
            case .share(let writes): share(writes, key: key)
            }
        }
    }
}
