// SPDX-License-Identifier: Apache-2.0
import Caching
import Foundation
import Glibc
import Logging
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import ThumbdSettings
@testable import URLForms

extension Integration {
    /// The disk tier across process deaths, with the real `thumbd` executable as a child process (issue 4):
    /// `kill -9` in the middle of cache writes, then a restart; and the start on a large index.
    @Suite(.timeLimit(.minutes(3))) struct CrashRecoveryTests {
        /// Distinct variants of one source: every `w` × `h` in 20...59 × 20...44, so each has its own bytes.
        static let variantCount = 1_000

        static func target(source: String, variant: Int) -> String {
            let encoded = source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source
            return "/thumb?url=\(encoded)&w=\(20 + variant % 40)&h=\(20 + variant / 40)&fit=fill&format=jpeg"
        }

        @Test func killDuringCacheWritesThenRestartServesOnlyFreshRenderBytesAndLeavesNoOrphan() async throws {
            // Given an origin with one PNG, and a thumbd child process on an empty cache directory
            let origin = try LoopbackOrigin(host: originHost)
            origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let targets = (0..<Self.variantCount).map { Self.target(source: origin.url("/grid.png"), variant: $0) }
            let directory = try TempDirectory(prefix: "thumbd-crash")
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(to: configuration)
            let cacheDirectory = directory.appending("cache")
            let first = try await blocking {
                try ThumbdChild(configuration: configuration, cacheDirectory: cacheDirectory)
            }

            // When it gets SIGKILL once 300 of 1,000 distinct variants are answered, at a moment when a batch of
            // blobs is being written (its temp files exist), while the renders go on
            let temporaryDirectory = cacheDirectory + "/thumbnails/tmp"
            let crashed = try await blocking {
                first.requestAll(targets, killAfter: 300) { CacheCensus.hasEntries(temporaryDirectory) }
            }
            let killedBy = try await blocking { first.process.wait(timeout: .seconds(10)) }
            #expect(killedBy == .signalled(SIGKILL))
            #expect(crashed.killConditionHeld, "no batch was being written when the kill came")
            let afterCrash = try CacheCensus(root: cacheDirectory + "/thumbnails", countRows: true)

            // and is started again on the same directory, which then answers every variant
            let second = try await blocking {
                try ThumbdChild(configuration: configuration, cacheDirectory: cacheDirectory)
            }
            let restarted = try await blocking { second.requestAll(targets) }

            // Then every variant is answered, from disk exactly for the rows the crash left behind
            #expect(restarted.failures.isEmpty, "\(restarted.failures.prefix(3))")
            #expect(restarted.answers.count == Self.variantCount)
            let outcomes = restarted.answers.values.map { $0.header("x-cache") ?? "none" }
            let diskHits = outcomes.filter { $0 == "HIT-DISK" }.count
            #expect(restarted.answers.values.allSatisfy { $0.status == 200 })
            #expect(outcomes.allSatisfy { $0 == "HIT-DISK" || $0 == "MISS" }, "\(Set(outcomes))")
            #expect(afterCrash.rows ?? 0 > 0, "the kill came before any batch was indexed: nothing to recover")
            #expect(diskHits == afterCrash.rows, "a row without its blob, or a survivor not found")

            // and once its background reconcile is done and it stops gracefully, no orphan file, temp file or
            // row without a blob is left, and every variant is on disk once
            let settled = try await blocking {
                waitUntil(timeout: .seconds(20)) { CacheCensus.isSettled(cacheDirectory + "/thumbnails") }
            }
            #expect(settled, "the blob files did not settle")
            let stopped = try await blocking { second.stop() }
            #expect(
                stopped == .exited(0),
                "\(stopped.map { "\($0)" } ?? "running"); stderr: \(second.process.standardError)")
            let thumbnails = try CacheCensus.reconciledInTest(cacheDirectory + "/thumbnails")
            #expect(thumbnails.temporaryFiles == 0)
            #expect(thumbnails.orphanFilesRemoved == 0)
            #expect(thumbnails.missingBlobRowsRemoved == 0)
            #expect(thumbnails.rows == Self.variantCount)
            #expect(thumbnails.blobFiles == Self.variantCount)
            let sources = try CacheCensus.reconciledInTest(cacheDirectory + "/sources")
            #expect(sources.temporaryFiles == 0 && sources.orphanFilesRemoved == 0)
            #expect(sources.missingBlobRowsRemoved == 0 && sources.rows == sources.blobFiles)

            // and every answer, before the crash and after it, has the bytes of a fresh render: what a
            // thumbd that never crashed answers on an empty cache (same binary, same normalisation)
            let referenceDirectory = directory.appending("reference")
            let reference = try await blocking {
                try ThumbdChild(configuration: configuration, cacheDirectory: referenceDirectory)
            }
            let fresh = try await blocking { reference.requestAll(targets) }
            #expect(try await blocking { reference.stop() } == .exited(0))
            #expect(fresh.answers.count == Self.variantCount && fresh.failures.isEmpty)
            #expect(fresh.answers.values.allSatisfy { $0.status == 200 && $0.header("x-cache") == "MISS" })
            let mismatchesAfter = (0..<Self.variantCount).filter {
                restarted.answers[$0]?.body != fresh.answers[$0]?.body
            }
            let mismatchesBefore = crashed.answers.filter { $0.value.body != fresh.answers[$0.key]?.body }
            #expect(mismatchesAfter.isEmpty, "variants served with other bytes after the restart: \(mismatchesAfter)")
            #expect(mismatchesBefore.isEmpty, "variants served with other bytes before the crash")
            #expect(crashed.answers.count >= 300 && crashed.answers.count < Self.variantCount)

            print(
                "crash-recovery: answered before SIGKILL \(crashed.answers.count) (temp files seen at the kill: "
                    + "\(crashed.killConditionHeld)); after the crash: \(afterCrash); "
                    + "restart listening after \(second.timeToListening); HIT-DISK \(diskHits), "
                    + "MISS \(Self.variantCount - diskHits); final: \(thumbnails)")
        }

