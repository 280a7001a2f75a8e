// SPDX-License-Identifier: Apache-2.0

/// The unsynchronised core of ``MemoryCache``: a hash index over a contiguous node array that carries
/// two intrusive doubly linked lists (recency order, and membership of each purge group), plus a free
/// list threaded through the `next` link of released slots.
///
/// Why this shape: a hit must not allocate (NSCache and `Dictionary<Key, Node class>` designs retain,
/// release and often allocate per hit); nodes addressed by `Int32` index stay in one buffer and are
/// reused, so after warm-up inserts allocate nothing either. Every operation is O(1) except purges
/// and trims, which are O(entries removed).
///
/// Invariant kept by `insert`: `totalBytes <= maxBytes` and `count <= maxEntries` at every point
/// where the owning mutex is released, because room is made *before* the node is linked.
@usableFromInline
struct LRUStorage<Key: Hashable, Group: Hashable, Value> {
    @inlinable static var none: Int32 { -1 }

    /// Recency and group links of one slot. Kept apart from the generic payload (structure of arrays)
    /// so list surgery is concrete code even where the generic code is not specialised (callers in other
    /// modules), and so the links of all nodes share few cache lines.
    @usableFromInline
    struct Links {
        /// Towards the most recently used end; `none` at the head.
        @usableFromInline var prev: Int32 = -1
        /// Towards the least recently used end; for free slots, the next free slot.
        @usableFromInline var next: Int32
        @usableFromInline var groupPrev: Int32 = -1
        @usableFromInline var groupNext: Int32 = -1
        @usableFromInline var cost: Int = 0

        @inlinable init(next: Int32 = -1) {
            self.next = next
        }
    }

    /// The payload of one slot; all `nil` while the slot is free.
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var group: Group?

