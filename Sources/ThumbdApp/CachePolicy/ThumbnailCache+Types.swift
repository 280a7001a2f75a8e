// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import OriginFetch
import Thumbnailing
import URLForms

extension ThumbnailCache {
    /// The answer of a disk lookup.
    enum DiskLookup: Sendable {
        /// Read and verified (and promoted to the memory tier when it fits).
        case variant(RenderedVariant)
        /// An open blob for `sendfile` (memory tier off), with what the response needs.
        case file(CachedFile)
        /// Not on disk, or the blob was bad (logged, counted, deleted).
        case miss
    }

    /// What a raw request parsed to, and the generation of the signing keys (and rules) it was parsed under.
    /// A class, not a struct: a hit then retains one object shared by the event loops instead of each string
    /// of the key.
    final class Alias: Sendable {
        let key: VariantKey
        let keyGeneration: UInt64
        /// The client hints the parse consulted (the answer's `Vary`); empty when hints are off.
        let hintsUsed: ClientHints.Used
        /// What the request asked of its answer's headers (its deadline above all), nil when nothing: a repeated
        /// request answered without parsing must carry them too.
        let answer: AnswerOptions?

        init(
            key: VariantKey, keyGeneration: UInt64, hintsUsed: ClientHints.Used = [], answer: AnswerOptions? = nil
        ) {
            self.key = key
            self.keyGeneration = keyGeneration
            self.hintsUsed = hintsUsed
            self.answer = answer
        }
    }

    /// A disk hit kept as an open file.
    struct CachedFile: Sendable {
        let hit: DiskCache.FileHit
        let format: ImageFormat
        let etag: String
        let freshness: DiskCache.Freshness
        /// `Content-Type` and `ETag`, serialised once for every hit on this open blob.
        let preparedFields: PreparedFields

        init(
            hit: DiskCache.FileHit, format: ImageFormat, etag: String, freshness: DiskCache.Freshness,
            placeholder: HTTPField? = nil, tag: HTTPField? = nil
        ) {
            self.hit = hit
            self.format = format
            self.etag = etag
            self.freshness = freshness
            preparedFields = RenderedVariant.preparedFields(
                format: format, etag: etag, placeholder: placeholder, tag: tag)
        }
    }

    /// An origin 404 remembered for a while.
    final class NotFound: Sendable {
        let validatedAt: Timestamp
        let expiresAt: Timestamp
        init(validatedAt: Timestamp, expiresAt: Timestamp) {
            self.validatedAt = validatedAt
            self.expiresAt = expiresAt
        }
    }

    /// What a purge removed.
    struct PurgeReport: Sendable {
        var memoryEntries = 0
        var diskEntries = 0
        var sourceEntries = 0
        /// The source's analysis record on disk (0 or 1).
        var analysisEntries = 0
    }

    /// An original kept in memory beside the source cache, with the freshness it was stored with.
    final class RecentSource: Sendable {
        let source: FetchedSource
        let freshness: DiskCache.Freshness
        init(source: FetchedSource, freshness: DiskCache.Freshness) {
            self.source = source
            self.freshness = freshness
        }
    }
}
