// SPDX-License-Identifier: Apache-2.0

/// The `X-Cache` value of a /thumb answer.
enum CacheOutcome: String, Sendable {
    /// From the memory tier, fresh.
    case hitMemory = "HIT-MEMORY"
    /// From the disk tier, fresh.
    case hitDisk = "HIT-DISK"
    /// From the shared tier (`cache.shared`): rendered by another node, or by this one before its disk was lost.
    case hitShared = "HIT-SHARED"
    /// Rendered for this request.
    case miss = "MISS"
    /// Rendered for another request this one joined.
    case coalesced = "COALESCED"
    /// Expired, served while a background revalidation runs.
    case stale = "STALE"
    /// Expired past `stale_if_error`; the origin confirmed it (304) while this request waited.
    case revalidated = "REVALIDATED"
    /// The source failed, and the fallback image (`image.fallback`) was sent instead of the error.
    case fallback = "FALLBACK"
}
