// SPDX-License-Identifier: Apache-2.0

/// The query parameters that carry credentials, and how a name or a URL's query is checked against them: shared by
/// the app's log redaction and by each URL form's reader of the secrets in its paths (``PathSecrets``), so a form's
/// folder finds them without the app.
package enum SecretParameters {
    /// thumbd's own `sig`, presigned S3 and GCS URLs, tokens and API keys. Their values are redacted wherever a URL is
    /// logged or shown: stderr, the access log (a source URL written into a foreign form's path), `/status`.
    /// Lower-case; names are compared case-insensitively after decoding.
    package static let names: [String] = [
        "sig", "signature", "token", "access_token", "key", "api_key", "apikey", "password", "secret",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
    ]

    /// The longest of ``names``, in bytes.
    @usableFromInline
    package static let longestName = names.map(\.utf8.count).max() ?? 0

    /// Whether the query of `url` (after its first `?`) has a parameter named as one of ``names``.
    @inlinable
    package static func queryHoldsSecret<URL: Collection<UInt8>>(_ url: URL) -> Bool {
        guard let question = url.firstIndex(of: UInt8(ascii: "?")) else { return false }
        let query = url[url.index(after: question)...]
        return query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).contains { parameter in
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else { return false }
            return isSecretName(parameter[..<equals])
        }
    }

    /// Whether a percent-encoded parameter name decodes to one of ``names`` (ASCII case-insensitively).
    /// Allocation-free: the name is decoded into a buffer on the stack. Inlinable, so the access log's caller in the
    /// app is specialised for its collection as it was when this lived there.
    @inlinable
    package static func isSecretName<Name: Collection<UInt8>>(_ name: Name) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: longestName) { decoded in
            var count = 0
            var index = name.startIndex
            while index < name.endIndex {
                var byte = name[index]
                index = name.index(after: index)
                if byte == UInt8(ascii: "%") {
                    guard let high = hexValue(name, index),
                        let low = hexValue(
                            name, name.index(index, offsetBy: 1, limitedBy: name.endIndex) ?? name.endIndex)
                    else {
                        return false
                    }
                    byte = high << 4 | low
                    index = name.index(index, offsetBy: 2)
                }
                guard count < decoded.count else { return false }
                decoded[count] = (0x41...0x5A).contains(byte) ? byte + 0x20 : byte
                count += 1
            }
            let read = UnsafeBufferPointer(rebasing: decoded[..<count])
            return names.contains { $0.utf8.elementsEqual(read) }
        }
    }

    @usableFromInline
    static func hexValue<Name: Collection<UInt8>>(_ name: Name, _ index: Name.Index) -> UInt8? {
        guard index < name.endIndex else { return nil }
        switch name[index] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return name[index] - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return name[index] - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return name[index] - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
