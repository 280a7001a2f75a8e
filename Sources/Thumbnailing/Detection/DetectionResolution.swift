// SPDX-License-Identifier: Apache-2.0
import CVipsShims

// How the detections of a source become the render's geometry, once they are known (on the render thread, before the
// one C call): `gravity=face` and thumbor's `smart` turn into a focal point in pixels of the turned picture, which the
// shim already resolves through trims and crops (`focal_in_pixels`), and `face_zoom`/`face_pad` into a placed crop
// centred on the faces. Without a detection the gravity's fallback stays (attention for `face`, the centre for
// `smart`: `Gravity.vipsGravity`).

extension Thumbnailer {
    /// thumbor raises a face's box by this share of its height for the hair (its face detector's `HAIR_OFFSET`).
    static let hairOffset = 0.12

    /// Fills the gravity, focal point or crop that `spec`'s detection gravity asks, from `regions`.
    static func resolveDetections(
        _ spec: ThumbnailSpec, _ regions: DetectedRegions?, into params: inout ThumbdVipsThumbnailParams
    ) {
        guard spec.gravity.needsDetection, spec.focalPoint == nil, let regions,
            params.fit == THUMBD_VIPS_FIT_COVER || params.fit == THUMBD_VIPS_FIT_AUTO
                || params.fit == THUMBD_VIPS_FIT_COVER_DOWN
        else { return }
        let turned = regions.turned(by: spec.operations.orientation)
        switch spec.gravity {
        case .smart:
            guard let point = thumborFocus(turned, crop: spec.operations.crop) else { return }
            setFocalPixels(point, &params)
        default:
            guard let faces = turned.facesBounds else { return }
            if let faceCrop = spec.operations.faceCrop {
                let region = faceRegion(
                    faces, faceCrop, picture: (turned.width, turned.height),
                    box: (Double(params.width), Double(params.height)))
                params.crop_unit = THUMBD_VIPS_CROP_PLACED
                (params.crop_width, params.crop_height) = (region.width, region.height)
                params.crop_gravity = THUMBD_VIPS_GRAVITY_FOCAL
                params.crop_left = faces.centreX / turned.width
                params.crop_top = faces.centreY / turned.height
                params.crop_fractions = 0
                params.gravity = THUMBD_VIPS_GRAVITY_CENTRE
            } else {
                setFocalPixels((faces.centreX, faces.centreY), &params)
            }
        }
    }

    /// A point in pixels of the turned picture, before any trim (the shim moves it into the trimmed frame and the crop).
    private static func setFocalPixels(_ point: (x: Double, y: Double), _ params: inout ThumbdVipsThumbnailParams) {
        params.gravity = THUMBD_VIPS_GRAVITY_FOCAL
        (params.focal_x, params.focal_y) = (point.x, point.y)
        params.focal_in_pixels = 1
        params.focal_corner = THUMBD_VIPS_GRAVITY_CENTRE
    }

    /// thumbor's focal point with its face and feature detectors on: each face's centre (its top first raised by
    /// ``hairOffset`` of its height unless that leaves the picture) weighted by its area, or, with no face, each of
    /// the strongest corners weighted 1; the points outside a manual crop dropped; their centre of mass, floored, as
    /// thumbor's `get_center_of_mass` (the same arithmetic as its `focal()` filters, `ThumborFilters.focal`).
    package static func thumborFocus(_ turned: DetectedRegions.Turned, crop: ThumbnailSpec.Crop?) -> (
        x: Double, y: Double
    )? {
        var points = thumborPoints(faces: turned.faces, features: turned.features)
        if case .pixels(let left, let top, let width, let height)? = crop {
            points = points.filter { $0.x >= left && $0.x <= left + width && $0.y >= top && $0.y <= top + height }
        }
        let total = points.reduce(0) { $0 + $1.weight }
        guard !points.isEmpty, total > 0 else { return nil }
        let x = points.reduce(0) { $0 + Double($1.x) * $1.weight } / total
        let y = points.reduce(0) { $0 + Double($1.y) * $1.weight } / total
        return (x.rounded(.down), y.rounded(.down))
    }

    /// One of the points thumbor's face and feature detectors add (its `FocalPoint`): whole pixels, a weight, the
    /// box it stands for (1 x 1 for a corner), and whether a face gave it.
    package struct ThumborPoint: Sendable, Equatable {
        package var x: Int
        package var y: Int
        package var weight: Double
        package var width: Int
        package var height: Int
        package var isFace: Bool
    }

    /// The points thumbor's detectors add for these faces, or, with none, these corners: a face's centre by
    /// `FocalPoint.from_square` (floor division, its top first raised by ``hairOffset`` of its height unless that
    /// leaves the picture, truncated to whole pixels), weighted by its area; a corner truncated, weighing 1.
    package static func thumborPoints(
        faces: [DetectedRegions.Rect], features: [DetectedRegions.Point]
    ) -> [ThumborPoint] {
        guard faces.isEmpty else {
            return faces.map { face in
                let (left, width, height) = (Int(face.x), Int(face.width), Int(face.height))
                var top = Double(Int(face.y))
                if top - Double(height) * hairOffset >= 0 { top -= Double(height) * hairOffset }
                return ThumborPoint(
                    x: left + width / 2, y: Int(top + Double(height / 2)), weight: Double(width * height),
                    width: width, height: height, isFace: true)
            }
        }
        return features.map { ThumborPoint(x: Int($0.x), y: Int($0.y), weight: 1, width: 1, height: 1, isFace: false) }
    }

    /// The region `face_zoom` or `face_pad` crops, of the box's aspect, before it is centred on the faces and kept
    /// inside the picture (by the shim's placed crop): never larger than the largest region of that aspect the
    /// picture holds.
    static func faceRegion(
        _ faces: DetectedRegions.Rect, _ faceCrop: ThumbnailSpec.FaceCrop, picture: (width: Double, height: Double),
        box: (width: Double, height: Double)
    ) -> (width: Double, height: Double) {
        let aspect = box.width / box.height
        func fitted(_ width: Double, _ height: Double) -> (width: Double, height: Double) {
            // The smallest region of the box's aspect holding width x height.
            width / height > aspect ? (width, width / aspect) : (height * aspect, height)
        }
        let largest =
            picture.width / picture.height > aspect
            ? (width: picture.height * aspect, height: picture.height)
            : (width: picture.width, height: picture.width / aspect)
        var region: (width: Double, height: Double)
        switch faceCrop {
        case .zoom(let zoom):
            let tight = fitted(faces.width, faces.height)
            let z = zoom.value
            region = (
                largest.width + z * (tight.width - largest.width), largest.height + z * (tight.height - largest.height)
            )
        case .pad(let pad):
            region = fitted(faces.width * pad.value, faces.height * pad.value)
        }
        if region.width > largest.width { region = largest }
        return (max(1, region.width), max(1, region.height))
    }
}
