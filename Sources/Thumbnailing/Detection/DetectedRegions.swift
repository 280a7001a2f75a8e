// SPDX-License-Identifier: Apache-2.0

/// What a source's analysis found: faces (a cascade's boxes) and good features to track (corners), in pixels of the
/// source as it stands upright by its EXIF orientation, whatever the size of the picture they were found on.
///
/// Made once per source by ``FaceDetector/detect(in:)`` on the source's intermediate and reused by every size and
/// URL form; `Codable` so that a cache can keep it beside the source.
package struct DetectedRegions: Sendable, Hashable, Codable {
    /// The upright source's width, in pixels.
    package var sourceWidth: Int
    /// The upright source's height, in pixels.
    package var sourceHeight: Int
    /// The faces, in upright source pixels, as the cascade found them (no margin, no hair offset added).
    package var faces: [Box]
    /// Good features to track (thumbor's feature detector), in upright source pixels, the strongest first.
    package var features: [Point]

    /// A rectangle in upright source pixels: its top-left corner and its size.
    package struct Box: Sendable, Hashable, Codable {
        package var x: Int
        package var y: Int
        package var width: Int
        package var height: Int

        package init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// A point in upright source pixels (pixel centres at whole numbers, as OpenCV's corners).
    package struct Point: Sendable, Hashable, Codable {
        package var x: Double
        package var y: Double

        package init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    package init(sourceWidth: Int, sourceHeight: Int, faces: [Box], features: [Point]) {
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.faces = faces
        self.features = features
    }
}