        @Test func restartWith100000EntriesIsReadyInUnderOneSecondAndServesDiskHitsAtOnce() async throws {
            // Given a cache directory whose thumbnail index holds 100,000 entries (64-byte blobs stored with
            // DiskCache in batches of 1,000, as the disk thread stores them) under the keys of /thumb requests
            let directory = try TempDirectory(prefix: "thumbd-restart", preferMemory: true)
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(to: configuration)
            let cacheDirectory = directory.appending("cache")
            let settings = try ConfigFile(
                path: configuration, environment: [:], overrides: .init(cacheDirectory: cacheDirectory)
            ).load()
            let fillStart = ContinuousClock.now
            let probes = try await blocking {
                try Self.fill(cacheDirectory + "/thumbnails", entries: 100_000, settings: settings)
            }
            let fillTime = ContinuousClock.now - fillStart
            // (a first start on an empty directory loads the executable and its libraries into the page cache,
            // so that the measured start pays for the index, not for a cold disk)
            let emptyDirectory = directory.appending("empty")
            let warmUp = try await blocking {
                try ThumbdChild(configuration: configuration, cacheDirectory: emptyDirectory)
            }
            let emptyReady = try await blocking { try Self.timeToReady(warmUp) }
            #expect(try await blocking { warmUp.stop() } == .exited(0))

            // When thumbd starts on it
            let child = try await blocking {
                try ThumbdChild(configuration: configuration, cacheDirectory: cacheDirectory)
            }
            let ready = try await blocking { try Self.timeToReady(child) }
            let (hits, firstHit) = try await blocking {
                let first = try child.get(probes[0].target, timeout: .seconds(10))
                let firstHit = ContinuousClock.now - child.spawnedAt
                return (
                    [first] + (try probes.dropFirst().map { try child.get($0.target, timeout: .seconds(10)) }), firstHit
                )
            }
            #expect(try await blocking { child.stop() } == .exited(0), "stderr: \(child.process.standardError)")

            // Then /ready is 200 in under a second from the spawn, and the stored entries are disk hits at once
            #expect(ready.status == 200)
            #expect(ready.elapsed < .seconds(1), "spawn to /ready 200")
            for (probe, hit) in zip(probes, hits) {
                #expect(hit.status == 200 && hit.header("x-cache") == "HIT-DISK", "\(probe.target): \(hit.status)")
                #expect(hit.body == probe.bytes)
            }

            // (and in process: building and starting the whole service on that directory)
            let inProcess = try await blocking { try Self.timeServiceStart(settings) }
            #expect(inProcess < .seconds(1), "ThumbdService init + start")

            print(
                "restart-100k: fill \(fillTime); spawn to /ready 200: \(ready.elapsed) (\(emptyReady.elapsed) with an "
                    + "empty cache); spawn to first disk hit answered: \(firstHit); in-process init + start \(inProcess)"
            )
        }

