// SPDX-License-Identifier: Apache-2.0

/// Identifies a timer scheduled on one loop, for ``EventLoop/cancelTimer(_:)``.
package struct TimerID: Hashable, Sendable {
    let raw: UInt64
}

/// The loop's timers: a binary min-heap of deadlines plus the callbacks by id.
///
/// Cancelling removes only the callback; the stale heap entry is skipped when it surfaces, which
/// keeps cancel O(1). The loop sleeps in `epoll_wait` until the earliest deadline (ms resolution,
/// rounded up so the loop never wakes early and spins).
struct TimerHeap {
    private var heap: [(deadline: UInt64, id: UInt64)] = []
    private var callbacks: [UInt64: () -> Void] = [:]
    private var nextID: UInt64 = 1

    var count: Int { callbacks.count }

    mutating func insert(deadline: LoopInstant, _ callback: @escaping () -> Void) -> TimerID {
        let id = nextID
        nextID += 1
        callbacks[id] = callback
        heap.append((deadline.nanoseconds, id))
        siftUp(heap.count - 1)
        return TimerID(raw: id)
    }

    mutating func cancel(_ id: TimerID) {
        callbacks[id.raw] = nil
    }

    mutating func removeAll() {
        heap.removeAll()
        callbacks.removeAll()
    }

    /// The `epoll_wait` timeout: -1 for none, else the ms until the earliest live timer, rounded up.
    mutating func millisecondsUntilNext(from now: LoopInstant) -> Int32 {
        while let top = heap.first, callbacks[top.id] == nil { popTop() }
        guard let top = heap.first else { return -1 }
        if top.deadline <= now.nanoseconds { return 0 }
        let millis = (top.deadline - now.nanoseconds + 999_999) / 1_000_000
        return Int32(clamping: millis)
    }

    /// Removes and returns the callback of the earliest timer due at `now`, if any.
    mutating func popDue(now: LoopInstant) -> (() -> Void)? {
        while let top = heap.first, top.deadline <= now.nanoseconds {
            popTop()
            if let callback = callbacks.removeValue(forKey: top.id) { return callback }
        }
        return nil
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            if heap[parent].deadline <= heap[child].deadline { break }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            if left >= heap.count { return }
            var smallest = left
            let right = left + 1
            if right < heap.count && heap[right].deadline < heap[left].deadline { smallest = right }
            if heap[parent].deadline <= heap[smallest].deadline { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

extension EventLoop {
    /// Runs `callback` on this loop at or soon after `deadline`. Loop thread only.
    ///
    /// The callback is not `@Sendable`: it is created, stored and run on this loop.
    /// - Returns: an id for ``cancelTimer(_:)``.
    @discardableResult
    package func scheduleTimer(at deadline: LoopInstant, _ callback: @escaping () -> Void) -> TimerID {
        preconditionInLoop()
        return timers.insert(deadline: deadline, callback)
    }

    /// Runs `callback` on this loop after `delay`, measured from ``now``. Loop thread only.
    @discardableResult
    package func scheduleTimer(after delay: Duration, _ callback: @escaping () -> Void) -> TimerID {
        scheduleTimer(at: now.advanced(by: delay), callback)
    }

    /// Cancels a timer that has not fired; does nothing if it already fired. Loop thread only.
    package func cancelTimer(_ id: TimerID) {
        preconditionInLoop()
        timers.cancel(id)
    }

    /// Number of live timers (for tests and diagnostics). Loop thread only.
    package var scheduledTimerCount: Int {
        preconditionInLoop()
        return timers.count
    }

    func runDueTimers() {
        // Bounded so that a timer that re-arms itself for "now" cannot starve I/O.
        var budget = 1024
        while budget > 0, let callback = timers.popDue(now: now) {
            callback()
            budget -= 1
        }
    }
}
