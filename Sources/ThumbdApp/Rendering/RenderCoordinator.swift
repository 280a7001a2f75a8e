// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Instrumentation
import OriginFetch
import Synchronization
import ThumbdSettings
import Thumbnailing

/// Coalesces thumbnail work by variant: the first request for a key starts a fetch and a render,
/// later ones join it, and every one of them is answered with the same result (Nuke's task pool,
/// one per stage; the fetch stage coalesces again by source URL inside `OriginFetcher`).
///
/// - A waiter that leaves (its client went away) is forgotten at once. When the last waiter of a key
///   leaves while the source is still being fetched, the fetch is cancelled (the fetcher closes the
///   transfer if no other variant needs that source).
/// - Once the source bytes are in hand, the render runs to the end even if every waiter has left:
///   the origin cost is paid and the result warms the cache (docs/architecture.md).
/// - Thread-safe: the table is guarded by one `Mutex`, never held while calling out (the fetcher may
///   call back synchronously after shutdown, and completions respond to clients). ThreadSanitizer on
///   Linux cannot see a contended `Synchronization.Mutex` (the kernel takes the futex) and reports false
///   races here; with a pthread lock substituted, `RenderCoordinatorTests` and `IntegrationTests` ran
///   clean under `swift test --sanitize=thread`.
final class RenderCoordinator: Sendable {
    /// Receives the result and how this waiter entered (for `X-Cache: MISS` or `COALESCED`).
    typealias Completion = @Sendable (Result<RenderedVariant, ServiceError>, Admission) -> Void

    /// How a request entered: it started the work, or joined work already under way; or (whichever it was) its
    /// answer came from the shared tier, rendered by another node.
    enum Admission: Sendable { case started, joined, shared }

    /// Identifies one waiter, to let it leave.
    struct Ticket: Sendable {
        fileprivate let key: VariantKey
        fileprivate let flight: Flight
        fileprivate let waiterID: UInt64
    }

    private let fetcher: OriginFetcher
    private let renderPool: WorkerPool
    private let thumbnailer: Thumbnailer
    private let cache: ThumbnailCache?
    private let intermediates: IntermediateCache?
    private let policy: SharedFreshnessPolicy
    private let watermarks: WatermarkSource
    private let shared: SharedTier?
    private let state = Mutex(State())
    private let counts = RenderCounters()

    private struct State {
        var flights: [VariantKey: Flight] = [:]
        var nextWaiterID: UInt64 = 0
        var isShutDown = false
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
    var inFlightCount: Int { state.withLock { $0.flights.count } }

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

    /// Durations of the renders run for requests (one series), for /metrics.
    var renderDurations: DurationHistogram { counts.renderDurations }

    /// Asks for the thumbnail `key`; `completion` is called exactly once, on a fetch or render thread,
    /// unless the waiter leaves first (then never). After ``shutdown()`` (or once the fetcher has shut
    /// down) it is called at once, on the caller's thread, before this returns.
    func request(
        _ key: VariantKey, priority: FetchPriority, completion: @escaping Completion
    ) -> (Ticket, Admission) {
        var promotion = Promotion.none
        let (ticket, flight, admission) = state.withLock { state -> (Ticket?, Flight?, Admission) in
            guard !state.isShutDown else { return (nil, nil, .started) }
            state.nextWaiterID += 1
            let waiterID = state.nextWaiterID
            if let flight = state.flights[key] {
                flight.waiters.append((waiterID, .joined, completion))
                if priority == .interactive, flight.priority == .background {
                    flight.priority = .interactive
                    promotion = flight.promotion
                }
                return (Ticket(key: key, flight: flight, waiterID: waiterID), flight, .joined)
            }
            let flight = Flight(priority: priority)
            flight.waiters.append((waiterID, .started, completion))
            state.flights[key] = flight
            return (Ticket(key: key, flight: flight, waiterID: waiterID), flight, .started)
        }
        guard let ticket, let flight else {
            completion(.failure(.shuttingDown), .started)
            return (Ticket(key: key, flight: Flight(priority: priority), waiterID: 0), .started)
        }
        switch admission {
        case .started:
            counts.flightsStarted.increment()
            startFetch(key, flight: flight, priority: priority)
        case .joined, .shared:  // (.shared is only ever an answer's, never an entry's)
            counts.coalescedJoins.increment()
            promote(promotion)
        }
        return (ticket, admission)
    }

