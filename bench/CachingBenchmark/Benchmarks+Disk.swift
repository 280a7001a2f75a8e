// SPDX-License-Identifier: Apache-2.0

import Caching
import Synchronization
import ThumbdTestSupport

extension Benchmarks {
    static func metadata() -> DiskCache.EntryMetadata {
        let now = Timestamp.now()
        return DiskCache.EntryMetadata(
            contentType: "image/webp",
            etag: "\"abc\"",
            createdAt: now,
            freshness: DiskCache.Freshness(validatedAt: now, expiresAt: now.advanced(by: .seconds(86_400)))
        )
    }

    static func disk(base: String) throws {
        let rootDirectory = try TempDirectory(prefix: "thumbd-bench", in: base)
        let root = rootDirectory.path
        defer { withExtendedLifetime(rootDirectory) {} }
        let cache = try DiskCache(configuration: .init(directory: "\(root)/cache"))
        let blobSize = 20_000
        let blob = (0..<blobSize).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let clock = ContinuousClock()

        // Single stores: one fsync each.
        let singles = 200
        let singleTime = try clock.measure {
            for i in 0..<singles {
                try cache.store(blob, for: CacheKey("single-\(i)"), group: CacheGroup("g"), metadata: metadata())
            }
        }
        report("disk store, single (fsync each), 20 KB", Double(singles) / (nanoseconds(singleTime) / 1e9), "stores/s")

        // Batched stores: one syncfs and one transaction per 64.
        let batches = 50
        let batchTime = try clock.measure {
            for b in 0..<batches {
                try cache.store(
                    batch: (0..<64).map {
                        DiskCache.StoreRequest(
                            bytes: blob,
                            key: CacheKey("batch-\(b)-\($0)"),
                            group: CacheGroup("g\(b)"),
                            metadata: metadata()
                        )
                    }
                )
            }
        }
        report(
            "disk store, batches of 64 (one syncfs each), 20 KB",
            Double(batches * 64) / (nanoseconds(batchTime) / 1e9),
            "stores/s"
        )

        // Batched stores with fsync per file: only the index transaction is shared.
        let perFileRootDirectory = try TempDirectory(prefix: "thumbd-bench", in: base)
        let perFileRoot = perFileRootDirectory.path
        defer { withExtendedLifetime(perFileRootDirectory) {} }
        let perFile = try DiskCache(configuration: .init(directory: "\(perFileRoot)/cache", batchSync: .eachFile))
        let perFileTime = try clock.measure {
            for b in 0..<10 {
                try perFile.store(
                    batch: (0..<64).map {
                        DiskCache.StoreRequest(
                            bytes: blob,
                            key: CacheKey("batch-\(b)-\($0)"),
                            group: CacheGroup("g\(b)"),
                            metadata: metadata()
                        )
                    }
                )
            }
        }
        report(
            "disk store, batches of 64 (fsync each file), 20 KB",
            Double(10 * 64) / (nanoseconds(perFileTime) / 1e9),
            "stores/s"
        )

        // Lookups: hits on the 3,200 batch entries (page cache warm), per thread with its own reader.
        let keys = (0..<batches).flatMap { b in (0..<64).map { CacheKey("batch-\(b)-\($0)") } }
        let lookups = 20_000
        for threads in [1, 2] {
            for mode in ["read (bytes + checksum)", "open (fd + fstat)"] {
                let failures = Atomic<Int>(0)
                let elapsed = clock.measure {
                    runOnThreads(threads) { t in
                        do {
                            let reader = try cache.makeReader()
                            for i in 0..<lookups {
                                let key = keys[(i &* 7 &+ t) % keys.count]
                                let isHit =
                                    mode.hasPrefix("read")
                                    ? try reader.read(key).hit != nil : try reader.open(key).hit != nil
                                if !isHit { failures.add(1, ordering: .relaxed) }
                            }
                        } catch {
                            failures.add(1, ordering: .relaxed)
                        }
                    }
                }
                precondition(failures.load(ordering: .relaxed) == 0, "lookups failed")
                report(
                    "disk hit \(mode), \(threads) thread(s)",
                    Double(lookups * threads) / (nanoseconds(elapsed) / 1e9),
                    "lookups/s"
                )
            }
        }
        let reader = try cache.makeReader()
        let missTime = try clock.measure {
            for i in 0..<lookups { _ = try reader.read(CacheKey("absent-\(i)")) }
        }
        report("disk miss, 1 thread", Double(lookups) / (nanoseconds(missTime) / 1e9), "lookups/s")
        let flushTime = try clock.measure { _ = try cache.flush() }
        report("flush of the touches of \(lookups * 5) hits (\(keys.count) keys)", nanoseconds(flushTime) / 1e6, "ms")
    }

    static func reopen(base: String, entries: Int) throws {
        let rootDirectory = try TempDirectory(prefix: "thumbd-bench", in: base)
        let root = rootDirectory.path
        defer { withExtendedLifetime(rootDirectory) {} }
        let clock = ContinuousClock()
        let fillTime = try clock.measure {
            let cache = try DiskCache(configuration: .init(directory: "\(root)/cache"))
            var start = 0
            while start < entries {
                let end = min(entries, start + 2000)
                try cache.store(
                    batch: (start..<end).map {
                        DiskCache.StoreRequest(
                            bytes: [UInt8(truncatingIfNeeded: $0)],
                            key: CacheKey("https://images.example.com/\($0).jpg|w=256"),
                            group: CacheGroup("\($0)"),
                            metadata: metadata()
                        )
                    }
                )
                start = end
            }
        }
        report("fill \(entries) entries (batches of 2000)", nanoseconds(fillTime) / 1e9, "s")
        var reopened: DiskCache?
        let openTime = try clock.measure { reopened = try DiskCache(configuration: .init(directory: "\(root)/cache")) }
        report("reopen with \(entries) entries", nanoseconds(openTime) / 1e6, "ms")
        let firstLookup = try clock.measure {
            let hit = try reopened!.makeReader().read(CacheKey("https://images.example.com/4242.jpg|w=256")).hit
            precondition(hit != nil)
        }
        report("first lookup after reopen (incl. making a reader)", nanoseconds(firstLookup) / 1e6, "ms")
        var scanned = 0
        let reconcileTime = try clock.measure {
            while true {
                let report = try reopened!.reconcile(maxDirectories: 256)
                scanned += report.directoriesScanned
                if report.isComplete { break }
            }
        }
        report("full reconcile pass over \(entries) entries (nothing to fix)", nanoseconds(reconcileTime) / 1e6, "ms")
    }
}
