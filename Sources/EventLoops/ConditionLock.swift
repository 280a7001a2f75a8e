// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A pthread mutex with one condition variable, for threads that must sleep until work arrives.
///
/// The stdlib `Mutex` has no condition variable, and `WorkerPool` threads must block (they are
/// our own OS threads, never the cooperative pool). Both pthread objects live in heap memory
/// that never moves, as POSIX requires.
package final class ConditionLock: @unchecked Sendable {  // Sendable: all state is guarded by `mutex` itself.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    /// Creates an unlocked lock.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        // CLOCK_MONOTONIC for `wait(until:)`: a wall-clock step must not stretch or cut a timed wait.
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Locks the mutex.
    package func lock() { pthread_mutex_lock(mutex) }
    /// Unlocks the mutex.
    package func unlock() { pthread_mutex_unlock(mutex) }

    /// Atomically unlocks, sleeps until signalled, and locks again. Callers loop on their predicate.
    package func wait() { pthread_cond_wait(condition, mutex) }

    /// Like ``wait()``, but returns after `timeout` at the latest, for threads that also have periodic work.
    /// Callers loop on their predicate and their clock.
    package func wait(timeout: Duration) {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let (seconds, attoseconds) = max(timeout, .zero).components
        var nanoseconds = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
        deadline.tv_sec += Int(seconds) + nanoseconds / 1_000_000_000
        nanoseconds %= 1_000_000_000
        deadline.tv_nsec = nanoseconds
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    /// Wakes one waiter.
    package func signal() { pthread_cond_signal(condition) }
    /// Wakes every waiter.
    package func broadcast() { pthread_cond_broadcast(condition) }

    /// Runs `body` with the mutex held.
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
