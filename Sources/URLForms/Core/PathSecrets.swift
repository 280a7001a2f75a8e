// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the readers of the secrets in a path-mounted form's paths (``PathForm/secretRanges(in:after:)``) share: the
/// signature segment, the secret values in the queries of percent-encoded URLs, a base64url URL whose query holds a
/// secret. The app's log redaction (`PathSignatureRedaction`) finds the form by its prefix and replaces the ranges the
/// form's reader returns.
///
/// Everything reads the path's bytes in place, with `memchr` and `memcmp` where it scans: it runs for every answer on
/// a form's route (it feeds /status even with the access log off), and Character indexing of the path cost each
/// thumbor-form hit about 2,000 instructions (`bench/hit-instructions.sh`).
package enum PathSecrets {
    /// The signature segment at `start` (up to the next `/`), and the rest of the path after that `/`; `signature`
    /// is nil when the segment is empty or `unsafe` (not a secret). Nil when no `/` follows. Inlined into each form's
    /// reader, as it was into the one reader of both forms before the readers moved into the forms' folders.
    @inline(__always)
    package static func signatureSegment(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (
        signature: Range<Int>?, rest: Range<Int>
    )? {
        guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let signed = start < end && (end - start != 6 || !has("unsafe", in: bytes, at: start))
        return (signed ? start..<end : nil, (end + 1)..<bytes.count)
    }

    /// The values of secret parameters in the queries of percent-encoded URLs within `range`: a query starts at an
    /// escaped `?` (`%3F`; a path holds no `?` of its own), its parameters are split at `&` or `%26`, a name is
    /// compared after decoding, and a value ends at the next parameter or at a raw `/`, `,`, `)` or `@` (where the
    /// form's grammar goes on: the next path part, a filter's next argument, imgproxy's `@ext`).
    package static func encodedQueryValues(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [Range<Int>] {
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
                if SecretParameters.isSecretName(UnsafeBufferPointer(rebasing: bytes[parameterStart..<index])),
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

    /// Whether `text`, read as base64url (padding optional), is a URL whose query holds a secret parameter.
    package static func holdsSecret(base64URL text: UnsafeBufferPointer<UInt8>) -> Bool {
        let unpadded = text.prefix { $0 != UInt8(ascii: "=") }
        guard let url = URLSignature.base64URLDecoded(unpadded, ignoringUnusedBits: true) else { return false }
        return SecretParameters.queryHoldsSecret(url)
    }

    /// Whether `text`'s bytes are in `bytes` at `offset` (a `memcmp`: the generic sequence comparisons were most of
    /// the redaction's cost).
    @inline(__always)
    package static func has(_ text: StaticString, in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        text.withUTF8Buffer { text in
            guard let base = bytes.baseAddress, let other = text.baseAddress, bytes.count - offset >= text.count
            else { return text.isEmpty }
            return memcmp(base + offset, other, text.count) == 0
        }
    }
}
