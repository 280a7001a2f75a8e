// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Glibc

/// The `disk-io-N` threads: disk-tier lookups off the event loops (an SQLite `SELECT`, an `open`, a read
/// or a readahead can block on a cold disk), each thread with its own read connection per cache
/// (measured 1.4× faster than one shared connection; WAL readers never wait for the writer).
///
/// Jobs receive the calling thread's ``Readers``; the queue is bounded, and a full queue is the caller's
/// `Overloaded` (the service answers 503 rather than render what is on disk).
final class DiskReaders: Sendable {
    /// One thread's read connections. Confined to that thread.
    final class Readers {
        /// The thumbnail cache's reader.
        let variants: DiskCache.Reader?
        /// The source cache's reader.
        let sources: DiskCache.Reader?
        /// The analysis records' reader.
        let analyses: DiskCache.Reader?

        init(variants: DiskCache.Reader?, sources: DiskCache.Reader?, analyses: DiskCache.Reader? = nil) {
            self.variants = variants
            self.sources = sources
            self.analyses = analyses
        }
    }

    private let pool: WorkerPool
    private let slots: ThreadLocalSlots

    /// Starts `threads` threads and opens their connections.
    /// - Throws: when a thread or a connection cannot be made.
    init(variants: DiskCache?, sources: DiskCache?, analyses: DiskCache? = nil, threads: Int, queueCapacity: Int) throws
    {
        let slots = ThreadLocalSlots(count: threads)
        // Connections are opened on each thread (a Reader checks that it stays there). A failure to open
        // one is kept and thrown here, after the pool is up, instead of leaving a thread without readers.
        pool = try WorkerPool(
            configuration: .init(
                threads: threads, interactiveQueueCapacity: queueCapacity, backgroundQueueCapacity: queueCapacity,
                name: "disk-io"),
            onThreadStart: { index in
                slots.set(index) {
                    Readers(
                        variants: try variants?.makeReader(), sources: try sources?.makeReader(),
                        analyses: try analyses?.makeReader())
                }
            },
            onThreadExit: { _ in slots.clearCurrent() })
        self.slots = slots
        if let failure = slots.waitForAll() {
            pool.shutdown()
            throw failure
        }
    }

    /// Runs `job` on a disk-io thread with that thread's readers.
    /// - Throws: `Overloaded` when the queue is full or the pool stopped.
    func submit(
        priority: WorkerPool.Priority = .interactive, _ job: @escaping @Sendable (Readers) -> Void
    ) throws(WorkerPool.Overloaded) {
        let slots = self.slots
        try pool.submit(priority: priority) {
            guard let readers = slots.current else { return }  // cannot happen: set at thread start
            job(readers)
        }
    }

    /// Lets queued jobs finish, then stops the threads (closing their connections).
    func shutdown() {
        pool.shutdown()
    }
}

/// Per-thread `Readers` through a pthread key (a job does not know which pool thread runs it), plus the
/// start-up handshake that reports a connection that failed to open.
private final class ThreadLocalSlots: @unchecked Sendable {
    // Sendable: `key` is written once in init; `pending` and `failure` are guarded by `lock`; each thread
    // touches only its own key value.
    private var key = pthread_key_t()
    private let lock = ConditionLock()
    private var pending: Int
    private var failure: (any Error)?

    init(count: Int) {
        pending = count
        pthread_key_create(&key, nil)
    }

    deinit {
        pthread_key_delete(key)
    }

    /// On a pool thread: makes its readers and remembers them for this thread.
    func set(_ index: Int, _ make: () throws -> DiskReaders.Readers) {
        var thrown: (any Error)?
        do {
            let readers = try make()
            pthread_setspecific(key, Unmanaged.passRetained(readers).toOpaque())
        } catch {
            thrown = error
        }
        lock.withLock {
            pending -= 1
            if let thrown, failure == nil { failure = thrown }
        }
        lock.broadcast()
    }

    /// This thread's readers.
    var current: DiskReaders.Readers? {
        guard let raw = pthread_getspecific(key) else { return nil }
        return Unmanaged<DiskReaders.Readers>.fromOpaque(raw).takeUnretainedValue()
    }

    /// On a pool thread at exit: releases its readers (closing the connections on their own thread).
    func clearCurrent() {
        guard let raw = pthread_getspecific(key) else { return }
        pthread_setspecific(key, nil)
        Unmanaged<DiskReaders.Readers>.fromOpaque(raw).release()
    }

    /// Waits until every thread has made its readers; returns the first failure.
    func waitForAll() -> (any Error)? {
        lock.lock()
        defer { lock.unlock() }
        while pending > 0 { lock.wait() }
        return failure
    }
}