    /// What a client joining background work (a prefetch) must raise so that it waits no longer than for
    /// work of its own: the queued fetch, or the queued render (the stampede case).
    enum Promotion {
        case none
        case fetch(FetchTicket)
        case render(WorkerPool.Job)
    }

    private func promote(_ promotion: Promotion) {
        switch promotion {
        case .none: return
        case .fetch(let ticket): fetcher.promote(ticket)
        case .render(let job): if renderPool.promote(job) { counts.renderPromotions.increment() }
        }
    }

    /// Removes one waiter; its completion will not be called. Cancels the fetch when it was the last
    /// waiter and the source has not arrived yet.
    func leave(_ ticket: Ticket) {
        let (removed, fetchToCancel) = state.withLock { state -> (Bool, FetchTicket?) in
            let flight = ticket.flight
            let before = flight.waiters.count
            flight.waiters.removeAll { $0.id == ticket.waiterID }
            let removed = flight.waiters.count < before
            guard removed, flight.waiters.isEmpty, flight.stage == .fetching, state.flights[ticket.key] === flight
            else {
                return (removed, nil)
            }
            // Out of the table at once: a request arriving now starts afresh instead of joining work that is
            // being cancelled. If the fetch ticket does not exist yet, `startFetch` cancels it when it does.
            state.flights[ticket.key] = nil
            flight.stage = .abandoned
            return (true, flight.fetchTicket)
        }
        guard removed else { return }  // already answered (the response is on its way) or never admitted
        counts.waitersLeft.increment()
        // `cancel` is false when the fetch completion is already running: the source is then in hand and
        // `fetched` renders it for nobody, as the coalescing rules ask.
        if let fetchToCancel, fetcher.cancel(fetchToCancel) { counts.fetchCancellations.increment() }
    }

    /// Refuses new work; work under way finishes.
    func shutdown() {
        state.withLock { $0.isShutDown = true }
    }

    // MARK: - Stages

    /// The first stage: the shared tier's copy of the thumbnail when there is one, else the source.
    private func startFetch(_ key: VariantKey, flight: Flight, priority: FetchPriority) {
        guard let shared else {
            startSourceLookup(key, flight: flight, priority: priority)
            return
        }
        let ticket = shared.lookup(key) { [self] lookup in
            switch lookup {
            case .hit(let variant):
                cache?.store(key, variant)  // promoted to disk and memory before anyone is answered
                finish(key, flight: flight, result: .success(variant), answeredFromShared: true)
                return
            case .miss(let replace):
                state.withLock { _ in flight.sharedWrite = replace ? .replace : .ifAbsent }
            case .unavailable:
                // The store failed: asking it for the original, or writing to it, would only add to the load.
                state.withLock { _ in flight.isSharedUnavailable = true }
            }
            guard let priority = priorityIfWaitedFor(flight) else { return }
            startSourceLookup(key, flight: flight, priority: priority)
        }
        guard let ticket else {  // the breaker skips the tier
            startSourceLookup(key, flight: flight, priority: priority)
            return
        }
        hold(ticket, for: flight)
    }

    /// The flight's priority as it is now (a client may have joined a background flight during a lookup), or nil
    /// when every waiter left: the next stage starts only then.
    private func priorityIfWaitedFor(_ flight: Flight) -> FetchPriority? {
        state.withLock { _ in flight.stage == .abandoned ? nil : flight.priority }
    }

    /// Makes `ticket` the one a leaving client cancels, and cancels it at once if every client has left already.
    private func hold(_ ticket: FetchTicket, for flight: Flight) {
        let abandoned = state.withLock { _ -> Bool in
            flight.fetchTicket = ticket
            return flight.stage == .abandoned
        }
        if abandoned, fetcher.cancel(ticket) { counts.fetchCancellations.increment() }
    }

