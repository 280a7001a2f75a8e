// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import OriginFetch
import Thumbnailing

/// One thumbnail, rendered once and shared by every request that waited for it, and the value of the
/// memory tier. Immutable: a revalidation makes a new instance that shares the bytes.
final class RenderedVariant: Sendable {
    /// The encoded thumbnail.
    let bytes: [UInt8]
    /// Its format (the negotiated one under `format=auto`).
    let format: ImageFormat
    /// A strong validator: a hash of `bytes`, quoted.
    let etag: String
    /// How long it may be served from the cache; `nil` when the origin forbade storing it
    /// (`no-store`, `private`), so it is sent once and not kept.
    let freshness: DiskCache.Freshness?
    /// `Content-Type` and `ETag`, serialised once for every answer that sends this variant.
    let preparedFields: PreparedFields
    /// `freshness != nil`, kept apart so that asking does not copy the freshness.
    let isStorable: Bool

    /// - Parameter quality: the quality `max_bytes` settled on, sent as `X-Thumbd-Quality`. It rides in the ETag
    ///   (`"<hash>-q<quality>"`), so a variant read back from the disk tier answers with it too.
    /// - Parameter isSourceBytes: the bytes are the source's own (`raw`, `skip`): answered with
    ///   `X-Content-Type-Options: nosniff`, which rides in the ETag the same way (`"<hash>-src"`).
    /// - Parameter isFrameSkipped: the render left the plan's optional frame out (`frame_optional`): answered with
    ///   `X-Thumbd-Skipped-Filters: frame`, which rides in the ETag the same way (`"<hash>-noframe"`).
    /// - Parameter placeholder: `X-Thumbd-Placeholder` (``PlaceholderHeaders``), sent with every answer of it.
    init(
        bytes: [UInt8], format: ImageFormat, freshness: DiskCache.Freshness?, quality: Int? = nil,
        isSourceBytes: Bool = false, isFrameSkipped: Bool = false, placeholder: HTTPField? = nil,
        tag: HTTPField? = nil
    ) {
        self.bytes = bytes
        self.format = format
        etag = Self.etag(for: bytes, quality: quality, isSourceBytes: isSourceBytes, isFrameSkipped: isFrameSkipped)
        self.freshness = freshness
        isStorable = freshness != nil
        preparedFields = Self.preparedFields(format: format, etag: etag, placeholder: placeholder, tag: tag)
    }

    /// A variant whose ETag is already known (read back from the disk tier, or refreshed by a 304), and maybe
    /// its prepared fields (a held-open blob keeps them).
    init(
        bytes: [UInt8], format: ImageFormat, etag: String, freshness: DiskCache.Freshness?,
        preparedFields: PreparedFields? = nil, placeholder: HTTPField? = nil, tag: HTTPField? = nil
    ) {
        self.bytes = bytes
        self.format = format
        self.etag = etag
        self.freshness = freshness
        isStorable = freshness != nil
        self.preparedFields =
            preparedFields ?? Self.preparedFields(format: format, etag: etag, placeholder: placeholder, tag: tag)
    }

    /// The same thumbnail with new freshness (after the origin answered 304). Shares the bytes.
    func refreshed(_ freshness: DiskCache.Freshness) -> RenderedVariant {
        RenderedVariant(
            bytes: bytes, format: format, etag: etag, freshness: freshness, preparedFields: preparedFields)
    }

    /// The fields that depend on the thumbnail only, in the order answers send them.
    /// - Parameter tag: the source tag header (``SourceTagHeaders``), sent with every answer of it.
    static func preparedFields(
        format: ImageFormat, etag: String, placeholder: HTTPField? = nil, tag: HTTPField? = nil
    ) -> PreparedFields {
        var fields = [HTTPField(name: "Content-Type", value: format.mimeType), HTTPField(name: "ETag", value: etag)]
        fields += Self.fields(markedIn: etag)
        if let placeholder { fields.append(placeholder) }
        if let tag { fields.append(tag) }
        return PreparedFields(fields)
    }

    /// The lines an ETag's markers stand for, in the order answers send them: max_bytes's quality, the source's own
    /// bytes, a frame left out. Every answer of a variant sends them, with its prepared fields or without them.
    static func fields(markedIn etag: String) -> [HTTPField] {
        var fields: [HTTPField] = []
        if let quality = quality(inETag: etag) {
            fields.append(HTTPField(name: "X-Thumbd-Quality", value: String(quality)))
        }
        if isSourceBytes(etag: etag) {
            // Bytes thumbd did not write may be read as something else by a browser that sniffs (a polyglot file).
            fields.append(HTTPField(name: "X-Content-Type-Options", value: "nosniff"))
        }
        if isFrameSkipped(etag: etag) { fields.append(skippedFrameField) }
        return fields
    }

    /// Whether an ETag of ``etag(for:quality:isSourceBytes:)`` marks the source's own bytes.
    static func isSourceBytes(etag: String) -> Bool { etag.hasSuffix(sourceBytesMarker + "\"") }

    /// What ends the ETag of the source's own bytes, before the closing quote.
    private static let sourceBytesMarker = "-src"

    /// Whether an ETag of ``etag(for:quality:isSourceBytes:isFrameSkipped:)`` marks a render that left its optional
    /// frame out: the marker follows the quote and the 16 hex digits.
    static func isFrameSkipped(etag: String) -> Bool {
        etag.utf8.dropFirst(17).starts(with: frameSkippedMarker.utf8)
    }

    /// What follows the hash in the ETag of a render that left its optional frame out (before any `-q<quality>`,
    /// which ``quality(inETag:)`` reads after the last `-`).
    private static let frameSkippedMarker = "-noframe"

    /// The line a render that left its frame out is answered with, beside any the request's parse skipped (a second
    /// line of the same list field: docs/compatibility.md, "Skipped filters").
    private static let skippedFrameField = HTTPField(name: ThumbnailService.skippedFiltersField, value: "frame")

    /// The `max_bytes` quality carried by an ETag of ``etag(for:quality:)``, if any.
    static func quality(inETag etag: String) -> Int? {
        guard etag.hasSuffix("\""), let marker = etag.lastIndex(of: "-"),
            etag[etag.index(after: marker)...].hasPrefix("q")
        else { return nil }
        return Int(etag[etag.index(marker, offsetBy: 2)..<etag.index(before: etag.endIndex)])
    }

    /// Where the variant stands at `now`; `nil` when it may not be stored. Reads the freshness in place
    /// (binding it would copy, and retain, its validator strings on every hit).
    @inline(__always)
    func freshnessState(at now: Timestamp) -> FreshnessState? {
        freshness?.state(at: now)
    }

    /// `Age` at `now` (0 when it may not be stored).
    @inline(__always)
    func age(at now: Timestamp) -> Int {
        freshness?.age(at: now) ?? 0
    }

    /// `"<16 hex digits of XXH64 of the bytes>"` (then `-noframe` when the render left its optional frame out, then
    /// `-q<quality>` when `max_bytes` chose one, or `-src` for the source's own bytes): two different thumbnails of
    /// one URL colliding in 64 bits is not a practical concern, and XXH64 costs microseconds per thumbnail.
    static func etag(
        for bytes: [UInt8], quality: Int? = nil, isSourceBytes: Bool = false, isFrameSkipped: Bool = false
    ) -> String {
        let hash = XXHash64.hash(bytes, seed: 0)
        let hex = String(hash, radix: 16)
        let suffix =
            (isFrameSkipped ? frameSkippedMarker : "")
            + (quality.map { "-q\($0)" } ?? (isSourceBytes ? sourceBytesMarker : ""))
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + suffix + "\""
    }
}
