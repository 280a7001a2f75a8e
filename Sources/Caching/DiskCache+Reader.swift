// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// Lookups for one thread, on its own read-only SQLite connection.
    ///
    /// Confined to the thread that made it (``DiskCache/makeReader()``), checked in debug builds; not
    /// `Sendable`. A lookup runs one primary-key `SELECT` (never waiting for the writer, thanks to WAL),
    /// opens the blob and checks it. A hit's last-access update is buffered for the writer's next
    /// ``DiskCache/flush()`` instead of written here (one write transaction per hit is 10× slower).
    /// A missing or corrupt blob is never served: the reader deletes the blob itself (its name is unique
    /// to that row, so no newer entry is at risk) and leaves the row's deletion to the writer.
    package final class Reader {
        private let shared: DiskCacheShared
        private let database: SQLiteDatabase
        private let lookup: PreparedStatement
        #if DEBUG
            private let owner = pthread_self()
        #endif

        init(shared: DiskCacheShared) throws(CacheError) {
            self.shared = shared
            database = try SQLiteDatabase(
                path: shared.layout.databasePath,
                create: false,
                busyTimeout: shared.busyTimeout
            )
            // A guard, not a need: nothing here writes, and the writer owns all changes.
            try database.execute("PRAGMA query_only = 1")
            lookup = try PreparedStatement(
                database,
                sql: "SELECT \(SQLiteIndex.entryColumns) FROM entries WHERE key_hash = ?1"
            )
        }

        /// Looks `key` up and reads its blob fully, verifying size and checksum (for promotion to memory).
        /// - Throws: ``CacheError`` only for I/O or database failures; a bad blob is ``LookupResult/discarded(_:)``.
        package func read(_ key: CacheKey) throws(CacheError) -> LookupResult<BytesHit> {
            assertOwner()
            guard let row = try findRow(key) else { return .miss }
            let path = shared.layout.path(ofBlob: row.file)
            guard let fd = try FileIO.openForReading(path) else { return discardMissing(row) }
            defer { close(fd) }
            let actualSize = try FileIO.size(of: fd, path: path)
            guard actualSize == row.size else {
                return discardCorrupt(row, .sizeMismatch(expected: row.size, actual: actualSize))
            }
            guard let bytes = try FileIO.read(fd, count: row.size, path: path) else {
                return discardCorrupt(row, .sizeMismatch(expected: row.size, actual: -1))
            }
            guard XXHash64.hash(bytes) == row.checksum else { return discardCorrupt(row, .checksumMismatch) }
            shared.markVerified(row.file)
            recordHit(row)
            return .hit(BytesHit(entry: row.entry(for: key), bytes: bytes))
        }

        /// Looks `key` up and returns its blob as an open descriptor for `sendfile`.
        ///
        /// The size is checked with `fstat` on every call; the checksum once per blob per process
        /// (the first call reads the file, which also warms the page cache for the send). A blob whose
        /// bytes change on disk after that check is not detected: that is bit rot, not a crash effect,
        /// and ``read(_:)`` (used for promotion) still catches it.
        package func open(_ key: CacheKey) throws(CacheError) -> LookupResult<FileHit> {
            assertOwner()
            guard let row = try findRow(key) else { return .miss }
            let path = shared.layout.path(ofBlob: row.file)
            guard let fd = try FileIO.openForReading(path) else { return discardMissing(row) }
            do throws(CacheError) {
                let actualSize = try FileIO.size(of: fd, path: path)
                guard actualSize == row.size else {
                    close(fd)
                    return discardCorrupt(row, .sizeMismatch(expected: row.size, actual: actualSize))
                }
                if !shared.isVerified(row.file) {
                    guard let bytes = try FileIO.read(fd, count: row.size, path: path) else {
                        close(fd)
                        return discardCorrupt(row, .sizeMismatch(expected: row.size, actual: -1))
                    }
                    guard XXHash64.hash(bytes) == row.checksum else {
                        close(fd)
                        return discardCorrupt(row, .checksumMismatch)
                    }
                    shared.markVerified(row.file)
                }
            } catch {
                close(fd)
                throw error
            }
            recordHit(row)
            return .hit(FileHit(entry: row.entry(for: key), descriptor: fd))
        }

        // MARK: - Internals

        private func assertOwner() {
            #if DEBUG
                precondition(
                    pthread_equal(owner, pthread_self()) != 0, "DiskCache.Reader used off the thread that made it")
            #endif
        }

        /// The row for `key`, or `nil` (a miss, counted). A row for another variant with the same hash is a miss.
        private func findRow(_ key: CacheKey) throws(CacheError) -> Row? {
            defer { lookup.reset() }
            try lookup.bind(1, Int64(bitPattern: key.hash))
            guard try lookup.step(), lookup.text(0) == key.variant else {
                shared.misses.add(1, ordering: .relaxed)
                return nil
            }
            return Row(
                keyHash: Int64(bitPattern: key.hash),
                groupHash: UInt64(bitPattern: lookup.int64(1)),
                file: lookup.text(2) ?? "",
                size: Int(lookup.int64(3)),
                checksum: UInt64(bitPattern: lookup.int64(4)),
                metadata: EntryMetadata(
                    contentType: lookup.text(5) ?? "",
                    etag: lookup.text(6),
                    createdAt: Timestamp(millisecondsSinceEpoch: lookup.int64(7)),
                    freshness: Freshness(
                        validatedAt: Timestamp(millisecondsSinceEpoch: lookup.int64(8)),
                        expiresAt: lookup.optionalInt64(9).map(Timestamp.init(millisecondsSinceEpoch:)),
                        staleIfErrorUntil: lookup.optionalInt64(10).map(Timestamp.init(millisecondsSinceEpoch:)),
                        originETag: lookup.text(11),
                        originLastModified: lookup.text(12)
                    )
                )
            )
        }

        private func recordHit(_ row: Row) {
            shared.recordTouch(keyHash: row.keyHash)
            shared.hits.add(1, ordering: .relaxed)
        }

        private func discardMissing<Hit>(_ row: Row) -> LookupResult<Hit> {
            shared.recordDrop(keyHash: row.keyHash, file: row.file)
            shared.missingBlobs.add(1, ordering: .relaxed)
            return .discarded(.blobMissing)
        }

        /// Deletes the blob now (so no later lookup can serve it) and leaves the row to the writer.
        private func discardCorrupt<Hit>(_ row: Row, _ reason: DiscardReason) -> LookupResult<Hit> {
            FileIO.removeBestEffort(shared.layout.path(ofBlob: row.file))
            shared.recordDrop(keyHash: row.keyHash, file: row.file)
            shared.corruptBlobs.add(1, ordering: .relaxed)
            return .discarded(reason)
        }
    }

    /// One decoded index row.
    private struct Row {
        let keyHash: Int64
        let groupHash: UInt64
        let file: String
        let size: Int
        let checksum: UInt64
        let metadata: EntryMetadata

        func entry(for key: CacheKey) -> Entry {
            Entry(key: key, group: CacheGroup(hash: groupHash), sizeBytes: size, metadata: metadata)
        }
    }
}
