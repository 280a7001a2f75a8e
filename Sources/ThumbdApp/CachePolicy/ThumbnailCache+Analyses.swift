// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch

/// The sources' analysis records (``SourceAnalyses``) on this node's disk: small JSON blobs in a disk cache of their
/// own (`<cache.disk.path>/analyses`, `cache.disk.analyses_max_bytes`), in the source's purge group, with the
/// freshness the source had, so that a restart keeps them.
extension ThumbnailCache {
    /// A record's bytes as the disk keeps them, with the freshness stored beside them.
    struct StoredAnalysis: Sendable {
        let bytes: [UInt8]
        let freshness: DiskCache.Freshness
    }

    /// Looks the record of `source` up on a `disk-io` thread, whatever its freshness. Returns false when there is no
    /// disk tier or the lookup queue is full (then `completion` is never called).
    func lookupAnalysis(_ source: SourceURL, completion: @escaping @Sendable (StoredAnalysis?) -> Void) -> Bool {
        guard analyses != nil, let readers else { return false }
        do {
            try readers.submit { [self] readers in
                guard let reader = readers.analyses else { return completion(nil) }
                switch try? reader.read(Self.analysisKey(source)) {
                case .hit(let hit):
                    completion(StoredAnalysis(bytes: hit.bytes, freshness: hit.entry.metadata.freshness))
                case .discarded(let reason):
                    logger.warning(
                        "analysis record was missing or corrupt: dropped, will be made again",
                        metadata: ["source": "\(source)", "reason": "\(reason)"])
                    completion(nil)
                case .miss, nil:
                    completion(nil)
                }
            }
            return true
        } catch {
            return false
        }
    }

    /// Keeps a record (a new one replaces the source's previous record). Any thread.
    func storeAnalysis(_ bytes: [UInt8], url: SourceURL, freshness: DiskCache.Freshness) {
        guard let analyses, let writer else { return }
        let metadata = DiskCache.EntryMetadata(
            contentType: "application/json", createdAt: Timestamp.now(), freshness: freshness)
        writer.store(
            .init(bytes: bytes, key: Self.analysisKey(url), group: CacheGroup(url.string), metadata: metadata),
            in: analyses)
    }

    /// The disk key of a source's record.
    static func analysisKey(_ source: SourceURL) -> CacheKey { CacheKey("analysis " + source.string) }
}
