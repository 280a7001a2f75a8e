// SPDX-License-Identifier: Apache-2.0
import Thumbnailing

/// What a request asks of its answer's headers rather than of the picture: a deadline (imgproxy's `expires`,
/// `/thumb`'s `expires`), a `Cache-Control` lifetime (thumbor's `max_age`, `/thumb`'s `max_age`) and a
/// `Content-Disposition` (imgproxy's `filename` and `return_attachment`, `/thumb`'s `filename` and `attachment`).
///
/// None of it is part of the variant key (``VariantKeyText`` reads only the source and the spec): the same picture
/// asked with and without them is one cache entry, one fetch and one render. The app remembers them with the
/// request's alias and in the hot set's copy, which answer a repeated target without parsing it
/// (docs/architecture.md, "The front door").
package struct AnswerOptions: Hashable, Sendable {
    /// The deadline, in seconds since the epoch: from then on the URL is answered 404 (imgproxy's "Expired URL").
    package var expiresAt: Int64?
    /// The answer's `Cache-Control` lifetime in seconds, in place of `cache.client_max_age`; 0 sends `no-cache`.
    package var maxAge: Int?
    /// The name `Content-Disposition` gives the file, without its extension (the answer's format gives it).
    package var filename: String?
    /// `Content-Disposition: attachment` (true) or `inline`.
    package var attachment: Bool?
    /// The name `Content-Disposition` falls back on without a `filename`: the source path's last segment, without
    /// its extension (set when the request is built, only when a disposition is asked).
    package var sourceStem: String?
    /// Operator tags (`tags=`): sent after the source's own tag in the source tag header (`cache.tag_header`), and
    /// recorded in the purge index, so that `POST /purge` by one of them finds the source.
    package var tags: [String]?
    /// thumbor's form: the filters thumbor itself would skip, by name (`X-Thumbd-Skipped-Filters`); nil when none.
    package var skippedFilters: String?

    /// Nothing asked: the answer's headers are thumbd's usual ones.
    package init() {}

    /// Whether nothing is asked (the usual answer, whose headers the hit path copies ready-made).
    package var isEmpty: Bool {
        expiresAt == nil && maxAge == nil && !hasDisposition && skippedFilters == nil && tags == nil
    }

    /// The most operator tags a request carries.
    package static let tagLimit = 8

    /// Why `tag` cannot be an operator tag, or nil: 1 to 64 bytes of `A-Z a-z 0-9 - _ . :` (what `POST /purge` and
    /// the shipped VCL take), and not of a source tag's shape (`s` and 16 hex digits), so that no request can add
    /// its source to another source's tag.
    package static func tagRefusal(_ tag: String) -> String? {
        guard !tag.isEmpty, tag.utf8.count <= 64 else { return "each tag must be 1...64 bytes" }
        guard
            tag.utf8.allSatisfy({ byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || "-_.:".utf8.contains(byte)
            })
        else { return "tags are made of A-Z a-z 0-9 - _ . :" }
        let bytes = Array(tag.utf8)
        if bytes.count == 17, bytes[0] == UInt8(ascii: "s"),
            bytes.dropFirst().allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        {
            return "\"\(tag)\" has the shape of a source tag (s and 16 hex digits)"
        }
        return nil
    }

    /// The longest `max_age` accepted, in seconds (one year, what RFC 9111 calls a long freshness lifetime).
    package static let maxAgeLimit = 31_536_000
    /// The longest `filename` accepted, in UTF-8 bytes.
    package static let filenameLimit = 255

    // MARK: - Content-Disposition

    /// Whether the answer carries `Content-Disposition` (only when a filename or the attachment flag is asked:
    /// thumbd's usual answer has none).
    package var hasDisposition: Bool { filename != nil || attachment != nil }

    /// The `Content-Disposition` value (RFC 6266): `inline` or `attachment`, a `filename` parameter in plain ASCII
    /// (every other character `_`) and, when the name is not plain ASCII, a `filename*` parameter with its UTF-8
    /// percent-encoded (RFC 8187, formerly 5987). The stem is `filename` or ``sourceStem``, `image` when neither
    /// leaves anything; quotes, backslashes, slashes and control characters are removed first, so no name can end
    /// the parameter, climb a directory or split the header.
    /// - Parameter fileExtension: the answer's format's extension (`jpg`, `webp`, …), without the dot.
    package func contentDisposition(fileExtension: String) -> String {
        var stem = filename.map(Self.cleaned) ?? ""
        if stem.isEmpty { stem = sourceStem.map(Self.cleaned) ?? "" }
        if stem.isEmpty { stem = "image" }
        let name = stem + "." + fileExtension
        var value = attachment == true ? "attachment; filename=\"" : "inline; filename=\""
        var isASCII = true
        for scalar in name.unicodeScalars {
            if scalar.isASCII {
                value.unicodeScalars.append(scalar)
            } else {
                isASCII = false
                value += "_"
            }
        }
        value += "\""
        if !isASCII {
            value += "; filename*=UTF-8''"
            for byte in name.utf8 {
                if Self.isAttributeCharacter(byte) {
                    value.unicodeScalars.append(Unicode.Scalar(byte))
                } else {
                    value += "%" + Self.hexDigits[Int(byte >> 4)] + Self.hexDigits[Int(byte & 0xF)]
                }
            }
        }
        return value
    }

    /// `text` without what a filename must not carry: control characters (C0, DEL, C1), `"`, `\`, `/`, and the
    /// dots and spaces at its ends (`..` is no name); cut to ``filenameLimit`` bytes of whole scalars.
    private static func cleaned(_ text: some StringProtocol) -> String {
        var kept = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars
        where scalar.properties.generalCategory != .control && scalar != "\"" && scalar != "\\" && scalar != "/" {
            bytes += UTF8.width(scalar)
            guard bytes <= filenameLimit else { break }
            kept.append(scalar)
        }
        var name = Substring(String(kept))
        while let first = name.first, first == "." || first == " " { name = name.dropFirst() }
        while let last = name.last, last == "." || last == " " { name = name.dropLast() }
        return String(name)
    }

    /// RFC 8187's `attr-char`: what a `filename*` value carries unencoded.
    private static func isAttributeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default:
            "!#$&+-.^_`|~".utf8.contains(byte)
        }
    }

    private static let hexDigits = (0..<16).map { String($0, radix: 16, uppercase: true) }

    /// The last segment of an absolute URL's path, percent-decoded, without its extension (`""` when none).
    package static func stem(ofURL url: String) -> String {
        guard let scheme = url.range(of: "://") else { return "" }
        let rest = url[scheme.upperBound...]
        guard let slash = rest.firstIndex(of: "/") else { return "" }
        let path = rest[slash...].prefix { $0 != "?" && $0 != "#" }
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        var stem = QueryParameters.percentDecode(last.utf8) ?? last
        if let dot = stem.lastIndex(of: "."), dot != stem.startIndex { stem = String(stem[..<dot]) }
        return stem
    }

    // MARK: - Parsing

    /// A deadline as written: digits only, at most 12 (seconds since the epoch).
    package static func deadline(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 12, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int64(text)
    }
}

