// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch

/// The source originals: the disk cache of fetched sources and the ones stored last, also kept in memory.
extension ThumbnailCache {
    /// The fresh original of `source` if it is among those stored last (memory only, any thread): what the
    /// fetcher reuses instead of starting a transfer (``OriginFetcher/fetch(_:reuse:completion:)``).
    func recentSource(_ source: SourceURL) -> FetchedSource? {
        guard let recent = recentSources?.value(forKey: Self.sourceKey(source)) else { return nil }
        let now = Timestamp.now()
        guard recent.freshness.state(at: now) == .fresh else { return nil }
        // Headers equivalent to the stored freshness (not the origin's own): a render from it gets the
        // original's deadlines, not new ones counted from now.
        return FetchedSource(
            body: recent.source.body, requestedURL: source.string, finalURL: source.string, status: 200,
            contentType: recent.source.contentType, headers: FreshnessHeaders(equivalentTo: recent.freshness, at: now))
    }

    /// Looks the fresh original of `source` up on a `disk-io` thread. Returns false when there is no
    /// source cache or the lookup queue is full (then `completion` is never called; fetch instead).
    /// A fresh original kept in memory answers at once, on the calling thread.
    func lookupSource(_ source: SourceURL, completion: @escaping @Sendable (FetchedSource?) -> Void) -> Bool {
        guard sources != nil, let readers else { return false }
        if let recent = recentSource(source) {
            completion(recent)
            return true
        }
        do {
            try readers.submit { [self] readers in
                completion(lookupSource(source, with: readers.sources))
            }
            return true
        } catch {
            return false
        }
    }

    private func lookupSource(_ source: SourceURL, with reader: DiskCache.Reader?) -> FetchedSource? {
        guard let reader else { return nil }
        do {
            switch try reader.read(Self.sourceKey(source)) {
            case .hit(let hit):
                let metadata = hit.entry.metadata
                let now = Timestamp.now()
                guard metadata.freshness.state(at: now) == .fresh else { return nil }
                return FetchedSource(
                    body: hit.bytes, requestedURL: source.string, finalURL: source.string, status: 200,
                    contentType: metadata.contentType,
                    headers: FreshnessHeaders(equivalentTo: metadata.freshness, at: now))
            case .miss:
                return nil
            case .discarded(let reason):
                logger.warning(
                    "source cache blob was missing or corrupt: dropped, will be fetched again",
                    metadata: ["source": "\(source)", "reason": "\(reason)"])
                return nil
            }
        } catch {
            logger.error("source cache lookup failed", metadata: ["source": "\(source)", "error": "\(error)"])
            return nil
        }
    }

    /// Keeps a fetched original (when there is a source cache). Any thread.
    /// The flights of several sizes that shared one fetch each hand the same source in: it is stored once.
    func storeSource(_ source: FetchedSource, url: SourceURL, freshness: DiskCache.Freshness) {
        guard let sources, let writer else { return }
        if let recent = recentSources?.value(forKey: Self.sourceKey(url)), recent.source === source { return }
        recentSources?.insert(
            RecentSource(source: source, freshness: freshness), forKey: Self.sourceKey(url), cost: source.body.count,
            group: CacheGroup(url.string))
        let metadata = DiskCache.EntryMetadata(
            contentType: source.contentType ?? "application/octet-stream", createdAt: Timestamp.now(),
            freshness: freshness)
        writer.store(
            .init(bytes: source.body, key: Self.sourceKey(url), group: CacheGroup(url.string), metadata: metadata),
            in: sources)
        recordForPurge(url, freshness: freshness)
    }

    /// The source cache's key of an original.
    static func sourceKey(_ source: SourceURL) -> CacheKey { CacheKey("src " + source.string) }
}
