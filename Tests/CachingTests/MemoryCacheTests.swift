// SPDX-License-Identifier: Apache-2.0

import Caching
import Synchronization
import Testing
import ThumbdTestSupport

private typealias Cache = MemoryCache<String, String, [UInt8]>

private func makeCache(maxBytes: Int = 1000, maxEntries: Int = 100, entryCostLimit: Int? = nil) throws -> Cache {
    try Cache(configuration: .init(maxBytes: maxBytes, maxEntries: maxEntries, entryCostLimit: entryCostLimit))
}

@Suite("MemoryCache")
struct MemoryCacheTests {
    @Test func roundTripCountsHitsAndMisses() throws {
        // Given an empty cache
        let cache = try makeCache()
        // When one value is inserted and looked up twice, and another key once
        #expect(cache.insert([1, 2, 3], forKey: "a", cost: 3))
        #expect(cache.value(forKey: "a") == [1, 2, 3])
        #expect(cache.value(forKey: "a") == [1, 2, 3])
        #expect(cache.value(forKey: "b") == nil)
        // Then the counters say so
        let stats = cache.statistics
        #expect(stats.hits == 2)
        #expect(stats.misses == 1)
        #expect(stats.currentBytes == 3)
        #expect(stats.currentEntries == 1)
    }

    @Test func theRemovalCountMovesWithEveryWayAnEntryLeavesAndOnlyThen() throws {
        // Given a cache of two entries
        let cache = try makeCache(maxBytes: 10, entryCostLimit: 10)
        cache.insert([1], forKey: "a", cost: 4)
        cache.insert([2], forKey: "b", cost: 4, group: "g")
        #expect(cache.removalCount == 0)

        // When entries are looked up, touched, or a new key fits: nothing left, and the count stays
        _ = cache.value(forKey: "a")
        cache.touch("b")
        cache.touch("missing")
        #expect(cache.removalCount == 0)

        // Then each way of leaving moves it: eviction, replacement, removal, group purge, trim, clear
        func expectMoves(_ way: String, _ leave: () -> Void) {
            let before = cache.removalCount
            leave()
            #expect(cache.removalCount > before, "\(way)")
        }
        expectMoves("eviction") { cache.insert([3], forKey: "c", cost: 4) }  // 12 > 10: the LRU entry goes
        expectMoves("replacement") { cache.insert([4], forKey: "c", cost: 4) }
        expectMoves("removal") { cache.removeValue(forKey: "c") }
        cache.insert([5], forKey: "d", cost: 1, group: "g")
        expectMoves("group purge") { cache.removeAll(inGroup: "g") }
        cache.insert([6], forKey: "e", cost: 1)
        expectMoves("trim") { cache.trim(toBytes: 0) }
        cache.insert([7], forKey: "f", cost: 1)
        expectMoves("clear") { cache.removeAll() }
        #expect(cache.statistics.currentEntries == 0)
    }

    @Test func touchRefreshesRecencyWithoutCountingAHit() throws {
        // Given "a" then "b", "a" the least recently used
        let cache = try makeCache(maxBytes: 8, entryCostLimit: 8)
        cache.insert([1], forKey: "a", cost: 4)
        cache.insert([2], forKey: "b", cost: 4)

        // When "a" is touched and a third entry needs room
        cache.touch("a")
        cache.insert([3], forKey: "c", cost: 4)

        // Then "b" went, "a" stayed, and no hit was counted
        #expect(cache.keysByRecency() == ["c", "a"])
        #expect(cache.statistics.hits == 0)
    }

    @Test func replacingAKeyReplacesItsCost() throws {
        let cache = try makeCache()
        cache.insert([1], forKey: "a", cost: 40)
        cache.insert([2], forKey: "a", cost: 60)
        #expect(cache.value(forKey: "a") == [2])
        #expect(cache.statistics.currentBytes == 60)
        #expect(cache.statistics.currentEntries == 1)
    }

