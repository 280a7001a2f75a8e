// SPDX-License-Identifier: Apache-2.0

import Caching
import Testing
import ThumbdTestSupport

@Suite("DiskCache recovery", .timeLimit(.minutes(1)))
struct DiskCacheRecoveryTests {
    private let key = CacheKey("https://img.example/a.jpg|w=256")
    private let group = CacheGroup("https://img.example/a.jpg")

    @Test func truncatedBlobIsNeverServedAndItsRowGoes() throws {
        // Given a stored entry whose blob lost its last byte
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        let cache = try DiskFixtures.cache(directory)
        try cache.store(DiskFixtures.bytes("a", count: 1000), for: key, group: group, metadata: DiskFixtures.metadata())
        let blob = try #require(DiskFixtures.blobPath(root, key))
        DiskFixtures.truncateFile(blob, to: 999)
        // When a reader reads it
        let reader = try cache.makeReader()
        let result = try reader.read(key)
        // Then it is discarded as corrupt, counted, the blob is deleted at once, and the row at the next flush
        guard case .discarded(.sizeMismatch(expected: 1000, actual: 999)) = result else {
            Issue.record("expected a size mismatch, got \(result)")
            return
        }
        #expect(cache.statistics.corruptBlobs == 1)
        #expect(!DiskFixtures.exists(blob))
        try cache.flush()
        #expect(cache.statistics.currentEntries == 0)
        #expect(cache.statistics.currentBytes == 0)
        guard case .miss = try reader.read(key) else { Issue.record("expected a miss after flush"); return }
    }

