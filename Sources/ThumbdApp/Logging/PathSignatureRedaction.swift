// SPDX-License-Identifier: Apache-2.0
import URLForms

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the secrets of thumbor's and imgproxy's URLs out of the access log and /status. In those forms the URL's
/// signature is the path's first segment after the form's prefix (after `info/` for imgproxy's info), not a `sig=`
/// parameter; and a source or watermark URL written into the path carries its own query, whose secret values
/// (``LoggingRedaction/secretParameters``: a presigned URL's signature, a token) must go too, whether the URL is
/// percent-encoded (thumbor's image, imgproxy's `plain/`, thumbor's `watermark()`) or base64url (imgproxy's source
/// and `wmu:`). A logged signature is as good as the key for the URL it signs.
///
/// Every answer on a form's route is rewritten: thumbnails, thumbor's `meta/`, imgproxy's `info/`, and errors
/// alike. Only the paths of the other routes are left as they are: with a form mounted at `/`, `/prefetch/<id>` or
/// `/health` is not a form's URL (``init(_:otherRoutes:)``). `unsafe` is not a secret and stays.
struct PathSignatureRedaction: Sendable {
    /// Which grammar a mounted form's paths follow.
    enum Form: Sendable {
        /// `/<signature>/[options/]<image>`, the image and `watermark()`'s URL percent-encoded or plain.
        case thumbor
        /// `/[info/]<signature>/<options>/(plain/<url>|<base64url>)`, `wmu:`'s URL in base64url.
        case imgproxy
    }

    /// One mounted form: its prefix and grammar.
    struct Mount: Sendable {
        let prefix: String
        let form: Form
        /// The other routes under this prefix (exact paths and path prefixes), whose paths are not this form's.
        fileprivate var exactRoutes: [String] = []
        fileprivate var prefixRoutes: [String] = []

        init(prefix: String, form: Form) {
            self.prefix = prefix
            self.form = form
        }
    }

    private let mounts: [Mount]

