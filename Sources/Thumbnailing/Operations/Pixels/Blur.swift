// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `blur=<sigma>`: a Gaussian blur, sigma 0...100 output pixels. Key ` blur=`.
enum BlurOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.blur]

    static let range = FixedDecimal.zero...FixedDecimal(units: 100 * FixedDecimal.unitsPerOne)

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.blur = try ThumbValue.decimal(text, .blur, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let blur = values.blur { operations.blur = blur }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.blur, .blur, in: range)
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.blur != .zero { text += " blur=\(operations.blur)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.blur != .zero { fields.append(CanonicalField(.blur, operations.blur.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.blur_sigma = operations.blur.value
    }
}