    @Test func flippedByteFailsTheChecksum() throws {
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        let cache = try DiskFixtures.cache(directory)
        try cache.store(DiskFixtures.bytes("a", count: 4096), for: key, group: group, metadata: DiskFixtures.metadata())
        DiskFixtures.flipByte(try #require(DiskFixtures.blobPath(root, key)), at: 2000)
        let result = try cache.makeReader().read(key)
        guard case .discarded(.checksumMismatch) = result else { Issue.record("got \(result)"); return }
        #expect(cache.statistics.corruptBlobs == 1)
    }

    @Test func sendfilePathVerifiesEachBlobOncePerProcess() throws {
        // Given an entry written by an earlier process (so not yet verified by this one), then damaged
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        do {
            let writer = try DiskFixtures.cache(directory)
            try writer.store(
                DiskFixtures.bytes("a", count: 4096),
                for: key,
                group: group,
                metadata: DiskFixtures.metadata()
            )
        }
        DiskFixtures.flipByte(try #require(DiskFixtures.blobPath(root, key)), at: 10)
        // When it is opened for sendfile
        let cache = try DiskFixtures.cache(directory)
        let result = try cache.makeReader().open(key)
        // Then the first open checksums it and refuses it
        guard case .discarded(.checksumMismatch) = result else { Issue.record("got \(result)"); return }
        #expect(cache.statistics.corruptBlobs == 1)
    }

    @Test func sendfilePathChecksSizeOnEveryHit() throws {
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        let cache = try DiskFixtures.cache(directory)
        try cache.store(DiskFixtures.bytes("a", count: 4096), for: key, group: group, metadata: DiskFixtures.metadata())
        let reader = try cache.makeReader()
        #expect(try reader.open(key).hit != nil)
        DiskFixtures.truncateFile(try #require(DiskFixtures.blobPath(root, key)), to: 100)
        guard case .discarded(.sizeMismatch(expected: 4096, actual: 100)) = try reader.open(key) else {
            Issue.record("expected a size mismatch")
            return
        }
    }

    @Test func deletedBlobIsAMissAndItsRowGoes() throws {
        // Given a stored entry whose blob was deleted behind the index
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        let cache = try DiskFixtures.cache(directory)
        try cache.store([1, 2, 3], for: key, group: group, metadata: DiskFixtures.metadata())
        DiskFixtures.removeFile(try #require(DiskFixtures.blobPath(root, key)))
        // When it is looked up, then the writer flushes
        let reader = try cache.makeReader()
        guard case .discarded(.blobMissing) = try reader.open(key) else { Issue.record("expected blobMissing"); return }
        try cache.flush()
        // Then the row is gone and the counters say so
        #expect(cache.statistics.missingBlobs == 1)
        #expect(cache.statistics.corruptBlobs == 0)
        #expect(cache.statistics.currentEntries == 0)
        guard case .miss = try reader.read(key) else { Issue.record("expected a miss"); return }
    }

    @Test func reconcileRemovesCrashLeftovers() throws {
        // Given a cache with one good entry, then a "crash" that left a temp file (before rename) and an
        // orphan blob (after rename, before the row insert)
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        do {
            let cache = try DiskFixtures.cache(directory)
            try cache.store([1, 2, 3], for: key, group: group, metadata: DiskFixtures.metadata())
        }
        let good = try #require(DiskFixtures.blobPath(root, key))
        let orphanKey = CacheKey("never-indexed")
        let orphanHex = DiskFixtures.hex16(orphanKey.hash)
        let leaf = "\(root)/blobs/\(orphanHex.prefix(1))/\(orphanHex.dropFirst().prefix(2))"
        DiskFixtures.makeDirectory("\(root)/blobs/\(orphanHex.prefix(1))")
        DiskFixtures.makeDirectory(leaf)
        let orphan = "\(leaf)/\(orphanHex)-0123456789abcdef"
        DiskFixtures.writeFile(orphan, [7, 7, 7])
        let temporary = "\(root)/tmp/\(orphanHex)-fedcba9876543210.tmp"
        DiskFixtures.writeFile(temporary, [7])
        let stranger = "\(leaf)/notes.txt"
        DiskFixtures.writeFile(stranger, [0])

        // When the cache reopens and reconciles to the end, in small steps
        let cache = try DiskFixtures.cache(directory)
        #expect(!DiskFixtures.exists(temporary), "temp files go at open")
        #expect(DiskFixtures.exists(orphan), "open scans no directory")
        var total = DiskCache.ReconcileReport()
        for _ in 0..<1000 {
            let report = try cache.reconcile(maxDirectories: 100)
            total.directoriesScanned += report.directoriesScanned
            total.orphanFilesRemoved += report.orphanFilesRemoved
            if report.isComplete { break }
        }

        // Then the orphan is gone, the good blob and foreign files remain, and every leaf was visited once
        #expect(total.directoriesScanned == 4096)
        #expect(total.orphanFilesRemoved == 1)
        #expect(!DiskFixtures.exists(orphan))
        #expect(DiskFixtures.exists(good))
        #expect(DiskFixtures.exists(stranger))
        #expect(try cache.makeReader().read(key).hit?.bytes == [1, 2, 3])
    }

    @Test func reconcileRemovesRowsWithoutBlobs() throws {
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        let cache = try DiskFixtures.cache(directory)
        for i in 0..<20 {
            try cache.store([UInt8(i)], for: CacheKey("k\(i)"), group: group, metadata: DiskFixtures.metadata())
        }
        for i in 0..<5 { DiskFixtures.removeFile(try #require(DiskFixtures.blobPath(root, CacheKey("k\(i)")))) }
        var removed = 0
        while true {
            let report = try cache.reconcile(maxDirectories: 4096)
            removed += report.missingBlobRowsRemoved
            if report.isComplete { break }
        }
        #expect(removed == 5)
        #expect(cache.statistics.currentEntries == 15)
        #expect(cache.statistics.currentBytes == 15)
    }

    @Test func corruptDatabaseIsMovedAsideAndRebuiltEmpty() throws {
        // Given a cache with entries whose index file is then overwritten with garbage
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        do {
            let cache = try DiskFixtures.cache(directory)
            for i in 0..<10 {
                try cache.store([UInt8(i)], for: CacheKey("k\(i)"), group: group, metadata: DiskFixtures.metadata())
            }
        }
        DiskFixtures.writeFile("\(root)/index.sqlite", Array(repeating: 0x5A, count: 64 * 1024))
        // When the cache opens
        let cache = try DiskFixtures.cache(directory)
        // Then opening succeeded empty, reported the rebuild, and kept the old file for inspection
        guard case .indexRebuilt(_, let movedTo) = cache.startupIssue else {
            Issue.record("expected indexRebuilt, got \(String(describing: cache.startupIssue))")
            return
        }
        #expect(DiskFixtures.exists(movedTo))
        #expect(DiskFixtures.fileSize(movedTo) == 64 * 1024)
        #expect(cache.statistics.currentEntries == 0)
        // And it works, and reconcile clears the blobs of the lost index
        try cache.store([42], for: key, group: group, metadata: DiskFixtures.metadata())
        #expect(try cache.makeReader().read(key).hit?.bytes == [42])
        var orphans = 0
        while true {
            let report = try cache.reconcile(maxDirectories: 4096)
            orphans += report.orphanFilesRemoved
            if report.isComplete { break }
        }
        #expect(orphans == 10)
        #expect(DiskFixtures.blobFiles(root).count == 1)
    }

    @Test func damageBehindAnIntactHeaderIsCaughtAtOpen() throws {
        // Given an index whose first page (header and schema) is intact but whose table pages are garbage
        let directory = try TempDirectory()
        let root = directory.appending("cache")
        do {
            let cache = try DiskFixtures.cache(directory)
            for i in 0..<200 {
                try cache.store([UInt8(i)], for: CacheKey("k\(i)"), group: group, metadata: DiskFixtures.metadata())
            }
        }
        let size = DiskFixtures.fileSize("\(root)/index.sqlite")
        #expect(size > 4 * 4096)
        DiskFixtures.overwrite("\(root)/index.sqlite", at: 4096, with: Array(repeating: 0xA5, count: size - 4096))
        // When the cache opens
        let cache = try DiskFixtures.cache(directory)
        // Then quick_check caught it: moved aside, rebuilt empty, working
        guard case .indexRebuilt = cache.startupIssue else {
            Issue.record("expected indexRebuilt, got \(String(describing: cache.startupIssue))")
            return
        }
        #expect(cache.statistics.currentEntries == 0)
        try cache.store([1], for: key, group: group, metadata: DiskFixtures.metadata())
        #expect(try cache.makeReader().read(key).hit?.bytes == [1])
    }

    @Test func secondOpenOfTheSameDirectoryIsRefused() throws {
        let directory = try TempDirectory()
        let first = try DiskFixtures.cache(directory)
        #expect(throws: CacheError.directoryInUse(path: directory.appending("cache"))) {
            try DiskFixtures.cache(directory)
        }
        _ = first
    }

    @Test func reopeningKeepsEntriesAndCounters() throws {
        let directory = try TempDirectory()
        do {
            let cache = try DiskFixtures.cache(directory)
            for i in 0..<10 {
                try cache.store(
                    DiskFixtures.bytes("k\(i)", count: 10 * (i + 1)),
                    for: CacheKey("k\(i)"),
                    group: group,
                    metadata: DiskFixtures.metadata()
                )
            }
        }
        let cache = try DiskFixtures.cache(directory)
        #expect(cache.startupIssue == nil)
        #expect(cache.statistics.currentEntries == 10)
        #expect(cache.statistics.currentBytes == 550)
        #expect(try cache.makeReader().read(CacheKey("k9")).hit?.bytes == DiskFixtures.bytes("k9", count: 100))
    }
}
