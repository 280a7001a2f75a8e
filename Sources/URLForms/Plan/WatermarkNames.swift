// SPDX-License-Identifier: Apache-2.0
import OriginFetch
package import Thumbnailing

/// The named watermarks `wm=` may use, as the parsers see them: each name's digest, which goes into the variant key.
/// The app's `WatermarkSource` (which also fetches the bytes) is one; ``WatermarkDigests`` is the plain one. The
/// watermark descriptor (Thumbnailing) asks here for a name's digest and for a URL's canonical form, which need the
/// configuration and `SourceURL`'s rules.
package protocol WatermarkNames: WatermarkCatalog, Sendable {}

extension WatermarkNames {
    /// The canonical form of a `wm_url`: a source URL's, within the same length limit.
    package func canonicalURL(_ text: String) -> String? {
        guard text.utf8.count <= ThumbnailRequest.maxURLBytes, let url = try? SourceURL(text) else { return nil }
        return url.string
    }
}

extension WatermarkNames where Self == WatermarkDigests {
    /// No named watermarks (forms and tests that do not use them).
    package static var none: WatermarkDigests { WatermarkDigests.empty }
}

/// Named watermarks as a table of digests: none, or a stand-in name for checking a preset.
package struct WatermarkDigests: WatermarkNames {
    private let digests: [String: UInt64]

    /// No named watermarks.
    package static let empty = WatermarkDigests([:])

    /// The watermarks by name, with the digests of their bytes.
    package init(_ digests: [String: UInt64]) {
        self.digests = digests
    }

    /// A catalog that knows `name` (with no bytes): for checking a preset's other parameters.
    package static func standIn(named name: String) -> WatermarkDigests {
        WatermarkDigests([name: 0])
    }

    /// Stand-ins for every one of `names`.
    package static func standIns(named names: some Sequence<String>) -> WatermarkDigests {
        WatermarkDigests(Dictionary(names.map { ($0, 0) }) { first, _ in first })
    }

    /// The digest of the named watermark, `nil` when there is none by that name (the parser's check).
    package func digest(named name: String) -> UInt64? { digests[name] }
}
