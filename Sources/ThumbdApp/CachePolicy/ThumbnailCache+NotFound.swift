// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch

/// The memory of origin 404 and 410 answers per source, kept `cache.negative_ttl`.
extension ThumbnailCache {
    /// The remembered 404 for `source`, if it is younger than `cache.negative_ttl`.
    func notFoundHit(_ source: SourceURL, now: Timestamp) -> NotFound? {
        guard negativeTTL > .zero else { return nil }
        let key = Self.notFoundKey(source)
        guard let entry = notFound.value(forKey: key) else { return nil }
        guard now < entry.expiresAt else {
            notFound.removeValue(forKey: key)
            return nil
        }
        return entry
    }

    /// Remembers that the origin answered 404 or 410 for `source`.
    func rememberNotFound(_ source: SourceURL) {
        guard negativeTTL > .zero else { return }
        let now = Timestamp.now()
        let key = Self.notFoundKey(source)
        notFound.insert(
            NotFound(validatedAt: now, expiresAt: now.advanced(by: negativeTTL)), forKey: key,
            cost: 64 + key.variant.utf8.count, group: CacheGroup(source.string))
    }

    private static func notFoundKey(_ source: SourceURL) -> CacheKey { CacheKey("404 " + source.string) }
}