    @Test func evictsLeastRecentlyUsedAndGetsRefresh() throws {
        // Given a cache that holds exactly three 100-byte entries, filled a, b, c
        let cache = try makeCache(maxBytes: 300, entryCostLimit: 300)
        for key in ["a", "b", "c"] { cache.insert([0], forKey: key, cost: 100) }
        // When "a" is read (now most recent) and "d" is inserted
        _ = cache.value(forKey: "a")
        cache.insert([0], forKey: "d", cost: 100)
        // Then "b", the least recently used, was evicted, and the order is d, a, c
        #expect(!cache.contains("b"))
        #expect(cache.keysByRecency() == ["d", "a", "c"])
        #expect(cache.statistics.evictions == 1)
    }

    @Test func entryBudgetEvicts() throws {
        let cache = try makeCache(maxBytes: 1_000_000, maxEntries: 3)
        for i in 0..<10 { cache.insert([0], forKey: "k\(i)", cost: 1) }
        #expect(cache.statistics.currentEntries == 3)
        #expect(cache.statistics.peakEntries == 3)
        #expect(cache.keysByRecency() == ["k9", "k8", "k7"])
    }

    @Test func oversizeEntryIsNotKeptAndDropsTheOldValue() throws {
        // Given a 1000-byte cache (default per-entry limit 100) holding "a"
        let cache = try makeCache(maxBytes: 1000)
        cache.insert([1], forKey: "a", cost: 10)
        cache.insert([1], forKey: "other", cost: 10)
        // When a 101-byte value is inserted for "a"
        let kept = cache.insert([2], forKey: "a", cost: 101)
        // Then it is refused, the outdated value is gone, and nothing else was evicted
        #expect(!kept)
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.contains("other"))
        #expect(cache.statistics.rejections == 1)
        #expect(cache.statistics.evictions == 0)
    }

    @Test func trimEvictsOldestFirst() throws {
        let cache = try makeCache(maxBytes: 1000, entryCostLimit: 1000)
        for i in 0..<10 { cache.insert([0], forKey: "k\(i)", cost: 100) }
        let evicted = cache.trim(toBytes: 350)
        #expect(evicted == 7)
        #expect(cache.keysByRecency() == ["k9", "k8", "k7"])
        #expect(cache.statistics.currentBytes == 300)
        // The budget itself is unchanged: the cache can fill up again.
        for i in 10..<17 { cache.insert([0], forKey: "k\(i)", cost: 100) }
        #expect(cache.statistics.currentBytes == 1000)
    }

    @Test func purgeByGroupRemovesEveryVariantOfOneSource() throws {
        // Given variants of two sources, interleaved
        let cache = try makeCache()
        for w in [64, 128, 256] {
            cache.insert([0], forKey: "a.jpg?w=\(w)", cost: 1, group: "a.jpg")
            cache.insert([0], forKey: "b.jpg?w=\(w)", cost: 1, group: "b.jpg")
        }
        cache.insert([0], forKey: "loose", cost: 1)
        // When "a.jpg" is purged, including after one of its variants was removed on its own
        cache.removeValue(forKey: "a.jpg?w=128")
        let removed = cache.removeAll(inGroup: "a.jpg")
        // Then only a.jpg's remaining variants are gone, and a second purge finds nothing
        #expect(removed == 2)
        #expect(Set(cache.keysByRecency()) == ["b.jpg?w=64", "b.jpg?w=128", "b.jpg?w=256", "loose"])
        #expect(cache.removeAll(inGroup: "a.jpg") == 0)
        #expect(cache.statistics.currentBytes == 4)
    }

    @Test func reinsertingMovesAnEntryToItsNewGroup() throws {
        let cache = try makeCache()
        cache.insert([0], forKey: "k", cost: 1, group: "g1")
        cache.insert([0], forKey: "k", cost: 1, group: "g2")
        #expect(cache.removeAll(inGroup: "g1") == 0)
        #expect(cache.removeAll(inGroup: "g2") == 1)
    }

    @Test func removeAllWhereMatchesKeys() throws {
        let cache = try makeCache()
        for i in 0..<10 { cache.insert([0], forKey: "k\(i)", cost: 1) }
        #expect(cache.removeAll(where: { $0.hasSuffix("3") || $0.hasSuffix("7") }) == 2)
        #expect(cache.statistics.currentEntries == 8)
    }

    @Test func shrinkingLimitsEvictsAtOnce() throws {
        // Given a full cache
        let cache = try makeCache(maxBytes: 1000, maxEntries: 100, entryCostLimit: 500)
        for i in 0..<10 { cache.insert([0], forKey: "k\(i)", cost: 100) }
        // When the budgets shrink (hot reload)
        try cache.setLimits(maxBytes: 450, maxEntries: 3, entryCostLimit: 450)
        // Then the oldest entries are gone before setLimits returns
        let stats = cache.statistics
        #expect(stats.currentEntries == 3)
        #expect(stats.currentBytes == 300)
        #expect(stats.maxBytes == 450)
        #expect(cache.keysByRecency() == ["k9", "k8", "k7"])
        // And entries above a new per-entry limit (default 450 / 10) are dropped too.
        try cache.setLimits(maxBytes: 450, maxEntries: 3)
        #expect(cache.statistics.entryCostLimit == 45)
        #expect(cache.keysByRecency().isEmpty)
    }

    @Test func slotsAreReusedAfterRemoval() throws {
        let cache = try makeCache(maxBytes: 10_000, maxEntries: 10)
        for round in 0..<50 {
            for i in 0..<10 { cache.insert([UInt8(i)], forKey: "r\(round)-\(i)", cost: 1) }
        }
        #expect(cache.statistics.currentEntries == 10)
        for i in 0..<10 { #expect(cache.value(forKey: "r49-\(i)") == [UInt8(i)]) }
    }

    @Test func invalidConfigurationIsRefused() throws {
        #expect(throws: ConfigurationError.self) { try makeCache(maxBytes: -1) }
        #expect(throws: ConfigurationError.self) { try makeCache(maxEntries: -5) }
        let cache = try makeCache()
        #expect(throws: ConfigurationError.self) { try cache.setLimits(maxBytes: 10, maxEntries: -1) }
        #expect(cache.statistics.maxBytes == 1000)
    }
}

