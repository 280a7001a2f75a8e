// SPDX-License-Identifier: Apache-2.0

import Caching
import Testing
import ThumbdTestSupport

@Suite("DiskCache basics", .timeLimit(.minutes(1)))
struct DiskCacheTests {
    @Test func storeThenReadRoundTripsBytesAndMetadata() throws {
        // Given a cache holding one variant
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let key = CacheKey("https://img.example/a.jpg|w=256|fmt=webp")
        let group = CacheGroup("https://img.example/a.jpg")
        let bytes = DiskFixtures.bytes("a", count: 5000)
        let metadata = DiskFixtures.metadata()
        #expect(try cache.store(bytes, for: key, group: group, metadata: metadata) == .stored)
        // When a reader reads it
        let reader = try cache.makeReader()
        let hit = try #require(try reader.read(key).hit)
        // Then bytes and metadata come back as stored, and the counters agree
        #expect(hit.bytes == bytes)
        #expect(hit.entry.metadata == metadata)
        #expect(hit.entry.group == group)
        #expect(hit.entry.sizeBytes == 5000)
        let stats = cache.statistics
        #expect(stats.hits == 1)
        #expect(stats.stores == 1)
        #expect(stats.currentBytes == 5000)
        #expect(stats.currentEntries == 1)
    }

    @Test func openReturnsADescriptorForSendfile() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let key = CacheKey("k")
        let bytes = DiskFixtures.bytes("k", count: 70_000)
        try cache.store(bytes, for: key, group: CacheGroup("s"), metadata: DiskFixtures.metadata())
        let reader = try cache.makeReader()
        let hit = try #require(try reader.open(key).hit)
        #expect(hit.entry.sizeBytes == 70_000)
        #expect(DiskFixtures.readAll(hit.descriptor, count: 70_000) == bytes)
    }

    @Test func unknownKeyIsAMiss() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let reader = try cache.makeReader()
        guard case .miss = try reader.read(CacheKey("nothing")) else { Issue.record("expected a miss"); return }
        #expect(cache.statistics.misses == 1)
    }

    @Test func replacingAnEntryDeletesTheOldBlob() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let key = CacheKey("k")
        try cache.store(
            DiskFixtures.bytes("v1", count: 100),
            for: key,
            group: CacheGroup("s"),
            metadata: DiskFixtures.metadata()
        )
        try cache.store(
            DiskFixtures.bytes("v2", count: 300),
            for: key,
            group: CacheGroup("s"),
            metadata: DiskFixtures.metadata()
        )
        let reader = try cache.makeReader()
        #expect(try reader.read(key).hit?.bytes == DiskFixtures.bytes("v2", count: 300))
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).count == 1)
        #expect(cache.statistics.currentBytes == 300)
        #expect(cache.statistics.currentEntries == 1)
    }

    @Test func removeDeletesRowAndBlob() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let key = CacheKey("k")
        try cache.store([1, 2, 3], for: key, group: CacheGroup("s"), metadata: DiskFixtures.metadata())
        #expect(try cache.remove(key))
        #expect(try !cache.remove(key))
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).isEmpty)
        let reader = try cache.makeReader()
        #expect(try reader.read(key).hit == nil)
        #expect(cache.statistics.currentEntries == 0)
    }

    @Test func purgeRemovesEveryVariantOfOneSource() throws {
        // Given three variants of a.jpg and two of b.jpg
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        for w in [64, 128, 256] {
            try cache.store(
                [1],
                for: CacheKey("a.jpg|w=\(w)"),
                group: CacheGroup("a.jpg"),
                metadata: DiskFixtures.metadata()
            )
        }
        for w in [64, 128] {
            try cache.store(
                [2],
                for: CacheKey("b.jpg|w=\(w)"),
                group: CacheGroup("b.jpg"),
                metadata: DiskFixtures.metadata()
            )
        }
        // When a.jpg is purged
        let removed = try cache.purge(group: CacheGroup("a.jpg"))
        // Then its variants and blobs are gone and b.jpg's remain
        #expect(removed == 3)
        let reader = try cache.makeReader()
        #expect(try reader.read(CacheKey("a.jpg|w=128")).hit == nil)
        #expect(try reader.read(CacheKey("b.jpg|w=128")).hit?.bytes == [2])
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).count == 2)
        #expect(cache.statistics.currentEntries == 2)
    }

    @Test func updateFreshnessKeepsTheBlob() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let key = CacheKey("k")
        try cache.store([9, 9], for: key, group: CacheGroup("s"), metadata: DiskFixtures.metadata())
        let later = DiskCache.Freshness(
            validatedAt: Timestamp(millisecondsSinceEpoch: 1_800_000_000_000),
            expiresAt: Timestamp(millisecondsSinceEpoch: 1_800_000_060_000),
            staleIfErrorUntil: nil,
            originETag: "\"origin-2\"",
            originLastModified: nil
        )
        #expect(try cache.updateFreshness(for: key, later))
        #expect(try !cache.updateFreshness(for: CacheKey("other"), later))
        let hit = try #require(try cache.makeReader().read(key).hit)
        #expect(hit.entry.metadata.freshness == later)
        #expect(hit.entry.metadata.etag == "\"v1\"")
        #expect(hit.bytes == [9, 9])
    }

    @Test func oversizeBlobIsRefusedAndOutdatedEntryRemoved() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 10_000, maxEntryBytes: 1_000)
        let key = CacheKey("k")
        try cache.store([1], for: key, group: CacheGroup("s"), metadata: DiskFixtures.metadata())
        let outcome = try cache.store(
            [UInt8](repeating: 0, count: 1_001),
            for: key,
            group: CacheGroup("s"),
            metadata: DiskFixtures.metadata()
        )
        #expect(outcome == .tooLarge)
        #expect(try cache.makeReader().read(key).hit == nil)
        #expect(cache.statistics.rejections == 1)
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).isEmpty)
    }

    @Test func invalidConfigurationIsRefused() throws {
        let directory = try TempDirectory()
        #expect(throws: CacheError.self) { try DiskFixtures.cache(directory, maxBytes: 0) }
        #expect(throws: CacheError.self) { try DiskFixtures.cache(directory, lowWatermark: 1.5) }
        #expect(throws: ConfigurationError.self) { try DiskCache.Configuration(directory: "").validate() }
    }

    @Test func emptyBlobRoundTrips() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        try cache.store([], for: CacheKey("empty"), group: CacheGroup("s"), metadata: DiskFixtures.metadata())
        #expect(try cache.makeReader().read(CacheKey("empty")).hit?.bytes == [])
    }
}

