// SPDX-License-Identifier: Apache-2.0

/// imgproxy's URL grammar (docs.imgproxy.net, "Processing an image"), after the prefix the form is mounted at:
///
/// ```
/// /<signature>/<option>/<option>/.../plain/<percent-encoded source URL>[@<extension>]
/// /<signature>/<option>/<option>/.../<base64url source URL, may be split by slashes>[.<extension>]
/// /<signature>/<preset>:<preset>/<source>          (image.presets_only: imgproxy's IMGPROXY_ONLY_PRESETS form)
/// ```
///
/// An option is `name:argument:argument…`; the first segment without a `:` starts the source. A query string is
/// cut off and ignored, as imgproxy does (its signature does not cover it).
///
/// Read in two steps, so that the signature is checked before anything else is looked at: ``init(target:prefix:)``
/// splits off the signature segment and finds the path it covers (``signedPath``), and ``components(presetsOnly:)``
/// then reads the options and decodes the source.
package struct ImgproxyPath: Sendable {
    /// The signature segment as sent.
    package let signature: Substring
    /// What the signature covers: `/` and the rest of the path after the signature segment, as imgproxy reads it
    /// (a `%3A` in the options read as `:`, and a `scheme:/` that a proxy made of the plain source's `scheme://`
    /// mended, so that a URL such normalisation touched still verifies).
    package let signedPath: String

    /// One option as written: `rs:fill:300:400` is `rs` with `["fill", "300", "400"]`.
    package struct Option: Sendable, Equatable {
        package let name: String
        package let arguments: [String]
    }

    /// What the path asks for.
    package struct Components: Sendable, Equatable {
        /// The options in order (none in the presets-only form).
        package var options: [Option] = []
        /// The presets-only form's preset names.
        package var presets: [String]?
        /// The decoded source URL, not yet checked.
        package var source: String
        /// The output format written after the source (`@png`, `.png`), if any.
        package var sourceExtension: String?
    }

    /// The resizing types, which begin imgproxy's old "basic" URLs (`/sig/fill/300/400/…`), which it refuses.
    package static let resizingTypes: Set<String> = ["fit", "fill", "fill-down", "force", "auto"]

    /// Splits the target into the signature segment and the path it covers.
    /// - Parameter prefix: where the form is mounted (starts and ends with `/`).
    /// - Throws: `RequestError.missingSignature` for an empty signature segment, `.malformedPath` when nothing
    ///   follows it or the target is not under `prefix`.
    package init(target: String, prefix: String) throws(RequestError) {
        var path = Substring(target)
        if let mark = path.utf8.firstIndex(of: UInt8(ascii: "?")) { path = path[..<mark] }
        guard path.hasPrefix(prefix) else { throw .malformedPath("not under \(prefix)") }
        path = path.dropFirst(prefix.count)
        if path.hasPrefix("/") { path = path.dropFirst() }
        let slash = path.utf8.firstIndex(of: UInt8(ascii: "/")) ?? path.endIndex
        signature = path[..<slash]
        let rest = slash == path.endIndex ? "" : path[path.index(after: slash)...]
        guard !signature.isEmpty else { throw .missingSignature }
        let redenormalized = Self.redenormalized(rest)
        guard !redenormalized.isEmpty else { throw .malformedPath("no source after the signature") }
        signedPath = redenormalized.hasPrefix("/") ? redenormalized : "/" + redenormalized
    }

    /// The options and the source, read by imgproxy's grammar.
    /// - Parameter presetsOnly: `image.presets_only`: the first segment lists presets (`name:name`), the source
    ///   follows, and no option may be written.
    /// - Throws: `RequestError.malformedPath` for an old "basic" URL, a missing or undecodable source, or two
    ///   extensions.
    package func components(presetsOnly: Bool) throws(RequestError) -> Components {
        var segments = signedPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var options: [Option] = []
        var presets: [String]?
        if presetsOnly {
            guard segments.count > 1 else { throw .malformedPath("no source after the presets") }
            presets = segments.removeFirst().split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        } else {
            if let first = segments.first, Self.resizingTypes.contains(String(first)) {
                throw .malformedPath("imgproxy's old basic URL form is not supported; write options as name:value")
            }
            while let segment = segments.first {
                let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count > 1 else { break }
                options.append(Option(name: String(parts[0]), arguments: parts.dropFirst().map(String.init)))
                segments.removeFirst()
            }
        }
        let (source, sourceExtension) = try Self.source(segments)
        return Components(options: options, presets: presets, source: source, sourceExtension: sourceExtension)
    }

    // MARK: - Source

    /// `plain/<percent-encoded>[@ext]` or `<base64url, split by slashes at will>[.ext]`.
    private static func source(_ segments: [Substring]) throws(RequestError) -> (String, String?) {
        guard !segments.isEmpty else { throw .malformedPath("no source URL") }
        if segments[0] == "plain" && segments.count > 1 {
            let (encoded, format) = try splitExtension(segments.dropFirst().joined(separator: "/"), at: "@")
            // Go's `url.PathUnescape`: `%XX` decoded, a `+` stays a plus.
            guard let decoded = QueryParameters.percentDecode(encoded.utf8) else {
                throw .malformedPath("the plain source URL has a broken percent-escape or is not UTF-8")
            }
            return (decoded, format)
        }
        let (encoded, format) = try splitExtension(segments.joined(), at: ".")
        var text = Substring(encoded)
        while text.hasSuffix("=") { text = text.dropLast() }
        guard let bytes = URLSignature.base64URLDecoded(text.utf8, ignoringUnusedBits: true),
            let decoded = String(validating: bytes, as: UTF8.self)
        else {
            throw .malformedPath("the source URL is not URL-safe base64 of UTF-8 text")
        }
        return (decoded, format)
    }

    /// The text before `separator` and the extension after it (nil when none or empty).
    private static func splitExtension(_ text: String, at separator: Character) throws(RequestError) -> (
        String, String?
    ) {
        let parts = text.split(separator: separator, omittingEmptySubsequences: false)
        guard let first = parts.first, !first.isEmpty else { throw .malformedPath("empty source URL") }
        guard parts.count <= 2 else { throw .malformedPath("more than one extension after the source URL") }
        let format = parts.count == 2 && !parts[1].isEmpty ? String(parts[1]) : nil
        return (String(first), format)
    }

    // MARK: - What the signature covers

    /// The path as imgproxy reads it before checking the signature (its `RedenormalizePath`): in the options, a
    /// `%3A` that a proxy or CDN made of a `:` is read as `:`; in a plain source, a `scheme:/x` that one made of
    /// `scheme://x` is mended; one leading `/` is dropped.
    package static func redenormalized(_ path: Substring) -> String {
        let options: Substring
        let plain: Substring?
        if path.hasPrefix("plain/") {
            options = ""
            plain = path.dropFirst("plain/".count)
        } else if let range = path.firstRange(of: "/plain/") {
            options = path[..<range.lowerBound]
            plain = path[range.upperBound...]
        } else {
            options = path
            plain = nil
        }
        var text = String(options.replacing("%3A", with: ":"))
        if let plain { text += "/plain/" + mendedScheme(plain) }
        return text.hasPrefix("/") ? String(text.dropFirst()) : text
    }

    /// `scheme:/x` → `scheme://x` (`local:/x` → `local:///x`), as imgproxy's `^(\S+):/([^/])` rewrites it: the
    /// longest run without whitespace from the start that is followed by `:/` and then not by `/`.
    private static func mendedScheme(_ plain: Substring) -> String {
        let bytes = Array(plain.utf8)
        let isSpace: (UInt8) -> Bool = { [0x09, 0x0A, 0x0C, 0x0D, 0x20].contains($0) }
        let limit = bytes.firstIndex(where: isSpace) ?? bytes.count
        // `\S+` ends before the first whitespace, so the colon is at most there; the greedy match is the last colon.
        var index = min(limit, bytes.count - 3)
        while index >= 1 {
            if bytes[index] == UInt8(ascii: ":"), bytes[index + 1] == UInt8(ascii: "/"),
                bytes[index + 2] != UInt8(ascii: "/")
            {
                let scheme = bytes[..<index]
                let insertion: [UInt8] = Array(scheme) == Array("local".utf8) ? [0x2F, 0x2F] : [0x2F]
                let mended = bytes[...(index + 1)] + insertion + bytes[(index + 2)...]
                return String(decoding: mended, as: UTF8.self)
            }
            index -= 1
        }
        return String(plain)
    }
}
