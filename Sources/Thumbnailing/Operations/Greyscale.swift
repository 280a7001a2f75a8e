// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `grayscale=1`: one grey channel (plus alpha). Key ` grey`.
enum GreyscaleOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.grayscale]

    static func parse(
        _ values: [ThumbParameter: String], _ context: OperationContext,
        into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let text = values[.grayscale] { operations.greyscale = try ThumbValue.boolean(text, .grayscale) }
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
