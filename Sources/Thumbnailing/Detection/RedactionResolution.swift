// SPDX-License-Identifier: Apache-2.0
import CVipsShims

// How the detections of a source become `redact`'s boxes, on the render thread before the one C call: each face
// grown by the plan's margin, turned into the picture the plan's rotate and flip make (the frame the shim's boxes are
// written in, as `focal_in_pixels` is), then mapped by the shim through the trim, the crop and the cover crop into the
// output (steps/redact.c). A plan that redacts and has no detections fails here: its picture is never rendered as it
// is.

extension Thumbnailer {
    /// Fills `redact`'s boxes from `regions`' faces.
    /// - Throws: ``ThumbnailError/detectionUnavailable(_:)`` when `spec` redacts and `regions` is `nil`.
    static func resolveRedaction(
        _ spec: ThumbnailSpec, _ regions: DetectedRegions?, into params: inout ThumbdVipsThumbnailParams
    ) throws(ThumbnailError) {
        guard let redaction = spec.operations.redact else { return }
        guard let regions else { throw .detectionUnavailable("redact") }
        let boxes = redactionBoxes(regions.turned(by: spec.operations.orientation).faces, margin: redaction.margin)
        params.redact_count = Int32(boxes.count)
        withUnsafeMutableBytes(of: &params.redact_boxes) { raw in
            let slots = raw.bindMemory(to: ThumbdVipsRedactBox.self)
            for (slot, box) in boxes.enumerated() {
                slots[slot] = ThumbdVipsRedactBox(x: box.x, y: box.y, width: box.width, height: box.height)
            }
        }
    }

    /// The boxes the shim redacts: each face grown by `margin` of its width and height on every side; beyond the
    /// shim's THUMBD_VIPS_MAX_REDACT, the last box holds every face left (more is hidden, never less).
    package static func redactionBoxes(
        _ faces: [DetectedRegions.Rect], margin: FixedDecimal
    ) -> [DetectedRegions.Rect] {
        let grown = faces.map { face in
            let dx = face.width * margin.value, dy = face.height * margin.value
            return DetectedRegions.Rect(
                x: face.x - dx, y: face.y - dy, width: face.width + 2 * dx, height: face.height + 2 * dy)
        }
        let limit = Int(THUMBD_VIPS_MAX_REDACT)
        guard grown.count > limit else { return grown }
        let rest = grown[(limit - 1)...].dropFirst().reduce(grown[limit - 1]) { $0.union($1) }
        return Array(grown[..<(limit - 1)]) + [rest]
    }
}
