// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch

/// Where a cached entry stands in its life.
enum FreshnessState: Sendable, Equatable {
    /// Serve it.
    case fresh
    /// Expired but within `stale_if_error`: serve it at once and revalidate in the background.
    case stale
    /// Past `stale_if_error`: the request waits for a revalidation.
    case expired
}

extension DiskCache.Freshness {
    /// The state at `now`.
    func state(at now: Timestamp) -> FreshnessState {
        guard let expiresAt, now >= expiresAt else { return .fresh }
        if let staleIfErrorUntil, now < staleIfErrorUntil { return .stale }
        return .expired
    }

    /// Whole seconds since the origin last confirmed the content, for the `Age` header.
    func age(at now: Timestamp) -> Int {
        max(0, Int((now.millisecondsSinceEpoch - validatedAt.millisecondsSinceEpoch) / 1000))
    }
}

extension FreshnessHeaders {
    /// Headers that make ``FreshnessPolicy`` give back `freshness` (for a source read from the source
    /// cache, so the thumbnails rendered from it keep the source's deadlines and validators).
    init(equivalentTo freshness: DiskCache.Freshness, at now: Timestamp) {
        let lifetime = freshness.expiresAt.map {
            max(0, ($0.millisecondsSinceEpoch - freshness.validatedAt.millisecondsSinceEpoch) / 1000)
        }
        self.init(
            cacheControl: lifetime.map { "max-age=\($0)" }, age: String(freshness.age(at: now)),
            etag: freshness.originETag, lastModified: freshness.originLastModified)
    }
}
