// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `brightness` (-255...255, added), `contrast` (0...10) and `saturation` (-10...10, multipliers; below 0 the
/// chroma turns to the opposite hue, as thumbor's negative factor does): one linear step in C.
/// Keys ` bri=`, ` con=`, ` sat=`.
enum ToneOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.brightness, .contrast, .saturation]

    static let brightnessRange = -255...255
    static let multiplierRange = FixedDecimal.zero...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)
    static let saturationRange =
        FixedDecimal(units: -10 * FixedDecimal.unitsPerOne)...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .brightness: values.brightness = try ThumbValue.integer(text, .brightness, within: brightnessRange)
        case .contrast: values.contrast = try ThumbValue.decimal(text, .contrast, within: multiplierRange)
        default: values.saturation = try ThumbValue.decimal(text, .saturation, within: saturationRange)
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let brightness = values.brightness { operations.brightness = brightness }
        if let contrast = values.contrast { operations.contrast = contrast }
        if let saturation = values.saturation { operations.saturation = saturation }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.brightness, .brightness, in: brightnessRange)
        _ = try ThumbValue.checked(operations.contrast, .contrast, in: multiplierRange)
        _ = try ThumbValue.checked(operations.saturation, .saturation, in: saturationRange)
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.brightness != 0 { text += " bri=\(operations.brightness)" }
        if operations.contrast != .one { text += " con=\(operations.contrast)" }
        if operations.saturation != .one { text += " sat=\(operations.saturation)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.brightness != 0 { fields.append(CanonicalField(.brightness, String(operations.brightness))) }
        if operations.contrast != .one { fields.append(CanonicalField(.contrast, operations.contrast.description)) }
        if operations.saturation != .one {
            fields.append(CanonicalField(.saturation, operations.saturation.description))
        }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.brightness = Double(operations.brightness)
        params.contrast = operations.contrast.value
        params.saturation = operations.saturation.value
    }
}
