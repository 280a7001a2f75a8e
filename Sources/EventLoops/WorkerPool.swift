// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A fixed set of OS threads that run blocking jobs (libvips renders) from bounded queues.
///
/// Two priority classes: a worker always takes the oldest ``Priority/interactive`` job before any
/// ``Priority/background`` job (prefetch must never delay a waiting client). Each class has its own
/// bound; ``submit(priority:_:)`` throws ``Overloaded`` instead of queueing past it, so overload
/// turns into fast 503s rather than unbounded latency (imgproxy `workers/`).
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
        /// Thread name prefix; threads are named `<name>-0`, `<name>-1`, …
        package var name: String

        /// Creates a configuration; by default one thread per core and 64 / 256 queued jobs.
        package init(
            threads: Int = EventLoopGroup.coreCount,
            interactiveQueueCapacity: Int = 64,
            backgroundQueueCapacity: Int = 256,
            name: String = "worker"
        ) {
            self.threads = threads
            self.interactiveQueueCapacity = interactiveQueueCapacity
            self.backgroundQueueCapacity = backgroundQueueCapacity
            self.name = name
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

    private final class State: @unchecked Sendable {  // Sendable: every field is guarded by `lock`.
        let lock = ConditionLock()
        var interactive = RingBuffer<@Sendable () -> Void>()
        var background = RingBuffer<@Sendable () -> Void>()
        var isShuttingDown = false
        var running = 0
        /// The queue capacities in force (``setQueueCapacities(interactive:background:)`` changes them).
        var interactiveCapacity = 0
        var backgroundCapacity = 0
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
        var started: [OSThread] = []
        for index in 0..<configuration.threads {
            do {
                started.append(
                    try OSThread.spawn(name: "\(configuration.name)-\(index)") {
                        onThreadStart?(index)
                        Self.work(state)
                        onThreadExit?(index)
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
    /// - Throws: ``Overloaded`` when that priority's queue is full or the pool is shutting down.
    package func submit(priority: Priority = .interactive, _ job: @escaping @Sendable () -> Void) throws(Overloaded) {
        let state = self.state
        state.lock.lock()
        let depth = priority == .interactive ? state.interactive.count : state.background.count
        let capacity = priority == .interactive ? state.interactiveCapacity : state.backgroundCapacity
        guard !state.isShuttingDown, depth < capacity else {
            state.lock.unlock()
            throw Overloaded(priority: priority, queueDepth: depth)
        }
        if priority == .interactive {
            state.interactive.append(job)
        } else {
            state.background.append(job)
        }
        state.lock.unlock()
        state.lock.signal()
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
            QueueDepth(interactive: state.interactive.count, background: state.background.count)
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

    private static func work(_ state: State) {
        state.lock.lock()
        while true {
            if let job = state.interactive.popFirst() ?? state.background.popFirst() {
                state.running += 1
                state.lock.unlock()
                job()
                state.lock.lock()
                state.running -= 1
                continue
            }
            if state.isShuttingDown { break }
            state.lock.wait()
        }
        state.lock.unlock()
    }
}
