// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch

extension Flight {
    /// The life of one flight as a value: which step it is at, who waits, how urgent it is, and what goes to the
    /// shared tier at the end. Each event returns the ``Action``s for the owner (``RenderCoordinator``) to perform,
    /// outside its lock; the machine does no I/O and reads no clock (the shape of ``Connection/StateMachine``).
    ///
    /// Generic over the handles the owner gets back from the fetcher and the render pool, and over what it keeps to
    /// answer a waiter, so that tests drive it with plain values.
    ///
    /// The rules it keeps (docs/architecture.md):
    /// - Steps run in order: shared thumbnail → source cache → shared original → origin → watermark → queued →
    ///   rendering → finished. A step this node lacks, or one the owner reports as skipped, is passed over.
    /// - When the last waiter leaves before the source is in hand, the flight is *abandoned*: it leaves the table
    ///   (a new request starts afresh) and the current step's request is cancelled. A source that arrives anyway
    ///   (the cancel lost the race, or a lookup cannot be cancelled) is rendered for the cache, at background
    ///   priority; a lookup that finds nothing ends the flight there.
    /// - Once the render is queued it runs to the end even if every waiter leaves: the origin cost is paid.
    /// - A client joining background work raises it to interactive: the request or render job of the current
    ///   step is promoted, or, when its handle does not exist yet, the origin fetch, the watermark fetch or the render is promoted as soon
    ///   as it does.
    struct StateMachine<Ticket: Sendable, Job: Sendable, Completion: Sendable>: Sendable {
        /// One client waiting for the answer.
        struct Waiter: Sendable {
            /// Unique per coordinator: lets the waiter leave.
            let id: UInt64
            /// Whether it started the flight or joined it.
            let admission: RenderCoordinator.Admission
            /// How to answer it.
            let completion: Completion
        }

        /// Where the flight is.
        enum Stage: Sendable {
            /// Asking the shared tier for the thumbnail; the ticket once the request exists.
            case lookingUpSharedThumbnail(Ticket?)
            /// Asking this node's source cache (no handle: it cannot be cancelled).
            case lookingUpSourceCache
            /// Asking the shared tier for the original.
            case lookingUpSharedSource(Ticket?)
            /// Fetching the source from the origin, asked for at `requestedAt`.
            case fetchingOrigin(Ticket?, requestedAt: FetchPriority)
            /// Fetching the images laid over the output (the watermark, then the frame); the source waits here.
            case fetchingWatermark(Ticket?, source: FetchedSource, requestedAt: FetchPriority)
            /// Waiting in the render pool, submitted at `requestedAt`; the job once the pool has returned it.
            case queued(Job?, requestedAt: FetchPriority)
            /// On a render worker.
            case rendering
            /// Answered (or ended for nobody); nothing more will happen.
            case finished
        }

        /// What the owner must do, in the order given.
        enum Action: Sendable {
            /// Ask the shared tier for the thumbnail; report ``issued(_:for:)``, then the answer.
            case lookUpSharedThumbnail
            /// Ask the source cache; report ``sourceArrived(_:keptFor:)`` or ``sourceCacheMissed()``.
            case lookUpSourceCache
            /// Ask the shared tier for the original; report ``issued(_:for:)``, then the answer.
            case lookUpSharedSource
            /// Fetch the source from the origin at this priority.
            case fetchOrigin(FetchPriority)
            /// Fetch the plan's watermark at this priority.
            case fetchWatermark(FetchPriority)
            /// Queue the render; report ``renderQueued(_:)`` or ``renderRejected()``.
            case submitRender(FetchPriority, source: FetchedSource, overlays: Overlays)
            /// Cancel a step's request; report ``cancelled(_:)`` when the cancel wins (no answer will come).
            case cancel(Ticket, Step)
            /// Raise a queued request to interactive.
            case promoteFetch(Ticket)
            /// Move a queued render to the interactive lane.
            case promoteRender(Job)
            /// Answer these waiters (`fromSharedTier`: with the admission `.shared`). Never empty.
            case answer([Waiter], Result<RenderedVariant, ServiceError>, fromSharedTier: Bool)
            /// Answer this waiter at once: the coordinator is shutting down.
            case refuse(Waiter)
            /// Give the shared tier what this node rendered and fetched.
            case share(SharedWrites)
        }

