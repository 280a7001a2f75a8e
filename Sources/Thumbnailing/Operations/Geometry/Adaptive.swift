// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `adaptive=1`: the box turns to the picture's orientation (thumbor's `adaptive-fit-in`). Key ` adaptive`.
enum AdaptiveOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.adaptive]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.adaptive = try ThumbValue.boolean(text, .adaptive)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let adaptive = values.adaptive { operations.adaptive = adaptive }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.adaptive { text += " adaptive" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.adaptive { fields.append(CanonicalField(.adaptive, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.adaptive = operations.adaptive ? 1 : 0
    }
}
