// SPDX-License-Identifier: Apache-2.0
import URLForms

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

    /// Query parameters that carry credentials (``SecretParameters/names``, which the URL forms' path readers share).
    package static var secretParameters: [String] { SecretParameters.names }

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
                SecretParameters.isSecretName(target[parameterStart..<equals])
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
}
