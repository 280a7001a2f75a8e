// SPDX-License-Identifier: Apache-2.0
internal import CLinuxShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One epoll reactor, run by one OS thread.
///
/// Everything registered with a loop (sockets, timers) is touched only on the loop's thread;
/// other threads talk to it only through ``execute(_:)``, which appends to a locked queue and
/// writes the loop's eventfd only when no wake-up is already pending (NIO's `_schedule0`).
///
/// ```swift
/// let group = try EventLoopGroup(threads: 2, name: "http")
/// let loop = group.next()
/// loop.execute { loop.preconditionInLoop(); print("on the loop") }
/// ```
package final class EventLoop: @unchecked Sendable {
    // Sendable: `queuedTasks`/`wakeupPending` are guarded by `queueLock`, `threadID`/`isStopping` are
    // atomics, and every other stored property is confined to the loop thread (checked by
    // `preconditionInLoop` in debug).

    /// The loop's name, also its thread name (e.g. `http-0`).
    package let name: String

    private let epollFD: Int32
    private let wakeFD: Int32
    private let threadID = Atomic<UInt>(0)
    private let isStopping = Atomic<Bool>(false)

    // A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer cannot see the
    // stdlib Mutex's contended (futex) path and reports false races on this, the most contended
    // lock in the process; pthread locks it understands, at the same cost.
    private let queueLock = ConditionLock()
    private var queuedTasks: [@Sendable () -> Void] = []
    private var wakeupPending = false

    // MARK: Loop-confined state
    // Touched only on the loop thread, and handlers are called after the slot lookup has ended,
    // so these opt out of dynamic exclusivity checks (measurable per event in profiles).

    private struct Slot {
        var generation: UInt32 = 0
        var handler: (any EventLoopSelectable)?
    }
    @exclusivity(unchecked) private var slots: [Slot] = []
    @exclusivity(unchecked) private var freeSlots: [UInt32] = []
    private var runningTasks: [@Sendable () -> Void] = []
    /// See ``setEventsHandledHandler(_:)``.
    private var eventsHandledHandler: (() -> Void)?
    @exclusivity(unchecked) var timers = TimerHeap()

    /// The monotonic time read when the loop last woke up. Cheap; use it for timeouts.
    package var now: LoopInstant { nowStorage.pointee }
    /// Where ``now`` lives. Read through a pointer because other modules (the HTTP server reads `now` several
    /// times per request) inline the getter of a stored `var` with a dynamic exclusivity check, which
    /// `@exclusivity(unchecked)` does not remove across modules.
    private let nowStorage: UnsafeMutablePointer<LoopInstant> = {
        let storage = UnsafeMutablePointer<LoopInstant>.allocate(capacity: 1)
        storage.initialize(to: LoopInstant.now())
        return storage
    }()

    private static let wakeToken = UInt64.max
    private static let maxEventsPerWait: Int32 = 256
    /// A busy iteration handled at least this many events; every ``yieldEveryBusyIterations``-th busy iteration
    /// ends with `sched_yield`.
    ///
    /// A loop that always finds events ready never blocks in `epoll_wait`, so the scheduler lets it run its
    /// whole time slice while the threads it serves (clients on the same machine, render threads, the other
    /// loop) wait for a CPU: on 2 shared cores the HOT benchmark's p99 was 7.9 ms, twice nginx's. Giving way
    /// now and then, as a blocking `epoll_wait` would, brought it to 1–3 ms (nginx static 3.5 ms). Yielding
    /// after every busy iteration cost 5–10 % of the requests/s; after every second one, 2–4 %; batches of 16
    /// or more events as the trigger left the 8 ms tail (BENCHMARKS.md). Which frequency is best moves with the
    /// cost of a hit: every third won while the write burst was new; with the hot set (a cheaper hit, so more
    /// busy iterations per second) every third let p99 climb to 3.4–5.1 ms in 4 of 12 rounds, every second in 2,
    /// median 1.5 against 1.9 ms, for the same requests/s (alternating rounds). A yield with nothing else
    /// runnable returns at once, and an idle or lightly loaded loop (small batches) never yields.
    private static let yieldAfterEvents: Int32 = 4
    /// See ``yieldAfterEvents``.
    private static let yieldEveryBusyIterations = 2

    /// Creates a loop (epoll set and eventfd). It does nothing until ``run()`` is called on a thread.
    /// - Throws: ``SystemError`` if the kernel objects cannot be created.
    package init(name: String) throws(SystemError) {
        self.name = name
        epollFD = try syscall("epoll_create1") { thumbd_epoll_create() }
        do {
            wakeFD = try syscall("eventfd") { thumbd_eventfd_create() }
        } catch {
            closeDescriptor(epollFD)
            throw error
        }
        do {
            _ = try syscall("epoll_ctl") {
                thumbd_epoll_ctl(epollFD, thumbd_epoll_ctl_add, wakeFD, thumbd_epoll_in, Self.wakeToken)
            }
        } catch {
            closeDescriptor(wakeFD)
            closeDescriptor(epollFD)
            throw error
        }
    }

    deinit {
        closeDescriptor(wakeFD)
        closeDescriptor(epollFD)
        nowStorage.deallocate()
    }

    // MARK: Thread identity

    /// `true` when called on this loop's thread.
    package var inEventLoop: Bool {
        threadID.load(ordering: .relaxed) == OSThread.currentID
    }

    /// Traps (in debug builds) unless called on this loop's thread.
    @inline(__always)
    package func preconditionInLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(inEventLoop, "must be called on event loop \(name)", file: file, line: line)
    }

    // MARK: Cross-thread tasks

    /// Runs `task` on the loop thread, soon, in submission order. Callable from any thread.
    ///
    /// Tasks submitted after ``stop()`` are dropped (their closures are released unrun).
    package func execute(_ task: @escaping @Sendable () -> Void) {
        queueLock.lock()
        queuedTasks.append(task)
        let needsWakeup = !wakeupPending
        wakeupPending = true
        queueLock.unlock()
        if needsWakeup { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        // EAGAIN means the counter is already non-zero: the loop will wake anyway.
        _ = Glibc.write(wakeFD, &one, 8)
    }

    private func runQueuedTasks() {
        var drained: UInt64 = 0
        _ = Glibc.read(wakeFD, &drained, 8)
        // Swap with a reusable array so steady-state hops allocate nothing; clearing the flag before
        // running lets tasks that enqueue more tasks wake the loop again.
        queueLock.lock()
        swap(&queuedTasks, &runningTasks)
        wakeupPending = false
        queueLock.unlock()
        for task in runningTasks { task() }
        runningTasks.removeAll(keepingCapacity: true)
    }

    // MARK: Registrations

    /// Adds `fd` to the epoll set; `handler` is retained until ``deregister(_:fd:)``.
    /// - Throws: ``SystemError`` from `epoll_ctl`.
    package func register(
        fd: Int32,
        events: IOEvents,
        handler: any EventLoopSelectable
    ) throws(SystemError) -> Registration {
        preconditionInLoop()
        let index: UInt32
        if let free = freeSlots.popLast() {
            index = free
        } else {
            index = UInt32(slots.count)
            slots.append(Slot())
        }
        slots[Int(index)].handler = handler
        let registration = Registration(index: index, generation: slots[Int(index)].generation)
        do {
            _ = try syscall("epoll_ctl") {
                thumbd_epoll_ctl(epollFD, thumbd_epoll_ctl_add, fd, events.rawValue, registration.token)
            }
        } catch {
            release(registration)
            throw error
        }
        return registration
    }

    /// Changes the events `fd` is watched for.
    /// - Throws: ``SystemError`` from `epoll_ctl`.
    package func reregister(_ registration: Registration, fd: Int32, events: IOEvents) throws(SystemError) {
        preconditionInLoop()
        _ = try syscall("epoll_ctl") {
            thumbd_epoll_ctl(epollFD, thumbd_epoll_ctl_mod, fd, events.rawValue, registration.token)
        }
    }

    /// Removes `fd` from the epoll set and releases the handler. Events already collected for it in
    /// the current round are ignored. Call before closing `fd`.
    package func deregister(_ registration: Registration, fd: Int32) {
        preconditionInLoop()
        _ = thumbd_epoll_ctl(epollFD, thumbd_epoll_ctl_del, fd, 0, 0)
        release(registration)
    }

    private func release(_ registration: Registration) {
        let i = Int(registration.index)
        guard i < slots.count, slots[i].generation == registration.generation else { return }
        slots[i].handler = nil
        slots[i].generation &+= 1
        freeSlots.append(registration.index)
    }

    /// Sets what runs once per wake-up after the handlers of the ready sockets, before queued tasks and timers
    /// (`nil` removes it). The HTTP server sends there, in one burst, what its connections answered during the
    /// wake-up. One per loop: the server that owns it.
    package func setEventsHandledHandler(_ handler: (() -> Void)?) {
        preconditionInLoop()
        precondition(
            handler == nil || eventsHandledHandler == nil, "loop \(name) already has an events-handled handler")
        eventsHandledHandler = handler
    }

    // MARK: Running

    /// Runs the loop on the calling thread until ``stop()``. Called by ``EventLoopGroup``.
    /// - Throws: ``EventLoopError/alreadyRunning`` if the loop already has a thread.
    package func run() throws(EventLoopError) {
        let (exchanged, _) = threadID.compareExchange(
            expected: 0, desired: OSThread.currentID, ordering: .acquiringAndReleasing)
        guard exchanged else { throw .alreadyRunning }
        let events = UnsafeMutablePointer<ThumbdEpollEvent>.allocate(capacity: Int(Self.maxEventsPerWait))
        defer { events.deallocate() }
        var busyIterations = 0
        while !isStopping.load(ordering: .acquiring) {
            let timeout = timers.millisecondsUntilNext(from: now)
            let count = thumbd_epoll_wait(epollFD, events, Self.maxEventsPerWait, timeout)
            nowStorage.pointee = LoopInstant.now()
            var tasksReady = false
            if count > 0 {
                for i in 0..<Int(count) {
                    let event = events[i]
                    if event.token == Self.wakeToken {
                        tasksReady = true
                        continue
                    }
                    let index = Int(truncatingIfNeeded: event.token & 0xFFFF_FFFF)
                    let generation = UInt32(truncatingIfNeeded: event.token >> 32)
                    guard index < slots.count, slots[index].generation == generation,
                        let handler = slots[index].handler
                    else { continue }
                    handler.handleEvents(IOEvents(rawValue: event.events))
                }
                eventsHandledHandler?()
            } else if count < 0 && errno != EINTR {
                fatalError("epoll_wait failed on \(name): errno \(errno)")
            }
            if tasksReady { runQueuedTasks() }
            runDueTimers()
            if count >= Self.yieldAfterEvents {
                busyIterations &+= 1
                if busyIterations % Self.yieldEveryBusyIterations == 0 { sched_yield() }
            }
        }
        // Drop whatever is left so closures (and the objects they hold) are released on this thread.
        queueLock.withLock { queuedTasks.removeAll() }
        timers.removeAll()
        for i in slots.indices { slots[i].handler = nil }
    }

    /// Asks the loop to return from ``run()`` after the current iteration. Callable from any thread.
    package func stop() {
        isStopping.store(true, ordering: .releasing)
        wake()
    }
}

extension EventLoop {
    /// Runs `body` on the loop and blocks the calling thread until it has run; returns its result.
    ///
    /// For set-up and tear-down from ordinary threads (server start, tests). Must not be called on
    /// this loop (it would deadlock) nor on the cooperative pool.
    /// - Throws: whatever `body` throws.
    @discardableResult
    package func runAndWait<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) throws -> Result {
        precondition(!inEventLoop, "runAndWait called on its own loop")
        let slot = ResultSlot<Result>()
        execute {
            let outcome = Swift.Result { try body() }
            slot.lock.withLock { slot.result = outcome }
            slot.lock.broadcast()
        }
        slot.lock.lock()
        while slot.result == nil { slot.lock.wait() }
        let outcome = slot.result!
        slot.lock.unlock()
        return try outcome.get()
    }
}

/// A one-shot result handed from a loop to a waiting thread.
private final class ResultSlot<Value: Sendable>: @unchecked Sendable {  // Sendable: `result` is guarded by `lock`.
    let lock = ConditionLock()
    var result: Swift.Result<Value, any Error>?
}
