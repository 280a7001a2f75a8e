// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Glibc
import Thumbnailing

/// Disk-tier lookups on the `disk-io` threads, and (memory tier off) the blobs held open for `sendfile`.
extension ThumbnailCache {
    /// With the memory tier off: the blob of `key` if it is held open (a disk hit with no hop). Counts the hit
    /// and buffers its last-access update like a lookup would. Any thread; O(1).
    @inline(__always)
    func openBlobHit(_ key: VariantKey) -> CachedFile? {
        guard let openBlobs, let file = openBlobs.value(forKey: key.cacheKey) else { return nil }
        variants?.recordHit(key.cacheKey)
        return file
    }

    /// Forgets an open blob whose entry changed.
    func forgetOpenBlob(_ key: VariantKey) {
        guard let openBlobs else { return }
        openBlobsGeneration.withLock { generation in
            generation &+= 1
            openBlobs.removeValue(forKey: key.cacheKey)
        }
    }

    /// Looks `key` up on disk on a `disk-io` thread; `completion` runs there.
    /// - Throws: `Overloaded` when the lookup queue is full.
    func lookupDisk(_ key: VariantKey, completion: @escaping @Sendable (DiskLookup) -> Void) throws(WorkerPool
        .Overloaded)
    {
        guard let readers else {
            completion(.miss)
            return
        }
        try readers.submit { [self] readers in
            completion(lookup(key, with: readers.variants, analyses: readers.analyses))
        }
    }

    private func lookup(
        _ key: VariantKey, with reader: DiskCache.Reader?, analyses: DiskCache.Reader?
    ) -> DiskLookup {
        guard let reader else { return .miss }
        let generation = openBlobsGeneration.withLock { $0 }
        do {
            if let memory {
                switch try reader.read(key.cacheKey) {
                case .hit(let hit):
                    let metadata = hit.entry.metadata
                    guard let format = ImageFormat(mimeType: metadata.contentType) else { return .miss }
                    let variant = RenderedVariant(
                        bytes: hit.bytes, format: format, etag: metadata.etag ?? RenderedVariant.etag(for: hit.bytes),
                        freshness: metadata.freshness,
                        placeholder: placeholders.field(
                            for: key.source, freshness: metadata.freshness, disk: analyses),
                        tag: sourceTags.field(for: key.source))
                    memory.insert(variant, forKey: key.cacheKey, cost: hit.bytes.count, group: key.group)
                    return .variant(variant)
                case .miss:
                    return .miss
                case .discarded(let reason):
                    logDiscard(key, reason)
                    return .miss
                }
            }
            switch try reader.open(key.cacheKey) {
            case .hit(let hit):
                let metadata = hit.entry.metadata
                guard let format = ImageFormat(mimeType: metadata.contentType), let etag = metadata.etag else {
                    return .miss
                }
                Self.warmPageCache(hit.descriptor, size: hit.entry.sizeBytes)
                let file = CachedFile(
                    hit: hit, format: format, etag: etag, freshness: metadata.freshness,
                    placeholder: placeholders.field(for: key.source, freshness: metadata.freshness, disk: analyses),
                    tag: sourceTags.field(for: key.source))
                if let openBlobs {
                    openBlobsGeneration.withLock { current in
                        guard current == generation else { return }
                        openBlobs.insert(file, forKey: key.cacheKey, cost: hit.entry.sizeBytes, group: key.group)
                    }
                }
                return .file(file)
            case .miss:
                return .miss
            case .discarded(let reason):
                logDiscard(key, reason)
                return .miss
            }
        } catch {
            logger.error("disk cache lookup failed", metadata: ["key": "\(key.cacheKey)", "error": "\(error)"])
            return .miss
        }
    }

    /// Reads the blob once here, on the `disk-io` thread, so that the event loop's `sendfile` finds every
    /// page in the page cache and never waits for the disk (a cold file would otherwise stall the loop and
    /// every connection on it). The copy costs about a microsecond per 10 KB, less than one syscall.
    private static func warmPageCache(_ descriptor: Int32, size: Int) {
        let chunk = min(size, 64 << 10)
        guard chunk > 0 else { return }
        withUnsafeTemporaryAllocation(byteCount: chunk, alignment: 16) { buffer in
            var offset = 0
            while offset < size {
                let count = pread(descriptor, buffer.baseAddress, min(chunk, size - offset), off_t(offset))
                if count > 0 {
                    offset += count
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return  // the size was checked; a short file is caught by the send
                }
            }
        }
    }

    private func logDiscard(_ key: VariantKey, _ reason: DiskCache.DiscardReason) {
        logger.warning(
            "disk cache blob was missing or corrupt: dropped, will be rendered again",
            metadata: ["key": "\(key.cacheKey)", "reason": "\(reason)"])
    }
}
