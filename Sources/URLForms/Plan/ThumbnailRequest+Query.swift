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
///
/// A request's text is read into the plan's typed values (``parse(_:_:into:)``: each value's form), the presets' values
/// go under it parameter by parameter, and the whole is built once (``init(values:signature:accept:hints:watermarks:)``:
/// each value's range, `dpr`); thumbor's and imgproxy's forms set the typed values themselves (``ThumbnailPlan``) and
/// share the rest.
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
    ///   - watermarks: the named watermarks `wm=` may use (their digests go into the key).
    /// - Throws: `RequestError` naming the offending parameter.
    package init(
        parameters: QueryParameters, accept: String?, rules: ThumbQueryRules = .none, hints: ClientHints? = nil,
        watermarks: any WatermarkNames = .none
    ) throws(RequestError) {
        var seen = Set<String>()
        var texts: [Parameter: String] = [:]
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
            texts[parameter] = value
        }
        if rules.allowsOnlyPresets && presetNames == nil && !rules.presets.hasDefault {
            throw .missingParameter("preset")
        }
        let own = try Self.values(texts)
        let values = try Self.layered(own, under: rules.presets, named: presetNames)
        try self.init(values: values, signature: signature, accept: accept, hints: hints, watermarks: watermarks)
    }

    /// `own` over the presets named (and the `default` one). `raw=1` answers the source's own bytes, which presets
    /// (rendered pictures' settings) say nothing about: a preset named beside it is refused, the `default` one is not
    /// put under it.
    static func layered(_ own: PlanValues, under presets: Presets, named names: String?) throws(RequestError)
        -> PlanValues
    {
        if own.raw == true {
            if names != nil { throw .invalidValue("preset", reason: notWithRawReason) }
            return own
        }
        var values = try presets.values(named: names)
        values.layer(own)
        return values
    }

    /// Reads `/thumb` parameters' text into the plan's typed fields, in ``Parameter``'s order.
    /// - Throws: `RequestError` naming the first parameter whose value has not its form.
    static func values(_ texts: [Parameter: String]) throws(RequestError) -> PlanValues {
        var values = PlanValues()
        for parameter in Parameter.allCases {
            if let text = texts[parameter] { try parse(parameter, text, into: &values) }
        }
        return values
    }

    /// Reads the text of one `/thumb` parameter into its typed field: the box's and output's here, each operation's by
    /// its descriptor (Sources/Thumbnailing/Operations). The value's form only: its range is checked once, when the
    /// plan is built (``init(values:signature:accept:hints:watermarks:)``), with the same message.
    /// - Throws: `RequestError.invalidValue` naming the parameter.
    package static func parse(_ parameter: Parameter, _ text: String, into values: inout PlanValues)
        throws(RequestError)
    {
        switch parameter {
        case .url:
            values.url = text
        case .w, .h:
            guard let side = integer(text) else { throw .invalidValue(parameter.rawValue, reason: dimensionReason) }
            if parameter == .w { values.width = side } else { values.height = side }
        case .dpr:
            values.dpr = try devicePixelRatio(text)
        case .fit:
            guard let fit = Fit(rawValue: text) else {
                throw .invalidValue("fit", reason: "must be contain, cover, fill, pad, outside or auto")
            }
            values.fit = fit
        case .gravity:
            values.gravity = try gravity(text)
        case .format:
            values.format = try formatChoice(text)
        case .q:
            guard let quality = integer(text) else { throw .invalidValue("q", reason: qualityReason) }
            values.quality = quality
        case .enlarge:
            switch text {
            case "1", "true": values.enlarge = true
            case "0", "false": values.enlarge = false
            default: throw .invalidValue("enlarge", reason: "must be 0, 1, true or false")
            }
        case .expires:
            guard let deadline = AnswerOptions.deadline(text) else {
                throw .invalidValue("expires", reason: "must be a unix time in seconds")
            }
            values.expires = deadline
        case .max_age:
            guard let seconds = integer(text) else {
                throw .invalidValue("max_age", reason: "must be a whole number of seconds 0...31536000")
            }
            values.maxAge = seconds
        case .fq:
            values.formatQuality = try formatQualities(text)
        case .filename:
            values.filename = text
        case .tags:
            values.tags = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        case .attachment:
            switch text {
            case "1", "true": values.attachment = true
            case "0", "false": values.attachment = false
            default: throw .invalidValue("attachment", reason: "must be 0, 1, true or false")
            }
        default:
            do {
                try values.parseOperation(parameter, text)
            } catch {
                throw .invalidValue(error.field, reason: error.reason)
            }
        }
    }

    /// Builds the request from the plan's typed values (the request's over its presets'), with `hints` filling in
    /// `dpr` and the width the plan leaves out. Each value's range is checked here, once, with the message `/thumb`'s
    /// parser gives for it (the operations' by their descriptors), and `dpr` multiplies the lengths given in CSS
    /// pixels once.
    /// - Throws: `RequestError` naming the offending parameter.
    package init(
        values: PlanValues, signature: String?, accept: String?, hints: ClientHints?,
        watermarks: any WatermarkNames = .none
    ) throws(RequestError) {
        guard let rawURL = values.url, !rawURL.isEmpty else { throw .missingParameter("url") }
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
        if values.raw == true {
            try Self.checkRaw(values, watermarks: watermarks)
            spec = .raw
            self.signature = signature
            answer = try Self.answerOptions(values, source: source.string)
            return
        }

        var hintsUsed: ClientHints.Used = []
        let dpr: Double
        if let given = values.dpr {
            guard Self.devicePixelRatios.contains(given), given.units % (FixedDecimal.unitsPerOne / 100) == 0 else {
                throw .invalidValue("dpr", reason: Self.devicePixelRatioReason)
            }
            dpr = given.value
        } else if let hints {
            hintsUsed.insert(.dpr)
            dpr = Self.hintedDevicePixelRatio(hints.devicePixelRatio ?? 1, values)
        } else {
            dpr = 1
        }
        var width = try values.width.map { side throws(RequestError) in try Self.dimension(side, name: "w", dpr: dpr) }
        let height = try values.height.map { side throws(RequestError) in
            try Self.dimension(side, name: "h", dpr: dpr)
        }
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

        let fit = values.fit ?? .contain
        var gravity = Gravity.centre
        var focalPoint: FocalPoint?
        switch values.gravity {
        case nil: break
        case .gravity(let given)?: gravity = given
        case .focalPoint(let x, let y)?:
            guard let point = FocalPoint(x: x, y: y) else {
                throw .invalidValue("gravity", reason: "fp:x,y needs two fractions 0...1")
            }
            focalPoint = point
        case .focalPixels(let x, let y, let corner)?:
            guard let point = FocalPoint(pixelX: x, pixelY: y, corner: corner) else {
                throw .invalidValue("gravity", reason: Self.focalPixelsReason)
            }
            focalPoint = point
        }
        let quality = try values.quality.map { quality throws(RequestError) in
            guard ThumbnailSpec.qualityRange.contains(quality) else {
                throw .invalidValue("q", reason: Self.qualityReason)
            }
            return quality
        }
        let enlarge = values.enlarge ?? false
        let format: FormatRequest =
            switch values.format {
            case nil, .auto?: .auto(accepting: AcceptHeader.acceptedFormats(accept))
            case .exactly(let format)?: .exactly(format)
            }
        let operations = try Self.operations(values, dpr: dpr, format: format, watermarks: watermarks)

        var built: ThumbnailSpec
        do {
            built = try ThumbnailSpec(
                width: width, height: height, fit: fit, gravity: gravity, quality: quality, enlarge: enlarge,
                format: format, focalPoint: focalPoint, operations: operations)
        } catch {
            throw .invalidValue(Self.parameterName(forSpecField: error.field), reason: error.reason)
        }
        if let formatQuality = values.formatQuality {
            guard formatQuality.values.allSatisfy(ThumbnailSpec.qualityRange.contains) else {
                throw .invalidValue("fq", reason: Self.formatQualityReason)
            }
            // `q` wins over it (imgproxy's rule), so it is kept only without one.
            if quality == nil { built.formatQuality = formatQuality }
        }
        spec = built
        self.signature = signature
        self.hintsUsed = hintsUsed
        answer = try Self.answerOptions(values, source: source.string)
    }

    /// The parameters `/thumb` knows, besides `sig` and `preset`: they live beside the operations' descriptors in
    /// Thumbnailing (ThumbParameter), which own their names.
    package typealias Parameter = ThumbParameter

    // MARK: - Raw

    static let notWithRawReason = "not beside raw (the answer is the source's own bytes)"

    /// `raw=1` beside what would change the picture: refused by name, since the source's own bytes would drop it
    /// (imgproxy ignores it). What only changes the answer's headers (`expires`, `max_age`, `filename`,
    /// `attachment`) is honoured; a value that does nothing (`blur=0`) is no change.
    private static func checkRaw(_ values: PlanValues, watermarks: any WatermarkNames) throws(RequestError) {
        let box: [(isSet: Bool, parameter: Parameter)] = [
            (values.width != nil, .w), (values.height != nil, .h), (values.fit != nil, .fit),
            (values.gravity != nil, .gravity), (values.format != nil, .format), (values.quality != nil, .q),
            (values.formatQuality != nil, .fq), (values.dpr != nil, .dpr), (values.enlarge != nil, .enlarge),
        ]
        if let given = box.first(where: \.isSet) {
            throw .invalidValue(given.parameter.rawValue, reason: notWithRawReason)
        }
        var picture = values
        picture.raw = nil
        let operations = try Self.operations(picture, dpr: 1, format: .auto(accepting: []), watermarks: watermarks)
        var fields: [CanonicalField] = []
        operations.normalized.appendQuery(to: &fields)
        if let field = fields.first { throw .invalidValue(field.parameter.rawValue, reason: notWithRawReason) }
    }

    // MARK: - Values

    /// Digits only (no sign, no spaces, no leading `+`), at most 9 of them.
    package static func integer(_ text: String) -> Int? { ThumbValue.integer(text) }

    private static let dimensionReason = "must be an integer 1...\(ThumbnailSpec.maxDimension)"
    private static let qualityReason = "must be an integer 1...100"
    private static let devicePixelRatios = FixedDecimal.one...FixedDecimal(units: 4 * FixedDecimal.unitsPerOne)
    private static let devicePixelRatioReason = "must be a number 1...4"
    private static let focalPixelsReason =
        "fpx:x,y[,corner] needs two whole numbers 0...1000000 and a corner nw, ne, se or sw"

    /// A box side in CSS pixels, times `dpr`.
    private static func dimension(_ side: Int, name: String, dpr: Double) throws(RequestError) -> Int {
        guard ThumbnailSpec.dimensionRange.contains(side) else { throw .invalidValue(name, reason: dimensionReason) }
        let scaled = Int((Double(side) * dpr).rounded())
        guard scaled <= ThumbnailSpec.maxDimension else {
            throw .invalidValue(name, reason: "\(name) × dpr must be at most \(ThumbnailSpec.maxDimension)")
        }
        return scaled
    }

    /// A `Sec-CH-DPR` value lowered (to 2 decimals, not below 1) so that `w`, `h` and each side of `padding` times
    /// it stay within their limits: a hint never makes a request fail (the plan's own values are checked as usual).
    private static func hintedDevicePixelRatio(_ hinted: Double, _ values: PlanValues) -> Double {
        func ceiling(_ limit: Int, _ largest: Int?) -> Double {
            guard let largest, largest > 0 else { return .infinity }
            return (Double(limit) / Double(largest) * 100).rounded(.down) / 100
        }
        let side = [values.width, values.height].compactMap { $0 }.max()
        let padding = values.padding?.sides.max()
        let ratio = min(
            hinted, ceiling(ThumbnailSpec.maxDimension, side), ceiling(ThumbnailSpec.Operations.maxPadding, padding))
        return max(ratio, 1)
    }

    /// A plain decimal with one whole digit and at most 2 fraction digits (`1`, `1.5`, `2.25`); its range (1...4)
    /// is checked when the plan is built.
    private static func devicePixelRatio(_ text: String) throws(RequestError) -> FixedDecimal {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isPlainDecimal =
            !text.isEmpty && parts.count <= 2
            && parts.allSatisfy { part in
                !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
            } && parts[0].utf8.count <= 1 && (parts.count == 1 || parts[1].utf8.count <= 2)
        guard isPlainDecimal, let value = FixedDecimal(parsing: text) else {
            throw .invalidValue("dpr", reason: devicePixelRatioReason)
        }
        return value
    }

    /// `centre` (or `center`), a compass point, `attention`, `entropy`, `fp:x,y` or `fpx:x,y`.
    private static func gravity(_ text: String) throws(RequestError) -> PlanGravity {
        if text.hasPrefix("fpx:") {
            let parts = text.dropFirst(4).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2 || parts.count == 3, let x = integer(String(parts[0])),
                let y = integer(String(parts[1]))
            else { throw .invalidValue("gravity", reason: focalPixelsReason) }
            guard parts.count == 3 else { return .focalPixels(x: x, y: y) }
            guard let corner = FocalPoint.corners.first(where: { $0.value == parts[2] })?.key else {
                throw .invalidValue("gravity", reason: focalPixelsReason)
            }
            return .focalPixels(x: x, y: y, corner: corner)
        }
        if text.hasPrefix("fp:") {
            let parts = text.dropFirst(3).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = FixedDecimal(parsing: parts[0]), let y = FixedDecimal(parsing: parts[1])
            else { throw .invalidValue("gravity", reason: "fp:x,y needs two fractions 0...1") }
            return .focalPoint(x: x, y: y)
        }
        guard let gravity = Gravity(rawValue: text == "center" ? "centre" : text) else {
            throw .invalidValue(
                "gravity", reason: "must be centre, a compass point, attention, entropy, face, smart, fp:x,y or fpx:x,y"
            )
        }
        return .gravity(gravity)
    }

    private static let formatQualityReason =
        "must be format:quality pairs (jpeg, png, webp, avif, jxl, heic, gif; 1...100)"

    /// `format:quality[,format:quality…]`, each format once (its range is checked when the plan is built).
    private static func formatQualities(_ text: String) throws(RequestError) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, case .exactly(let format)? = try? formatChoice(String(parts[0])),
                let quality = integer(String(parts[1])), qualities.updateValue(quality, forKey: format) == nil
            else { throw .invalidValue("fq", reason: formatQualityReason) }
        }
        return qualities
    }

    private static func formatChoice(_ text: String) throws(RequestError) -> FormatChoice {
        switch text {
        case "auto": return .auto
        case "jpeg", "jpg": return .exactly(.jpeg)
        case "png": return .exactly(.png)
        case "webp": return .exactly(.webp)
        case "avif": return .exactly(.avif)
        case "jxl": return .exactly(.jxl)
        case "heic", "heif": return .exactly(.heif)
        case "gif": return .exactly(.gif)
        default: throw .invalidValue("format", reason: "must be jpeg, png, webp, avif, jxl, heic, gif or auto")
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
