// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `grayscale=1`: one grey channel (plus alpha). Key ` grey`.
enum GreyscaleOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.grayscale]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.greyscale = try ThumbValue.boolean(text, .grayscale)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let greyscale = values.greyscale { operations.greyscale = greyscale }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.greyscale { text += " grey" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.greyscale { fields.append(CanonicalField(.grayscale, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.greyscale = operations.greyscale ? 1 : 0
    }
}