        @inlinable init() {
            key = nil
            value = nil
            group = nil
        }
    }

    @usableFromInline var links: ContiguousArray<Links> = []
    @usableFromInline var slots: ContiguousArray<Slot> = []
    @usableFromInline var index: [Key: Int32] = [:]
    @usableFromInline var groupHeads: [Group: Int32] = [:]
    @usableFromInline var head: Int32 = -1
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var freeHead: Int32 = -1

    @usableFromInline var maxBytes: Int
    @usableFromInline var maxEntries: Int
    @usableFromInline var entryCostLimit: Int

    @usableFromInline var totalBytes = 0
    @usableFromInline var count = 0
    @usableFromInline var peakBytes = 0
    @usableFromInline var peakEntries = 0
    @usableFromInline var hits = 0
    @usableFromInline var misses = 0
    @usableFromInline var evictions = 0
    @usableFromInline var rejections = 0
    /// Entries unlinked for any reason (eviction, removal, replacement, trim, clear): what a copy made from
    /// an entry compares to know that the entry may have gone (``MemoryCache/removalCount``).
    @usableFromInline var removals = 0

    @inlinable init(maxBytes: Int, maxEntries: Int, entryCostLimit: Int) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.entryCostLimit = entryCostLimit
    }

    // MARK: - Lookup

    @inlinable mutating func value(forKey key: Key) -> Value? {
        guard let i = index[key] else {
            misses += 1
            return nil
        }
        hits += 1
        moveToFront(i)
        return slots[Int(i)].value
    }

    /// Makes `key` most recently used without counting a hit (a hit counted elsewhere). Whether it was there.
    @inlinable mutating func touch(_ key: Key) -> Bool {
        guard let i = index[key] else { return false }
        moveToFront(i)
        return true
    }

    @inlinable func contains(_ key: Key) -> Bool {
        index[key] != nil
    }

    // MARK: - Mutation

    /// Inserts or replaces. Returns false (and drops any previous value for `key`, which is now
    /// outdated) when `cost` exceeds the per-entry limit.
    @inlinable mutating func insert(_ value: Value, forKey key: Key, cost: Int, group: Group?) -> Bool {
        precondition(cost >= 0, "MemoryCache cost must not be negative")
        if let existing = index[key] {
            remove(at: existing)
        }
        guard cost <= entryCostLimit, cost <= maxBytes, maxEntries > 0 else {
            rejections += 1
            return false
        }
        while totalBytes + cost > maxBytes || count + 1 > maxEntries {
            evictTail()
        }
        let i = allocateNode()
        slots[Int(i)].key = key
        slots[Int(i)].value = value
        links[Int(i)].cost = cost
        slots[Int(i)].group = group
        linkAtFront(i)
        if let group {
            linkIntoGroup(i, group)
        }
        index[key] = i
        totalBytes += cost
        count += 1
        peakBytes = max(peakBytes, totalBytes)
        peakEntries = max(peakEntries, count)
        return true
    }

    @inlinable mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        let value = slots[Int(i)].value
        remove(at: i)
        return value
    }

    @inlinable mutating func removeAll(inGroup group: Group) -> Int {
        var removed = 0
        while let i = groupHeads[group] {
            remove(at: i)
            removed += 1
        }
        return removed
    }

    @inlinable mutating func removeAll(where shouldRemove: (Key) -> Bool) -> Int {
        var removed = 0
        var i = head
        while i != Self.none {
            let next = links[Int(i)].next
            if let key = slots[Int(i)].key, shouldRemove(key) {
                remove(at: i)
                removed += 1
            }
            i = next
        }
        return removed
    }

    @inlinable mutating func removeAll() {
        removals += count
        links.removeAll()
        slots.removeAll()
        index.removeAll()
        groupHeads.removeAll()
        head = Self.none
        tail = Self.none
        freeHead = Self.none
        totalBytes = 0
        count = 0
    }

    /// Evicts least recently used entries until at most `bytes` remain. Returns how many were evicted.
    @inlinable mutating func trim(toBytes bytes: Int) -> Int {
        var evicted = 0
        while totalBytes > max(0, bytes) {
            evictTail()
            evicted += 1
        }
        return evicted
    }

    /// Applies new limits, evicting at once until the cache fits them.
    @inlinable mutating func setLimits(maxBytes: Int, maxEntries: Int, entryCostLimit: Int) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.entryCostLimit = entryCostLimit
        while totalBytes > maxBytes || count > maxEntries {
            evictTail()
        }
        // Entries that the new per-entry limit forbids go too, so the limit means the same thing
        // whether it was set before or after they were inserted.
        var i = head
        while i != Self.none {
            let next = links[Int(i)].next
            if links[Int(i)].cost > entryCostLimit {
                remove(at: i)
                evictions += 1
            }
            i = next
        }
    }

    /// Keys from most to least recently used (tests and diagnostics; O(n)).
    @inlinable func keysByRecency() -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var i = head
        while i != Self.none {
            if let key = slots[Int(i)].key { keys.append(key) }
            i = links[Int(i)].next
        }
        return keys
    }

    // MARK: - Lists

    @inlinable mutating func evictTail() {
        precondition(tail != Self.none, "LRUStorage accounting broken: over budget with no entries")
        remove(at: tail)
        evictions += 1
    }

    @inlinable mutating func allocateNode() -> Int32 {
        if freeHead != Self.none {
            let i = freeHead
            freeHead = links[Int(i)].next
            return i
        }
        precondition(links.count < Int(Int32.max), "MemoryCache holds at most Int32.max entries")
        links.append(Links())
        slots.append(Slot())
        return Int32(links.count - 1)
    }

    @inlinable mutating func remove(at i: Int32) {
        let n = Int(i)
        unlinkFromRecency(i)
        if let group = slots[n].group {
            unlinkFromGroup(i, group)
        }
        if let key = slots[n].key {
            index.removeValue(forKey: key)
        }
        totalBytes -= links[n].cost
        count -= 1
        removals += 1
        // Drop the references now, not when the slot is reused, so memory is released promptly.
        links[n] = Links(next: freeHead)
        slots[n] = Slot()
        freeHead = i
    }

    @inlinable mutating func moveToFront(_ i: Int32) {
        guard head != i else { return }
        unlinkFromRecency(i)
        linkAtFront(i)
    }

    @inlinable mutating func linkAtFront(_ i: Int32) {
        links[Int(i)].prev = Self.none
        links[Int(i)].next = head
        if head != Self.none {
            links[Int(head)].prev = i
        }
        head = i
        if tail == Self.none {
            tail = i
        }
    }

    @inlinable mutating func unlinkFromRecency(_ i: Int32) {
        let prev = links[Int(i)].prev
        let next = links[Int(i)].next
        if prev != Self.none { links[Int(prev)].next = next } else { head = next }
        if next != Self.none { links[Int(next)].prev = prev } else { tail = prev }
        links[Int(i)].prev = Self.none
        links[Int(i)].next = Self.none
    }

    @inlinable mutating func linkIntoGroup(_ i: Int32, _ group: Group) {
        let first = groupHeads[group] ?? Self.none
        links[Int(i)].groupPrev = Self.none
        links[Int(i)].groupNext = first
        if first != Self.none {
            links[Int(first)].groupPrev = i
        }
        groupHeads[group] = i
    }

    @inlinable mutating func unlinkFromGroup(_ i: Int32, _ group: Group) {
        let prev = links[Int(i)].groupPrev
        let next = links[Int(i)].groupNext
        if prev != Self.none {
            links[Int(prev)].groupNext = next
        } else if next != Self.none {
            groupHeads[group] = next
        } else {
            groupHeads.removeValue(forKey: group)
        }
        if next != Self.none { links[Int(next)].groupPrev = prev }
    }
}
