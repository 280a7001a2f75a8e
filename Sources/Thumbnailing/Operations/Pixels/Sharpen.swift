// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `sharpen=<sigma>`: unsharp masking, sigma 0...10. Key ` sharpen=`.
enum SharpenOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.sharpen]

    static let range = FixedDecimal.zero...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.sharpen = try ThumbValue.decimal(text, .sharpen, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let sharpen = values.sharpen { operations.sharpen = sharpen }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.sharpen, .sharpen, in: range)
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.sharpen != .zero { text += " sharpen=\(operations.sharpen)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.sharpen != .zero { fields.append(CanonicalField(.sharpen, operations.sharpen.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.sharpen_sigma = operations.sharpen.value
    }
}