    /// Takes the source from the source cache when it holds a fresh copy, else from the shared tier, else from
    /// the origin.
    private func startSourceLookup(_ key: VariantKey, flight: Flight, priority: FetchPriority) {
        guard let cache else {
            startSharedSourceLookup(key, flight: flight, priority: priority)
            return
        }
        let queued = cache.lookupSource(key.source) { [self] source in
            if let source {
                counts.sourceCacheHits.increment()
                fetched(key, flight: flight, result: .success(source), sourceWasCached: true)
            } else if let priority = priorityIfWaitedFor(flight) {
                startSharedSourceLookup(key, flight: flight, priority: priority)
            }
        }
        if !queued { startSharedSourceLookup(key, flight: flight, priority: priority) }
    }

    /// The shared tier's copy of the original (when it keeps originals), else the origin.
    private func startSharedSourceLookup(_ key: VariantKey, flight: Flight, priority: FetchPriority) {
        guard let shared, shared.keepsSources, !state.withLock({ _ in flight.isSharedUnavailable }) else {
            startOriginFetch(key, flight: flight, priority: priority)
            return
        }
        let ticket = shared.lookupSource(key.source) { [self] lookup in
            switch lookup {
            case .hit(let source):
                // Not from this node's source cache: `fetched` keeps it there, and does not write it back.
                state.withLock { _ in flight.sourceWrite = .none }
                fetched(key, flight: flight, result: .success(source), sourceWasCached: false)
                return
            case .miss(let replace):
                state.withLock { _ in flight.sourceWrite = replace ? .replace : .ifAbsent }
            case .unavailable:
                break
            }
            guard let priority = priorityIfWaitedFor(flight) else { return }
            startOriginFetch(key, flight: flight, priority: priority)
        }
        guard let ticket else {
            startOriginFetch(key, flight: flight, priority: priority)
            return
        }
        hold(ticket, for: flight)
    }

    private func startOriginFetch(_ key: VariantKey, flight: Flight, priority: FetchPriority) {
        // The fetch thread asks the recent originals again just before it would start a transfer: one that
        // ended while this flight looked in the source cache has stored its source by then.
        // (A reused source is already stored: the flag keeps `fetched` from storing it again.)
        var reuse: (@Sendable () -> FetchedSource?)?
        let reused = ReuseFlag()
        if let cache {
            let source = key.source
            reuse = {
                let recent = cache.recentSource(source)
                if recent != nil { reused.isSet.store(true, ordering: .relaxed) }
                return recent
            }
        }
        let ticket = fetcher.fetch(FetchRequest(url: key.source.string, priority: priority), reuse: reuse) {
            [self] result in
            fetched(key, flight: flight, result: result, sourceWasCached: reused.isSet.load(ordering: .relaxed))
        }
        // The completion may already have run (after a shutdown it runs synchronously); the flight
        // may also have been abandoned before the ticket existed: cancel it now in that case. A client
        // that joined before the ticket existed raised only `flight.priority`: promote the fetch now.
        let (abandoned, raised) = state.withLock { _ -> (Bool, Bool) in
            flight.fetchTicket = ticket
            return (flight.stage == .abandoned, priority == .background && flight.priority == .interactive)
        }
        if abandoned, fetcher.cancel(ticket) { counts.fetchCancellations.increment() }
        if raised { fetcher.promote(ticket) }
    }

    /// On the fetch thread (or a disk-io thread for a cached source): hands the source to a render
    /// worker, or fails every waiter.
    private func fetched(
        _ key: VariantKey, flight: Flight, result: Result<FetchedSource, FetchError>, sourceWasCached: Bool
    ) {
        switch result {
        case .failure(let error):
            if case .originNotFound = error { cache?.rememberNotFound(key.source) }
            finish(key, flight: flight, result: .failure(.fetch(error)))
        case .success(let source):
            // Kept as soon as it arrives, not after the render: another size of this source asked for during
            // the render then finds it instead of fetching it again.
            if !sourceWasCached,
                case .store(let freshness) = policy.current.decide(source.headers, receivedAt: Timestamp.now())
            {
                cache?.storeSource(source, url: key.source, freshness: freshness)
                // Written to the shared tier once the render has answered (only when it came from the origin).
                state.withLock { _ in flight.sourceToShare = (source, freshness) }
            }
            if let watermark = key.spec.operations.watermark {
                fetchWatermark(watermark, key, flight: flight, source: source)
            } else {
                submitRender(key, flight: flight, source: source, watermark: nil)
            }
        }
    }

