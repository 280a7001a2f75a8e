// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `min_w=<n>`, `min_h=<n>` in CSS pixels × dpr: the resized picture is at least that wide (high). When the box's
/// scale leaves it narrower, the scale is raised until that side is exactly the minimum, the other side following
/// the aspect ratio; this enlarges whatever `enlarge` says, as imgproxy's `mw`/`mh` do. A cover crop still cuts to
/// the box. Resolved by the render once the picture's size is known (`thumbd_resize_target`). Keys ` min_w=`,
/// ` min_h=` (output pixels).
enum MinimumSidesOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.min_w, .min_h]

    static let range = 0...ThumbnailSpec.maxDimension

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let value = try ThumbValue.integer(text, parameter, within: range)
        if parameter == .min_w { values.minimumWidth = value } else { values.minimumHeight = value }
    }

    /// The plan's CSS pixels times the dpr.
    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let width = values.minimumWidth { operations.minimumWidth = ThumbValue.scaled(width, dpr: context.dpr) }
        if let height = values.minimumHeight { operations.minimumHeight = ThumbValue.scaled(height, dpr: context.dpr) }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.minimumWidth, .min_w, in: range)
        _ = try ThumbValue.checked(operations.minimumHeight, .min_h, in: range)
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.minimumWidth > 0 { text += " min_w=\(operations.minimumWidth)" }
        if operations.minimumHeight > 0 { text += " min_h=\(operations.minimumHeight)" }
    }

    /// Output pixels, as `padding` writes them (the canonical query carries the dpr beside them).
    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.minimumWidth > 0 { fields.append(CanonicalField(.min_w, String(operations.minimumWidth))) }
        if operations.minimumHeight > 0 { fields.append(CanonicalField(.min_h, String(operations.minimumHeight))) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.min_width = Int32(operations.minimumWidth)
        params.min_height = Int32(operations.minimumHeight)
    }
}
