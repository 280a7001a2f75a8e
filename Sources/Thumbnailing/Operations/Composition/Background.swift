// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `bg=RRGGBB[AA]`: the colour of padded areas; when opaque, transparent pixels are flattened onto it. Key ` bg=`
/// (after the watermark's token, though the query writes `bg` before `wm`).
enum BackgroundOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.bg]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        guard let colour = RGBAColour(hex: text) else {
            throw SpecError(field: "bg", reason: "must be RRGGBB or RRGGBBAA (hexadecimal)")
        }
        values.background = colour
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.background = values.background
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let background = operations.background { text += " bg=\(background)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let background = operations.background { fields.append(CanonicalField(.bg, background.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let background = operations.background else { return }
        params.has_background = 1
        params.background = (
            Double(background.red), Double(background.green), Double(background.blue), Double(background.alpha)
        )
    }
}
