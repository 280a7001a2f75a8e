// SPDX-License-Identifier: Apache-2.0

/// The unsynchronised core of ``MemoryCache``: a hash index over a contiguous node array that carries
/// two intrusive doubly linked lists (recency order, and membership of each purge group), plus a free
/// list threaded through the `next` field of released nodes.
///
/// Why this shape: a hit must not allocate (NSCache and `Dictionary<Key, Node class>` designs retain,
/// release and often allocate per hit); nodes addressed by `Int32` index stay in one buffer and are
/// reused, so after warm-up inserts allocate nothing either. Every operation is O(1) except purges
/// and trims, which are O(entries removed).
///
/// Invariant kept by `insert`: `totalBytes <= maxBytes` and `count <= maxEntries` at every point
/// where the owning mutex is released, because room is made *before* the node is linked.
struct LRUStorage<Key: Hashable, Group: Hashable, Value> {
    private static var none: Int32 { -1 }

    private struct Node {
        var key: Key?
        var value: Value?
        var group: Group?
        var cost: Int = 0
        /// Towards the most recently used end; `none` at the head.
        var prev: Int32 = -1
        /// Towards the least recently used end; for free nodes, the next free node.
        var next: Int32 = -1
        var groupPrev: Int32 = -1
        var groupNext: Int32 = -1
    }

    private var nodes: ContiguousArray<Node> = []
    private var index: [Key: Int32] = [:]
    private var groupHeads: [Group: Int32] = [:]
    private var head: Int32 = -1
    private var tail: Int32 = -1
    private var freeHead: Int32 = -1

    private(set) var maxBytes: Int
    private(set) var maxEntries: Int
    private(set) var entryCostLimit: Int

    private(set) var totalBytes = 0
    private(set) var count = 0
    private(set) var peakBytes = 0
    private(set) var peakEntries = 0
    private(set) var hits = 0
    private(set) var misses = 0
    private(set) var evictions = 0
    private(set) var rejections = 0

    init(maxBytes: Int, maxEntries: Int, entryCostLimit: Int) {
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.entryCostLimit = entryCostLimit
    }

    // MARK: - Lookup

    mutating func value(forKey key: Key) -> Value? {
        guard let i = index[key] else {
            misses += 1
            return nil
        }
        hits += 1
        moveToFront(i)
        return nodes[Int(i)].value
    }

    func contains(_ key: Key) -> Bool {
        index[key] != nil
    }

    // MARK: - Mutation

    /// Inserts or replaces. Returns false (and drops any previous value for `key`, which is now
    /// outdated) when `cost` exceeds the per-entry limit.
    mutating func insert(_ value: Value, forKey key: Key, cost: Int, group: Group?) -> Bool {
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
        nodes[Int(i)].key = key
        nodes[Int(i)].value = value
        nodes[Int(i)].cost = cost
        nodes[Int(i)].group = group
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

    mutating func removeValue(forKey key: Key) -> Value? {
        guard let i = index[key] else { return nil }
        let value = nodes[Int(i)].value
        remove(at: i)
        return value
    }

    mutating func removeAll(inGroup group: Group) -> Int {
        var removed = 0
        while let i = groupHeads[group] {
            remove(at: i)
            removed += 1
        }
        return removed
    }

    mutating func removeAll(where shouldRemove: (Key) -> Bool) -> Int {
        var removed = 0
        var i = head
        while i != Self.none {
            let next = nodes[Int(i)].next
            if let key = nodes[Int(i)].key, shouldRemove(key) {
                remove(at: i)
                removed += 1
            }
            i = next
        }
        return removed
    }

    mutating func removeAll() {
        nodes.removeAll()
        index.removeAll()
        groupHeads.removeAll()
        head = Self.none
        tail = Self.none
        freeHead = Self.none
        totalBytes = 0
        count = 0
    }

    /// Evicts least recently used entries until at most `bytes` remain. Returns how many were evicted.
    mutating func trim(toBytes bytes: Int) -> Int {
        var evicted = 0
        while totalBytes > max(0, bytes) {
            evictTail()
            evicted += 1
        }
        return evicted
    }

    /// Applies new limits, evicting at once until the cache fits them.
    mutating func setLimits(maxBytes: Int, maxEntries: Int, entryCostLimit: Int) {
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
            let next = nodes[Int(i)].next
            if nodes[Int(i)].cost > entryCostLimit {
                remove(at: i)
                evictions += 1
            }
            i = next
        }
    }

    /// Keys from most to least recently used (tests and diagnostics; O(n)).
    func keysByRecency() -> [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(count)
        var i = head
        while i != Self.none {
            if let key = nodes[Int(i)].key { keys.append(key) }
            i = nodes[Int(i)].next
        }
        return keys
    }

    // MARK: - Lists

    private mutating func evictTail() {
        precondition(tail != Self.none, "LRUStorage accounting broken: over budget with no entries")
        remove(at: tail)
        evictions += 1
    }

    private mutating func allocateNode() -> Int32 {
        if freeHead != Self.none {
            let i = freeHead
            freeHead = nodes[Int(i)].next
            return i
        }
        precondition(nodes.count < Int(Int32.max), "MemoryCache holds at most Int32.max entries")
        nodes.append(Node())
        return Int32(nodes.count - 1)
    }

    private mutating func remove(at i: Int32) {
        let n = Int(i)
        unlinkFromRecency(i)
        if let group = nodes[n].group {
            unlinkFromGroup(i, group)
        }
        if let key = nodes[n].key {
            index.removeValue(forKey: key)
        }
        totalBytes -= nodes[n].cost
        count -= 1
        // Drop the references now, not when the slot is reused, so memory is released promptly.
        nodes[n] = Node(next: freeHead)
        freeHead = i
    }

    private mutating func moveToFront(_ i: Int32) {
        guard head != i else { return }
        unlinkFromRecency(i)
        linkAtFront(i)
    }

    private mutating func linkAtFront(_ i: Int32) {
        nodes[Int(i)].prev = Self.none
        nodes[Int(i)].next = head
        if head != Self.none {
            nodes[Int(head)].prev = i
        }
        head = i
        if tail == Self.none {
            tail = i
        }
    }

    private mutating func unlinkFromRecency(_ i: Int32) {
        let prev = nodes[Int(i)].prev
        let next = nodes[Int(i)].next
        if prev != Self.none { nodes[Int(prev)].next = next } else { head = next }
        if next != Self.none { nodes[Int(next)].prev = prev } else { tail = prev }
        nodes[Int(i)].prev = Self.none
        nodes[Int(i)].next = Self.none
    }

    private mutating func linkIntoGroup(_ i: Int32, _ group: Group) {
        let first = groupHeads[group] ?? Self.none
        nodes[Int(i)].groupPrev = Self.none
        nodes[Int(i)].groupNext = first
        if first != Self.none {
            nodes[Int(first)].groupPrev = i
        }
        groupHeads[group] = i
    }

    private mutating func unlinkFromGroup(_ i: Int32, _ group: Group) {
        let prev = nodes[Int(i)].groupPrev
        let next = nodes[Int(i)].groupNext
        if prev != Self.none {
            nodes[Int(prev)].groupNext = next
        } else if next != Self.none {
            groupHeads[group] = next
        } else {
            groupHeads.removeValue(forKey: group)
        }
        if next != Self.none { nodes[Int(next)].groupPrev = prev }
    }
}
