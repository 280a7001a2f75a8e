// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import OriginFetch
import Synchronization
import Thumbnailing

/// `X-Thumbd-Placeholder` (`image.placeholder_header`): the BlurHash and average colour of a thumbnail's source, from
/// the source's analysis record (``SourceAnalyses``), put in the variant's prepared fields once, when the variant is
/// made or read back from a tier below memory — never looked up per hit.
///
/// A variant read back (disk, shared tier) gets the record kept in memory, else (disk) the one on this node's disk,
/// read on the same `disk-io` thread, and only when the record's source validators (`ETag`, `Last-Modified`) are the
/// variant's: a record of other bytes is never used; without a record, no header.
final class PlaceholderHeaders: Sendable {
    /// The field's name.
    static let name = "X-Thumbd-Placeholder"

    /// Weak: the analyses hold the cache and the shared tier, which hold this.
    private struct Link: Sendable {
        weak var analyses: SourceAnalyses?
    }

    private let link = Mutex(Link())

    init() {}

    /// Turns the header on (the service's start, `image.placeholder_header`).
    func connect(_ analyses: SourceAnalyses) { link.withLock { $0.analyses = analyses } }

    /// Whether the header is on.
    var isOn: Bool { link.withLock { $0.analyses != nil } }

    /// The header's value among a variant's prepared fields (for the shared tier's object metadata), if it has one.
    static func value(in fields: PreparedFields) -> String? { fields.value(named: name) }

    /// The field of a value read back from the shared tier, if it has the header's shape (`blurhash="…",
    /// colour="#rrggbb"`, printable ASCII): anything else is dropped, never sent.
    static func field(value: String) -> HTTPField? {
        let bytes = Array(value.utf8)
        guard value.hasPrefix("blurhash=\""), value.contains("\", colour=\"#"), value.hasSuffix("\""),
            bytes.count <= 256,
            bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x5C })
        else { return nil }
        return HTTPField(name: name, value: value)
    }

    /// The field of a variant of `url` read back with `freshness`, from the record kept in memory, else the one
    /// `disk` holds (read on this thread: call on a `disk-io` thread); `nil` when off, without a matching record.
    func field(for url: SourceURL, freshness: DiskCache.Freshness?, disk: DiskCache.Reader? = nil) -> HTTPField? {
        guard let analyses = link.withLock({ $0.analyses }), let freshness else { return nil }
        if let kept = analyses.kept(url) { return Self.field(kept, matching: freshness) }
        guard let disk, case .hit(let hit)? = try? disk.read(ThumbnailCache.analysisKey(url)),
            let kept = analyses.decode(hit.bytes, freshness: hit.entry.metadata.freshness, url: url)
        else { return nil }
        return Self.field(kept, matching: freshness)
    }

    /// The field of `kept` when it describes the bytes a variant with `freshness` was made from, as far as the
    /// origin's validators tell.
    static func field(_ kept: SourceAnalyses.Kept, matching freshness: DiskCache.Freshness) -> HTTPField? {
        guard let own = kept.freshness, own.originETag == freshness.originETag,
            own.originLastModified == freshness.originLastModified
        else { return nil }
        return field(kept.record)
    }

    /// `blurhash="<BlurHash>", colour="#rrggbb"`: an RFC 8941 dictionary of strings (base83 has no `"` or `\`).
    static func field(_ record: SourceAnalyses.Record) -> HTTPField? {
        let hash = record.analysis.blurhash
        guard !hash.isEmpty, hash.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) else {
            return nil
        }
        return HTTPField(
            name: name, value: "blurhash=\"" + hash + "\", colour=\"" + record.analysis.average.hex + "\"")
    }
}

extension IntermediateCache {
    /// With `image.placeholder_header` on, on a render thread before the answer: the source's analysis record (kept
    /// for these bytes, else made from the intermediate the render went through, else from the source's 512 px
    /// intermediate) and its `X-Thumbd-Placeholder`; `nil` when off or when the analysis fails (no header then).
    func placeholder(
        of source: [UInt8], url: SourceURL, freshness: DiskCache.Freshness?, thumbnailer: Thumbnailer,
        from analysable: Analysable?
    ) -> HTTPField? {
        guard analyses?.makesPlaceholders == true else { return nil }
        let record = try? analysis(
            of: source, url: url, digest: analysable?.digest, freshness: freshness, thumbnailer: thumbnailer,
            given: analysable?.image)
        return record.flatMap { PlaceholderHeaders.field($0) }
    }
}
