// SPDX-License-Identifier: Apache-2.0
import Caching
import Crypto
import OriginFetch
import Thumbnailing

/// How a thumbnail or an original is written as an object of the shared tier and read back: the bytes as the
/// body, the content type as `Content-Type`, and in `x-amz-meta-thumbd-*` headers the SHA-256 of the bytes, the
/// freshness the node that stored it decided (times in milliseconds since the epoch, the origin's validators)
/// and a thumbnail's ETag. Any header missing or malformed makes the object unusable (a miss, overwritten).
enum SharedObject {
    /// The metadata of an object with `freshness` (and, for a thumbnail, its ETag and its source's
    /// `X-Thumbd-Placeholder` value, when it has one). Values S3 could not carry (not printable ASCII) are left
    /// out: an origin validator is then lost, never garbled.
    static func metadata(freshness: DiskCache.Freshness, etag: String?, placeholder: String? = nil)
        -> [(name: String, value: String)]
    {
        var fields: [(name: String, value: String)] = [
            ("thumbd-validated-at", String(freshness.validatedAt.millisecondsSinceEpoch))
        ]
        if let expiresAt = freshness.expiresAt {
            fields.append(("thumbd-expires-at", String(expiresAt.millisecondsSinceEpoch)))
        }
        if let until = freshness.staleIfErrorUntil {
            fields.append(("thumbd-stale-until", String(until.millisecondsSinceEpoch)))
        }
        if let value = freshness.originETag.flatMap(printable) { fields.append(("thumbd-origin-etag", value)) }
        if let value = freshness.originLastModified.flatMap(printable) {
            fields.append(("thumbd-origin-last-modified", value))
        }
        if let etag = etag.flatMap(printable) { fields.append(("thumbd-etag", etag)) }
        if let placeholder = placeholder.flatMap(printable) { fields.append(("thumbd-placeholder", placeholder)) }
        return fields
    }

    /// The freshness an object's metadata describes; nil when it is missing or malformed.
    static func freshness(of object: FetchedSource) -> DiskCache.Freshness? {
        let metadata = object.metadata
        func timestamp(_ name: String) -> Timestamp?? {
            guard let text = metadata[name] else { return .some(nil) }
            guard let value = Int64(text) else { return nil }
            return .some(Timestamp(millisecondsSinceEpoch: value))
        }
        guard let validated = timestamp("thumbd-validated-at"), let validatedAt = validated,
            let expiresAt = timestamp("thumbd-expires-at"), let staleUntil = timestamp("thumbd-stale-until")
        else { return nil }
        return DiskCache.Freshness(
            validatedAt: validatedAt, expiresAt: expiresAt, staleIfErrorUntil: staleUntil,
            originETag: metadata["thumbd-origin-etag"], originLastModified: metadata["thumbd-origin-last-modified"])
    }

    /// A thumbnail read back: its format from `Content-Type`, its ETag and freshness from the metadata.
    /// `placeholders` gives it its source's `X-Thumbd-Placeholder` when on.
    static func variant(
        from object: FetchedSource, url: SourceURL? = nil, placeholders: PlaceholderHeaders? = nil,
        tags: SourceTagHeaders? = nil
    ) -> RenderedVariant? {
        guard let type = object.contentType, let format = ImageFormat(mimeType: type),
            let etag = object.metadata["thumbd-etag"], let freshness = freshness(of: object)
        else { return nil }
        // The record kept here first (it may be newer than the storing node's), else the value the storing node
        // wrote beside the thumbnail: the placeholder of the very bytes it was rendered from.
        let placeholder =
            placeholders?.isOn == true
            ? url.flatMap { placeholders?.field(for: $0, freshness: freshness) }
                ?? object.metadata["thumbd-placeholder"].flatMap(PlaceholderHeaders.field(value:)) : nil
        return RenderedVariant(
            bytes: object.body, format: format, etag: etag, freshness: freshness, placeholder: placeholder,
            tag: url.flatMap { tags?.field(for: $0) })
    }

    /// An original read back, with headers that give it the freshness it was stored with (as the local source
    /// cache does), so thumbnails rendered from it keep the origin's deadlines.
    static func source(from object: FetchedSource, url: SourceURL, freshness: DiskCache.Freshness) -> FetchedSource? {
        FetchedSource(
            body: object.body, requestedURL: url.string, finalURL: url.string, status: 200,
            contentType: object.contentType, headers: FreshnessHeaders(equivalentTo: freshness, at: Timestamp.now()))
    }

    /// Whether the body's SHA-256 is the one the metadata names (a truncated or altered object is not).
    static func isIntact(_ object: FetchedSource) -> Bool {
        guard let expected = object.metadata["thumbd-sha256"] else { return false }
        return sha256Hex(object.body) == expected.lowercased()
    }

    /// Lower-case hex SHA-256.
    static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in SHA256.hash(data: bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// `value` when it is non-empty printable ASCII without surrounding spaces (what an S3 metadata header can
    /// carry unchanged); nil otherwise.
    static func printable(_ value: String) -> String? {
        guard !value.isEmpty, value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }), value.first != " ",
            value.last != " "
        else { return nil }
        return value
    }
}
