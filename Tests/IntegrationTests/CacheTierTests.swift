// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// The two cache tiers through the whole service: a restart serves from disk, the disk tier alone
    /// (memory off) serves through files, damaged blobs and a damaged index are never served and heal, and
    /// the memory budget holds under concurrent inserts. Real SQLite files and blob trees in temp
    /// directories; a restart is a new `ThumbdService` on the same directory and the same origin.
    @Suite(.timeLimit(.minutes(1))) struct CacheTierTests {
        // MARK: - Restart

        @Test func aRestartServesTheThumbnailFromDiskWithoutTheOriginThenFromMemory() async throws {
            // Given a thumbnail rendered once, and the service stopped
            var first: Harness? = try Harness()
            first!.origin.route("/warm.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = first!.thumbTarget("/warm.jpg", "w=64&format=png")
            let original = try await first!.request(target)
            #expect(original.status == 200)
            #expect(original.header("x-cache") == "MISS")
            let (directory, origin) = try await Self.stopAndRelease(&first)

            // When a new service starts on the same cache directory and is asked again
            let second = try Harness(directory: directory, origin: origin)
            let fromDisk = try await second.request(target)
            let fromMemory = try await second.request(target)

            // Then the first answer comes from disk with the same bytes and ETag, the origin is not asked,
            // and the disk hit was promoted to memory
            #expect(fromDisk.status == 200)
            #expect(fromDisk.header("x-cache") == "HIT-DISK")
            #expect(fromDisk.body == original.body)
            #expect(fromDisk.header("etag") == original.header("etag"))
            #expect(fromDisk.header("content-type") == "image/png")
            #expect(origin.hits("/warm.jpg") == 1)
            #expect(fromMemory.header("x-cache") == "HIT-MEMORY")
            #expect(fromMemory.body == original.body)
            #expect(fromMemory.header("etag") == original.header("etag"))
        }

        // MARK: - Disk tier alone

        @Test func withTheMemoryTierOffDiskHitsAreServedFromTheFile() async throws {
            // Given a service without a memory tier, and one thumbnail rendered and written to disk
            let harness = try Harness(["cache.memory.max_bytes": "0"])
            #expect(harness.service.cache.memory == nil)  // so a disk hit can only be sent from the open file
            harness.origin.route("/file.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/file.jpg", "w=80&format=png")
            let original = try await harness.request(target)
            #expect(original.status == 200)
            #expect(original.header("x-cache") == "MISS")
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })
            let etag = try #require(original.header("etag"))

            // When it is asked again with GET, with HEAD, and with its ETag
            let get = try await harness.request(target)
            let head = try await harness.request(target, method: "HEAD")
            let conditional = try await harness.request(target, headers: [("If-None-Match", etag)])
            let again = try await harness.request(target)

            // Then every answer is a disk hit with the rendered bytes (never promoted: there is no memory)
            #expect(get.status == 200)
            #expect(get.header("x-cache") == "HIT-DISK")
            #expect(get.body == original.body)
            #expect(get.header("content-length") == String(original.body.count))
            #expect(get.header("content-type") == "image/png")
            #expect(get.header("etag") == etag)
            #expect(head.status == 200)
            #expect(head.header("x-cache") == "HIT-DISK")
            #expect(head.header("content-length") == String(original.body.count))
            #expect(head.body.isEmpty)
            #expect(conditional.status == 304)
            #expect(conditional.header("x-cache") == "HIT-DISK")
            #expect(conditional.header("etag") == etag)
            #expect(conditional.body.isEmpty)
            #expect(again.header("x-cache") == "HIT-DISK")
            #expect(again.body == original.body)
            #expect(harness.origin.hits("/file.jpg") == 1)
            #expect(variants.statistics.hits == 4)
        }

        // MARK: - Damaged blobs

        /// What happens to a blob file while the service is stopped.
        enum Damage: String, CaseIterable, Sendable {
            /// Cut to half its size.
            case truncated
            /// Removed.
            case deleted
            /// Same size, other bytes (only the checksum can tell).
            case overwritten
        }

        @Test(arguments: Damage.allCases, [true, false])
        func aDamagedBlobIsNeverServedAndTheThumbnailIsRenderedAgain(damage: Damage, memoryTier: Bool) async throws {
            // Given a thumbnail on disk, written by a service now stopped
            let overrides = memoryTier ? [:] : ["cache.memory.max_bytes": "0"]
            var first: Harness? = try Harness(overrides)
            first!.origin.route("/damaged.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = first!.thumbTarget("/damaged.jpg", "w=72&format=png")
            let original = try await first!.request(target)
            #expect(original.status == 200)
            let (directory, origin) = try await Self.stopAndRelease(&first)
            let blobs = Self.blobFiles(in: directory.appending("cache/thumbnails"))
            try #require(blobs.count == 1, "blobs: \(blobs)")
            let blob = blobs[0]
            #expect(try Self.contents(of: blob) == original.body)

            // And that blob damaged behind the index's back
            var damagedBytes: [UInt8]?
            switch damage {
            case .truncated:
                #expect(truncate(blob, off_t(original.body.count / 2)) == 0)
                damagedBytes = try Self.contents(of: blob)
            case .deleted:
                #expect(unlink(blob) == 0)
            case .overwritten:
                let garbage = original.body.map { $0 ^ 0x5A }
                try Data(garbage).write(to: URL(fileURLWithPath: blob))
                damagedBytes = garbage
            }

            // When a new service on the same directory is asked for the thumbnail
            let logs = LogRecorder()
            let second = try Harness(overrides, directory: directory, origin: origin, logs: logs)
            let answer = try await second.request(target)

            // Then it renders it again (the original comes from the source cache) and answers the right bytes,
            // never the damaged ones
            #expect(answer.status == 200)
            #expect(answer.header("x-cache") == "MISS")
            #expect(answer.body == original.body)
            #expect(answer.header("etag") == original.header("etag"))
            if let damagedBytes { #expect(answer.body != damagedBytes) }
            // And the event is logged and counted, and the damaged file is gone
            let warnings = logs.matching("missing or corrupt", atLeast: .warning)
            let statistics = try #require(second.service.cache.variants).statistics
            if damage == .deleted {
                // Found by this lookup (a warning, counted), or first by the background reconcile, which
                // may get to that row before the request does (a notice naming the row it dropped)
                let reconciled = logs.matching("disk cache reconciled", atLeast: .notice).filter {
                    $0.metadata["missing_blob_rows_removed"] == "1"
                }
                #expect(warnings.count <= 1 && warnings.count + reconciled.count >= 1, "logged: \(logs.all)")
                #expect(statistics.missingBlobs == warnings.count && statistics.corruptBlobs == 0)
            } else {
                #expect(warnings.count == 1, "logged: \(logs.all.map(\.message))")
                #expect(statistics.corruptBlobs == 1 && statistics.missingBlobs == 0)
            }
            #expect(access(blob, F_OK) != 0)

            // And once the new render is on disk, the cache serves it again
            let variants = try #require(second.service.cache.variants)
            #expect(await eventually { variants.statistics.stores == 1 })
            let next = try await second.request(target)
            #expect(next.header("x-cache") == (memoryTier ? "HIT-MEMORY" : "HIT-DISK"))
            #expect(next.body == original.body)
            if !memoryTier {
                let stillOnDisk = try await second.request(target)
                #expect(stillOnDisk.header("x-cache") == "HIT-DISK")
                #expect(stillOnDisk.body == original.body)
            }
        }

        // MARK: - Damaged index

        @Test func aCorruptIndexIsMovedAsideLoggedAndRebuiltAndItsOrphanBlobsAreRemoved() async throws {
            // Given three thumbnails on disk, written by a service now stopped
            var first: Harness? = try Harness()
            first!.origin.route("/index.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let targets = [40, 56, 88].map { first!.thumbTarget("/index.jpg", "w=\($0)&format=png") }
            var originals: [RawHTTPClient.Response] = []
            for target in targets { originals.append(try await first!.request(target)) }
            #expect(originals.allSatisfy { $0.status == 200 && $0.header("x-cache") == "MISS" })
            let (directory, origin) = try await Self.stopAndRelease(&first)
            let root = directory.appending("cache/thumbnails")
            let oldBlobs = Set(Self.blobFiles(in: root))
            #expect(oldBlobs.count == 3)

            // And the index overwritten with garbage
            let garbage = (0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try Data(garbage).write(to: URL(fileURLWithPath: "\(root)/index.sqlite"))

            // When a new service starts on that directory
            let logs = LogRecorder()
            let second = try Harness(directory: directory, origin: origin, logs: logs)

            // Then it started, logged an error, and kept the broken file aside for a post-mortem
            #expect(try await second.request("/ready").status == 200)
            let errors = logs.matching("index was unusable", atLeast: .error)
            #expect(errors.count == 1, "logged: \(logs.all.map(\.message))")
            #expect(errors.first?.metadata["cache"] == "thumbnails")
            let names = try FileManager.default.contentsOfDirectory(atPath: root)
            let asideNames = names.filter { $0.hasPrefix("index.sqlite.corrupt-") }
            #expect(asideNames.count == 1, "files: \(names)")
            if let aside = asideNames.first {
                #expect(try Self.contents(of: "\(root)/\(aside)") == garbage)
            }

            // And it serves correctly: a miss, rendered again, with the same bytes as before
            let answer = try await second.request(targets[0])
            #expect(answer.status == 200)
            #expect(answer.header("x-cache") == "MISS")
            #expect(answer.body == originals[0].body)

            // And the background reconcile removes the blobs the new index does not know, keeping the new one
            let variants = try #require(second.service.cache.variants)
            let reconciled = await eventually {
                let files = Set(Self.blobFiles(in: root))
                return variants.statistics.currentEntries == 1 && files.count == 1 && files.isDisjoint(with: oldBlobs)
            }
            #expect(reconciled, "blobs: \(Self.blobFiles(in: root)), old: \(oldBlobs)")
            let next = try await second.request(targets[0])
            #expect(next.header("x-cache") == "HIT-MEMORY" && next.body == originals[0].body)
        }

        // MARK: - Memory budget

        @Test func theMemoryBudgetHoldsUnderConcurrentInsertsAndLargeThumbnailsStayOnDisk() async throws {
            // Given a 16 KB memory tier (so entries above 1.6 KB are not kept in memory) and two sources
            let maxBytes = 16_000
            let harness = try Harness(["cache.memory.max_bytes": "16KB"])
            for name in ["budget-a", "budget-b"] {
                harness.origin.route("/\(name).jpg", .ok(Fixtures.bytes("progressive.jpg")))
            }
            // Small JPEGs (about 0.5 KB each) from four threads, each with a large PNG (about 4 KB) in the mix
            let threads = 4
            let plans: [[String]] = (0..<threads).map { thread in
                var targets = (0..<16).map { index in
                    let source = index % 2 == 0 ? "/budget-a.jpg" : "/budget-b.jpg"
                    return harness.thumbTarget(source, "w=\(24 + thread * 16 + index)&format=jpeg")
                }
                targets.insert(harness.thumbTarget("/budget-a.jpg", "w=\(640 + thread)&enlarge=1&format=png"), at: 8)
                return targets
            }

            // When the threads ask for their thumbnails at the same time, one keep-alive connection each
            let results = Recorder<(target: String, status: Int, cache: String?, bytes: Int)>()
            let failures = Recorder<String>()
            let port = harness.port
            try await blocking {
                runOnThreads(threads) { thread in
                    do {
                        let client = try RawHTTPClient(host: "127.0.0.1", port: port)
                        for target in plans[thread] {
                            try client.send(Harness.requestText(target))
                            let response = try client.readResponse(timeout: .seconds(30))
                            results.append((target, response.status, response.header("x-cache"), response.body.count))
                        }
                    } catch {
                        failures.append("thread \(thread): \(error)")
                    }
                }
            }

            // Then every thumbnail was answered, and the budget was never exceeded though the small ones alone
            // add up to more than it
            #expect(failures.values.isEmpty, "\(failures.values)")
            let answered = results.values
            #expect(answered.count == threads * 17)
            #expect(answered.allSatisfy { $0.status == 200 && $0.cache == "MISS" })
            let small = answered.filter { $0.target.contains("format=jpeg") }
            let large = answered.filter { $0.target.contains("format=png") }
            #expect(small.allSatisfy { $0.bytes <= maxBytes / 10 }, "sizes: \(small.map(\.bytes))")
            #expect(large.allSatisfy { $0.bytes > maxBytes / 10 }, "sizes: \(large.map(\.bytes))")
            #expect(small.map(\.bytes).reduce(0, +) > maxBytes)
            let memory = try #require(harness.service.cache.memory)
            let statistics = memory.statistics
            #expect(statistics.maxBytes == maxBytes)
            #expect(statistics.peakBytes <= maxBytes, "peak \(statistics.peakBytes)")
            #expect(statistics.currentBytes <= maxBytes)
            #expect(statistics.evictions > 0)
            #expect(statistics.rejections >= threads)

            // And a large thumbnail, once on disk, is answered from disk every time: never kept in memory
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == threads * 17 })
            let largeTarget = try #require(large.first?.target)
            for _ in 0..<2 {
                let response = try await harness.request(largeTarget)
                #expect(response.status == 200)
                #expect(response.header("x-cache") == "HIT-DISK")
            }
            // While a small one is promoted to memory by its disk hit (if it was evicted) and stays there
            let smallTarget = try #require(small.first?.target)
            let warm = try await harness.request(smallTarget)
            #expect(["HIT-DISK", "HIT-MEMORY"].contains(warm.header("x-cache")))
            #expect(try await harness.request(smallTarget).header("x-cache") == "HIT-MEMORY")
            #expect(memory.statistics.peakBytes <= maxBytes)
        }

        // MARK: - Helpers

        /// Stops the harness's service and releases it: its disk caches let go of their directories (the
        /// `flock`) only when deallocated. Returns what a restart reuses.
        static func stopAndRelease(_ harness: inout Harness?) async throws -> (TempDirectory, LoopbackOrigin) {
            let stopping = try #require(harness)
            try await stopping.stop()
            harness = nil
            return (stopping.directory, stopping.origin)
        }

        /// The blob files (paths) under a disk cache root's `blobs/`, sorted.
        static func blobFiles(in root: String) -> [String] {
            let blobs = "\(root)/blobs"
            guard let walker = FileManager.default.enumerator(atPath: blobs) else { return [] }
            var files: [String] = []
            while let relative = walker.nextObject() as? String {
                var info = stat()
                let path = "\(blobs)/\(relative)"
                if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { files.append(path) }
            }
            return files.sorted()
        }

        /// The bytes of a file.
        static func contents(of path: String) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        }
    }
}
