// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `autorotate=0`: the source's EXIF orientation is not applied. Key ` ao=0`.
enum AutoOrientOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.autorotate]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.autoOrient = try ThumbValue.boolean(text, .autorotate)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let autoOrient = values.autoOrient { operations.autoOrient = autoOrient }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if !operations.autoOrient { text += " ao=0" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if !operations.autoOrient { fields.append(CanonicalField(.autorotate, "0")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.auto_orient = operations.autoOrient ? 1 : 0
    }
}
