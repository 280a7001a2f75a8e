// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec.Operations {
    /// What `saturation` scales (`saturation_model`).
    package enum SaturationModel: String, Hashable, Sendable {
        /// The chroma in LCh (lightness and hue stay).
        case lch
        /// thumbor's: each band's distance from the HSP brightness √(0.299 R² + 0.587 G² + 0.114 B²), in thumbor's
        /// float arithmetic, truncated and clamped.
        case hsp
    }
}

/// `brightness` (-255...255, added), `contrast` and `saturation` (0...10, multipliers): one linear step in C;
/// `saturation_model=hsp` scales with thumbor's formula instead (-1000...1000: thumbor's negative factors invert).
/// Keys ` bri=`, ` con=`, ` sat=`, ` sat_model=hsp`.
enum ToneOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.brightness, .contrast, .saturation, .saturation_model]

    static let brightnessRange = -255...255
    static let multiplierRange = FixedDecimal.zero...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)
    static let hspLimit = 1000 * FixedDecimal.unitsPerOne
    static let hspRange = FixedDecimal(units: -hspLimit)...FixedDecimal(units: hspLimit)

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .brightness: values.brightness = try ThumbValue.integer(text, .brightness, within: brightnessRange)
        case .contrast: values.contrast = try ThumbValue.decimal(text, .contrast, within: multiplierRange)
        case .saturation_model:
            guard let model = ThumbnailSpec.Operations.SaturationModel(rawValue: text) else {
                throw SpecError(field: parameter.rawValue, reason: "must be lch or hsp")
            }
            values.saturationModel = model
        default: values.saturation = try ThumbValue.decimal(text, .saturation, within: multiplierRange)
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let brightness = values.brightness { operations.brightness = brightness }
        if let contrast = values.contrast { operations.contrast = contrast }
        if let saturation = values.saturation { operations.saturation = saturation }
        // The model of a factor 1 is no model: one plan, one value.
        if let model = values.saturationModel, operations.saturation != .one { operations.saturationModel = model }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.brightness, .brightness, in: brightnessRange)
        _ = try ThumbValue.checked(operations.contrast, .contrast, in: multiplierRange)
        let saturationRange = operations.saturationModel == .hsp ? hspRange : multiplierRange
        _ = try ThumbValue.checked(operations.saturation, .saturation, in: saturationRange)
    }

    /// thumbor's formula with the factor 1 changes nothing either.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if operations.saturation == .one { operations.saturationModel = .lch }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.brightness != 0 { text += " bri=\(operations.brightness)" }
        if operations.contrast != .one { text += " con=\(operations.contrast)" }
        if operations.saturation != .one { text += " sat=\(operations.saturation)" }
        if operations.saturationModel == .hsp && operations.saturation != .one { text += " sat_model=hsp" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.brightness != 0 { fields.append(CanonicalField(.brightness, String(operations.brightness))) }
        if operations.contrast != .one { fields.append(CanonicalField(.contrast, operations.contrast.description)) }
        if operations.saturation != .one {
            fields.append(CanonicalField(.saturation, operations.saturation.description))
        }
        if operations.saturationModel == .hsp && operations.saturation != .one {
            fields.append(CanonicalField(.saturation_model, "hsp"))
        }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.brightness = Double(operations.brightness)
        params.contrast = operations.contrast.value
        params.saturation = operations.saturation.value
        params.saturation_model = operations.saturationModel == .hsp ? 1 : 0
    }
}
