// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// `redact=faces[,blur|pixelate|box[,strength]]`: every face the source's detection found hidden in the output.
    package struct Redaction: Hashable, Sendable {
        /// How each face is hidden.
        package enum Mode: String, Hashable, Sendable, CaseIterable {
            /// A Gaussian blur inside the face's box.
            case blur
            /// Blocks of one colour inside the face's box.
            case pixelate
            /// The box's outline drawn (imgproxy Pro's `draw_detections`): shows what was found, hides nothing.
            case box
        }

        package var mode: Mode
        /// In output pixels: blur's sigma (0.1...100), pixelate's block (2...256, whole), box's line width (1...64,
        /// whole). `nil`: blur and pixelate in proportion to each face's size in the output (sigma its larger side / 6,
        /// block / 8, at least 2), the box's line 2 pixels.
        package var strength: FixedDecimal?
        /// Each face's box grown by this share of its width and height on every side before it is redacted (a
        /// detector's box is tight: hair, ears and chin lie outside it), 0...1.
        package var margin: FixedDecimal

        /// The margin when none is given.
        package static let defaultMargin = FixedDecimal(units: 2 * FixedDecimal.unitsPerOne / 10)
        /// The box's line width when none is given.
        package static let defaultLine = FixedDecimal(units: 2 * FixedDecimal.unitsPerOne)

        package init(mode: Mode = .blur, strength: FixedDecimal? = nil, margin: FixedDecimal = defaultMargin) {
            self.mode = mode
            self.strength = strength
            self.margin = margin
        }

        /// The strengths `mode` takes.
        var strengthRange: ClosedRange<FixedDecimal> {
            switch mode {
            case .blur:
                FixedDecimal(units: FixedDecimal.unitsPerOne / 10)...FixedDecimal(units: 100 * FixedDecimal.unitsPerOne)
            case .pixelate:
                FixedDecimal(units: 2 * FixedDecimal.unitsPerOne)...FixedDecimal(units: 256 * FixedDecimal.unitsPerOne)
            case .box: FixedDecimal.one...FixedDecimal(units: 64 * FixedDecimal.unitsPerOne)
            }
        }

        /// `faces,blur`, `faces,pixelate,8`: the value of `redact=` and of the key's token.
        var text: String {
            var text = "faces," + mode.rawValue
            if let strength { text += ",\(strength)" }
            return text
        }
    }
}

/// `redact=faces[,blur|pixelate|box[,strength]]` and `redact_margin=<0…1>`: each face of the source's detection
/// (``DetectedRegions``), grown by the margin (default 0.2 of its size on every side), blurred (the default),
/// pixelated or outlined in the output, wherever it shows after the turn, trim, crop and cover crop; after the
/// resize effects, before round corners, the canvas, the frame and the watermarks. Without a strength, blur and
/// pixelate grow with the face's size in the output, so a face is unrecognisable at any size. A render of a
/// redacting plan without detections fails (``ThumbnailError/detectionUnavailable(_:)``), never answering the picture
/// unredacted; with detections and no face, the picture is unchanged. The boxes are the render's
/// (`Thumbnailer.resolveRedaction`). Keys ` redact=faces,<mode>[,<strength>]` and ` rmargin=` (when not 0.2).
enum RedactOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.redact, .redact_margin]

    static let marginRange = FixedDecimal.zero...FixedDecimal.one
    static let reason = "must be faces[,blur|pixelate|box[,strength]]"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        if parameter == .redact_margin {
            values.redactMargin = try ThumbValue.decimal(text, .redact_margin, within: marginRange)
            return
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0] == "faces" else {
            throw SpecError(field: "redact", reason: reason)
        }
        var redaction = ThumbnailSpec.Redaction()
        if parts.count > 1 {
            guard let mode = ThumbnailSpec.Redaction.Mode(rawValue: String(parts[1])) else {
                throw SpecError(field: "redact", reason: reason)
            }
            redaction.mode = mode
        }
        if parts.count > 2 {
            guard let strength = FixedDecimal(parsing: parts[2]) else {
                throw SpecError(field: "redact", reason: strengthReason(redaction.mode))
            }
            redaction.strength = strength
        }
        values.redact = redaction
    }

    private static func strengthReason(_ mode: ThumbnailSpec.Redaction.Mode) -> String {
        let range = ThumbnailSpec.Redaction(mode: mode).strengthRange
        let kind = mode == .blur ? "a number" : "an integer"
        return "\(mode.rawValue)'s strength must be \(kind) \(range.lowerBound)...\(range.upperBound)"
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard var redaction = values.redact else { return }
        redaction.margin = values.redactMargin ?? ThumbnailSpec.Redaction.defaultMargin
        operations.redact = redaction
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let redaction = operations.redact else { return }
        if let strength = redaction.strength {
            guard redaction.strengthRange.contains(strength), redaction.mode == .blur || strength.isWhole else {
                throw SpecError(field: "redact", reason: strengthReason(redaction.mode))
            }
        }
        _ = try ThumbValue.checked(redaction.margin, .redact_margin, in: marginRange)
    }

    /// The box's default line written out is the default.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if operations.redact?.mode == .box && operations.redact?.strength == ThumbnailSpec.Redaction.defaultLine {
            operations.redact?.strength = nil
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let redaction = operations.redact else { return }
        text += " redact=" + redaction.text
        if redaction.margin != ThumbnailSpec.Redaction.defaultMargin { text += " rmargin=\(redaction.margin)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let redaction = operations.redact else { return }
        fields.append(CanonicalField(.redact, redaction.text))
        if redaction.margin != ThumbnailSpec.Redaction.defaultMargin {
            fields.append(CanonicalField(.redact_margin, redaction.margin.description))
        }
    }

    /// The mode and strength; the boxes are the render's, from the detections (`Thumbnailer.resolveRedaction`).
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let redaction = operations.redact else { return }
        switch redaction.mode {
        case .blur: params.redact_mode = THUMBD_VIPS_REDACT_BLUR
        case .pixelate: params.redact_mode = THUMBD_VIPS_REDACT_PIXELATE
        case .box: params.redact_mode = THUMBD_VIPS_REDACT_BOX
        }
        params.redact_strength = redaction.strength?.value ?? 0
    }
}
