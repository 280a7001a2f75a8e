// SPDX-License-Identifier: Apache-2.0
import CVipsShims

// Conversions between the Swift types and the C shim's plain structs and enums. Nothing here outlives a call.

extension Thumbnailer {
    /// Bit (1 << ThumbdVipsFormat) for each allowed source format.
    var sourceMask: UInt32 {
        configuration.allowedSourceFormats.reduce(0) { $0 | (1 << $1.vipsFormat.rawValue) }
    }

    /// The shim's parameters for `spec`: one-sided boxes become `contain` with the other side bounded by
    /// `ThumbnailSpec.maxDimension`, so no output side can exceed it even with `enlarge`. `regions`: the source's
    /// detections, for a gravity that needs them (`face`, `smart`); without them the gravity's fallback is rendered,
    /// and a plan that redacts fails (``ThumbnailError/detectionUnavailable(_:)``).
    func parameters(
        for spec: ThumbnailSpec, regions: DetectedRegions? = nil
    ) throws(ThumbnailError) -> ThumbdVipsThumbnailParams {
        let formats = try outputFormats(for: spec.format)
        let configuration = self.configuration  // one read: the lock, and one consistent set of values
        let oneSided = spec.width == nil || spec.height == nil
        var params = ThumbdVipsThumbnailParams()
        params.width = Int32(spec.width ?? ThumbnailSpec.maxDimension)
        params.height = Int32(spec.height ?? ThumbnailSpec.maxDimension)
        params.fit = oneSided ? THUMBD_VIPS_FIT_CONTAIN : spec.fit.vipsFit
        params.gravity = spec.gravity.vipsGravity
        params.enlarge = spec.enlarge ? 1 : 0
        params.format_opaque = formats.opaque.vipsFormat
        params.format_alpha = formats.transparent.vipsFormat
        params.quality = Int32(spec.quality ?? configuration.defaultQuality)
        params.jpeg_progressive = configuration.jpegProgressive ? 1 : 0
        params.png_compression = Int32(configuration.pngCompression)
        params.webp_effort = Int32(configuration.webpEffort)
        params.avif_effort = Int32(configuration.avifEffort)
        params.jxl_effort = Int32(configuration.jxlEffort)
        params.allowed_sources = sourceMask
        params.max_source_pixels = Int64(configuration.maxSourcePixels)
        if let focalPoint = spec.focalPoint, params.fit == THUMBD_VIPS_FIT_COVER || params.fit == THUMBD_VIPS_FIT_AUTO {
            params.gravity = THUMBD_VIPS_GRAVITY_FOCAL
            params.focal_x = focalPoint.x.value
            params.focal_y = focalPoint.y.value
            params.focal_in_pixels = focalPoint.inPixels ? 1 : 0
            if let corner = focalPoint.corner { params.focal_corner = corner.vipsGravity }
        }
        spec.operations.fill(&params)  // after the configuration's encoder values, which a plan may override
        Self.resolveDetections(spec, regions, into: &params)
        try Self.resolveRedaction(spec, regions, into: &params)
        if params.thumbor_rounding != 0 {
            // thumbor derives a missing side from the picture: the render needs to know which one it is.
            if spec.width == nil { params.thumbor_rounding |= THUMBD_VIPS_ROUNDING_NO_WIDTH }
            if spec.height == nil { params.thumbor_rounding |= THUMBD_VIPS_ROUNDING_NO_HEIGHT }
        }
        params.format_animated =
            spec.operations.animated
            ? animatedFormat(for: spec.format)?.vipsFormat ?? THUMBD_VIPS_FORMAT_UNKNOWN : THUMBD_VIPS_FORMAT_UNKNOWN
        params.max_frames = Int32(clamping: configuration.maxFrames)
        return params
    }
}

extension ThumbnailSpec.Operations {
    /// Copies the steps into the shim's parameters (the step table in Sources/CVipsShims/pipeline.c runs them): each operation's descriptor fills its
    /// own fields.
    func fill(_ params: inout ThumbdVipsThumbnailParams) {
        for descriptor in OperationRegistry.steps { descriptor.fill(self, into: &params) }
    }
}