    /// Still in the fetch stage: the watermark's bytes, then the render. A client that leaves meanwhile cancels
    /// the watermark's fetch (the flight's fetch ticket), as it would the source's.
    private func fetchWatermark(
        _ watermark: ThumbnailSpec.Watermark, _ key: VariantKey, flight: Flight, source: FetchedSource
    ) {
        let priority = state.withLock { _ in flight.priority }
        let ticket = watermarks.bytes(for: watermark, priority: priority) { [self] result in
            switch result {
            case .success(let bytes): submitRender(key, flight: flight, source: source, watermark: bytes)
            case .failure(let error): finish(key, flight: flight, result: .failure(error))
            }
        }
        guard let ticket else { return }
        hold(ticket, for: flight)
    }

    /// Hands the source (and the watermark) to a render worker.
    private func submitRender(_ key: VariantKey, flight: Flight, source: FetchedSource, watermark: [UInt8]?) {
        // `.abandoned` here means the last waiter left while this completion was already on its way
        // (`cancel` lost the race): the origin cost is paid, so the source is rendered for the cache
        // anyway, at background priority since nobody waits. The flight is no longer in the table, so
        // `finish` will not remove a newer flight for the same key.
        let priority = state.withLock { _ -> FetchPriority? in
            switch flight.stage {
            case .fetching:
                flight.stage = .rendering
                return flight.priority
            case .abandoned:
                flight.stage = .rendering
                return .background
            case .rendering, .finished:
                return nil  // cannot happen: the fetcher calls a completion once
            }
        }
        guard let priority else { return }
        do {
            let job = try renderPool.submit(priority: priority == .interactive ? .interactive : .background) {
                [self] in
                render(key, flight: flight, source: source, watermark: watermark)
            }
            // A client that joined between the stage change and here raised only `flight.priority`.
            let raised = state.withLock { _ -> Bool in
                flight.renderJob = job
                return priority == .background && flight.priority == .interactive
            }
            if raised { promote(.render(job)) }
        } catch {
            counts.renderQueueRejections.increment()
            finish(key, flight: flight, result: .failure(.renderQueueFull))
        }
    }

    /// On a render worker. A rendered variant goes into the cache before any waiter is answered, so a
    /// request that arrives after an answer finds it there.
    private func render(_ key: VariantKey, flight: Flight, source: FetchedSource, watermark: [UInt8]?) {
        counts.rendersStarted.increment()
        let started = LoopInstant.now()
        let result: Result<RenderedVariant, ServiceError>
        do {
            let thumbnail =
                if let intermediates {
                    try intermediates.render(
                        source.body, url: key.source.string, spec: key.spec, watermark: watermark,
                        thumbnailer: thumbnailer)
                } else {
                    try thumbnailer.render(source.body, spec: key.spec, watermark: watermark)
                }
            let variant = Self.variant(thumbnail, from: source, policy: policy.current)
            cache?.store(key, variant)
            result = .success(variant)
        } catch {
            counts.renderFailures.increment()
            result = .failure(.thumbnail(error))
        }
        // Before the render counts as finished and anyone is answered: a scrape that sees the render sees its
        // duration too (it was observed after the answer, which a /metrics read right after a miss could beat).
        counts.renderDurations.observe(0, started.duration(to: LoopInstant.now()))
        counts.rendersFinished.increment()
        let answered = finish(key, flight: flight, result: result)
        if answered == 0 { counts.rendersUnattended.increment() }
        share(key, flight: flight, result: result)
    }

