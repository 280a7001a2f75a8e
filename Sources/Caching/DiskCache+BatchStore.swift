// SPDX-License-Identifier: Apache-2.0

extension DiskCache {
    /// One blob to store with ``DiskCache/store(batch:)``.
    package struct StoreRequest: Sendable {
        /// The blob.
        package var bytes: [UInt8]
        /// Its variant key.
        package var key: CacheKey
        /// Its purge group.
        package var group: CacheGroup
        /// Its metadata.
        package var metadata: EntryMetadata

        /// Creates a request.
        package init(bytes: [UInt8], key: CacheKey, group: CacheGroup, metadata: EntryMetadata) {
            self.bytes = bytes
            self.key = key
            self.group = group
            self.metadata = metadata
        }
    }

    /// Stores several blobs with one sync and one index transaction. Writer only.
    ///
    /// Same crash guarantees as ``store(_:for:group:metadata:)``: every temp file is written, then made
    /// durable (one `syncfs`, or `fsync` each: ``Configuration/batchSync``), then each is renamed into
    /// place, then all rows are inserted in one `BEGIN IMMEDIATE` transaction. Per-file `fsync` costs
    /// 0.5–8 ms on ext4 (see `bench/`), which caps single stores at a few hundred to two thousand per
    /// second; the app's disk thread should drain its queue into batches. When two requests name the same key,
    /// the later one wins.
    /// - Returns: one outcome per request, in order.
    @discardableResult
    package func store(batch requests: [StoreRequest]) throws(CacheError) -> [StoreOutcome] {
        try withWriter { () throws(CacheError) in
            var outcomes = [StoreOutcome](repeating: .stored, count: requests.count)
            var lastIndexOfKey: [CacheKey: Int] = [:]
            for (i, request) in requests.enumerated() { lastIndexOfKey[request.key] = i }
            var accepted: [Int] = []
            for (i, request) in requests.enumerated() where lastIndexOfKey[request.key] == i {
                if request.bytes.count > configuration.effectiveMaxEntryBytes {
                    shared.rejections.add(1, ordering: .relaxed)
                    _ = try removeLocked(request.key)
                    outcomes[i] = .tooLarge
                } else {
                    accepted.append(i)
                }
            }
            // Chunks of at most half the budget, so room for a chunk exists once older entries are evicted.
            let chunkBytes = max(
                1,
                configuration.maxBytes - configuration.lowWatermarkBytes,
                configuration.maxBytes / 2
            )
            var start = 0
            while start < accepted.count {
                var end = start
                var bytes = 0
                while end < accepted.count
                    && (end == start || bytes + requests[accepted[end]].bytes.count <= chunkBytes)
                {
                    bytes += requests[accepted[end]].bytes.count
                    end += 1
                }
                try storeChunk(accepted[start..<end].map { requests[$0] }, totalBytes: bytes)
                start = end
            }
            return outcomes
        }
    }

    private func storeChunk(_ requests: [StoreRequest], totalBytes: Int) throws(CacheError) {
        try makeRoom(forBytes: totalBytes)
        let layout = shared.layout
        var written: [(temporary: String, blob: PreparedBlob)] = []
        written.reserveCapacity(requests.count)
        do throws(CacheError) {
            for request in requests {
                try withContiguousBytes(of: request.bytes) { (buffer) throws(CacheError) in
                    let blob = PreparedBlob(
                        key: request.key,
                        group: request.group,
                        metadata: request.metadata,
                        bytes: buffer
                    )
                    let temporary = layout.temporaryPath(ofBlob: blob.name)
                    try FileIO.writeNewFile(temporary, buffer, sync: configuration.batchSync == .eachFile)
                    written.append((temporary, blob))
                }
            }
            if configuration.batchSync == .fileSystem {
                try FileIO.syncFileSystem(containing: layout.temporaryDirectory)
            }
        } catch {
            for file in written { FileIO.removeBestEffort(file.temporary) }
            throw error
        }
        var placed: [PreparedBlob] = []
        placed.reserveCapacity(written.count)
        do throws(CacheError) {
            for file in written {
                try moveIntoPlace(file.temporary, file.blob)
                placed.append(file.blob)
            }
        } catch {
            for blob in placed { FileIO.removeBestEffort(layout.path(ofBlob: blob.name)) }
            for file in written.dropFirst(placed.count) { FileIO.removeBestEffort(file.temporary) }
            throw error
        }
        try indexStored(placed)
    }
}

/// A blob about to be indexed: its identity, a fresh file name, size and checksum.
struct PreparedBlob {
    let key: CacheKey
    let group: CacheGroup
    let metadata: DiskCache.EntryMetadata
    let name: String
    let size: Int
    let checksum: UInt64

    init(key: CacheKey, group: CacheGroup, metadata: DiskCache.EntryMetadata, bytes: UnsafeRawBufferPointer) {
        self.key = key
        self.group = group
        self.metadata = metadata
        self.name = BlobLayout.newFileName(keyHash: key.hash)
        self.size = bytes.count
        self.checksum = XXHash64.hash(bytes)
    }
}

/// `Array.withUnsafeBytes` with a typed error (the stdlib's is `rethrows`, which erases the type). Not named
/// `withUnsafeBytes(of:)`: the stdlib's global of that name would hand over the bytes of the array struct.
func withContiguousBytes<Result>(
    of bytes: [UInt8],
    _ body: (UnsafeRawBufferPointer) throws(CacheError) -> Result
) throws(CacheError) -> Result {
    var failure: CacheError?
    let result = bytes.withUnsafeBytes { buffer -> Result? in
        do throws(CacheError) {
            return try body(buffer)
        } catch {
            failure = error
            return nil
        }
    }
    if let failure { throw failure }
    return result!
}