@Suite("MemoryCache under concurrency", .timeLimit(.minutes(1)))
struct MemoryCacheConcurrencyTests {
    @Test func budgetsHoldUnderConcurrentInserts() throws {
        // Given a small cache and four threads inserting random sizes while a fifth reads stats
        let maxBytes = 50_000
        let maxEntries = 64
        let cache = try makeCache(maxBytes: maxBytes, maxEntries: maxEntries, entryCostLimit: 5_000)
        let violations = Atomic<Int>(0)
        let insertersDone = Atomic<Int>(0)
        // When they run
        runOnThreads(5) { thread in
            if thread == 4 {
                // The checker: every snapshot must respect both budgets.
                var checks = 0
                while insertersDone.load(ordering: .acquiring) < 4 && checks < 2_000_000 {
                    let stats = cache.statistics
                    if stats.currentBytes > maxBytes || stats.currentEntries > maxEntries {
                        violations.add(1, ordering: .relaxed)
                    }
                    checks += 1
                }
                return
            }
            var generator = SystemRandomNumberGenerator()
            for i in 0..<10_000 {
                let cost = Int.random(in: 0...5_500, using: &generator)
                let key = "t\(thread)-\(i % 500)"
                cache.insert([UInt8(truncatingIfNeeded: i)], forKey: key, cost: cost, group: "g\(i % 7)")
                if i % 3 == 0 { _ = cache.value(forKey: "t\((thread + 1) % 4)-\(i % 500)") }
                if i % 1000 == 0 { cache.removeAll(inGroup: "g\(i % 7)") }
            }
            insertersDone.add(1, ordering: .releasing)
        }
        // Then no snapshot and no instant under the lock ever exceeded the budgets
        let stats = cache.statistics
        #expect(violations.load(ordering: .relaxed) == 0)
        #expect(stats.peakBytes <= maxBytes)
        #expect(stats.peakEntries <= maxEntries)
        #expect(stats.rejections > 0)
        #expect(stats.evictions > 0)
        #expect(cache.keysByRecency().count == stats.currentEntries)
    }
}