    /// After the clients have their answer: what this node rendered, and the original it fetched, go to the
    /// shared tier (when its lookups found nothing there, or something to overwrite).
    private func share(_ key: VariantKey, flight: Flight, result: Result<RenderedVariant, ServiceError>) {
        guard let shared else { return }
        let (variantWrite, sourceWrite, source) = state.withLock { _ in
            defer { flight.sourceToShare = nil }
            return (flight.sharedWrite, flight.sourceWrite, flight.sourceToShare)
        }
        if case .success(let variant) = result, variantWrite != .none {
            shared.store(key, variant, replacing: variantWrite == .replace)
        }
        if let (source, freshness) = source, sourceWrite != .none {
            shared.storeSource(source, url: key.source, freshness: freshness, replacing: sourceWrite == .replace)
        }
    }

    /// A rendered thumbnail with the freshness the source's caching headers give it (none when the origin
    /// forbade storing).
    static func variant(
        _ thumbnail: RenderedThumbnail, from source: FetchedSource, policy: FreshnessPolicy
    ) -> RenderedVariant {
        let freshness: DiskCache.Freshness?
        switch policy.decide(source.headers, receivedAt: Timestamp.now()) {
        case .store(let decided): freshness = decided
        case .doNotStore: freshness = nil
        }
        return RenderedVariant(
            bytes: thumbnail.bytes, format: thumbnail.format, freshness: freshness, quality: thumbnail.quality)
    }

    /// Removes the flight and answers every waiter still there, outside the lock.
    /// - Returns: how many waiters were answered.
    @discardableResult
    private func finish(
        _ key: VariantKey, flight: Flight, result: Result<RenderedVariant, ServiceError>,
        answeredFromShared: Bool = false
    ) -> Int {
        let waiters = state.withLock { state -> [Flight.Waiter] in
            if state.flights[key] === flight { state.flights[key] = nil }
            flight.stage = .finished
            flight.renderJob = nil
            defer { flight.waiters.removeAll() }
            return flight.waiters
        }
        for waiter in waiters { waiter.completion(result, answeredFromShared ? .shared : waiter.admission) }
        return waiters.count
    }
}

/// The work under way for one variant key.
private final class Flight: @unchecked Sendable {
    // Sendable: every mutable field is read and written only inside RenderCoordinator.state's lock.
    typealias Waiter = (id: UInt64, admission: RenderCoordinator.Admission, completion: RenderCoordinator.Completion)

    enum Stage { case fetching, rendering, finished, abandoned }

    var waiters: [Waiter] = []
    var stage = Stage.fetching
    var priority: FetchPriority
    var fetchTicket: FetchTicket?
    var renderJob: WorkerPool.Job?
    /// How the thumbnail goes to the shared tier after the render: as the shared lookup found it.
    var sharedWrite = SharedWrite.none
    /// How the original goes there: as the shared source lookup found it.
    var sourceWrite = SharedWrite.none
    /// Whether the shared tier failed this flight's thumbnail lookup (then it is not asked for the original).
    var isSharedUnavailable = false
    /// The original fetched from the origin for this flight, with its freshness, to share after the render.
    var sourceToShare: (FetchedSource, DiskCache.Freshness)?

    /// Whether and how to write to the shared tier.
    enum SharedWrite {
        /// Not at all: no tier, it failed, or the value came from it.
        case none
        /// Unless another node stored it first (`If-None-Match: *`).
        case ifAbsent
        /// Over what is there (a corrupt or expired object).
        case replace
    }

    /// What to raise when a client joins this background flight now.
    var promotion: RenderCoordinator.Promotion {
        switch stage {
        case .fetching: fetchTicket.map { .fetch($0) } ?? .none
        case .rendering: renderJob.map { .render($0) } ?? .none
        case .finished, .abandoned: .none
        }
    }

    init(priority: FetchPriority) {
        self.priority = priority
    }
}

/// Whether the fetcher answered a flight with a source it reused (both closures run on the fetch thread, one
/// after the other).
private final class ReuseFlag: Sendable {
    let isSet = Atomic<Bool>(false)
}
