// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A fixed set of integer counters (slots), sharded per thread so that incrementing never contends: each thread
/// adds to its own copy (one relaxed atomic add on a cache line no other thread writes, when the threads fit in
/// the shards), and a read sums the copies.
///
/// The building block of every metric updated on a hot path (``RequestMetrics``, ``DurationHistogram``). Reads
/// are a sum over ``ThreadShard/count`` shards: meant for scrapes, not for the hot path.
///
/// ```swift
/// let grid = CounterGrid(slots: 3)
/// grid.add(1)            // from any thread
/// grid.value(1)          // 1
/// ```
///
/// `@unchecked Sendable`: the storage is a fixed buffer of `Atomic<Int>`, allocated in `init` and freed in
/// `deinit`; every access after `init` is an atomic operation.
package final class CounterGrid: @unchecked Sendable {
    /// Counters per shard.
    package let slots: Int
    /// Distance between two shards, in counters: `slots` rounded up to whole cache lines (8 counters of 8 bytes),
    /// so that two shards never share a line.
    private let stride: Int
    private let base: UnsafeMutablePointer<Atomic<Int>>

    /// `slots` counters, all zero.
    package init(slots: Int) {
        precondition(slots > 0, "a grid needs at least one slot")
        self.slots = slots
        stride = (slots + 7) / 8 * 8
        let total = stride * ThreadShard.count
        base = UnsafeMutableRawPointer.allocate(byteCount: total * MemoryLayout<Int>.stride, alignment: 64)
            .bindMemory(to: Atomic<Int>.self, capacity: total)
        for index in 0..<total { (base + index).initialize(to: Atomic(0)) }
    }

    deinit {
        base.deinitialize(count: stride * ThreadShard.count)
        base.deallocate()
    }

    /// Adds `amount` to counter `slot` (relaxed: a counter orders nothing). Any thread.
    @inline(__always)
    package func add(_ slot: Int, _ amount: Int = 1) {
        add(slot, amount, shard: ThreadShard.index)
    }

    /// Adds `amount` to counter `slot` of `shard` (the caller's ``ThreadShard/index``, looked up once for several
    /// adds).
    @inline(__always)
    package func add(_ slot: Int, _ amount: Int, shard: Int) {
        assert(slot >= 0 && slot < slots, "slot \(slot) out of 0..<\(slots)")
        base[shard &* stride &+ slot].add(amount, ordering: .relaxed)
    }

    /// The total of counter `slot` over all shards (a few increments may be in flight).
    package func value(_ slot: Int) -> Int {
        var total = 0
        for shard in 0..<ThreadShard.count { total &+= base[shard * stride + slot].load(ordering: .relaxed) }
        return total
    }

    /// Every counter's total, in slot order.
    package func values() -> [Int] {
        var totals = [Int](repeating: 0, count: slots)
        for shard in 0..<ThreadShard.count {
            let start = shard * stride
            for slot in 0..<slots { totals[slot] &+= base[start + slot].load(ordering: .relaxed) }
        }
        return totals
    }
}
