// SPDX-License-Identifier: Apache-2.0
package import Crypto

/// The signed-URL scheme of `/thumb` (README "Signed URLs"): `sig` is
/// `base64url(HMAC-SHA256(key, canonical query))`, without padding.
///
/// The canonical query is built from the *decoded* parameters, so that every spelling of one request
/// (`%2f` or `%2F`, `:` or `%3A`, any order) has one signature:
/// 1. every parameter except `sig`, decoded as `/thumb` decodes it (`%XX` escapes, `+` stays a plus; a name
///    without `=` has an empty value; empty `&&` pieces are skipped);
/// 2. name and value each re-encoded from their UTF-8 bytes: RFC 3986's unreserved set
///    (`A-Z a-z 0-9 - . _ ~`) kept, every other byte as `%XX` with upper-case hex digits;
/// 3. sorted by encoded name, byte by byte (a name that is a prefix of another sorts first), equal names by
///    encoded value the same way;
/// 4. joined as `name=value` pairs separated by `&`.
///
/// ```swift
/// let query = "url=https://example.com/a.jpg&w=256"
/// let signed = try URLSignature.signedQuery(query, key: key)  // "url=https://example.com/a.jpg&w=256&sig=..."
/// ```
package enum URLSignature {
    /// The query parameter that carries the signature.
    package static let parameterName = "sig"

    /// Characters of a signature: 32 bytes of HMAC-SHA256 in unpadded base64url.
    package static let signatureLength = 43

    // MARK: - Canonical form

    /// The canonical query of `parameters` (every pair but `sig`), as the signature covers it.
    package static func canonicalQuery(_ parameters: QueryParameters) -> String {
        String(decoding: canonicalBytes(parameters), as: UTF8.self)
    }

    /// The canonical query of a raw query string (without `?`).
    /// - Throws: `RequestError.malformedQuery` when an escape is broken or a value is not UTF-8.
    package static func canonicalQuery(rawQuery: some StringProtocol) throws(RequestError) -> String {
        canonicalQuery(try QueryParameters(parsing: rawQuery))
    }

    /// The canonical query as the bytes the HMAC covers (one buffer, no intermediate `String`).
    package static func canonicalBytes(_ parameters: QueryParameters) -> [UInt8] {
        var encoded: [(name: [UInt8], value: [UInt8])] = []
        encoded.reserveCapacity(parameters.pairs.count)
        var total = 0
        for (name, value) in parameters.pairs where name != parameterName {
            let pair = (name: QueryParameters.percentEncoded(name), value: QueryParameters.percentEncoded(value))
            total += pair.name.count + pair.value.count + 2
            encoded.append(pair)
        }
        encoded.sort { lhs, rhs in
            lhs.name == rhs.name
                ? lhs.value.lexicographicallyPrecedes(rhs.value) : lhs.name.lexicographicallyPrecedes(rhs.name)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(total)
        for (index, pair) in encoded.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            bytes += pair.name
            bytes.append(UInt8(ascii: "="))
            bytes += pair.value
        }
        return bytes
    }

    // MARK: - Signing

    /// `base64url(HMAC-SHA256(key, canonicalQuery))` without padding: the value of `sig`.
    /// - Parameters:
    ///   - canonicalQuery: the canonical query (``canonicalQuery(_:)``).
    ///   - key: the secret; its UTF-8 bytes are the HMAC key (as `openssl dgst -hmac "$key"` takes it).
    package static func signature(canonicalQuery: String, key: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Array(canonicalQuery.utf8), using: symmetricKey(key))
        return base64URLEncoded(Array(code))
    }

    /// `rawQuery` with any `sig` parameter removed and `&sig=<signature>` appended, as `thumbd sign` prints it.
    /// The rest of the query stays as given (the signature covers the decoded values, not their spelling).
    /// - Throws: `RequestError.malformedQuery` when the query cannot be decoded.
    package static func signedQuery(_ rawQuery: String, key: String) throws(RequestError) -> String {
        let canonical = try canonicalQuery(rawQuery: rawQuery)
        let kept = rawQuery.split(separator: "&", omittingEmptySubsequences: true).filter { component in
            let rawName = component.prefix { $0 != "=" }
            return QueryParameters.percentDecode(rawName.utf8) != parameterName
        }
        let signature = signature(canonicalQuery: canonical, key: key)
        return (kept + ["\(parameterName)=\(signature)"]).joined(separator: "&")
    }

    /// The HMAC key of a configured secret: its UTF-8 bytes.
    package static func symmetricKey(_ key: String) -> SymmetricKey {
        SymmetricKey(data: Array(key.utf8))
    }

    /// A ``symmetricKey(_:)`` that threads share.
    package struct SharedKey: @unchecked Sendable {
        // @unchecked Sendable: immutable. swift-crypto 3 does not mark `SymmetricKey` Sendable, but it is a
        // struct over storage that is written once, when the key is made, and only read (`withUnsafeBytes`)
        // afterwards; nothing here can mutate it.
        package let key: SymmetricKey

        package init(_ secret: String) { key = URLSignature.symmetricKey(secret) }

        /// A key of raw bytes (imgproxy's keys are hexadecimal text).
        package init(bytes: [UInt8]) { key = SymmetricKey(data: bytes) }
    }

    // MARK: - base64url (RFC 4648 §5)

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Unpadded base64url.
    package static func base64URLEncoded(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let remaining = bytes.count - index
            let chunk =
                UInt32(bytes[index]) << 16 | (remaining > 1 ? UInt32(bytes[index + 1]) << 8 : 0)
                | (remaining > 2 ? UInt32(bytes[index + 2]) : 0)
            let characters = min(remaining, 3) + 1
            for position in 0..<characters {
                text.append(alphabet[Int(chunk >> UInt32(18 - 6 * position) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Strict unpadded base64url: nil for any character outside `A-Z a-z 0-9 - _` (so `=` padding and the
    /// standard alphabet's `+` and `/` too), an impossible length, or unused low bits that are not zero. So a
    /// byte string has exactly one accepted spelling, and one signed request exactly one URL.
    /// - Parameter ignoringUnusedBits: read unused low bits as Go's `base64.RawURLEncoding` does, ignoring them
    ///   (imgproxy's base64 sources), rather than refusing them.
    package static func base64URLDecoded(_ text: some Collection<UInt8>, ignoringUnusedBits: Bool = false) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in text {
            guard let value = sextet(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 || ignoringUnusedBits else { return nil }  // leftover bits (2 or 4) must be zero
        return bytes
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
