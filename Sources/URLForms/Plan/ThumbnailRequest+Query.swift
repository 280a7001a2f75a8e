// SPDX-License-Identifier: Apache-2.0
import OriginFetch
package import Thumbnailing

/// The `/thumb` query's parameters (``ThumbQueryForm``).
///
/// Parameters (docs/api.md): `url` (absolute http(s), ≤ 8 KiB decoded and canonical), `w`, `h` (1...4096, one
/// may be omitted), `dpr` (1...4, multiplies `w` and `h`; the product must stay ≤ 4096), `fit`
/// (`contain|cover|fill|pad`), `gravity` (for `cover` and `pad`:
/// `centre|center|north|...|attention|entropy|fp:x,y`),
/// `format` (`jpeg|jpg|png|webp|avif|auto`), `q` (1...100), `enlarge` (`0|1|true|false`), `preset` (names of
/// configured presets, Presets.swift), `sig`, and the pipeline's steps (their descriptors in
/// Sources/Thumbnailing/Operations, read by ThumbnailRequest+Operations.swift).
/// Unknown or repeated parameters are refused, so two spellings of one request cannot both exist.
extension ThumbnailRequest {
    /// Parses the raw query of a `/thumb` request.
    /// - Parameters:
    ///   - rawQuery: the query string as received, without `?`.
    ///   - accept: the request's `Accept` header, for `format=auto`.
    ///   - rules: the presets and what they allow (``ThumbQueryRules``).
    /// - Throws: `RequestError` naming the offending parameter.
    package init(rawQuery: some StringProtocol, accept: String?) throws(RequestError) {
        try self.init(parameters: try QueryParameters(parsing: rawQuery), accept: accept)
    }

    /// As ``init(rawQuery:accept:)``, under `rules`.
    package init(rawQuery: some StringProtocol, accept: String?, rules: ThumbQueryRules) throws(RequestError) {
        try self.init(parameters: try QueryParameters(parsing: rawQuery), accept: accept, rules: rules)
    }

    /// Validates already decoded parameters (the service decodes once, checks `sig` on them, then validates).
    /// - Parameters:
    ///   - rules: the presets and what they allow: the plan is the presets' parameters with the request's on top.
    ///   - hints: the request's client hints when `image.client_hints` is on (nil: off); they fill in `dpr` and the
    ///     width the plan leaves out.
    /// - Throws: `RequestError` naming the offending parameter.
    ///   - watermarks: the named watermarks `wm=` may use (their digests go into the key).
    package init(
        parameters: QueryParameters, accept: String?, rules: ThumbQueryRules = .none, hints: ClientHints? = nil,
        watermarks: any WatermarkNames = .none
    ) throws(RequestError) {
        var seen = Set<String>()
        var values: [Parameter: String] = [:]
        var signature: String?
        var presetNames: String?
        for (name, value) in parameters.pairs {
            guard seen.insert(name).inserted else { throw .duplicateParameter(name) }
            if name == URLSignature.parameterName {
                signature = value
                continue
            }
            if name == "preset" {
                presetNames = value
                continue
            }
            guard let parameter = Parameter(rawValue: name) else { throw .unknownParameter(name) }
            if rules.allowsOnlyPresets && !Parameter.allowedWithPresetsOnly.contains(parameter) {
                throw .onlyPresetsAllowed(name)
            }
            values[parameter] = value
        }
        if rules.allowsOnlyPresets && presetNames == nil && !rules.presets.hasDefault {
            throw .missingParameter("preset")
        }
        try self.init(
            values: try rules.presets.expand(presetNames, under: values), signature: signature, accept: accept,
            hints: hints, watermarks: watermarks)
    }