        /// What goes to the shared tier after a render.
        struct SharedWrites: Sendable {
            /// The thumbnail, and whether it overwrites an unusable object.
            var variant: (variant: RenderedVariant, replacing: Bool)?
            /// The original this node fetched, its freshness, and whether it overwrites.
            var source: (source: FetchedSource, freshness: DiskCache.Freshness, replacing: Bool)?
        }

        /// The optional steps this node has.
        let route: Route
        /// Where the flight is.
        private(set) var stage: Stage
        /// Who waits, in the order they came.
        private(set) var waiters: [Waiter]
        /// Interactive once any client waits for it; a background flight is a prefetch's.
        private(set) var priority: FetchPriority
        /// Whether every waiter left before the source was in hand (see the rules above).
        private(set) var isAbandoned = false
        /// Whether the coordinator refuses new work: a waiter joining now is answered at once.
        private(set) var isShuttingDown = false
        /// Whether the shared tier failed the thumbnail lookup (then it is not asked for the original).
        private(set) var isSharedTierUnavailable = false
        /// How the thumbnail goes to the shared tier after the render: as the shared lookup found it.
        private(set) var variantWrite = SharedWrite.none
        /// How the original goes there: as the shared source lookup found it.
        private(set) var sourceWrite = SharedWrite.none
        /// The source this node fetched and kept, with its freshness, to share after the render.
        private var sourceToShare: (source: FetchedSource, freshness: DiskCache.Freshness)?

        /// A flight started by `first`; ``begin()`` gives its first action.
        init(first: Waiter, priority: FetchPriority, route: Route) {
            self.route = route
            self.priority = priority
            waiters = [first]
            stage = .lookingUpSharedThumbnail(nil)  // set for real by `begin`
        }

        /// Whether a request for the same key joins this flight (else it starts a new one).
        var isJoinable: Bool {
            if isAbandoned { return false }
            if case .finished = stage { return false }
            return true
        }

        /// Whether nothing more will happen: the owner forgets the flight.
        var isFinished: Bool {
            if case .finished = stage { return true }
            return false
        }

        // MARK: - Waiters

        /// The first step's action.
        mutating func begin() -> [Action] {
            beginStep(after: nil)
        }

        /// A client joins. Returns the promotions its priority asks for, or its refusal after ``shutdown()``.
        mutating func join(_ waiter: Waiter, priority: FetchPriority) -> [Action] {
            guard !isShuttingDown else { return [.refuse(waiter)] }
            waiters.append(waiter)
            guard priority == .interactive, self.priority == .background else { return [] }
            self.priority = .interactive
            // A handle that does not exist yet is promoted when it is issued (origin fetch, render job).
            switch stage {
            case .lookingUpSharedThumbnail(let ticket?), .lookingUpSharedSource(let ticket?),
                .fetchingOrigin(let ticket?, _), .fetchingWatermark(let ticket?, _, _):
                return [.promoteFetch(ticket)]
            case .queued(let job?, _):
                return [.promoteRender(job)]
            default:
                return []
            }
        }

        /// A client leaves. Returns nil when it was not waiting (already answered, or never admitted); else what
        /// its leaving asks for: a cancel when it was the last before the source arrived.
        mutating func leave(_ waiterID: UInt64) -> [Action]? {
            guard let index = waiters.firstIndex(where: { $0.id == waiterID }) else { return nil }
            waiters.remove(at: index)
            guard waiters.isEmpty, !isAbandoned else { return [] }
            switch stage {
            case .lookingUpSourceCache:
                isAbandoned = true
                return []
            case .lookingUpSharedThumbnail(let ticket), .lookingUpSharedSource(let ticket),
                .fetchingOrigin(let ticket, _), .fetchingWatermark(let ticket, _, _):
                isAbandoned = true
                guard let ticket, let step = stage.step else { return [] }  // cancelled when issued
                return [.cancel(ticket, step)]
            case .queued, .rendering, .finished:
                return []  // the source is in hand: rendered for the cache
            }
        }

        /// The coordinator refuses new work; work under way finishes.
        mutating func shutdown() {
            isShuttingDown = true
        }

        // MARK: - Steps