        /// `/ready` once the child listens: its status, and the time from the spawn to its answer.
        private static func timeToReady(_ child: ThumbdChild) throws -> (status: Int, elapsed: Duration) {
            let response = try child.get("/ready", timeout: .seconds(10))
            return (response.status, ContinuousClock.now - child.spawnedAt)
        }

        /// Stores `entries` thumbnails under the keys thumbd derives for
        /// `/thumb?url=http://127.0.0.2:9/photo-N.jpg&w=32&format=jpeg` (parsed and normalised by the app's own
        /// code with `settings`), each blob 64 bytes naming its entry. Returns a few of them to probe.
        private static func fill(
            _ root: String, entries: Int, settings: Settings
        ) throws -> [(target: String, bytes: [UInt8])] {
            let thumbnailer = try Thumbnailer(configuration: settings.thumbnailerConfiguration, vips: Vips.initialize())
            let cache = try DiskCache(configuration: .init(directory: root))
            let now = Timestamp.now()
            let metadata = DiskCache.EntryMetadata(
                contentType: "image/jpeg", createdAt: now,
                freshness: .init(validatedAt: now, expiresAt: now.advanced(by: .seconds(86_400))))
            var probes: [(target: String, bytes: [UInt8])] = []
            let probeIndexes: Set<Int> = [0, 1, entries / 2, entries - 1]
            var batch: [DiskCache.StoreRequest] = []
            batch.reserveCapacity(1_000)
            for index in 0..<entries {
                let source = "http://\(originHost):9/photo-\(index).jpg"
                let query =
                    "url=\(source.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? source)&w=32&format=jpeg"
                let request = try ThumbnailRequest(rawQuery: query, accept: nil)
                let key = VariantKey(source: request.source, spec: thumbnailer.normalized(request.spec))
                var bytes = Array("entry \(index) ".utf8)
                bytes += [UInt8](repeating: UInt8(ascii: "."), count: 64 - bytes.count)
                var entryMetadata = metadata
                entryMetadata.etag = "\"\(index)\""
                batch.append(.init(bytes: bytes, key: key.cacheKey, group: key.group, metadata: entryMetadata))
                if probeIndexes.contains(index) { probes.append(("/thumb?" + query, bytes)) }
                if batch.count == 1_000 || index == entries - 1 {
                    try cache.store(batch: batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            #expect(cache.statistics.currentEntries == entries)
            return probes
        }

        /// Builds and starts the whole service in this process (as `thumbd` does), checks `/ready`, and
        /// returns how long building and starting took.
        private static func timeServiceStart(_ settings: Settings) throws -> Duration {
            var settings = settings
            settings.log.level = .error
            let logger = Logger(label: "thumbd-restart") { _ in SwiftLogNoOpLogHandler() }
            let start = ContinuousClock.now
            let service = try ThumbdService(settings: settings, logger: logger)
            try service.start()
            let elapsed = ContinuousClock.now - start
            defer { service.shutdown() }
            let port = try #require(service.localAddresses.first?.port)
            let client = try RawHTTPClient(host: "127.0.0.1", port: port)
            try client.send(ThumbdChild.requestText("/ready"))
            #expect(try client.readResponse().status == 200)
            return elapsed
        }
    }
}

/// What a cache directory (`<cache.disk.path>/thumbnails` or `/sources`) holds, counted from outside.
struct CacheCensus: CustomStringConvertible {
    /// Files in `tmp/` (writes in progress when the process died).
    var temporaryFiles = 0
    /// Files under `blobs/`.
    var blobFiles = 0
    /// Index rows, when counted.
    var rows: Int?
    /// What a full reconcile run by the test removed (``reconciledInTest(_:)`` only).
    var orphanFilesRemoved = 0
    var missingBlobRowsRemoved = 0

    /// Counts the files; with `countRows`, also the index rows, from a copy of the index (database and
    /// WAL) opened by `DiskCache` in a scratch directory, so that the directory itself is left exactly
    /// as the crash left it for the next start.
    init(root: String, countRows: Bool = false) throws {
        temporaryFiles = Self.files(in: root + "/tmp").count
        blobFiles = Self.files(in: root + "/blobs").count
        guard countRows else { return }
        let scratch = try TempDirectory(prefix: "thumbd-index-copy")
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: root + "/index.sqlite" + suffix) {
            try FileManager.default.copyItem(
                atPath: root + "/index.sqlite" + suffix, toPath: scratch.path + "/index.sqlite" + suffix)
        }
        rows = try DiskCache(configuration: .init(directory: scratch.path)).statistics.currentEntries
    }

    /// Opens the directory with `DiskCache` (after counting its temp files, which opening removes) and runs
    /// one complete reconcile pass: anything it removes is something the service left behind.
    static func reconciledInTest(_ root: String) throws -> CacheCensus {
        var census = try CacheCensus(root: root)
        let cache = try DiskCache(configuration: .init(directory: root))
        let report = try cache.reconcile(maxDirectories: 4096)
        census.orphanFilesRemoved = report.orphanFilesRemoved
        census.missingBlobRowsRemoved = report.missingBlobRowsRemoved
        census.rows = cache.statistics.currentEntries
        census.blobFiles = files(in: root + "/blobs").count
        return census
    }

    /// Whether nothing is in `tmp/` and the blob count has not changed for one second: the writes are
    /// done and the reconcile pass, which runs whenever the disk thread is idle, has had its turn.
    static func isSettled(_ root: String) -> Bool {
        let count = files(in: root + "/blobs").count
        guard files(in: root + "/tmp").isEmpty else { return false }
        for _ in 0..<10 {
            usleep(100_000)
            if files(in: root + "/blobs").count != count { return false }
        }
        return true
    }

    /// Whether `directory` holds anything; cheap enough to poll every 100 µs.
    static func hasEntries(_ directory: String) -> Bool {
        guard let handle = opendir(directory) else { return false }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { return true }
        }
        return false
    }

    /// Every regular file under `directory`, recursively (none if it does not exist).
    static func files(in directory: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var files: [String] = []
        while let path = enumerator.nextObject() as? String {
            if (enumerator.fileAttributes?[.type] as? FileAttributeType) == .typeRegular { files.append(path) }
        }
        return files
    }

    var description: String {
        "tmp \(temporaryFiles), blobs \(blobFiles), rows \(rows.map(String.init) ?? "?")"
            + (orphanFilesRemoved + missingBlobRowsRemoved > 0
                ? ", reconcile removed \(orphanFilesRemoved) orphans and \(missingBlobRowsRemoved) rows" : "")
    }
}