    /// - Parameters:
    ///   - mounts: the mounted forms.
    ///   - otherRoutes: the exact paths and path prefixes of every other route (the router tries them before the
    ///     forms): a path among them is left as it is.
    init(_ mounts: [Mount], otherRoutes: (exact: [String], prefixes: [String]) = ([], [])) {
        // The longer prefix first, as the router tries them; each keeps only the other routes under it, so a form
        // at `/thumbor/` compares nothing more on its hits.
        self.mounts = mounts.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }.map { mount in
            var mount = mount
            mount.exactRoutes = otherRoutes.exact.filter { $0.hasPrefix(mount.prefix) }
            mount.prefixRoutes = otherRoutes.prefixes.filter { $0.hasPrefix(mount.prefix) && $0 != mount.prefix }
            return mount
        }
    }

    /// Whether any form is mounted (else there is nothing to redact).
    var isActive: Bool { !mounts.isEmpty }

    /// `path` with its secrets replaced by `REDACTED` when it is a form's; else `path` itself.
    /// Runs for every answer (it feeds /status even with the access log off), so it scans the bytes: Character
    /// indexing of the path cost each thumbor-form hit about 2,000 instructions (`bench/hit-instructions.sh`).
    func redacted(_ path: String) -> String {
        guard !mounts.isEmpty else { return path }
        let ranges: [Range<Int>] = LoggingText.withUTF8(path) { bytes in
            guard let mount = mounts.first(where: { Self.has($0.prefix, in: bytes, at: 0) }),
                !mount.isOtherRoute(bytes)
            else { return [] }
            return Self.secretRanges(in: bytes, mount: mount)
        }
        guard !ranges.isEmpty else { return path }
        // Every range starts and ends at an ASCII byte (a separator or an escape), so each is a character
        // boundary and what is kept stays valid UTF-8.
        var redacted: [UInt8] = []
        redacted.reserveCapacity(path.utf8.count)
        LoggingText.withUTF8(path) { bytes in
            var kept = 0
            for range in ranges {
                redacted.append(contentsOf: bytes[kept..<range.lowerBound])
                redacted.append(contentsOf: LoggingRedaction.placeholder.utf8)
                kept = range.upperBound
            }
            redacted.append(contentsOf: bytes[kept...])
        }
        return String(decoding: redacted, as: UTF8.self)
    }

    // MARK: - Where the secrets are

    /// The byte ranges of `bytes` (a path under `mount`) to replace, in order and apart.
    private static func secretRanges(in bytes: UnsafeBufferPointer<UInt8>, mount: Mount) -> [Range<Int>] {
        var start = mount.prefix.utf8.count
        if mount.form == .imgproxy, has("info/", in: bytes, at: start) { start += 5 }
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) else { return [] }
        var ranges: [Range<Int>] = []
        if start < end, end - start != 6 || !has("unsafe", in: bytes, at: start) {
            ranges.append(start..<end)
        }
        let rest = (end + 1)..<bytes.count
        switch mount.form {
        case .thumbor:
            ranges += encodedQueryValues(in: bytes, rest)
        case .imgproxy:
            ranges += imgproxySources(in: bytes, rest)
        }
        return ranges
    }

    /// The values of secret parameters in the queries of percent-encoded URLs within `range`: a query starts at an
    /// escaped `?` (`%3F`; a path holds no `?` of its own), its parameters are split at `&` or `%26`, a name is
    /// compared after decoding, and a value ends at the next parameter or at a raw `/`, `,`, `)` or `@` (where the
    /// form's grammar goes on: the next path part, a filter's next argument, imgproxy's `@ext`).
    static func encodedQueryValues(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        /// The byte at `index`, decoded when it starts a `%XX` escape, and how many bytes it takes.
        func decoded(_ index: Int) -> (byte: UInt8, width: Int) {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < range.upperBound,
                let high = QueryParameters.hexValue(bytes[index + 1]),
                let low = QueryParameters.hexValue(bytes[index + 2])
            {
                return (high << 4 | low, 3)
            }
            return (bytes[index], 1)
        }
        func endsValue(_ index: Int) -> Bool {
            let raw = bytes[index]
            return raw == UInt8(ascii: "/") || raw == UInt8(ascii: ",") || raw == UInt8(ascii: ")")
                || raw == UInt8(ascii: "@")
        }
        // Most paths hold no escaped `?` at all (a thumbor hit's image is usually written plainly): find the first
        // with memchr before decoding anything, so such a hit pays a few instructions here.
        guard let firstQuery = firstEscapedQuestionMark(in: bytes, range) else { return [] }
        var index = firstQuery
        var inQuery = false
        var parameterStart = index
        while index < range.upperBound {
            let (byte, width) = decoded(index)
            if !inQuery {
                if byte == UInt8(ascii: "?") && width == 3 {
                    inQuery = true
                    parameterStart = index + width
                }
                index += width
                continue
            }
            if endsValue(index) {
                inQuery = false
                index += 1
                continue
            }
            if byte == UInt8(ascii: "&") {
                parameterStart = index + width
            } else if byte == UInt8(ascii: "=") {
                let valueStart = index + width
                var valueEnd = valueStart
                while valueEnd < range.upperBound, !endsValue(valueEnd), decoded(valueEnd).byte != UInt8(ascii: "&") {
                    valueEnd += decoded(valueEnd).width
                }
                if LoggingRedaction.isSecretName(UnsafeBufferPointer(rebasing: bytes[parameterStart..<index])),
                    valueStart < valueEnd
                {
                    ranges.append(valueStart..<valueEnd)
                }
                index = valueEnd
                continue
            }
            index += width
        }
        return ranges
    }

    /// The offset of the first `%3F` (any case) in `range`, found with memchr.
    private static func firstEscapedQuestionMark(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var start = range.lowerBound
        while start + 2 < range.upperBound,
            let found = memchr(base + start, Int32(UInt8(ascii: "%")), range.upperBound - start)
        {
            let offset = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            if offset + 2 < range.upperBound, bytes[offset + 1] == UInt8(ascii: "3"),
                bytes[offset + 2] | 0x20 == UInt8(ascii: "f")
            {
                return offset
            }
            start = offset + 1
        }
        return nil
    }

    /// imgproxy's URLs after the signature: `wmu:`/`watermark_url:` options and the source. A plain source's query is
    /// read as thumbor's image is; a base64url one (or a watermark URL) is decoded, and redacted whole when its
    /// URL's query holds a secret (its bytes give no place to cut).
    private static func imgproxySources(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var segmentStart = range.lowerBound
        while segmentStart < range.upperBound {
            let segmentEnd =
                bytes[segmentStart..<range.upperBound].firstIndex(of: UInt8(ascii: "/")) ?? range.upperBound
            let segment = UnsafeBufferPointer(rebasing: bytes[segmentStart..<segmentEnd])
            if let colon = segment.firstIndex(of: UInt8(ascii: ":")) {
                // An option; only a watermark URL's carries a URL.
                let name = UnsafeBufferPointer(rebasing: segment[..<colon])
                if name.elementsEqual("wmu".utf8) || name.elementsEqual("watermark_url".utf8),
                    holdsSecret(base64URL: UnsafeBufferPointer(rebasing: segment[(colon + 1)...]))
                {
                    ranges.append((segmentStart + colon + 1)..<segmentEnd)
                }
                segmentStart = segmentEnd + 1
                continue
            }
            if segment.elementsEqual("plain".utf8) {
                return ranges + encodedQueryValues(in: bytes, (segmentEnd + 1)..<max(segmentEnd + 1, range.upperBound))
            }
            // The base64url source, possibly cut by `/`, up to its `.ext`.
            let sourceEnd = bytes[segmentStart..<range.upperBound].firstIndex(of: UInt8(ascii: ".")) ?? range.upperBound
            let encoded = bytes[segmentStart..<sourceEnd].filter { $0 != UInt8(ascii: "/") }
            let holds = encoded.withUnsafeBufferPointer { holdsSecret(base64URL: $0) }
            if holds { ranges.append(segmentStart..<sourceEnd) }
            return ranges
        }
        return ranges
    }

    /// Whether `text`, read as base64url (padding optional), is a URL whose query holds a secret parameter.
    private static func holdsSecret(base64URL text: UnsafeBufferPointer<UInt8>) -> Bool {
        let unpadded = text.prefix { $0 != UInt8(ascii: "=") }
        guard let url = URLSignature.base64URLDecoded(unpadded, ignoringUnusedBits: true) else { return false }
        return LoggingRedaction.queryHoldsSecret(url)
    }

    /// Whether `text`'s bytes are in `bytes` at `offset` (a `memcmp`: the generic sequence comparisons were
    /// most of this type's cost).
    fileprivate static func has(_ text: String, in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        LoggingText.withUTF8(text) { text in
            guard let base = bytes.baseAddress, let other = text.baseAddress, bytes.count - offset >= text.count
            else { return text.isEmpty }
            return memcmp(base + offset, other, text.count) == 0
        }
    }
}

extension PathSignatureRedaction.Mount {
    /// Whether `bytes` is the path of another route under this prefix (so not this form's).
    /// The lengths first, then `memcmp`: with a form mounted at `/`, every other route is asked on each of its hits,
    /// and the generic `elementsEqual` cost a thumbor-form hit about 1,900 instructions (`bench/hit-instructions.sh`).
    fileprivate func isOtherRoute(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        exactRoutes.contains { route in
            route.utf8.count == bytes.count && PathSignatureRedaction.has(route, in: bytes, at: 0)
        } || prefixRoutes.contains { route in PathSignatureRedaction.has(route, in: bytes, at: 0) }
    }
}
