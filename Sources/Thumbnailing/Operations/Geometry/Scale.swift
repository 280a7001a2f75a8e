// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `scale=<p>`: the resized picture's sides times p (0 < p ≤ 1), truncated, as thumbor's `proportion(p)` scales
/// its output after the resize (not the box). Decided by the render once it knows the resized size
/// (`thumbd_box_settled`); nothing when a side would fall below 1 px, as in thumbor. Key ` scale=`.
enum ScaleOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.scale]

    static let range = FixedDecimal(units: 1)...FixedDecimal.one

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.scale = try ThumbValue.decimal(text, .scale, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let scale = values.scale { operations.scale = scale }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.scale, .scale, in: range)
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.scale != .one { text += " scale=\(operations.scale)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.scale != .one { fields.append(CanonicalField(.scale, operations.scale.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.output_scale = operations.scale.value
    }
}
