// SPDX-License-Identifier: Apache-2.0

/// Why a request's parameters were refused (answered 400 naming the parameter; a signature problem 403).
package enum RequestError: Error, Hashable, Sendable {
    /// A required parameter is absent (`url`, or `w or h`).
    case missingParameter(String)
    /// A parameter /thumb does not know: refused so that typos do not silently change the output.
    case unknownParameter(String)
    /// A parameter given twice: refused so that one request cannot be read two ways.
    case duplicateParameter(String)
    /// A parameter with a value out of range or of the wrong form.
    case invalidValue(String, reason: String)
    /// A broken percent-escape or a value that is not UTF-8.
    case malformedQuery(parameter: String)
    /// An option of a foreign URL form (thumbor's, imgproxy's) that thumbd cannot honour: refused, never dropped
    /// (docs/compatibility.md lists them).
    case unsupportedOption(String)
    /// A path of a foreign URL form that its grammar does not allow (what is wrong, in a few words).
    case malformedPath(String)
    /// `image.presets_only` is on and the request sets a parameter that only presets may set.
    case onlyPresetsAllowed(String)
    /// Signing is on (`security.signing_keys`) and the request has no `sig`, or an empty one.
    case missingSignature
    /// `sig` does not verify under any current key (wrong key, tampered parameters, malformed, padded,
    /// repeated). One message for all of them: the client learns nothing about why.
    case invalidSignature

    /// The parameter the error is about, as the client spelt it (`url`, `w`, `w or h`, ...); never empty: a query
    /// component with nothing before its `=` (`&=5`) is `(empty name)`.
    package var parameter: String {
        switch self {
        case .missingParameter(let name), .unknownParameter(let name), .duplicateParameter(let name),
            .invalidValue(let name, _), .malformedQuery(let name), .onlyPresetsAllowed(let name),
            .unsupportedOption(let name):
            name.isEmpty ? Self.emptyName : name
        case .malformedPath: "path"
        case .missingSignature, .invalidSignature: URLSignature.parameterName
        }
    }

    /// The short public reason sent in the JSON error body.
    package var publicMessage: String {
        switch self {
        case .missingParameter(let name): "missing parameter: \(name)"
        case .unknownParameter(let name): "unknown parameter: \(Self.printable(name))"
        case .duplicateParameter(let name): "duplicate parameter: \(Self.printable(name))"
        case .invalidValue(let name, let reason):
            "invalid \(Self.printable(name)): \(Self.printable(reason, limit: Self.maxEchoedReasonBytes))"
        case .malformedQuery(let name): "malformed percent-encoding in parameter: \(Self.printable(name))"
        case .unsupportedOption(let name): "unsupported option: \(Self.printable(name))"
        case .malformedPath(let reason): "malformed path: \(Self.printable(reason, limit: Self.maxEchoedReasonBytes))"
        case .onlyPresetsAllowed(let name): "parameter not allowed: \(name) (only presets may set it here)"
        case .missingSignature: "missing signature"
        case .invalidSignature: "invalid signature"
        }
    }

    /// What an empty parameter name is called in errors.
    private static let emptyName = "(empty name)"
    /// The most of a client-chosen name echoed back, in UTF-8 bytes: every public message stays under 200 bytes.
    private static let maxEchoedNameBytes = 64
    /// The most of a reason echoed back: reasons may quote what the client wrote (a foreign form's option value).
    private static let maxEchoedReasonBytes = 120

    /// Client-chosen names are echoed back without control characters (C0, DEL and C1) and cut to
    /// `maxEchoedNameBytes` bytes of whole scalars; a name with nothing left to show is named in words.
    package static func printable(_ name: some StringProtocol, limit: Int = maxEchoedNameBytes) -> String {
        guard !name.isEmpty else { return emptyName }
        var shown = String.UnicodeScalarView()
        var bytes = 0
        for scalar in name.unicodeScalars where scalar.properties.generalCategory != .control {
            bytes += UTF8.width(scalar)
            guard bytes <= limit else { break }
            shown.append(scalar)
        }
        return shown.isEmpty ? "(unprintable name)" : String(shown)
    }
}
