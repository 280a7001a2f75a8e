// SPDX-License-Identifier: Apache-2.0
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A fixed set of OS threads that run blocking jobs (libvips renders) from bounded queues.
///
/// Two priority classes (lanes): a worker always takes the oldest ``Priority/interactive`` job before
/// any ``Priority/background`` job (prefetch must never delay a waiting client). Each class has its own
/// bound; ``submit(priority:_:)`` throws ``Overloaded`` instead of queueing past it, so overload
/// turns into fast 503s rather than unbounded latency (imgproxy `workers/`). Background jobs never
/// count against the interactive bound, so prefetch cannot make a client's render 503.
///
/// Where background jobs run:
/// - With ``Configuration/backgroundThreads`` > 0 (the render pool: one), on threads of their own that
///   run at a lower OS priority (``Configuration/backgroundNiceIncrement`` added to their nice value), and
///   only there, and a background thread starts a job only while no interactive job runs or waits. A
///   prefetch render then takes CPU only when client renders leave some: on a 2-core machine a render
///   beside a client's would slow it by up to half.
/// - With none, on the regular threads when no interactive job waits, at most half of them (at least
///   one) at once: a job cannot be taken back once it runs, so keeping threads out of background work is
///   what bounds the wait of a client job that arrives meanwhile.
///
/// ``promote(_:)`` moves a queued background job to the interactive lane (a client now waits for its
/// result: the stampede case, where a request joins a prefetch render still in the queue).
///
/// ```swift
/// let pool = try WorkerPool(configuration: .init(threads: 2, name: "render"),
///                           onThreadExit: { _ in thumbd_vips_thread_shutdown() })
/// try pool.submit(priority: .interactive) { renderAndReply() }
/// ```
package final class WorkerPool: Sendable {
    /// Which queue a job waits in.
    package enum Priority: Sendable, Hashable, CustomStringConvertible {
        /// A client is waiting: always served first.
        case interactive
        /// Nobody is waiting (prefetch, cache warming): served only when no interactive job waits.
        case background

        package var description: String { self == .interactive ? "interactive" : "background" }
    }

    /// Sizes of a pool.
    package struct Configuration: Sendable, Hashable {
        /// Worker threads (`render.threads`).
        package var threads: Int
        /// Jobs that may wait in the interactive queue before ``submit(priority:_:)`` throws.
        package var interactiveQueueCapacity: Int
        /// Jobs that may wait in the background queue before ``submit(priority:_:)`` throws.
        package var backgroundQueueCapacity: Int
        /// Thread name prefix; threads are named `<name>-0`, `<name>-1`, …, background threads `<name>-bg-0`, …
        package var name: String
        /// Threads that run only background jobs, at a lower OS priority; 0 runs background jobs on the
        /// regular threads instead (at most half of them at once).
        package var backgroundThreads: Int
        /// Added to the nice value of background threads (Linux nice values are per thread; raising one
        /// needs no privilege). 10 gives a background thread about a tenth of the CPU weight of a regular one.
        package var backgroundNiceIncrement: Int32

        /// Creates a configuration; by default one thread per core, 64 / 256 queued jobs, no background thread.
        package init(
            threads: Int = EventLoopGroup.coreCount,
            interactiveQueueCapacity: Int = 64,
            backgroundQueueCapacity: Int = 256,
            name: String = "worker",
            backgroundThreads: Int = 0,
            backgroundNiceIncrement: Int32 = 10
        ) {
            self.threads = threads
            self.interactiveQueueCapacity = interactiveQueueCapacity
            self.backgroundQueueCapacity = backgroundQueueCapacity
            self.name = name
            self.backgroundThreads = backgroundThreads
            self.backgroundNiceIncrement = backgroundNiceIncrement
        }

        /// How many background jobs may run at once on the regular threads (without background threads):
        /// half of them, at least one.
        var regularThreadsBackgroundCap: Int {
            backgroundThreads > 0 ? 0 : max(1, threads / 2)
        }
    }

    /// A snapshot of how many jobs wait in each queue (running jobs are not counted).
    package struct QueueDepth: Sendable, Hashable {
        /// Jobs waiting in the interactive queue.
        package var interactive: Int
        /// Jobs waiting in the background queue.
        package var background: Int

        /// Creates a snapshot.
        package init(interactive: Int, background: Int) {
            self.interactive = interactive
            self.background = background
        }
    }

    /// A handle on a submitted job, for ``promote(_:)``. Cheap to keep; holds the job until it runs.
    package struct Job: Sendable {
        fileprivate let queued: QueuedJob
    }

    /// One job and the lane it waits in; `lane` is nil once a worker has taken it. A promoted job sits in
    /// both rings: the background entry is skipped when popped, because its lane is no longer background
    /// (lazy removal keeps promotion O(1), as in OriginFetch's HostScheduler).
    fileprivate final class QueuedJob: @unchecked Sendable {  // Sendable: its fields are guarded by State.lock.
        /// Dropped when a worker takes the job: a caller may keep the ``Job`` handle in something the closure
        /// captures (a render flight), and the cycle must end when the job does.
        var run: (@Sendable () -> Void)?
        var lane: Priority?
        init(_ run: @escaping @Sendable () -> Void, lane: Priority) {
            self.run = run
            self.lane = lane
        }
    }

    private final class State: @unchecked Sendable {  // Sendable: every field is guarded by `lock`.
        let lock = ConditionLock()
        var interactive = RingBuffer<QueuedJob>()
        var background = RingBuffer<QueuedJob>()
        /// Jobs waiting per lane (the rings may also hold promoted, skipped entries).
        var interactiveWaiting = 0
        var backgroundWaiting = 0
        var isShuttingDown = false
        var running = 0
        /// The queue capacities in force (``setQueueCapacities(interactive:background:)`` changes them).
        var interactiveCapacity = 0
        var backgroundCapacity = 0
        var runningBackground = 0
        var runningInteractive = 0
    }

    /// The pool's sizes: the thread count and name it was created with, the queue capacities in force.
    package var configuration: Configuration {
        var current = initialConfiguration
        state.lock.withLock {
            current.interactiveQueueCapacity = state.interactiveCapacity
            current.backgroundQueueCapacity = state.backgroundCapacity
        }
        return current
    }
    private let initialConfiguration: Configuration
    private let state = State()
    private let threads: Mutex<[OSThread]>

    /// Starts the worker threads.
    /// - Parameters:
    ///   - onThreadStart: runs first on each worker thread, with the worker's index.
    ///   - onThreadExit: runs last on each worker thread (e.g. `vips_thread_shutdown`).
    /// - Throws: ``SystemError`` if a thread cannot be created (started ones are stopped again).
    package init(
        configuration: Configuration,
        onThreadStart: (@Sendable (Int) -> Void)? = nil,
        onThreadExit: (@Sendable (Int) -> Void)? = nil
    ) throws(SystemError) {
        precondition(configuration.threads > 0, "WorkerPool needs at least one thread")
        initialConfiguration = configuration
        let state = self.state
        state.interactiveCapacity = configuration.interactiveQueueCapacity
        state.backgroundCapacity = configuration.backgroundQueueCapacity
        let backgroundCap = configuration.regularThreadsBackgroundCap
        let niceIncrement = configuration.backgroundNiceIncrement
        var started: [OSThread] = []
        let roles =
            (0..<configuration.threads).map { (index: $0, name: "\(configuration.name)-\($0)", background: false) }
            + (0..<max(0, configuration.backgroundThreads)).map {
                (index: configuration.threads + $0, name: "\(configuration.name)-bg-\($0)", background: true)
            }
        for role in roles {
            do {
                started.append(
                    try OSThread.spawn(name: role.name) {
                        if role.background { Self.lowerPriority(by: niceIncrement) }
                        onThreadStart?(role.index)
                        if role.background {
                            Self.workBackground(state)
                        } else {
                            Self.work(state, backgroundCap: backgroundCap)
                        }
                        onThreadExit?(role.index)
                    })
            } catch {
                state.lock.withLock { state.isShuttingDown = true }
                state.lock.broadcast()
                for thread in started { thread.join() }
                throw error
            }
        }
        threads = Mutex(started)
    }

    deinit {
        shutdown()
    }

    /// Queues `job` to run on a worker thread. Callable from any thread; never blocks.
    /// - Returns: a handle for ``promote(_:)``.
    /// - Throws: ``Overloaded`` when that priority's queue is full or the pool is shutting down.
    @discardableResult
    package func submit(
        priority: Priority = .interactive, _ job: @escaping @Sendable () -> Void
    ) throws(Overloaded) -> Job {
        let state = self.state
        let queued = QueuedJob(job, lane: priority)
        state.lock.lock()
        let depth = priority == .interactive ? state.interactiveWaiting : state.backgroundWaiting
        let capacity = priority == .interactive ? state.interactiveCapacity : state.backgroundCapacity
        guard !state.isShuttingDown, depth < capacity else {
            state.lock.unlock()
            throw Overloaded(priority: priority, queueDepth: depth)
        }
        if priority == .interactive {
            state.interactive.append(queued)
            state.interactiveWaiting += 1
        } else {
            state.background.append(queued)
            state.backgroundWaiting += 1
        }
        state.lock.unlock()
        // Broadcast, not signal: the woken worker may not be one allowed this lane (a background thread,
        // or the background cap), and the one that is must not sleep through the wake-up.
        state.lock.broadcast()
        return Job(queued: queued)
    }

    /// Moves `job` to the back of the interactive lane if it still waits in the background lane (a client
    /// now waits for its result). It is not counted against the interactive bound: it was admitted
    /// already, and refusing it would fail a client for work that is queued anyway.
    /// - Returns: true when the job was moved; false when it runs, has run, or was interactive.
    @discardableResult
    package func promote(_ job: Job) -> Bool {
        let state = self.state
        let moved = state.lock.withLock { () -> Bool in
            guard job.queued.lane == .background else { return false }
            job.queued.lane = .interactive
            state.backgroundWaiting -= 1
            state.interactiveWaiting += 1
            state.interactive.append(job.queued)
            return true
        }
        if moved { state.lock.broadcast() }
        return moved
    }

    /// Changes the queue capacities (config hot reload). Jobs already queued stay queued even above a smaller
    /// capacity; only new submissions see it. Any thread.
    package func setQueueCapacities(interactive: Int, background: Int) {
        state.lock.withLock {
            state.interactiveCapacity = max(0, interactive)
            state.backgroundCapacity = max(0, background)
        }
    }

    /// How many jobs wait in each queue now.
    package var queueDepth: QueueDepth {
        state.lock.withLock {
            QueueDepth(interactive: state.interactiveWaiting, background: state.backgroundWaiting)
        }
    }

    /// Number of jobs running at this moment.
    package var runningCount: Int {
        state.lock.withLock { state.running }
    }

    /// Refuses new jobs, lets the workers finish every queued job, and joins them.
    /// Must not be called from a worker. Calling it again does nothing.
    package func shutdown() {
        state.lock.withLock { state.isShuttingDown = true }
        state.lock.broadcast()
        let toJoin = threads.withLock { threads -> [OSThread] in
            defer { threads.removeAll() }
            return threads
        }
        for thread in toJoin { thread.join() }
    }

    /// A regular worker: interactive jobs, and background jobs when none waits and the cap allows.
    private static func work(_ state: State, backgroundCap: Int) {
        state.lock.lock()
        while true {
            if let (job, lane) = next(state, backgroundCap: backgroundCap) {
                state.running += 1
                if lane == .background { state.runningBackground += 1 } else { state.runningInteractive += 1 }
                state.lock.unlock()
                job()
                state.lock.lock()
                state.running -= 1
                if lane == .background {
                    state.runningBackground -= 1
                } else {
                    state.runningInteractive -= 1
                    // The last client job ended: a background thread held back by it may start now.
                    if state.runningInteractive == 0, state.backgroundWaiting > 0 { state.lock.broadcast() }
                }
                continue
            }
            // Background work left behind by the cap is taken by the worker that ends a background job (it
            // loops here); shutting down waits for it too.
            if state.isShuttingDown && state.interactiveWaiting == 0
                && (backgroundCap == 0 || state.backgroundWaiting == 0)
            {
                break
            }
            state.lock.wait()
        }
        state.lock.unlock()
        state.lock.broadcast()  // a peer may wait for the background cap during shutdown
    }

    /// A background worker: background jobs only, and only while no interactive job runs or waits (on a
    /// machine with few cores, even a low-priority render slows a concurrent client render: they share
    /// caches, memory bandwidth and often a physical core). A background job already running is not
    /// stopped; the kernel favours the client threads over it by their nice values.
    private static func workBackground(_ state: State) {
        state.lock.lock()
        while true {
            let clientsBusy = state.runningInteractive > 0 || state.interactiveWaiting > 0
            if !clientsBusy || state.isShuttingDown, let job = nextBackground(state) {
                state.running += 1
                state.lock.unlock()
                job()
                state.lock.lock()
                state.running -= 1
                continue
            }
            if state.isShuttingDown && state.backgroundWaiting == 0 { break }
            state.lock.wait()
        }
        state.lock.unlock()
    }

    /// The next job for a regular worker, under the lock: the oldest interactive one, else the oldest
    /// background one if fewer than `backgroundCap` run. Entries whose lane changed (promoted) are dropped.
    private static func next(_ state: State, backgroundCap: Int) -> (@Sendable () -> Void, Priority)? {
        while let job = state.interactive.popFirst() {
            guard job.lane == .interactive, let run = job.run else { continue }
            job.lane = nil
            job.run = nil
            state.interactiveWaiting -= 1
            return (run, .interactive)
        }
        guard state.runningBackground < backgroundCap else { return nil }
        return nextBackground(state).map { ($0, .background) }
    }

    private static func nextBackground(_ state: State) -> (@Sendable () -> Void)? {
        while let job = state.background.popFirst() {
            guard job.lane == .background, let run = job.run else { continue }
            job.lane = nil
            job.run = nil
            state.backgroundWaiting -= 1
            return run
        }
        return nil
    }

    /// Raises the calling thread's nice value (Linux keeps it per thread: `setpriority(2)`, NOTES). Failure
    /// (a seccomp filter, say) leaves the thread at normal priority: slower clients under prefetch, nothing
    /// worse.
    private static func lowerPriority(by increment: Int32) {
        guard increment > 0 else { return }
        errno = 0
        _ = nice(increment)
    }
}