extension ThumbnailRequest {
    /// The answer options of the plan's values, their ranges checked (the deadline's form is the parser's).
    static func answerOptions(_ values: PlanValues, source: String) throws(RequestError) -> AnswerOptions {
        var answer = AnswerOptions()
        if let deadline = values.expires {
            guard deadline > 0 else { throw .invalidValue("expires", reason: "must be a unix time in seconds") }
            answer.expiresAt = deadline
        }
        if let maxAge = values.maxAge {
            guard (0...AnswerOptions.maxAgeLimit).contains(maxAge) else {
                throw .invalidValue("max_age", reason: "must be a whole number of seconds 0...31536000")
            }
            answer.maxAge = maxAge
        }
        if let filename = values.filename {
            guard !filename.isEmpty, filename.utf8.count <= AnswerOptions.filenameLimit else {
                throw .invalidValue("filename", reason: "must be 1...255 bytes")
            }
            answer.filename = filename
        }
        answer.attachment = values.attachment
        if let tags = values.tags {
            guard tags.count <= AnswerOptions.tagLimit else {
                throw .invalidValue("tags", reason: "at most \(AnswerOptions.tagLimit) tags, comma-separated")
            }
            for tag in tags {
                if let refusal = AnswerOptions.tagRefusal(tag) { throw .invalidValue("tags", reason: refusal) }
            }
            var unique: [String] = []
            for tag in tags where !unique.contains(tag) { unique.append(tag) }
            answer.tags = unique
        }
        if answer.hasDisposition && answer.filename == nil { answer.sourceStem = AnswerOptions.stem(ofURL: source) }
        return answer
    }
}