@Suite("DiskCache eviction", .timeLimit(.minutes(1)))
struct DiskCacheEvictionTests {
    private func store(_ cache: DiskCache, _ name: String, size: Int = 100) throws {
        try cache.store(
            DiskFixtures.bytes(name, count: size),
            for: CacheKey(name),
            group: CacheGroup("s"),
            metadata: DiskFixtures.metadata()
        )
    }

    @Test func evictsFromTheHighWatermarkDownToTheLowOne() throws {
        // Given a 1000-byte cache with a 50% low watermark, full with ten 100-byte entries
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 1000, maxEntryBytes: 1000, lowWatermark: 0.5)
        for i in 0..<10 { try store(cache, "k\(i)") }
        #expect(cache.statistics.currentBytes == 1000)
        #expect(cache.statistics.evictions == 0)
        // When one more entry arrives
        try store(cache, "k10")
        // Then the five oldest went in one pass (to 500) before it was written
        let stats = cache.statistics
        #expect(stats.evictions == 5)
        #expect(stats.currentBytes == 600)
        #expect(stats.currentEntries == 6)
        let reader = try cache.makeReader()
        for i in 0..<5 { #expect(try reader.read(CacheKey("k\(i)")).hit == nil) }
        for i in 5...10 { #expect(try reader.read(CacheKey("k\(i)")).hit != nil) }
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).count == 6)
    }

    @Test func budgetIsNeverExceeded() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 5000, maxEntryBytes: 1000)
        var generator = SystemRandomNumberGenerator()
        for i in 0..<200 {
            try store(cache, "k\(i % 60)", size: Int.random(in: 0...1000, using: &generator))
            #expect(cache.statistics.currentBytes <= 5000)
        }
        let onDisk = DiskFixtures.blobFiles(directory.appending("cache")).map(DiskFixtures.fileSize).reduce(0, +)
        #expect(onDisk == cache.statistics.currentBytes)
    }

    @Test func flushedTouchesProtectRecentlyReadEntries() throws {
        // Given three entries stored a, b, c in a cache that holds exactly three
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 300, maxEntryBytes: 300, lowWatermark: 1.0)
        for name in ["a", "b", "c"] { try store(cache, name) }
        // When "a" is read (its touch is buffered) and the writer flushes
        let reader = try cache.makeReader()
        #expect(try reader.read(CacheKey("a")).hit != nil)
        #expect(try cache.flush() == 1)
        try store(cache, "d")
        // Then "b" was the least recently used, not "a"
        #expect(try reader.read(CacheKey("b")).hit == nil)
        #expect(try reader.read(CacheKey("a")).hit != nil)
        #expect(try reader.read(CacheKey("c")).hit != nil)
    }

    @Test func evictionFlushesPendingTouchesFirst() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 300, maxEntryBytes: 300, lowWatermark: 1.0)
        for name in ["a", "b", "c"] { try store(cache, name) }
        let reader = try cache.makeReader()
        _ = try reader.open(CacheKey("a"))
        _ = try reader.read(CacheKey("b"))
        // No explicit flush: the store's eviction applies the buffered touches itself.
        try store(cache, "d")
        #expect(try reader.read(CacheKey("c")).hit == nil)
        #expect(try reader.read(CacheKey("a")).hit != nil)
    }

    @Test func shrinkingTheBudgetEvictsAtOnce() throws {
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 1000, maxEntryBytes: 1000, lowWatermark: 0.5)
        for i in 0..<8 { try store(cache, "k\(i)") }
        try cache.setLimits(maxBytes: 400)
        #expect(cache.statistics.maxBytes == 400)
        #expect(cache.statistics.currentBytes == 200)
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).count == 2)
        // The new per-entry limit (400 / 10) applies to later stores.
        #expect(
            try cache.store(
                [UInt8](repeating: 1, count: 41),
                for: CacheKey("big"),
                group: CacheGroup("s"),
                metadata: DiskFixtures.metadata()
            ) == .tooLarge
        )
    }
}