    /// Builds the request from the plan's parameters (the request's over its presets'), with `hints` filling in
    /// `dpr` and the width the plan leaves out.
    /// - Throws: `RequestError` naming the offending parameter.
    package init(
        values: [Parameter: String], signature: String?, accept: String?, hints: ClientHints?,
        watermarks: any WatermarkNames = .none
    ) throws(RequestError) {
        guard let rawURL = values[.url], !rawURL.isEmpty else { throw .missingParameter("url") }
        guard rawURL.utf8.count <= Self.maxURLBytes else {
            throw .invalidValue("url", reason: "longer than \(Self.maxURLBytes) bytes")
        }
        do {
            source = try SourceURL(rawURL)
        } catch {
            throw .invalidValue("url", reason: "must be an absolute http(s) URL or s3://bucket/key")
        }
        // The canonical form can be a little longer than what was sent (`http://a?q` is `http://a/?q`); it is what
        // the canonical query carries, so it must fit the same limit, or one spelling of a plan would be accepted
        // and another refused.
        guard source.string.utf8.count <= Self.maxURLBytes else {
            throw .invalidValue("url", reason: "longer than \(Self.maxURLBytes) bytes")
        }

        var hintsUsed: ClientHints.Used = []
        let dpr: Double
        if let text = values[.dpr] {
            dpr = try Self.devicePixelRatio(text)
        } else if let hints {
            hintsUsed.insert(.dpr)
            dpr = Self.hintedDevicePixelRatio(hints.devicePixelRatio ?? 1, values)
        } else {
            dpr = 1
        }
        var width = try values[.w].map { text throws(RequestError) in try Self.dimension(text, name: "w", dpr: dpr) }
        let height = try values[.h].map { text throws(RequestError) in try Self.dimension(text, name: "h", dpr: dpr) }
        if width == nil, height == nil, let hints {
            // Sec-CH-Width is in physical pixels already; the viewport's width is in CSS pixels.
            hintsUsed.insert(.width)
            width = hints.physicalWidth
            if width == nil {
                hintsUsed.insert(.viewportWidth)
                width = hints.viewportPixels(dpr: dpr)
            }
        }
        guard width != nil || height != nil else { throw .missingParameter("w or h") }

        let fit =
            try values[.fit].map { text throws(RequestError) in
                guard let fit = Fit(rawValue: text) else {
                    throw .invalidValue("fit", reason: "must be contain, cover, fill, pad, outside or auto")
                }
                return fit
            } ?? .contain
        let focalPoint = try values[.gravity].flatMap { text throws(RequestError) -> FocalPoint? in
            text.hasPrefix("fp:") || text.hasPrefix("fpx:") ? try Self.focalPoint(text) : nil
        }
        let gravity =
            try values[.gravity].flatMap { text throws(RequestError) -> Gravity? in
                if focalPoint != nil { return nil }
                guard let gravity = Gravity(rawValue: text == "center" ? "centre" : text) else {
                    throw .invalidValue(
                        "gravity", reason: "must be centre, a compass point, attention, entropy, fp:x,y or fpx:x,y")
                }
                return gravity
            } ?? .centre
        let quality = try values[.q].map { text throws(RequestError) in
            guard let quality = Self.integer(text), ThumbnailSpec.qualityRange.contains(quality) else {
                throw .invalidValue("q", reason: "must be an integer 1...100")
            }
            return quality
        }
        let enlarge =
            try values[.enlarge].map { text throws(RequestError) in
                switch text {
                case "1", "true": return true
                case "0", "false": return false
                default: throw .invalidValue("enlarge", reason: "must be 0, 1, true or false")
                }
            } ?? false
        let format = try Self.formatRequest(values[.format], accept: accept)
        let operations = try Self.operations(values, dpr: dpr, format: format, watermarks: watermarks)

        do {
            spec = try ThumbnailSpec(
                width: width, height: height, fit: fit, gravity: gravity, quality: quality, enlarge: enlarge,
                format: format, focalPoint: focalPoint, operations: operations)
        } catch {
            throw .invalidValue(Self.parameterName(forSpecField: error.field), reason: error.reason)
        }
        self.signature = signature
        self.hintsUsed = hintsUsed
    }

    /// The parameters `/thumb` knows, besides `sig` and `preset`: they live beside the operations' descriptors in
    /// Thumbnailing (ThumbParameter), which own their names.
    package typealias Parameter = ThumbParameter

    // MARK: - Values

    /// Digits only (no sign, no spaces, no leading `+`), at most 9 of them.
    package static func integer(_ text: String) -> Int? { ThumbValue.integer(text) }

    private static func dimension(_ text: String, name: String, dpr: Double) throws(RequestError) -> Int {
        guard let value = integer(text), ThumbnailSpec.dimensionRange.contains(value) else {
            throw .invalidValue(name, reason: "must be an integer 1...\(ThumbnailSpec.maxDimension)")
        }
        let scaled = Int((Double(value) * dpr).rounded())
        guard scaled <= ThumbnailSpec.maxDimension else {
            throw .invalidValue(name, reason: "\(name) × dpr must be at most \(ThumbnailSpec.maxDimension)")
        }
        return scaled
    }

    /// A `Sec-CH-DPR` value lowered (to 2 decimals, not below 1) so that `w`, `h` and each side of `padding` times
    /// it stay within their limits: a hint never makes a request fail (the plan's own values are checked as usual).
    private static func hintedDevicePixelRatio(_ hinted: Double, _ values: [Parameter: String]) -> Double {
        func ceiling(_ limit: Int, _ largest: Int?) -> Double {
            guard let largest, largest > 0 else { return .infinity }
            return (Double(limit) / Double(largest) * 100).rounded(.down) / 100
        }
        let side = [values[.w], values[.h]].compactMap { $0.flatMap(integer) }.max()
        let padding = values[.padding]?.split(separator: ",").compactMap { integer(String($0)) }.max()
        let ratio = min(
            hinted, ceiling(ThumbnailSpec.maxDimension, side), ceiling(ThumbnailSpec.Operations.maxPadding, padding))
        return max(ratio, 1)
    }

    /// A plain decimal 1...4 with at most 2 fraction digits (`1`, `1.5`, `2.25`).
    private static func devicePixelRatio(_ text: String) throws(RequestError) -> Double {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isPlainDecimal =
            !text.isEmpty && parts.count <= 2
            && parts.allSatisfy { part in
                !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
            } && parts[0].utf8.count <= 1 && (parts.count == 1 || parts[1].utf8.count <= 2)
        guard isPlainDecimal, let value = Double(text), (1...4).contains(value) else {
            throw .invalidValue("dpr", reason: "must be a number 1...4")
        }
        return value
    }

    private static func formatRequest(_ text: String?, accept: String?) throws(RequestError) -> FormatRequest {
        switch text {
        case nil, "auto": return .auto(accepting: AcceptHeader.acceptedFormats(accept))
        case "jpeg", "jpg": return .exactly(.jpeg)
        case "png": return .exactly(.png)
        case "webp": return .exactly(.webp)
        case "avif": return .exactly(.avif)
        case "gif": return .exactly(.gif)
        default: throw .invalidValue("format", reason: "must be jpeg, png, webp, avif, gif or auto")
        }
    }

    private static func parameterName(forSpecField field: String) -> String {
        switch field {
        case "width": "w"
        case "height": "h"
        case "quality": "q"
        default: field
        }
    }
}

extension ThumbParameter {
    /// What a request may still set itself under `image.presets_only` (besides `preset` and `sig`): the
    /// source, and what the client's device decides rather than the design (the format it decodes, its pixel
    /// ratio).
    package static let allowedWithPresetsOnly: Set<ThumbParameter> = [.url, .format, .dpr]
}
