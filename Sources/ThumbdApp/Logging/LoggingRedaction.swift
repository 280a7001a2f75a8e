// SPDX-License-Identifier: Apache-2.0

/// Keeps secrets out of logs: URL signatures (`sig=`), `Authorization` values and tokens.
///
/// A logged signature is as good as the key for the URL it signs (anyone with log access could replay it),
/// and a logged admin token is the key to the admin routes. The access log and the diagnostic handler
/// apply these rules themselves; call the helpers when putting a URL or header into a message by hand.
package enum LoggingRedaction {
    /// What replaces a secret value.
    package static let placeholder = "REDACTED"

    /// Metadata keys whose values are always replaced, compared case-insensitively.
    package static let secretMetadataKeys: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "token", "admin_token",
        "sig", "signature", "signing_key", "signing_keys", "password", "secret",
    ]

    /// Query parameters that carry credentials: thumbd's own `sig`, presigned S3 and GCS URLs, tokens and API keys.
    /// Their values are redacted wherever a URL is logged or shown: stderr, the access log (a source URL written
    /// into a foreign form's path), `/status`. Lower-case; names are compared case-insensitively after decoding.
    package static let secretParameters: [String] = [
        "sig", "signature", "token", "access_token", "key", "api_key", "apikey", "password", "secret",
        "x-amz-signature", "x-amz-credential", "x-amz-security-token", "x-goog-signature", "x-goog-credential",
    ]

    /// The longest of ``secretParameters``, in bytes.
    private static let longestSecretParameter = secretParameters.map(\.utf8.count).max() ?? 0

    /// `target` with the value of every secret query parameter (``secretParameters``) replaced:
    /// `/thumb?url=x&sig=abc` becomes `/thumb?url=x&sig=REDACTED`.
    ///
    /// Parameter names are compared after percent-decoding (`%73ig=` is `sig=`), because that is how the
    /// request parser will read them.
    package static func redactingSecrets(in target: String) -> String {
        guard target.utf8.contains(UInt8(ascii: "?")) else { return target }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(target.utf8.count)
        LoggingText.withUTF8(target) { target in
            appendRedactingSecrets(target, to: &bytes) { bytes, slice in bytes.append(contentsOf: slice) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An `Authorization` header value safe to log: the scheme is kept, the credentials are not
    /// (`Bearer REDACTED`).
    package static func redactedAuthorization(_ value: String) -> String {
        let scheme = value.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        return scheme.isEmpty || scheme == value ? placeholder : "\(scheme) \(placeholder)"
    }

    /// Appends `target` to `line`, passing every piece through `appendPiece` (which may escape it) except
    /// `sig` values, which become `REDACTED`. Allocation-free: the access log calls it on event-loop threads.
    static func appendRedactingSecrets<Target: Collection<UInt8>>(
        _ target: Target,
        to line: inout [UInt8],
        appendPiece: (inout [UInt8], Target.SubSequence) -> Void
    ) {
        guard let query = target.firstIndex(of: UInt8(ascii: "?")) else {
            appendPiece(&line, target[...])
            return
        }
        var pieceStart = target.startIndex
        var parameterStart = target.index(after: query)
        while parameterStart <= target.endIndex {
            let parameterEnd =
                target[parameterStart...].firstIndex { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "#") }
                ?? target.endIndex
            if let equals = target[parameterStart..<parameterEnd].firstIndex(of: UInt8(ascii: "=")),
                isSecretName(target[parameterStart..<equals])
            {
                appendPiece(&line, target[pieceStart...equals])
                line.append(contentsOf: placeholder.utf8)
                pieceStart = parameterEnd
            }
            guard parameterEnd < target.endIndex, target[parameterEnd] == UInt8(ascii: "&") else { break }
            parameterStart = target.index(after: parameterEnd)
        }
        appendPiece(&line, target[pieceStart...])
    }

    /// Whether the query of `url` (after its first `?`) has a parameter named as one of ``secretParameters``.
    static func queryHoldsSecret<URL: Collection<UInt8>>(_ url: URL) -> Bool {
        guard let question = url.firstIndex(of: UInt8(ascii: "?")) else { return false }
        let query = url[url.index(after: question)...]
        return query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).contains { parameter in
            guard let equals = parameter.firstIndex(of: UInt8(ascii: "=")) else { return false }
            return isSecretName(parameter[..<equals])
        }
    }

    /// Whether a percent-encoded parameter name decodes to one of ``secretParameters`` (ASCII
    /// case-insensitively). Allocation-free: the name is decoded into a buffer on the stack.
    static func isSecretName<Name: Collection<UInt8>>(_ name: Name) -> Bool {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: longestSecretParameter) { decoded in
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
            return secretParameters.contains { $0.utf8.elementsEqual(read) }
        }
    }

    private static func hexValue<Name: Collection<UInt8>>(_ name: Name, _ index: Name.Index) -> UInt8? {
        guard index < name.endIndex else { return nil }
        switch name[index] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return name[index] - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return name[index] - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return name[index] - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
