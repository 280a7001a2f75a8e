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

extension DetectedRegions {
    /// A rectangle in pixels of a picture, not necessarily whole.
    package struct Rect: Sendable, Hashable {
        package var x: Double
        package var y: Double
        package var width: Double
        package var height: Double

        package init(x: Double, y: Double, width: Double, height: Double) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// A box's rectangle.
        package init(_ box: Box) {
            self.init(x: Double(box.x), y: Double(box.y), width: Double(box.width), height: Double(box.height))
        }

        package var centreX: Double { x + width / 2 }
        package var centreY: Double { y + height / 2 }

        /// The smallest rectangle holding both.
        package func union(_ other: Rect) -> Rect {
            let left = min(x, other.x)
            let top = min(y, other.y)
            let right = max(x + width, other.x + other.width)
            let bottom = max(y + height, other.y + other.height)
            return Rect(x: left, y: top, width: right - left, height: bottom - top)
        }
    }

    /// The regions in the picture a plan's turn makes of the upright source (rotated clockwise by its degrees, then
    /// mirrored left-right), which is the frame the render's crops and focal points are written in.
    package func turned(by orientation: ThumbnailSpec.Orientation) -> Turned {
        var width = Double(sourceWidth)
        var height = Double(sourceHeight)
        var faces = self.faces.map(Rect.init)
        var features = self.features
        // One quarter turn clockwise at a time: (x, y) in a W x H picture goes to (H - y, x) in an H x W one.
        for _ in 0..<(orientation.degrees / 90) {
            faces = faces.map { Rect(x: height - $0.y - $0.height, y: $0.x, width: $0.height, height: $0.width) }
            features = features.map { Point(x: height - $0.y, y: $0.x) }
            swap(&width, &height)
        }
        if orientation.mirrored {
            faces = faces.map { Rect(x: width - $0.x - $0.width, y: $0.y, width: $0.width, height: $0.height) }
            features = features.map { Point(x: width - $0.x, y: $0.y) }
        }
        return Turned(width: width, height: height, faces: faces, features: features)
    }

    /// The regions in the turned picture (``turned(by:)``).
    package struct Turned: Sendable, Hashable {
        /// The turned picture's size.
        package var width: Double
        package var height: Double
        package var faces: [Rect]
        package var features: [Point]

        /// The smallest rectangle holding every face; `nil` without faces.
        package var facesBounds: Rect? {
            guard var bounds = faces.first else { return nil }
            for face in faces.dropFirst() { bounds = bounds.union(face) }
            return bounds
        }
    }
}
