// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension DiskCache {
    /// What the index stores about a blob besides its bytes.
    package struct EntryMetadata: Sendable, Equatable {
        /// `Content-Type` to serve the blob with.
        package var contentType: String
        /// The ETag thumbd sends to its clients for this variant.
        package var etag: String?
        /// When the entry was first stored (for diagnostics; `Age` uses `freshness.validatedAt`).
        package var createdAt: Timestamp
        /// Origin caching data; updated alone by ``DiskCache/updateFreshness(for:_:)`` on a 304.
        package var freshness: Freshness

        /// Creates metadata.
        package init(contentType: String, etag: String? = nil, createdAt: Timestamp, freshness: Freshness) {
            self.contentType = contentType
            self.etag = etag
            self.createdAt = createdAt
            self.freshness = freshness
        }
    }

    /// What stale-while-revalidate and stale-if-error need: deadlines and the origin's validators.
    package struct Freshness: Sendable, Equatable {
        /// When the origin last confirmed the content (first fetch or latest 304); `Age` counts from here.
        package var validatedAt: Timestamp
        /// Fresh until then; `nil` for no expiry.
        package var expiresAt: Timestamp?
        /// A stale entry may still be served while the origin fails, until then.
        package var staleIfErrorUntil: Timestamp?
        /// The origin's `ETag`, for `If-None-Match`.
        package var originETag: String?
        /// The origin's `Last-Modified`, verbatim, for `If-Modified-Since`.
        package var originLastModified: String?

        /// Creates freshness data.
        package init(
            validatedAt: Timestamp,
            expiresAt: Timestamp? = nil,
            staleIfErrorUntil: Timestamp? = nil,
            originETag: String? = nil,
            originLastModified: String? = nil
        ) {
            self.validatedAt = validatedAt
            self.expiresAt = expiresAt
            self.staleIfErrorUntil = staleIfErrorUntil
            self.originETag = originETag
            self.originLastModified = originLastModified
        }
    }

    /// An index row as a lookup returns it.
    package struct Entry: Sendable, Equatable {
        /// The key looked up (its variant matched the row's).
        package var key: CacheKey
        /// The purge group it was stored with.
        package var group: CacheGroup
        /// Blob size in bytes (checked against the file on every hit).
        package var sizeBytes: Int
        /// Stored metadata.
        package var metadata: EntryMetadata
    }

    /// A hit read fully into memory, checksum verified (for promotion to the memory tier).
    package struct BytesHit: Sendable {
        /// The index row.
        package let entry: Entry
        /// Exactly `entry.sizeBytes` bytes.
        package let bytes: [UInt8]
    }

    /// A hit as an open file, for `sendfile`. The descriptor is closed when this object is released,
    /// so keep it alive until the transfer is done. Its size was checked with `fstat`; its checksum
    /// was verified at least once by this process (see ``DiskCache/Reader/open(_:)``).
    package final class FileHit: Sendable {
        /// The index row.
        package let entry: Entry
        /// Read-only descriptor of the blob, owned by this object. Use offsets (`pread`, `sendfile`
        /// with an offset pointer): the file position is shared by everyone holding the object.
        package let descriptor: Int32

        init(entry: Entry, descriptor: Int32) {
            self.entry = entry
            self.descriptor = descriptor
        }

        deinit {
            close(descriptor)
        }
    }

    /// The answer to a lookup.
    package enum LookupResult<Hit: Sendable>: Sendable {
        /// The blob, verified.
        case hit(Hit)
        /// No entry.
        case miss
        /// There was an entry, but its blob was missing or corrupt. It was not served, the blob is
        /// deleted and its row goes at the writer's next ``DiskCache/flush()``. Treat as a miss; log it.
        case discarded(DiscardReason)

        /// The hit, or `nil` for a miss or a discarded entry.
        package var hit: Hit? {
            if case .hit(let hit) = self { hit } else { nil }
        }
    }

    /// Why an entry was discarded instead of served.
    package enum DiscardReason: Sendable, Equatable {
        /// The row's blob file does not exist (counted in ``Statistics/missingBlobs``).
        case blobMissing
        /// The file's size differs from the row's (counted in ``Statistics/corruptBlobs``).
        case sizeMismatch(expected: Int, actual: Int)
        /// The bytes do not match the stored checksum (counted in ``Statistics/corruptBlobs``).
        case checksumMismatch
    }

    /// The answer to a store.
    package enum StoreOutcome: Sendable, Equatable {
        /// Written and indexed.
        case stored
        /// Larger than the per-entry limit; nothing was written, and any previous entry for the key is removed.
        case tooLarge
    }

    /// What one ``DiskCache/reconcile(maxDirectories:)`` call did.
    package struct ReconcileReport: Sendable, Equatable {
        /// Leaf directories compared with the index in this call.
        package var directoriesScanned = 0
        /// Blob files without a row, deleted.
        package var orphanFilesRemoved = 0
        /// Rows without a blob file, deleted.
        package var missingBlobRowsRemoved = 0
        /// True when this call reached the last directory (the next call starts a new pass).
        package var isComplete = false

        /// An empty report, for summing several calls.
        package init() {}
    }
}
