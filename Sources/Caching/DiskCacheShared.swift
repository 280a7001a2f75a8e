// SPDX-License-Identifier: Apache-2.0

import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The part of a ``DiskCache`` that every thread touches: counters, the buffer through which readers
/// hand index updates to the writer, and the set of blobs already checksummed in this process.
///
/// Sendable through its parts: `Atomic` counters and `Mutex`-guarded buffers; the rest is immutable.
final class DiskCacheShared: Sendable {
    let layout: BlobLayout
    let busyTimeout: Duration
    let maxPendingTouches: Int

    let hits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)
    let corruptBlobs = Atomic<Int>(0)
    let missingBlobs = Atomic<Int>(0)
    let stores = Atomic<Int>(0)
    let rejections = Atomic<Int>(0)
    let evictions = Atomic<Int>(0)
    let touchesDropped = Atomic<Int>(0)
    /// Written only by the writer (which is the only one to change the index); read by anyone.
    let currentBytes = Atomic<Int>(0)
    let currentEntries = Atomic<Int>(0)
    let maxBytes: Atomic<Int>

    private let pending = Mutex(PendingUpdates())
    private let verified = Mutex(Set<UInt64>())
    private let lastAccessStamp = Atomic<Int64>(0)

    /// Past this many remembered blobs the set is cleared, so it stays small (at most a few MB);
    /// the price is one extra checksum per entry afterwards.
    private static let maxVerified = 1 << 18

    init(layout: BlobLayout, busyTimeout: Duration, maxPendingTouches: Int, maxBytes: Int) {
        self.layout = layout
        self.busyTimeout = busyTimeout
        self.maxPendingTouches = maxPendingTouches
        self.maxBytes = Atomic(maxBytes)
    }

    // MARK: - Access stamps

    /// A strictly increasing wall-clock stamp in microseconds for `last_access`. Strictly increasing
    /// (not just the clock) so that LRU order is exact even for accesses within one clock tick.
    func nextAccessStamp() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let now = Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000
        var current = lastAccessStamp.load(ordering: .relaxed)
        while true {
            let next = max(now, current + 1)
            let (exchanged, original) = lastAccessStamp.compareExchange(
                expected: current,
                desired: next,
                ordering: .relaxed
            )
            if exchanged { return next }
            current = original
        }
    }

    /// Makes later stamps larger than `stamp` (called at open with the index's newest access).
    func advanceAccessStamp(past stamp: Int64) {
        lastAccessStamp.max(stamp, ordering: .relaxed)
    }

    // MARK: - Pending index updates (readers → writer)

    /// Records a hit for the writer's next ``DiskCache/flush()``. When the buffer is full the touch is
    /// dropped (counted): LRU order then lags until the next flush, which is cheaper than blocking a reader.
    func recordTouch(keyHash: Int64) {
        let stamp = nextAccessStamp()
        let accepted = pending.withLock { pending in
            if pending.touches.count >= maxPendingTouches && pending.touches[keyHash] == nil { return false }
            pending.touches[keyHash] = stamp
            return true
        }
        if !accepted { touchesDropped.add(1, ordering: .relaxed) }
    }

    /// Asks the writer to delete the row for `keyHash` if it still names `file` (the blob is missing
    /// or corrupt). The condition keeps a newer row for the same key safe.
    func recordDrop(keyHash: Int64, file: String) {
        pending.withLock { $0.drops.append(PendingUpdates.Drop(keyHash: keyHash, file: file)) }
    }

    /// Takes everything recorded so far, leaving the buffer empty.
    func takePending() -> PendingUpdates {
        pending.withLock { pending in
            let taken = pending
            pending = PendingUpdates()
            return taken
        }
    }

    // MARK: - Verified blobs

    /// Whether blob `file` was already checksummed (or written) by this process.
    func isVerified(_ file: String) -> Bool {
        let id = XXHash64.hash(file)
        return verified.withLock { $0.contains(id) }
    }

    func markVerified(_ file: String) {
        let id = XXHash64.hash(file)
        verified.withLock { set in
            if set.count >= Self.maxVerified { set.removeAll(keepingCapacity: true) }
            set.insert(id)
        }
    }
}

/// Index updates that readers leave for the writer.
struct PendingUpdates: Sendable {
    struct Drop: Sendable {
        let keyHash: Int64
        let file: String
    }

    /// key hash → newest access stamp.
    var touches: [Int64: Int64] = [:]
    var drops: [Drop] = []

    var isEmpty: Bool { touches.isEmpty && drops.isEmpty }
}
