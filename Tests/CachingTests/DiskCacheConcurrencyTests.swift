// SPDX-License-Identifier: Apache-2.0

import Caching
import Synchronization
import Testing
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("DiskCache threads and scale", .timeLimit(.minutes(2)))
struct DiskCacheConcurrencyTests {
    /// Blob for version `version` of `name`: the version in the first 4 bytes, then bytes derived from
    /// both, so a reader can tell a torn or mixed blob from a good one.
    private static func blob(_ name: String, version: Int) -> [UInt8] {
        let size = 200 + (name.hashValue & 0x7FF) % 3000 + version % 7
        return withUnsafeBytes(of: UInt32(version).littleEndian) { Array($0) }
            + DiskFixtures.bytes("\(name)#\(version)", count: size)
    }

    private static func isConsistent(_ bytes: [UInt8], _ name: String) -> Bool {
        guard bytes.count >= 4 else { return false }
        let version = Int(UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24)
        return bytes == blob(name, version: version)
    }

    @Test func readersOnSeveralThreadsWhileTheWriterWrites() throws {
        // Given a cache small enough that the writer's stores also evict
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory, maxBytes: 40_000, maxEntryBytes: 10_000)
        let names = (0..<40).map { "k\($0)" }
        let writerDone = Atomic<Bool>(false)
        let hits = Atomic<Int>(0)
        let inconsistent = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        // When one thread stores new versions (single and batched) while three threads read
        runOnThreads(4) { thread in
            if thread == 0 {
                defer { writerDone.store(true, ordering: .releasing) }
                do {
                    for round in 0..<6 {
                        for (i, name) in names.enumerated() where i % 2 == round % 2 {
                            try cache.store(
                                Self.blob(name, version: round),
                                for: CacheKey(name),
                                group: CacheGroup("g"),
                                metadata: DiskFixtures.metadata()
                            )
                        }
                        try cache.store(
                            batch: names.map {
                                DiskCache.StoreRequest(
                                    bytes: Self.blob($0, version: 100 + round),
                                    key: CacheKey($0),
                                    group: CacheGroup("g"),
                                    metadata: DiskFixtures.metadata()
                                )
                            }
                        )
                        try cache.flush()
                    }
                } catch {
                    failures.withLock { $0.append("writer: \(error)") }
                }
                return
            }
            do {
                let reader = try cache.makeReader()
                var iterations = 0
                while !writerDone.load(ordering: .acquiring) && iterations < 200_000 {
                    let name = names[(iterations * 7 + thread) % names.count]
                    iterations += 1
                    if iterations % 2 == 0 {
                        if case .hit(let hit) = try reader.read(CacheKey(name)) {
                            hits.add(1, ordering: .relaxed)
                            if !Self.isConsistent(hit.bytes, name) { inconsistent.add(1, ordering: .relaxed) }
                        }
                    } else if case .hit(let hit) = try reader.open(CacheKey(name)) {
                        hits.add(1, ordering: .relaxed)
                        let bytes = DiskFixtures.readAll(hit.descriptor, count: hit.entry.sizeBytes)
                        if !Self.isConsistent(bytes, name) { inconsistent.add(1, ordering: .relaxed) }
                    }
                }
            } catch {
                failures.withLock { $0.append("reader \(thread): \(error)") }
            }
        }
        // Then no call failed (readers never waited into SQLITE_BUSY), every hit was a whole, matching
        // blob, nothing was judged corrupt, and the budget held
        #expect(failures.withLock { $0 } == [])
        #expect(inconsistent.load(ordering: .relaxed) == 0)
        #expect(hits.load(ordering: .relaxed) > 0)
        let stats = cache.statistics
        #expect(stats.corruptBlobs == 0)
        #expect(stats.evictions > 0)
        #expect(stats.currentBytes <= 40_000)
        let onDisk = DiskFixtures.blobFiles(directory.appending("cache")).map(DiskFixtures.fileSize).reduce(0, +)
        #expect(onDisk == stats.currentBytes)
    }

    @Test func twoInstancesSideBySide() throws {
        // Given a variants cache and a sources cache in sibling directories, holding the same key
        let directory = try TempDirectory()
        let variants = try DiskFixtures.cache(directory, subdirectory: "variants", maxBytes: 1000, maxEntryBytes: 1000)
        let sources = try DiskFixtures.cache(directory, subdirectory: "sources", maxBytes: 100_000)
        let key = CacheKey("a.jpg")
        try variants.store([1], for: key, group: CacheGroup("a.jpg"), metadata: DiskFixtures.metadata())
        try sources.store([2, 2], for: key, group: CacheGroup("a.jpg"), metadata: DiskFixtures.metadata())
        // When one of them fills up and evicts, and is purged
        for i in 0..<20 {
            try variants.store(
                DiskFixtures.bytes("v\(i)", count: 100),
                for: CacheKey("v\(i)"),
                group: CacheGroup("v"),
                metadata: DiskFixtures.metadata()
            )
        }
        #expect(try variants.purge(group: CacheGroup("v")) > 0)
        // Then the other is untouched: its own entry, budget and counters
        #expect(try sources.makeReader().read(key).hit?.bytes == [2, 2])
        #expect(try variants.makeReader().read(key).hit == nil)
        #expect(sources.statistics.currentEntries == 1)
        #expect(sources.statistics.evictions == 0)
        #expect(variants.statistics.evictions > 0)
        #expect(variants.statistics.maxBytes == 1000)
        #expect(sources.statistics.maxBytes == 100_000)
    }

    @Test(arguments: [DiskCache.BatchSync.fileSystem, .eachFile, .none])
    func batchStoreIndexesEverythingAndLastWriteWins(sync: DiskCache.BatchSync) throws {
        let directory = try TempDirectory()
        let cache = try DiskCache(
            configuration: .init(
                directory: directory.appending("cache"),
                maxBytes: 100_000,
                maxEntryBytes: 1000,
                batchSync: sync
            )
        )
        var requests = (0..<50).map {
            DiskCache.StoreRequest(
                bytes: DiskFixtures.bytes("b\($0)", count: 100),
                key: CacheKey("b\($0)"),
                group: CacheGroup("g"),
                metadata: DiskFixtures.metadata()
            )
        }
        requests.append(
            DiskCache.StoreRequest(
                bytes: [9],
                key: CacheKey("b3"),
                group: CacheGroup("g"),
                metadata: DiskFixtures.metadata()
            )
        )
        requests.append(
            DiskCache.StoreRequest(
                bytes: [UInt8](repeating: 0, count: 1001),
                key: CacheKey("big"),
                group: CacheGroup("g"),
                metadata: DiskFixtures.metadata()
            )
        )
        let outcomes = try cache.store(batch: requests)
        #expect(outcomes.last == .tooLarge)
        #expect(outcomes.dropLast().allSatisfy { $0 == .stored })
        let reader = try cache.makeReader()
        #expect(try reader.read(CacheKey("b3")).hit?.bytes == [9])
        #expect(try reader.read(CacheKey("b49")).hit?.bytes == DiskFixtures.bytes("b49", count: 100))
        #expect(cache.statistics.currentEntries == 50)
        #expect(DiskFixtures.blobFiles(directory.appending("cache")).count == 50)
        #expect(DiskFixtures.list(directory.appending("cache/tmp")).isEmpty)
    }

    @Test func reopeningWithOneHundredThousandEntriesIsFastAndServesAtOnce() throws {
        // Given an index of 100,000 entries (written in batches, as the disk thread would), on tmpfs
        // when available: creating 100,000 real files is the fixture's cost, not what is tested
        let directory = try TempDirectory(preferMemory: true)
        let count = 100_000
        do {
            let cache = try DiskFixtures.cache(directory)
            var start = 0
            while start < count {
                let end = min(count, start + 5000)
                try cache.store(
                    batch: (start..<end).map {
                        DiskCache.StoreRequest(
                            bytes: [UInt8(truncatingIfNeeded: $0)],
                            key: CacheKey("k\($0)"),
                            group: CacheGroup("g\($0 % 100)"),
                            metadata: DiskFixtures.metadata()
                        )
                    }
                )
                start = end
            }
            #expect(cache.statistics.currentEntries == count)
        }
        // When the cache reopens
        let clock = ContinuousClock()
        var cache: DiskCache?
        let elapsed = try clock.measure { cache = try DiskFixtures.cache(directory) }
        let reopened = try #require(cache)
        // Then opening took well under a second (no directory scan), and the first lookup hits
        #expect(elapsed < .seconds(1), "reopen took \(elapsed)")
        #expect(reopened.statistics.currentEntries == count)
        #expect(try reopened.makeReader().read(CacheKey("k54321")).hit?.bytes == [UInt8(truncatingIfNeeded: 54321)])
        print("reopen with \(count) entries: \(elapsed)")
    }
}