        /// A step's request exists (the owner gets the ticket when the call returns, which may be after the answer:
        /// then the ticket is stale and ignored).
        mutating func issued(_ ticket: Ticket, for step: Step) -> [Action] {
            // The overlays' step asks one transfer after another (watermark, then frame): the newer ticket replaces
            // the finished one.
            guard self.stage.step == step, self.stage.ticket == nil || step == .watermark else { return [] }
            switch stage {
            case .lookingUpSharedThumbnail: stage = .lookingUpSharedThumbnail(ticket)
            case .lookingUpSharedSource: stage = .lookingUpSharedSource(ticket)
            case .fetchingOrigin(_, let requestedAt): stage = .fetchingOrigin(ticket, requestedAt: requestedAt)
            case .fetchingWatermark(_, let source, let requestedAt):
                stage = .fetchingWatermark(ticket, source: source, requestedAt: requestedAt)
            case .lookingUpSourceCache, .queued, .rendering, .finished: return []
            }
            if isAbandoned { return [.cancel(ticket, step)] }
            // A client that joined a background flight before this request's ticket existed has it promoted now. The
            // shared tier's lookups are always asked at interactive priority: nothing to promote.
            switch stage {
            case .fetchingOrigin(_, .background), .fetchingWatermark(_, _, .background):
                return priority == .interactive ? [.promoteFetch(ticket)] : []
            default:
                return []
            }
        }

        /// The owner passed over a lookup: the tier's breaker is open, or the source cache keeps no sources.
        mutating func skipped(_ step: Step) -> [Action] {
            guard stage.step == step else { return [] }
            return beginStep(after: step)
        }

        /// A cancel won: the step's answer will never come, and nobody waits.
        mutating func cancelled(_ step: Step) -> [Action] {
            guard stage.step == step else { return [] }
            stage = .finished
            return []
        }

        /// The shared tier answered the thumbnail lookup (a hit was already kept in this node's cache).
        mutating func sharedThumbnailLookedUp(_ lookup: SharedTier.Lookup<RenderedVariant>) -> [Action] {
            guard case .lookingUpSharedThumbnail = stage else { return [] }
            switch lookup {
            case .hit(let variant):
                return finish(.success(variant), fromSharedTier: true)
            case .miss(let replace):
                variantWrite = replace ? .replace : .ifAbsent
            case .unavailable:
                // The store failed: asking it for the original, or writing to it, would only add to the load.
                isSharedTierUnavailable = true
            }
            return beginStepUnlessAbandoned(after: .sharedThumbnail)
        }

        /// The source cache has no fresh copy.
        mutating func sourceCacheMissed() -> [Action] {
            guard case .lookingUpSourceCache = stage else { return [] }
            return beginStepUnlessAbandoned(after: .sourceCache)
        }

        /// The shared tier has no usable original; `writeBack` says how to write the one fetched.
        mutating func sharedSourceMissed(writeBack: SharedWrite) -> [Action] {
            guard case .lookingUpSharedSource = stage else { return [] }
            sourceWrite = writeBack
            return beginStepUnlessAbandoned(after: .sharedSource)
        }

        /// The source is in hand, from the source cache, the shared tier or the origin; `keptFor` is the freshness
        /// it was kept in the source cache with when it did not come from there (then it may be shared). Rendered
        /// even when abandoned: its cost is paid.
        mutating func sourceArrived(_ source: FetchedSource, keptFor freshness: DiskCache.Freshness?) -> [Action] {
            switch stage {
            case .lookingUpSourceCache, .lookingUpSharedSource, .fetchingOrigin: break
            default: return []
            }
            if let freshness { sourceToShare = (source, freshness) }
            guard route.watermark else { return submitRender(source, overlays: Overlays()) }
            stage = .fetchingWatermark(nil, source: source, requestedAt: priority)
            return [.fetchWatermark(priority)]
        }

        /// The origin fetch failed.
        mutating func originFailed(_ error: FetchError) -> [Action] {
            guard case .fetchingOrigin = stage else { return [] }
            return finish(.failure(.fetch(error)))
        }

        /// The overlays' bytes (watermark, frame), or why there are none.
        mutating func watermarkArrived(_ result: Result<Overlays, ServiceError>) -> [Action] {
            guard case .fetchingWatermark(_, let source, _) = stage else { return [] }
            switch result {
            case .success(let overlays): return submitRender(source, overlays: overlays)
            case .failure(let error): return finish(.failure(error))
            }
        }

