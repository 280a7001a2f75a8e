// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// How close `gravity=face` crops to the faces, beside a cover fit and a two-sided box:
/// - `face_zoom=<z>` (0...1, Cloudflare's `zoom`): 0 keeps as much of the picture as the box's aspect allows (what
///   `gravity=face` alone does), 1 the smallest region of the box's aspect that holds every face; between, the
///   region's size in proportion.
/// - `face_pad=<p>` (1...10, imgix's `facepad` of `fit=facearea`): the region of the box's aspect that holds the
///   faces' box grown p times around its centre (1: the faces' box itself).
/// Either way the region is centred on the faces' box and kept inside the picture, then resized to the box (not
/// enlarged unless `enlarge` allows it); without a face, the whole picture is cropped by attention. Resolved by the
/// render once the source's faces are known (`Thumbnailer.resolveDetections`); nothing here reaches C directly.
/// Refused beside `trim` and `crop`, whose frame the faces are not measured in. Keys ` fzoom=` and ` fpad=`.
enum FaceCropOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.face_zoom, .face_pad]

    static let zoomRange = FixedDecimal.zero...FixedDecimal.one
    static let padRange = FixedDecimal.one...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .face_zoom: values.faceZoom = try ThumbValue.decimal(text, .face_zoom, within: zoomRange)
        default: values.facePad = try ThumbValue.decimal(text, .face_pad, within: padRange)
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        switch (values.faceZoom, values.facePad) {
        case (nil, nil): return
        case (let zoom?, nil): operations.faceCrop = .zoom(zoom)
        case (nil, let pad?): operations.faceCrop = .pad(pad)
        case (_?, _?): throw SpecError(field: "face_pad", reason: "not with face_zoom: choose one")
        }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        switch operations.faceCrop {
        case nil: return
        case .zoom(let zoom): _ = try ThumbValue.checked(zoom, .face_zoom, in: zoomRange)
        case .pad(let pad): _ = try ThumbValue.checked(pad, .face_pad, in: padRange)
        }
        let name = operations.faceCrop?.parameter.rawValue ?? ""
        if operations.trim != nil { throw SpecError(field: name, reason: "not with trim") }
        if operations.crop != nil { throw SpecError(field: name, reason: "not with crop") }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        switch operations.faceCrop {
        case nil: return
        case .zoom(let zoom): text += " fzoom=\(zoom)"
        case .pad(let pad): text += " fpad=\(pad)"
        }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        switch operations.faceCrop {
        case nil: return
        case .zoom(let zoom): fields.append(CanonicalField(.face_zoom, zoom.description))
        case .pad(let pad): fields.append(CanonicalField(.face_pad, pad.description))
        }
    }

    /// The region is the render's to resolve from the detections (`Thumbnailer.resolveDetections`).
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {}
}

extension ThumbnailSpec {
    /// `face_zoom` or `face_pad`: see ``FaceCropOperation``.
    package enum FaceCrop: Hashable, Sendable {
        case zoom(FixedDecimal)
        case pad(FixedDecimal)

        /// The `/thumb` parameter that states it.
        var parameter: ThumbParameter {
            switch self {
            case .zoom: .face_zoom
            case .pad: .face_pad
            }
        }
    }
}
