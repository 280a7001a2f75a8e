// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Logging
import Synchronization

/// The `disk` thread: the only thread that calls the disk caches' writer methods (STYLE.md §5).
///
/// Others queue work and never wait for it: stores are batched (`DiskCache.store(batch:)`, one sync and
/// one index transaction for everything queued, up to ``maxBatch``), buffered hit times are flushed
/// once a second, and while nothing is queued the thread reconciles the blob directories with the index
/// in bounded steps until a pass is complete (orphans of a crash, rows whose blob vanished).
///
/// The queue is bounded by bytes: when stores arrive faster than the disk takes them, new ones are
/// dropped and counted (the thumbnail is still served, and the memory tier may still hold it).
final class DiskWriter: Sendable {
    /// A unit of work, run in queue order.
    private enum Operation: Sendable {
        case store(DiskCache, DiskCache.StoreRequest)
        case job(@Sendable () -> Void)
    }

    private final class State: @unchecked Sendable {  // Sendable: every field is guarded by `lock`.
        let lock = ConditionLock()
        var queue: [Operation] = []
        var queuedBytes = 0
        var isShuttingDown = false
    }

    /// Stores in one batch at most.
    static let maxBatch = 64

    private let caches: [DiskCache]
    private let logger: Logger
    private let flushInterval: Duration
    private let maxQueuedBytes: Int
    private let state = State()
    private let thread: Mutex<OSThread?>
    private let dropped = Atomic<Int>(0)
    private let failures = Atomic<Int>(0)

    /// Starts the thread.
    /// - Parameters:
    ///   - caches: every disk cache the thread flushes and reconciles.
    ///   - maxQueuedBytes: stores waiting beyond this many bytes are dropped.
    init(
        caches: [DiskCache], logger: Logger, flushInterval: Duration = .seconds(1), maxQueuedBytes: Int = 64 << 20
    ) throws(SystemError) {
        self.caches = caches
        self.logger = logger
        self.flushInterval = flushInterval
        self.maxQueuedBytes = maxQueuedBytes
        thread = Mutex(nil)
        let started = try OSThread.spawn(name: "disk") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Stores dropped because the queue was full.
    var droppedStores: Int { dropped.load(ordering: .relaxed) }
    /// Writer operations that failed (logged).
    var failedOperations: Int { failures.load(ordering: .relaxed) }

    /// Queues a store. Never blocks. Returns false when it was dropped (queue full or shutting down).
    @discardableResult
    func store(_ request: DiskCache.StoreRequest, in cache: DiskCache) -> Bool {
        let bytes = request.bytes.count
        let accepted = state.lock.withLock { () -> Bool in
            guard !state.isShuttingDown, state.queuedBytes + bytes <= maxQueuedBytes else { return false }
            state.queue.append(.store(cache, request))
            state.queuedBytes += bytes
            return true
        }
        if accepted {
            state.lock.signal()
        } else {
            dropped.add(1, ordering: .relaxed)
        }
        return accepted
    }

    /// Runs `job` on the disk thread after everything queued before it (purges, freshness updates).
    /// Returns false (and drops the job) after shutdown began.
    @discardableResult
    func perform(_ job: @escaping @Sendable () -> Void) -> Bool {
        let accepted = state.lock.withLock { () -> Bool in
            guard !state.isShuttingDown else { return false }
            state.queue.append(.job(job))
            return true
        }
        if accepted { state.lock.signal() }
        return accepted
    }

    /// Runs what is queued, flushes the buffered hit times, and stops the thread. Idempotent.
    func shutdown() {
        state.lock.withLock { state.isShuttingDown = true }
        state.lock.broadcast()
        thread.takeAndJoin()
    }

    // MARK: - The thread

    private func run() {
        var nextFlush = ContinuousClock.now + flushInterval
        var reconcileDone = Set<ObjectIdentifier>()
        while true {
            let (batch, stopping) = nextOperations(until: nextFlush, idleWork: reconcileDone.count < caches.count)
            execute(batch)
            if stopping {
                flushAll()
                return
            }
            if ContinuousClock.now >= nextFlush {
                flushAll()
                nextFlush = ContinuousClock.now + flushInterval
            }
            if batch.isEmpty, reconcileDone.count < caches.count {
                reconcileStep(&reconcileDone)
            }
        }
    }

    /// Waits for work (or the flush deadline, or returns at once when idle work remains) and takes it all.
    private func nextOperations(
        until deadline: ContinuousClock.Instant, idleWork: Bool
    ) -> (operations: [Operation], stopping: Bool) {
        state.lock.lock()
        defer { state.lock.unlock() }
        if state.queue.isEmpty, !state.isShuttingDown, !idleWork {
            state.lock.wait(timeout: ContinuousClock.now.duration(to: deadline))
        }
        let operations = state.queue
        state.queue.removeAll(keepingCapacity: true)
        state.queuedBytes = 0
        return (operations, state.isShuttingDown && operations.isEmpty)
    }

    /// Runs operations in order, grouping consecutive stores into one cache into batches.
    private func execute(_ operations: [Operation]) {
        var index = 0
        while index < operations.count {
            switch operations[index] {
            case .job(let job):
                job()
                index += 1
            case .store(let cache, let first):
                var batch = [first]
                index += 1
                while index < operations.count, batch.count < Self.maxBatch,
                    case .store(let next, let request) = operations[index], next === cache
                {
                    batch.append(request)
                    index += 1
                }
                storeBatch(batch, in: cache)
            }
        }
    }

    private func storeBatch(_ batch: [DiskCache.StoreRequest], in cache: DiskCache) {
        do {
            _ = try cache.store(batch: batch)
        } catch {
            failures.add(1, ordering: .relaxed)
            logger.error("disk cache store failed", metadata: ["entries": "\(batch.count)", "error": "\(error)"])
        }
    }

    private func flushAll() {
        for cache in caches {
            do {
                _ = try cache.flush()
            } catch {
                failures.add(1, ordering: .relaxed)
                logger.error("disk cache flush failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// One bounded reconcile step of the first cache whose pass is not complete.
    private func reconcileStep(_ done: inout Set<ObjectIdentifier>) {
        guard let cache = caches.first(where: { !done.contains(ObjectIdentifier($0)) }) else { return }
        do {
            let report = try cache.reconcile(maxDirectories: 64)
            if report.orphanFilesRemoved > 0 || report.missingBlobRowsRemoved > 0 {
                logger.notice(
                    "disk cache reconciled",
                    metadata: [
                        "orphan_files_removed": "\(report.orphanFilesRemoved)",
                        "missing_blob_rows_removed": "\(report.missingBlobRowsRemoved)",
                    ])
            }
            if report.isComplete { done.insert(ObjectIdentifier(cache)) }
        } catch {
            failures.add(1, ordering: .relaxed)
            logger.error("disk cache reconcile failed", metadata: ["error": "\(error)"])
            done.insert(ObjectIdentifier(cache))  // retried at the next start, not in a tight loop
        }
    }
}
