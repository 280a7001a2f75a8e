// SPDX-License-Identifier: Apache-2.0
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The calling thread's shard of a ``CounterGrid``: each thread gets the next index the first time it asks
/// (kept in a pthread key), so the first ``count`` threads that count never share a cache line, and later ones
/// share one with an earlier thread (still exact: every shard slot is an atomic).
///
/// Why shards: two `http` loops incrementing one atomic for every request bounce its cache line between the
/// cores (BENCHMARKS.md, "Metrics on the hit path").
package enum ThreadShard {
    /// Shards per grid: the `http`, `render` and `fetch` threads of a 2-8 core machine fit without sharing.
    package static let count = 16

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        return key
    }()

    private static let nextIndex = Atomic<Int>(0)

    /// This thread's shard, 0..<``count``.
    @inline(__always)
    package static var index: Int {
        if let stored = pthread_getspecific(key) { return Int(bitPattern: stored) &- 1 }
        return assign()
    }

    @inline(never)
    private static func assign() -> Int {
        let index = nextIndex.add(1, ordering: .relaxed).oldValue % count
        // Stored as index + 1: a nil pointer means "not assigned yet".
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: index + 1))
        return index
    }
}
