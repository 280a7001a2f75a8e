// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec.Operations {
    /// Whose size arithmetic the box follows (``RoundingOperation``).
    package enum Rounding: String, Hashable, Sendable, CaseIterable {
        /// thumbor's `fit-in`: inside the box, never enlarged but by `enlarge` (its `upscale()`).
        case thumborFitIn = "thumbor-fit-in"
        /// thumbor's `full-fit-in`: covering the box, uncropped.
        case thumborFullFitIn = "thumbor-full-fit-in"
        /// thumbor's crop mode: with one side given, the derived box; with both, thumbor's region of the picture
        /// (whole pixels) stretched to the box.
        case thumborCrop = "thumbor-crop"

        var mode: Int32 {
            switch self {
            case .thumborFitIn: THUMBD_VIPS_ROUNDING_THUMBOR_FIT_IN
            case .thumborFullFitIn: THUMBD_VIPS_ROUNDING_THUMBOR_FULL_FIT_IN
            case .thumborCrop: THUMBD_VIPS_ROUNDING_THUMBOR_CROP
            }
        }
    }
}

/// `rounding=thumbor-fit-in|thumbor-full-fit-in|thumbor-crop`: the output's size is thumbor 7.8's, to the pixel. A
/// missing side is derived from the picture (after orientation, trim and crop) and rounded half to even, then
/// fit-in's and full-fit-in's own rounding (half up), thumbor's `upscale()` (only a picture smaller on both sides
/// of a box with both sides, truncated) and its adaptive turn apply; the crop mode resizes to the derived box. With
/// both sides and `fit=cover`, the crop mode keeps thumbor's region (its transformer's auto_crop: whole pixels of the
/// picture, one side whole and the other rounded, placed by the compass point or centred on the focal point) and
/// stretches it to the box (`thumbd_thumbor_crop_region`); attention and entropy place no such region, so they are
/// refused beside it. Decided by the render once the header is read (`thumbd_box_settled`), so the key holds the
/// request as written. Key ` round=<value>`.
enum RoundingOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.rounding]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        guard let value = ThumbnailSpec.Operations.Rounding(rawValue: text) else {
            throw SpecError(field: "rounding", reason: "must be thumbor-fit-in, thumbor-full-fit-in or thumbor-crop")
        }
        values.rounding = value
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard let rounding = values.rounding else { return }
        if rounding == .thumborCrop, values.width != nil, values.height != nil, values.fit == .cover,
            values.gravity == .gravity(.attention) || values.gravity == .gravity(.entropy)
        {
            let strategy = values.gravity == .gravity(.attention) ? "attention" : "entropy"
            throw SpecError(
                field: "rounding",
                reason: "thumbor-crop places its crop by a compass point or a focal point, not by \(strategy)")
        }
        operations.rounding = rounding
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let rounding = operations.rounding { text += " round=" + rounding.rawValue }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let rounding = operations.rounding { fields.append(CanonicalField(.rounding, rounding.rawValue)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        // The missing sides are added by the bridge, which knows the box (Thumbnailer+CBridge.swift).
        params.thumbor_rounding = operations.rounding?.mode ?? 0
    }
}
