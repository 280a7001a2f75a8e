// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `pixelate=<block>`: blocks of 2...256 output pixels; 0 and 1 do nothing. Key ` pixelate=`.
enum PixelateOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.pixelate]

    static let range = 0...256

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.pixelate = try ThumbValue.integer(text, .pixelate, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let pixelate = values.pixelate { operations.pixelate = pixelate }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.pixelate, .pixelate, in: range)
    }

    /// A block of one pixel is the picture itself.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if operations.pixelate == 1 { operations.pixelate = 0 }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.pixelate != 0 { text += " pixelate=\(operations.pixelate)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.pixelate != 0 { fields.append(CanonicalField(.pixelate, String(operations.pixelate))) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.pixelate = Int32(operations.pixelate)
    }
}
