// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `animated=0`: the first frame only. Key ` still`. The C side reads it as `format_animated`, which also depends
/// on the output format, so `Thumbnailer.parameters(for:)` fills it.
enum AnimatedOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.animated]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.animated = try ThumbValue.boolean(text, .animated)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let animated = values.animated { operations.animated = animated }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if !operations.animated { text += " still" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if !operations.animated { fields.append(CanonicalField(.animated, "0")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {}
}
