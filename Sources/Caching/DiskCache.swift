// SPDX-License-Identifier: Apache-2.0

import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The disk tier: blob files in sharded directories, indexed by SQLite (WAL), with a byte budget kept
/// by LRU eviction in batches.
///
/// **Threads.** Two kinds of callers:
/// - *The writer* (the app's single disk thread): ``store(_:for:group:metadata:)``, ``remove(_:)``,
///   ``purge(group:)``, ``updateFreshness(for:_:)``, ``flush()``, ``evictIfNeeded()``,
///   ``reconcile(maxDirectories:)``, ``setLimits(maxBytes:maxEntryBytes:)``. They share one SQLite
///   connection, so they must never run at the same time; a precondition traps if two threads overlap.
/// - *Readers*: each thread that looks up makes its own ``Reader`` (``makeReader()``) with its own
///   connection (1.4× faster than sharing one). In WAL mode readers never wait for the writer.
///   ``statistics`` may be read from anywhere.
///
/// **Crash safety.** A store writes `tmp/<name>.tmp`, `fsync`s it, renames it into `blobs/…`, and only
/// then inserts the index row. A crash leaves at worst a temp file (removed at the next open) or an
/// orphan blob (removed by ``reconcile(maxDirectories:)``). A lookup never serves a blob whose size or
/// checksum disagrees with its row; it deletes the blob, reports ``LookupResult/discarded(_:)`` and
/// counts it. The index is the truth: opening reads no directory and is O(1) in the entry count.
///
/// **Checksums** (XXH64) are verified on every ``Reader/read(_:)`` (the bytes are in hand anyway) and,
/// for ``Reader/open(_:)`` (sendfile), once per blob per process, plus an `fstat` size check on every
/// hit. A blob written by this process counts as verified.
///
/// ```swift
/// let cache = try DiskCache(configuration: .init(directory: "var/cache/variants"))
/// if let issue = cache.startupIssue { logger.error("\(issue)") }
/// try cache.store(bytes, for: key, group: CacheGroup(sourceURL), metadata: metadata)   // disk thread
/// let reader = try cache.makeReader()                                                    // per thread
/// if case .hit(let hit) = try reader.read(key) { promote(hit.bytes) }
/// ```
package final class DiskCache: @unchecked Sendable {
    // @unchecked Sendable: `index`, `configuration`, `reconcileCursor` and `existingLeaves` are used only
    // inside `withWriter`, whose atomic flag traps on overlapping callers; `shared` is Sendable.

    /// A problem that opening recovered from (the index was moved aside and rebuilt); the app logs it.
    package let startupIssue: CacheError?
    let shared: DiskCacheShared
    let index: SQLiteIndex
    var configuration: Configuration
    var reconcileCursor = 0
    var existingLeaves = Set<Int>()
    private let lockDescriptor: Int32
    private let writerBusy = Atomic<Bool>(false)

    /// Opens (creating if needed) the cache in `configuration.directory`.
    ///
    /// Removes temp files left by a crash. An index that cannot be opened, fails `PRAGMA quick_check`
    /// (``Configuration/verifiesIndexAtOpen``) or has an unknown schema is renamed to
    /// `index.sqlite.corrupt-<ms>` and replaced by an empty one; that is reported in ``startupIssue``,
    /// and the orphaned blobs go at the next ``reconcile(maxDirectories:)``. Reads no directory of blobs.
    /// If the index holds more than `maxBytes` (the budget shrank between runs), the next store or
    /// ``evictIfNeeded()`` evicts down to the low watermark.
    /// - Throws: ``CacheError/configuration(_:)``, ``CacheError/directoryInUse(path:)`` when another
    ///   instance has the directory, or ``CacheError/io(call:errno:path:)`` when it cannot be created.
    package init(configuration: Configuration) throws(CacheError) {
        do {
            try configuration.validate()
        } catch {
            throw .configuration(error)
        }
        let layout = BlobLayout(root: configuration.directory)
        try Self.makeDirectories(layout.root)
        try FileIO.makeDirectory(layout.temporaryDirectory)
        try FileIO.makeDirectory(layout.blobsDirectory)
        let lock = try Self.lockDirectory(layout)
        do {
            for name in try FileIO.listDirectory(layout.temporaryDirectory) ?? [] {
                try FileIO.removeFile("\(layout.temporaryDirectory)/\(name)")
            }
            let (index, totals, issue) = try Self.openIndex(
                layout,
                busyTimeout: configuration.busyTimeout,
                verify: configuration.verifiesIndexAtOpen
            )
            let shared = DiskCacheShared(
                layout: layout,
                busyTimeout: configuration.busyTimeout,
                maxPendingTouches: configuration.maxPendingTouches,
                maxBytes: configuration.maxBytes
            )
            shared.currentBytes.store(totals.bytes, ordering: .relaxed)
            shared.currentEntries.store(totals.entries, ordering: .relaxed)
            shared.advanceAccessStamp(past: totals.newestAccess)
            self.index = index
            self.shared = shared
            self.startupIssue = issue
            self.configuration = configuration
            self.lockDescriptor = lock
        } catch {
            close(lock)
            throw error
        }
    }

    deinit {
        // Closing the descriptor releases the flock.
        close(lockDescriptor)
    }

    /// A reader for the calling thread, with its own SQLite connection. Use it on this thread only
    /// (checked in debug builds). Thread-safe.
    package func makeReader() throws(CacheError) -> Reader {
        try Reader(shared: shared)
    }

    /// Counts a hit on `key` served without a lookup (from a blob the app still holds open) and buffers its
    /// last-access update for the next ``flush()``, like a ``Reader`` hit, so that eviction still sees it
    /// as recently used. Thread-safe and cheap (one short lock); no I/O.
    package func recordHit(_ key: CacheKey) {
        shared.recordTouch(keyHash: Int64(bitPattern: key.hash))
        shared.hits.add(1, ordering: .relaxed)
    }

    /// Current counters and sizes. Thread-safe.
    package var statistics: Statistics {
        Statistics(
            hits: shared.hits.load(ordering: .relaxed),
            misses: shared.misses.load(ordering: .relaxed),
            corruptBlobs: shared.corruptBlobs.load(ordering: .relaxed),
            missingBlobs: shared.missingBlobs.load(ordering: .relaxed),
            stores: shared.stores.load(ordering: .relaxed),
            rejections: shared.rejections.load(ordering: .relaxed),
            evictions: shared.evictions.load(ordering: .relaxed),
            touchesDropped: shared.touchesDropped.load(ordering: .relaxed),
            currentBytes: shared.currentBytes.load(ordering: .relaxed),
            currentEntries: shared.currentEntries.load(ordering: .relaxed),
            maxBytes: shared.maxBytes.load(ordering: .relaxed)
        )
    }

    // MARK: - Writer operations

    /// Stores (or replaces) the blob for `key`, evicting first if the budget requires. Writer only.
    ///
    /// Order: evict → temp file → `fsync` → `rename` → index row (`BEGIN IMMEDIATE`) → delete the
    /// replaced blob.
    /// - Returns: ``StoreOutcome/tooLarge`` (and removes any older entry for `key`) when the blob is
    ///   above the per-entry limit.
    @discardableResult
    package func store(
        _ bytes: [UInt8],
        for key: CacheKey,
        group: CacheGroup,
        metadata: EntryMetadata
    ) throws(CacheError) -> StoreOutcome {
        try withWriter { () throws(CacheError) in
            try withContiguousBytes(of: bytes) { (buffer) throws(CacheError) in
                try storeLocked(buffer, for: key, group: group, metadata: metadata)
            }
        }
    }

    /// Removes the entry for `key` (row, then blob). Writer only. Returns whether there was one.
    @discardableResult
    package func remove(_ key: CacheKey) throws(CacheError) -> Bool {
        try withWriter { () throws(CacheError) in try removeLocked(key) }
    }

    /// Removes every entry stored with `group` (every variant of one source) but `except`. Writer only.
    /// Returns how many entries were removed.
    @discardableResult
    package func purge(group: CacheGroup, except: CacheKey? = nil) throws(CacheError) -> Int {
        try withWriter { () throws(CacheError) in
            let removed = try index.transaction { () throws(CacheError) in
                try index.deleteGroup.bind(1, Int64(bitPattern: group.hash))
                try index.deleteGroup.bind(2, except.map { Int64(bitPattern: $0.hash) })
                return try index.collectFilesAndSizes(index.deleteGroup)
            }
            forgetRemoved(removed)
            return removed.count
        }
    }

    /// Replaces the freshness data of `key`'s entry without touching its blob (after a 304). Writer only.
    /// Returns whether the entry exists.
    @discardableResult
    package func updateFreshness(for key: CacheKey, _ freshness: Freshness) throws(CacheError) -> Bool {
        try withWriter { () throws(CacheError) in
            defer { index.updateFreshness.reset() }
            try index.updateFreshness.bind(1, Int64(bitPattern: key.hash))
            try index.updateFreshness.bind(2, key.variant)
            try index.updateFreshness.bind(3, freshness.validatedAt.millisecondsSinceEpoch)
            try index.updateFreshness.bind(4, freshness.expiresAt?.millisecondsSinceEpoch)
            try index.updateFreshness.bind(5, freshness.staleIfErrorUntil?.millisecondsSinceEpoch)
            try index.updateFreshness.bind(6, freshness.originETag)
            try index.updateFreshness.bind(7, freshness.originLastModified)
            try index.updateFreshness.run()
            return index.database.changes > 0
        }
    }

    /// Applies new limits (config hot reload) and evicts at once if the cache is now over budget. Writer only.
    /// - Parameter maxEntryBytes: `nil` for the default, `maxBytes / 10`.
    package func setLimits(maxBytes: Int, maxEntryBytes: Int? = nil) throws(CacheError) {
        var updated = configuration
        updated.maxBytes = maxBytes
        updated.maxEntryBytes = maxEntryBytes
        do {
            try updated.validate()
        } catch {
            throw .configuration(error)
        }
        try withWriter { () throws(CacheError) in
            configuration = updated
            shared.maxBytes.store(maxBytes, ordering: .relaxed)
            _ = try evictLocked(
                toBytes: shared.currentBytes.load(ordering: .relaxed) > maxBytes
                    ? configuration.lowWatermarkBytes : Int.max
            )
        }
    }

    // MARK: - Internals

    /// Runs a writer operation, trapping if another thread is inside one (the connection is not
    /// thread-safe, and overlapping would corrupt the counters).
    func withWriter<Result>(_ body: () throws(CacheError) -> Result) throws(CacheError) -> Result {
        let (acquired, _) = writerBusy.compareExchange(expected: false, desired: true, ordering: .acquiring)
        precondition(acquired, "DiskCache writer methods overlapped on two threads; confine them to the disk thread")
        defer { writerBusy.store(false, ordering: .releasing) }
        return try body()
    }

    private func storeLocked(
        _ bytes: UnsafeRawBufferPointer,
        for key: CacheKey,
        group: CacheGroup,
        metadata: EntryMetadata
    ) throws(CacheError) -> StoreOutcome {
        guard bytes.count <= configuration.effectiveMaxEntryBytes else {
            shared.rejections.add(1, ordering: .relaxed)
            _ = try removeLocked(key)
            return .tooLarge
        }
        try makeRoom(forBytes: bytes.count)
        let blob = PreparedBlob(key: key, group: group, metadata: metadata, bytes: bytes)
        let temporary = shared.layout.temporaryPath(ofBlob: blob.name)
        try FileIO.writeNewFile(temporary, bytes, sync: configuration.batchSync != .none)
        try moveIntoPlace(temporary, blob)
        try indexStored([blob])
        return .stored
    }

    /// Evicts so that `bytes` more fit: down to the low watermark, or lower if `bytes` needs it.
    func makeRoom(forBytes bytes: Int) throws(CacheError) {
        if shared.currentBytes.load(ordering: .relaxed) + bytes > configuration.maxBytes {
            _ = try evictLocked(toBytes: min(configuration.lowWatermarkBytes, configuration.maxBytes - bytes))
        }
    }

    /// Renames a written temp file into its leaf directory (created on first use); removes the temp
    /// file if that fails.
    func moveIntoPlace(_ temporary: String, _ blob: PreparedBlob) throws(CacheError) {
        let layout = shared.layout
        let final = layout.path(ofBlob: blob.name)
        let leaf = BlobLayout.leaf(ofKeyHash: blob.key.hash)
        var attempt = 0
        while true {
            do {
                if !existingLeaves.contains(leaf) {
                    try FileIO.makeDirectory(layout.topDirectory(ofLeaf: leaf))
                    try FileIO.makeDirectory(layout.leafDirectory(leaf))
                    existingLeaves.insert(leaf)
                }
                try FileIO.syscall("rename", path: final) { rename(temporary, final) }
                return
            } catch {
                // The leaf directory was removed behind our back: forget it, recreate it once.
                if case .io(_, ENOENT, _) = error, attempt == 0 {
                    existingLeaves.remove(leaf)
                    attempt += 1
                    continue
                }
                FileIO.removeBestEffort(temporary)
                throw error
            }
        }
    }

    /// Inserts (or replaces) the rows of blobs already in place, in one `BEGIN IMMEDIATE` transaction,
    /// then deletes the blobs they replaced and updates the counters. If the transaction fails, the new
    /// blobs are deleted.
    func indexStored(_ blobs: [PreparedBlob]) throws(CacheError) {
        let replaced: [(file: String, size: Int)?]
        do {
            replaced = try index.transaction { () throws(CacheError) in
                var replaced: [(file: String, size: Int)?] = []
                replaced.reserveCapacity(blobs.count)
                for blob in blobs {
                    replaced.append(try upsertRow(blob, lastAccess: shared.nextAccessStamp()))
                }
                return replaced
            }
        } catch {
            for blob in blobs { FileIO.removeBestEffort(shared.layout.path(ofBlob: blob.name)) }
            throw error
        }
        for (blob, old) in zip(blobs, replaced) {
            if let old {
                FileIO.removeBestEffort(shared.layout.path(ofBlob: old.file))
            } else {
                shared.currentEntries.add(1, ordering: .relaxed)
            }
            shared.currentBytes.add(blob.size - (old?.size ?? 0), ordering: .relaxed)
            shared.markVerified(blob.name)
        }
        shared.stores.add(blobs.count, ordering: .relaxed)
    }

    /// Reads the row being replaced (its blob must be deleted after commit) and writes the new one.
    private func upsertRow(_ blob: PreparedBlob, lastAccess: Int64) throws(CacheError) -> (file: String, size: Int)? {
        let keyHash = Int64(bitPattern: blob.key.hash)
        let old: (file: String, size: Int)?
        do {
            defer { index.selectExisting.reset() }
            try index.selectExisting.bind(1, keyHash)
            old =
                try index.selectExisting.step()
                ? (file: index.selectExisting.text(0) ?? "", size: Int(index.selectExisting.int64(1))) : nil
        }
        defer { index.upsert.reset() }
        let metadata = blob.metadata
        try index.upsert.bind(1, keyHash)
        try index.upsert.bind(2, blob.key.variant)
        try index.upsert.bind(3, Int64(bitPattern: blob.group.hash))
        try index.upsert.bind(4, blob.name)
        try index.upsert.bind(5, Int64(blob.size))
        try index.upsert.bind(6, Int64(bitPattern: blob.checksum))
        try index.upsert.bind(7, metadata.contentType)
        try index.upsert.bind(8, metadata.etag)
        try index.upsert.bind(9, metadata.createdAt.millisecondsSinceEpoch)
        try index.upsert.bind(10, metadata.freshness.validatedAt.millisecondsSinceEpoch)
        try index.upsert.bind(11, lastAccess)
        try index.upsert.bind(12, metadata.freshness.expiresAt?.millisecondsSinceEpoch)
        try index.upsert.bind(13, metadata.freshness.staleIfErrorUntil?.millisecondsSinceEpoch)
        try index.upsert.bind(14, metadata.freshness.originETag)
        try index.upsert.bind(15, metadata.freshness.originLastModified)
        try index.upsert.run()
        return old
    }

    func removeLocked(_ key: CacheKey) throws(CacheError) -> Bool {
        let removed = try index.transaction { () throws(CacheError) in
            try index.deleteKey.bind(1, Int64(bitPattern: key.hash))
            return try index.collectFilesAndSizes(index.deleteKey)
        }
        forgetRemoved(removed)
        return !removed.isEmpty
    }

    /// After rows are deleted (committed): delete their blobs and update the counters.
    func forgetRemoved(_ removed: [(file: String, size: Int)]) {
        for row in removed {
            FileIO.removeBestEffort(shared.layout.path(ofBlob: row.file))
            shared.currentBytes.add(-row.size, ordering: .relaxed)
            shared.currentEntries.add(-1, ordering: .relaxed)
        }
    }
}

extension SQLiteIndex {
    /// Steps a `… RETURNING file, size` statement to the end, collecting its rows, and resets it.
    func collectFilesAndSizes(
        _ statement: borrowing PreparedStatement
    ) throws(CacheError) -> [(file: String, size: Int)] {
        defer { statement.reset() }
        var rows: [(file: String, size: Int)] = []
        while try statement.step() {
            rows.append((statement.text(0) ?? "", Int(statement.int64(1))))
        }
        return rows
    }
}
