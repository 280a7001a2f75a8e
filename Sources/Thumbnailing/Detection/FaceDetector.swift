// SPDX-License-Identifier: Apache-2.0
import CFaceShims
import CVipsShims

/// Finds faces and good features to track on a source's intermediate, as thumbor's face and feature detectors do
/// (`thumbor.detectors.face_detector`, `thumbor.detectors.feature_detector`): OpenCV's cascade classifier over the
/// grey picture with scale factor 1.2, 4 neighbours and a smallest face of `max(20, min(width, height) / 15)` pixels,
/// and good features to track with at most 20 corners, quality 0.04 and a distance of 1 pixel.
///
/// Blocking and thread-safe: call ``detect(in:)`` on a render thread (a detection on a 512 px intermediate takes
/// milliseconds; BENCHMARKS.md). Each thread loads a cascade once and keeps it (CFaceShims): OpenCV's classifier
/// must not run on two threads at once. OpenCV starts no threads of its own.
///
/// ```swift
/// let detector = try FaceDetector(configuration: .init())
/// let image = try thumbnailer.analysisImage(sourceBytes, band: 512)   // on a render thread
/// let regions = try detector.detect(in: image)                       // boxes in upright source pixels
/// ```
package struct FaceDetector: Sendable {
    /// What the detector runs with. The defaults are thumbor's.
    package struct Configuration: Sendable, Hashable {
        /// thumbor's `FACE_DETECTOR_CASCADE_FILE` default, as Debian's opencv-data installs it.
        package static let defaultCascadePath = "/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml"

        /// The cascade file (OpenCV's XML, Haar or LBP).
        package var cascadePath: String
        /// How much the search window grows between scales (> 1).
        package var scaleFactor: Double
        /// How many overlapping detections a face needs to be kept.
        package var minNeighbours: Int
        /// The longer side of the copy of the intermediate faces are searched on (area-averaged), when the
        /// intermediate is larger; 0 searches the intermediate itself (thumbor's way, on its whole picture). A
        /// cascade's cost grows with the pixels searched (BENCHMARKS.md, "Face detection").
        package var faceSide: Int
        /// Whether the corners are found when faces are (thumbor's smart crop and `meta/` read them only without a
        /// face; the service skips them, a direct caller gets both by default).
        package var featuresBesideFaces: Bool
        /// At most this many faces are kept, in the order OpenCV found them.
        package var maxFaces: Int
        /// At most this many corners (good features to track's `maxCorners`).
        package var maxFeatures: Int
        /// A corner's quality at least this fraction of the best one's (`qualityLevel`, in (0, 1]).
        package var featureQuality: Double
        /// The smallest distance between two corners, in the intermediate's pixels (`minDistance`).
        package var featureMinDistance: Double

        package init(
            cascadePath: String = Configuration.defaultCascadePath,
            scaleFactor: Double = 1.2,
            minNeighbours: Int = 4,
            faceSide: Int = 0,
            featuresBesideFaces: Bool = true,
            maxFaces: Int = 32,
            maxFeatures: Int = 20,
            featureQuality: Double = 0.04,
            featureMinDistance: Double = 1.0
        ) {
            self.cascadePath = cascadePath
            self.scaleFactor = scaleFactor
            self.minNeighbours = minNeighbours
            self.faceSide = faceSide
            self.featuresBesideFaces = featuresBesideFaces
            self.maxFaces = maxFaces
            self.maxFeatures = maxFeatures
            self.featureQuality = featureQuality
            self.featureMinDistance = featureMinDistance
        }

        /// Checks the numbers (not the cascade: ``FaceDetector/init(configuration:)`` loads it).
        package func validate() throws(FaceDetectorError) {
            guard scaleFactor > 1, scaleFactor.isFinite else {
                throw .invalidConfiguration("scaleFactor must be above 1, not \(scaleFactor)")
            }
            guard faceSide == 0 || faceSide >= 64 else {
                throw .invalidConfiguration("faceSide must be 0 (the intermediate) or at least 64, not \(faceSide)")
            }
            guard minNeighbours >= 0, maxFaces >= 0, maxFeatures >= 0 else {
                throw .invalidConfiguration("minNeighbours, maxFaces and maxFeatures must not be negative")
            }
            guard featureQuality > 0, featureQuality <= 1 else {
                throw .invalidConfiguration("featureQuality must be in (0, 1], not \(featureQuality)")
            }
            guard featureMinDistance >= 0, featureMinDistance.isFinite else {
                throw .invalidConfiguration("featureMinDistance must not be negative, not \(featureMinDistance)")
            }
        }
    }

    /// The configuration it detects with.
    package let configuration: Configuration

    /// Checks `configuration` and loads its cascade on the calling thread (kept there for later detections).
    /// - Throws: `.invalidConfiguration`, or `.cascadeUnreadable` when the file is missing or not a cascade.
    package init(configuration: Configuration = Configuration()) throws(FaceDetectorError) {
        try configuration.validate()
        var error: UnsafeMutablePointer<CChar>?
        if thumbd_opencv_load_cascade(configuration.cascadePath, &error) != 0 {
            throw .cascadeUnreadable(path: configuration.cascadePath, detail: Self.take(error))
        }
        self.configuration = configuration
    }

    /// Blocks (a render thread). Faces on the intermediate's grey pixels (Pillow's `convert("L")`, as thumbor's
    /// engine hands its detectors) with thumbor's parameters: `detectMultiScale(grey, 1.2, 4, minSize)` with minSize
    /// `max(20, min(width, height) / 15)` of the intermediate's size; features with good features to track (20
    /// corners, quality 0.04, distance 1), always, so that a plan can fall back on them when no face is found. Boxes
    /// and points are scaled to upright source pixels.
    /// - Throws: `.cascadeUnreadable` (a thread that cannot load the cascade), `.detectionFailed`.
    package func detect(in image: IntermediateImage) throws(FaceDetectorError) -> DetectedRegions {
        var grey = ThumbdVipsGrey()
        defer {
            thumbd_vips_free(grey.pixels)
            thumbd_vips_free(grey.error_detail)
        }
        let step = withExtendedLifetime(image) { thumbd_vips_intermediate_grey(image.pointer, &grey) }
        guard step == THUMBD_VIPS_STEP_OK, let pixels = grey.pixels else {
            throw .detectionFailed(grey.error_detail.map { String(cString: $0) } ?? "no grey pixels")
        }
        let width = Int(grey.width), height = Int(grey.height)
        let picture = ThumbdOpenCVGrey(pixels: pixels, width: grey.width, height: grey.height, stride: width)
        // thumbor's smallest face, 1/15 of the shorter side and at least 20 px, in the pixels searched.
        let searchScale =
            configuration.faceSide > 0 && Swift.max(width, height) > configuration.faceSide
            ? Double(configuration.faceSide) / Double(Swift.max(width, height)) : 1
        let shorter = Int((Double(Swift.min(width, height)) * searchScale).rounded())
        let faces = try findFaces(in: picture, smallest: Swift.max(20, shorter / 15))
        // thumbor's feature detector runs only when its face detector found nothing (and nothing reads the
        // corners beside faces): skipped then when asked, which saves their cost on every picture with a face.
        let corners = faces.isEmpty || configuration.featuresBesideFaces ? try findFeatures(in: picture) : []

        // Intermediate pixels to upright source pixels (the intermediate is the upright source, resized).
        let sourceWidth = Int(grey.upright_width), sourceHeight = Int(grey.upright_height)
        let kx = Double(sourceWidth) / Double(width), ky = Double(sourceHeight) / Double(height)
        func scaled(_ value: Int32, _ k: Double, _ limit: Int) -> Int {
            Swift.min(limit, Swift.max(0, Int((Double(value) * k).rounded())))
        }
        let boxes = faces.map { box in
            let left = scaled(box.x, kx, sourceWidth), top = scaled(box.y, ky, sourceHeight)
            return DetectedRegions.Box(
                x: left, y: top,
                width: scaled(box.x + box.width, kx, sourceWidth) - left,
                height: scaled(box.y + box.height, ky, sourceHeight) - top)
        }
        // A corner is a pixel centre: centres map to centres.
        let points = corners.map { point in
            DetectedRegions.Point(x: (point.x + 0.5) * kx - 0.5, y: (point.y + 0.5) * ky - 0.5)
        }
        return DetectedRegions(sourceWidth: sourceWidth, sourceHeight: sourceHeight, faces: boxes, features: points)
    }

    /// The cascade's boxes in `picture`'s pixels, at most `maxFaces`.
    private func findFaces(in picture: ThumbdOpenCVGrey, smallest: Int) throws(FaceDetectorError) -> [ThumbdOpenCVBox] {
        let room = configuration.maxFaces
        var count: Int32 = 0
        var error: UnsafeMutablePointer<CChar>?
        var boxes = [ThumbdOpenCVBox](repeating: ThumbdOpenCVBox(), count: room)
        let status = boxes.withUnsafeMutableBufferPointer { buffer in
            thumbd_opencv_detect_faces(
                picture, configuration.cascadePath, configuration.scaleFactor, Int32(configuration.minNeighbours),
                Int32(smallest), Int32(configuration.faceSide), buffer.baseAddress, Int32(room), &count, &error)
        }
        if status != 0 {
            let detail = Self.take(error)
            if detail.hasPrefix("cannot load the cascade") {
                throw .cascadeUnreadable(path: configuration.cascadePath, detail: detail)
            }
            throw .detectionFailed(detail)
        }
        return Array(boxes.prefix(Swift.min(room, Int(count))))
    }

    /// Good features to track in `picture`'s pixels, the strongest first.
    private func findFeatures(in picture: ThumbdOpenCVGrey) throws(FaceDetectorError) -> [ThumbdOpenCVPoint] {
        let room = configuration.maxFeatures
        var count: Int32 = 0
        var error: UnsafeMutablePointer<CChar>?
        var points = [ThumbdOpenCVPoint](repeating: ThumbdOpenCVPoint(), count: room)
        let status = points.withUnsafeMutableBufferPointer { buffer in
            thumbd_opencv_good_features(
                picture, Int32(room), configuration.featureQuality, configuration.featureMinDistance,
                Int32(configuration.faceSide), buffer.baseAddress, Int32(room), &count, &error)
        }
        if status != 0 { throw .detectionFailed(Self.take(error)) }
        return Array(points.prefix(Swift.min(room, Int(count))))
    }

    /// A shim's error text as a string, its C memory released.
    private static func take(_ error: UnsafeMutablePointer<CChar>?) -> String {
        defer { thumbd_opencv_free(error) }
        return error.map { String(cString: $0) } ?? "unknown error"
    }
}
