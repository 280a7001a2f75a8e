// SPDX-License-Identifier: Apache-2.0

extension DiskCache {
    /// Settings of one disk cache (`cache.disk.*` in the config file). Two caches (rendered variants,
    /// source originals) each get their own directory and budget.
    package struct Configuration: Sendable, Equatable {
        /// Root directory; created if missing (default `var/cache`, relative to the working directory).
        package var directory: String
        /// Byte budget for blob files (default 10 GiB). Never exceeded: a store evicts first.
        package var maxBytes: Int
        /// Largest blob kept; `nil` means `maxBytes / 10`.
        package var maxEntryBytes: Int?
        /// Eviction, once needed, goes down to this fraction of `maxBytes` (default 0.9), so it runs
        /// in occasional batches instead of on every store.
        package var lowWatermark: Double
        /// Rows deleted per eviction transaction (default 256).
        package var evictionBatchSize: Int
        /// How long a connection waits for a lock before failing with `SQLITE_BUSY` (default 5 s).
        /// Readers never wait on the writer in WAL mode; this covers checkpoints and recovery.
        package var busyTimeout: Duration
        /// Distinct keys whose hits are buffered between two ``DiskCache/flush()`` calls (default 65,536);
        /// further touches are dropped and counted.
        package var maxPendingTouches: Int
        /// Runs `PRAGMA quick_check` when opening (default true), so damage anywhere in the index file
        /// leads to the move-aside rebuild at startup instead of query errors later. Costs ~0.8 µs per
        /// entry with a warm page cache (80 ms at 100,000 entries); turn off only for huge indexes.
        package var verifiesIndexAtOpen: Bool
        /// How ``DiskCache/store(batch:)`` makes its blobs durable before renaming them (default `.fileSystem`).
        package var batchSync: BatchSync

        /// Creates a configuration; every parameter has the documented default.
        package init(
            directory: String = "var/cache",
            maxBytes: Int = 10 << 30,
            maxEntryBytes: Int? = nil,
            lowWatermark: Double = 0.9,
            evictionBatchSize: Int = 256,
            busyTimeout: Duration = .seconds(5),
            maxPendingTouches: Int = 65_536,
            verifiesIndexAtOpen: Bool = true,
            batchSync: BatchSync = .fileSystem
        ) {
            self.directory = directory
            self.maxBytes = maxBytes
            self.maxEntryBytes = maxEntryBytes
            self.lowWatermark = lowWatermark
            self.evictionBatchSize = evictionBatchSize
            self.busyTimeout = busyTimeout
            self.maxPendingTouches = maxPendingTouches
            self.verifiesIndexAtOpen = verifiesIndexAtOpen
            self.batchSync = batchSync
        }

        /// The per-blob limit in force: `maxEntryBytes` or `maxBytes / 10`.
        package var effectiveMaxEntryBytes: Int {
            min(maxEntryBytes ?? maxBytes / 10, maxBytes)
        }

        /// Bytes left after an eviction pass.
        var lowWatermarkBytes: Int {
            Int(Double(maxBytes) * lowWatermark)
        }

        /// Checks every setting.
        /// - Throws: ``ConfigurationError`` naming the first setting out of range.
        package func validate() throws(ConfigurationError) {
            guard !directory.isEmpty else { throw ConfigurationError(key: "directory", message: "must not be empty") }
            guard maxBytes > 0 else { throw ConfigurationError(key: "maxBytes", message: "must be positive") }
            if let maxEntryBytes, maxEntryBytes <= 0 {
                throw ConfigurationError(key: "maxEntryBytes", message: "must be positive")
            }
            guard lowWatermark > 0, lowWatermark <= 1 else {
                throw ConfigurationError(key: "lowWatermark", message: "must be in (0, 1]")
            }
            guard evictionBatchSize > 0 else {
                throw ConfigurationError(key: "evictionBatchSize", message: "must be positive")
            }
            guard busyTimeout >= .zero else {
                throw ConfigurationError(key: "busyTimeout", message: "must not be negative")
            }
            guard maxPendingTouches > 0 else {
                throw ConfigurationError(key: "maxPendingTouches", message: "must be positive")
            }
        }
    }

    /// How a batch of new blob files is made durable before the renames.
    package enum BatchSync: Sendable, Equatable {
        /// One `syncfs` for the whole batch: one journal commit instead of one per file (1.9–14× the store
        /// rate of per-file `fsync` on ext4, see `bench/`). It flushes every
        /// dirty page of the file system, so on a file system shared with heavy writers it waits for
        /// theirs too; then prefer `.eachFile`, or give the cache its own file system.
        case fileSystem
        /// `fsync` on each file, as single stores do; only the index transaction is shared.
        case eachFile
        /// No sync at all, for data that can be made again (a source's analysis): a power loss may leave a row
        /// whose blob is empty or torn, which the size and checksum every read into memory checks find (never
        /// served, deleted, made again). Spares the batch a journal commit of the file system: with a `syncfs` of
        /// their own, the sources' analysis records cost COLD about a percent of its CPU.
        case none
    }

    /// Counters and sizes of a ``DiskCache``; each field is read atomically, the set is not a single instant.
    package struct Statistics: Sendable, Equatable {
        /// Lookups that returned a blob.
        package var hits: Int
        /// Lookups that found no row (or a row for another variant with the same hash).
        package var misses: Int
        /// Blobs found with the wrong size or checksum; never served, deleted.
        package var corruptBlobs: Int
        /// Rows whose blob file was missing; never served, deleted.
        package var missingBlobs: Int
        /// Blobs written.
        package var stores: Int
        /// Stores refused because the blob was above the per-entry limit.
        package var rejections: Int
        /// Rows removed to stay within the budget.
        package var evictions: Int
        /// Hits whose last-access update was dropped because the touch buffer was full.
        package var touchesDropped: Int
        /// Sum of blob sizes in the index.
        package var currentBytes: Int
        /// Rows in the index.
        package var currentEntries: Int
        /// Budget in force.
        package var maxBytes: Int
    }
}