extension ThumbnailError {
    /// The error for a failed shim step. `detail` is libvips's (shared, log-only) error text; `sniffed` is the
    /// format the magic bytes suggest, used only to name a refused format.
    init(
        step: ThumbdVipsStep,
        detail: UnsafePointer<CChar>?,
        loader: UnsafePointer<CChar>?,
        sourceFormat: ThumbdVipsFormat,
        width: Int32,
        height: Int32,
        sniffed: ImageFormat?
    ) {
        let text = detail.map { String(cString: $0) } ?? ""
        switch step {
        case THUMBD_VIPS_STEP_UNRECOGNISED:
            self = .notAnImage
        case THUMBD_VIPS_STEP_REFUSED_FORMAT:
            // The magic bytes name AVIF even when the whole heif family was refused before its header was read.
            let name = sniffed ?? ImageFormat(sourceFormat)
            self = .unsupportedFormat(name?.rawValue ?? Self.shortName(ofLoader: loader))
        case THUMBD_VIPS_STEP_HEADER, THUMBD_VIPS_STEP_DECODE:
            self = .decodeFailed(text)
        case THUMBD_VIPS_STEP_PIXEL_LIMIT:
            self = .tooManyPixels(width: Int(width), height: Int(height))
        case THUMBD_VIPS_STEP_SAVE:
            self = .encodeFailed(text)
        case THUMBD_VIPS_STEP_REGION:
            self = .cropOutsidePicture
        case THUMBD_VIPS_STEP_CANVAS_LIMIT:
            self = .canvasTooLarge
        case THUMBD_VIPS_STEP_FRAME_LIMIT:
            self = .tooManyFrames
        case THUMBD_VIPS_STEP_NOT_ANIMATABLE:
            self = .notAnimatable("trim")
        case THUMBD_VIPS_STEP_WATERMARK:
            self = .watermarkUnusable
        case THUMBD_VIPS_STEP_FRAME:
            self = .frameUnusable
        default:
            // THUMBD_VIPS_STEP_THUMBNAIL, or OK with a result Swift cannot represent (a shim bug).
            self = .renderFailed(text.isEmpty ? "step \(step.rawValue)" : text)
        }
    }

    /// "VipsForeignLoadSvgBuffer" -> "svg": a readable name for a refused loader.
    private static func shortName(ofLoader loader: UnsafePointer<CChar>?) -> String {
        guard let loader else { return "unknown" }
        var name = Substring(String(cString: loader))
        for prefix in ["VipsForeignLoad"] where name.hasPrefix(prefix) { name = name.dropFirst(prefix.count) }
        for suffix in ["Buffer", "Source", "File"] where name.hasSuffix(suffix) { name = name.dropLast(suffix.count) }
        return name.lowercased()
    }
}

extension ImageFormat {
    init?(_ format: ThumbdVipsFormat) {
        switch format {
        case THUMBD_VIPS_FORMAT_JPEG: self = .jpeg
        case THUMBD_VIPS_FORMAT_PNG: self = .png
        case THUMBD_VIPS_FORMAT_WEBP: self = .webp
        case THUMBD_VIPS_FORMAT_GIF: self = .gif
        case THUMBD_VIPS_FORMAT_TIFF: self = .tiff
        case THUMBD_VIPS_FORMAT_HEIF: self = .heif
        case THUMBD_VIPS_FORMAT_AVIF: self = .avif
        case THUMBD_VIPS_FORMAT_JXL: self = .jxl
        default: return nil
        }
    }

    var vipsFormat: ThumbdVipsFormat {
        switch self {
        case .jpeg: THUMBD_VIPS_FORMAT_JPEG
        case .png: THUMBD_VIPS_FORMAT_PNG
        case .webp: THUMBD_VIPS_FORMAT_WEBP
        case .gif: THUMBD_VIPS_FORMAT_GIF
        case .tiff: THUMBD_VIPS_FORMAT_TIFF
        case .heif: THUMBD_VIPS_FORMAT_HEIF
        case .avif: THUMBD_VIPS_FORMAT_AVIF
        case .jxl: THUMBD_VIPS_FORMAT_JXL
        }
    }
}

extension Fit {
    var vipsFit: ThumbdVipsFit {
        switch self {
        case .contain: THUMBD_VIPS_FIT_CONTAIN
        case .cover: THUMBD_VIPS_FIT_COVER
        case .fill: THUMBD_VIPS_FIT_FILL
        case .pad: THUMBD_VIPS_FIT_PAD
        case .outside: THUMBD_VIPS_FIT_OUTSIDE
        case .auto: THUMBD_VIPS_FIT_AUTO
        case .coverDown: THUMBD_VIPS_FIT_COVER_DOWN
        }
    }
}

extension Gravity {
    var vipsGravity: ThumbdVipsGravity {
        switch self {
        case .centre: THUMBD_VIPS_GRAVITY_CENTRE
        case .north: THUMBD_VIPS_GRAVITY_NORTH
        case .northEast: THUMBD_VIPS_GRAVITY_NORTH_EAST
        case .east: THUMBD_VIPS_GRAVITY_EAST
        case .southEast: THUMBD_VIPS_GRAVITY_SOUTH_EAST
        case .south: THUMBD_VIPS_GRAVITY_SOUTH
        case .southWest: THUMBD_VIPS_GRAVITY_SOUTH_WEST
        case .west: THUMBD_VIPS_GRAVITY_WEST
        case .northWest: THUMBD_VIPS_GRAVITY_NORTH_WEST
        case .attention: THUMBD_VIPS_GRAVITY_ATTENTION
        case .entropy: THUMBD_VIPS_GRAVITY_ENTROPY
        // What each renders as when nothing was detected (the render resolves them from the detections first).
        case .face: THUMBD_VIPS_GRAVITY_ATTENTION
        case .smart: THUMBD_VIPS_GRAVITY_CENTRE
        }
    }
}
