// SPDX-License-Identifier: Apache-2.0
import Caching
package import OriginFetch
package import Thumbnailing
import URLForms

/// What identifies one thumbnail: the canonical source URL and the normalised spec (which carries
/// the negotiated set of accepted formats under `format=auto`). The key of render coalescing and of
/// both cache tiers (through ``cacheKey``).
package struct VariantKey: Hashable, Sendable {
    let source: SourceURL
    let spec: ThumbnailSpec
    /// The key of both cache tiers: ``description(source:spec:)`` hashed once.
    let cacheKey: CacheKey

    init(source: SourceURL, spec: ThumbnailSpec) {
        self.source = source
        self.spec = spec
        cacheKey = CacheKey(Self.description(source: source, spec: spec))
    }

    /// What a purge removes together: every variant of this key's source.
    var group: CacheGroup { CacheGroup(source.string) }

    /// Equal when the canonical descriptions are (which encode source and spec one to one).
    package static func == (lhs: VariantKey, rhs: VariantKey) -> Bool { lhs.cacheKey == rhs.cacheKey }

    /// Feeds the precomputed 64-bit hash only.
    package func hash(into hasher: inout Hasher) { hasher.combine(cacheKey.hash) }

    /// The key's text (``VariantKeyText/description(source:spec:)``, URLForms).
    @inline(__always)
    package static func description(source: SourceURL, spec: ThumbnailSpec) -> String {
        VariantKeyText.description(source: source, spec: spec)
    }
}