        /// The render pool queued the render. A client that joined since it was submitted raised only the priority.
        mutating func renderQueued(_ job: Job) -> [Action] {
            guard case .queued(nil, let requestedAt) = stage else { return [] }  // already taken by a worker
            stage = .queued(job, requestedAt: requestedAt)
            return requestedAt == .background && priority == .interactive ? [.promoteRender(job)] : []
        }

        /// The render pool's queue is full.
        mutating func renderRejected() -> [Action] {
            guard case .queued = stage else { return [] }
            return finish(.failure(.renderQueueFull))
        }

        /// A worker took the render (it may do so before ``renderQueued(_:)`` is reported).
        mutating func renderStarted() {
            guard case .queued = stage else { return }
            stage = .rendering
        }

        /// The render ended (a thumbnail was already kept in this node's cache). Answers every waiter still there,
        /// then shares what the shared lookups asked for.
        mutating func rendered(_ result: Result<RenderedVariant, ServiceError>) -> [Action] {
            switch stage {
            case .queued, .rendering: break
            default: return []
            }
            var writes = SharedWrites()
            if case .success(let variant) = result, variantWrite != .none {
                writes.variant = (variant, variantWrite == .replace)
            }
            if let kept = sourceToShare, sourceWrite != .none {
                writes.source = (kept.source, kept.freshness, sourceWrite == .replace)
            }
            var actions = finish(result)
            if writes.variant != nil || writes.source != nil { actions.append(.share(writes)) }
            return actions
        }

        // MARK: - Transitions

        /// Ends the flight, answering every waiter still there.
        private mutating func finish(
            _ result: Result<RenderedVariant, ServiceError>, fromSharedTier: Bool = false
        ) -> [Action] {
            stage = .finished
            sourceToShare = nil
            defer { waiters = [] }
            return waiters.isEmpty ? [] : [.answer(waiters, result, fromSharedTier: fromSharedTier)]
        }

        /// After a lookup found nothing: the next step, unless nobody waits any more (the one place that asks).
        private mutating func beginStepUnlessAbandoned(after step: Step) -> [Action] {
            guard !isAbandoned else {
                stage = .finished
                return []
            }
            return beginStep(after: step)
        }

        /// The step after `step` (nil: the first) that this node has, up to the origin.
        private mutating func beginStep(after step: Step?) -> [Action] {
            switch step {
            case nil where route.sharedThumbnails:
                stage = .lookingUpSharedThumbnail(nil)
                return [.lookUpSharedThumbnail]
            case nil, .sharedThumbnail:
                guard route.sourceCache else { return beginStep(after: .sourceCache) }
                stage = .lookingUpSourceCache
                return [.lookUpSourceCache]
            case .sourceCache:
                guard route.sharedSources, !isSharedTierUnavailable else { return beginStep(after: .sharedSource) }
                stage = .lookingUpSharedSource(nil)
                return [.lookUpSharedSource]
            case .sharedSource, .origin, .watermark:
                stage = .fetchingOrigin(nil, requestedAt: priority)
                return [.fetchOrigin(priority)]
            }
        }

        /// Queues the render: at background priority when nobody waits any more.
        private mutating func submitRender(_ source: FetchedSource, overlays: Overlays) -> [Action] {
            let priority = isAbandoned ? FetchPriority.background : priority
            stage = .queued(nil, requestedAt: priority)
            return [.submitRender(priority, source: source, overlays: overlays)]
        }
    }
}

extension Flight.StateMachine.Stage {
    /// The step whose answer the flight waits for, if any.
    var step: Flight.Step? {
        switch self {
        case .lookingUpSharedThumbnail: .sharedThumbnail
        case .lookingUpSourceCache: .sourceCache
        case .lookingUpSharedSource: .sharedSource
        case .fetchingOrigin: .origin
        case .fetchingWatermark: .watermark
        case .queued, .rendering, .finished: nil
        }
    }

    /// The current step's request handle, once issued.
    var ticket: Ticket? {
        switch self {
        case .lookingUpSharedThumbnail(let ticket), .lookingUpSharedSource(let ticket), .fetchingOrigin(let ticket, _),
            .fetchingWatermark(let ticket, _, _):
            ticket
        case .lookingUpSourceCache, .queued, .rendering, .finished: nil
        }
    }
}
