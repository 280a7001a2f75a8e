// SPDX-License-Identifier: Apache-2.0

/// What thumbnail to make from a source, the render's whole plan: box, fit, crop gravity or focal point,
/// quality, upscaling, output format, and the steps around the resize (``Operations``).
///
/// A spec is valid by construction: the initialiser checks every range. It is `Hashable` so that it can be
/// part of a cache or coalescing key; pass it through `Thumbnailer.normalized(_:)` first so that equivalent
/// specs (say, `gravity` on a `contain` fit) compare equal.
///
/// ```swift
/// let spec = try ThumbnailSpec(width: 256, height: 256, fit: .cover, gravity: .attention,
///                              format: .auto(accepting: [.webp]))
/// ```
package struct ThumbnailSpec: Hashable, Sendable {
    /// The largest box side, and the bound used for an omitted side: no output side exceeds it.
    package static let maxDimension = 4096
    /// Valid box sides.
    package static let dimensionRange = 1...maxDimension
    /// Valid qualities.
    package static let qualityRange = 1...100

    /// Box width in pixels; `nil` keeps the aspect ratio from `height`.
    package let width: Int?
    /// Box height in pixels; `nil` keeps the aspect ratio from `width`.
    package let height: Int?
    /// How the picture goes into the box. With only one side given, every fit behaves as `contain`.
    package let fit: Fit
    /// Which part `cover` keeps, and where `pad` places the picture; ignored by the other fits.
    package let gravity: Gravity
    /// Encoder quality 1...100 for JPEG, WebP and AVIF; `nil` takes `Configuration.defaultQuality`.
    package let quality: Int?
    /// Whether a source smaller than the box may be scaled up. Off by default: upscaling only adds bytes.
    package let enlarge: Bool
    /// The output format, or `auto` negotiation.
    package let format: FormatRequest
    /// The quality by output format (`/thumb`'s `fq`), for a spec whose `quality` is not set: ``Thumbnailer``'s
    /// normalisation folds the entry of the format the request negotiates into `quality` and empties this, so the
    /// variant key holds one quality, as for `q`.
    package var formatQuality: [ImageFormat: Int] = [:]
    /// Where `cover` centres its crop, instead of `gravity` (which is then `.centre`).
    package let focalPoint: FocalPoint?
    /// The steps around the resize (orientation, trim, crop, effects, padding, background).
    package let operations: Operations

    /// Whether its render must first know the source's faces and features (``DetectedRegions``): true for the
    /// detection gravities where they choose the crop (pass a normalised spec: a gravity that does nothing is gone),
    /// and for a plan that redacts the faces (whose render fails without them).
    package var needsDetection: Bool { gravity.needsDetection || operations.redact != nil }
    /// Whether its detections must be thumbor's own (its Haar cascade on a 1024 px intermediate): thumbor's `smart`,
    /// whose crops must match thumbor's, and a redaction, which must miss no face the thorough search finds. The
    /// others (`gravity=face`, `/info`) take the quick search (`image.face_cascade`, `image.face_side`).
    package var needsThoroughDetection: Bool { gravity == .smart || operations.redact != nil }

    /// Builds a spec, checking every value.
    /// - Throws: `SpecError` naming the field when a side is out of `dimensionRange`, both sides are
    ///   missing, the quality is out of `qualityRange`, or an explicit format cannot be written.
    package init(
        width: Int?,
        height: Int?,
        fit: Fit = .contain,
        gravity: Gravity = .centre,
        quality: Int? = nil,
        enlarge: Bool = false,
        format: FormatRequest = .auto(accepting: []),
        focalPoint: FocalPoint? = nil,
        operations: Operations = Operations()
    ) throws(SpecError) {
        if let width, !Self.dimensionRange.contains(width) {
            throw SpecError(field: "width", reason: "must be \(Self.dimensionRange.lowerBound)...\(Self.maxDimension)")
        }
        if let height, !Self.dimensionRange.contains(height) {
            throw SpecError(field: "height", reason: "must be \(Self.dimensionRange.lowerBound)...\(Self.maxDimension)")
        }
        if width == nil && height == nil {
            throw SpecError(field: "width", reason: "width or height is required")
        }
        if let quality, !Self.qualityRange.contains(quality) {
            throw SpecError(field: "quality", reason: "must be 1...100")
        }
        if case .exactly(let output) = format, !output.isEncodable {
            throw SpecError(field: "format", reason: "\(output) cannot be written")
        }
        if focalPoint != nil && gravity != .centre {
            throw SpecError(field: "gravity", reason: "a focal point replaces the gravity")
        }
        if let faceCrop = operations.faceCrop, gravity != .face {
            throw SpecError(field: faceCrop.parameter.rawValue, reason: "needs gravity=face")
        }
        if operations.originalSides.contains(.width) && width == nil {
            throw SpecError(field: "orig", reason: "orig=w needs w, the largest width it may be")
        }
        if operations.originalSides.contains(.height) && height == nil {
            throw SpecError(field: "orig", reason: "orig=h needs h, the largest height it may be")
        }
        try operations.validate()
        self.width = width
        self.height = height
        self.fit = fit
        self.gravity = gravity
        self.quality = quality
        self.enlarge = enlarge
        self.format = format
        self.focalPoint = focalPoint
        self.operations = operations
    }
}

/// How a picture is fitted into the box.
package enum Fit: String, Hashable, Sendable, CaseIterable {
    /// Inside the box, aspect ratio kept: one side matches the box, the other is smaller or equal.
    case contain
    /// Fills the box, aspect ratio kept; what overflows is cropped according to the gravity.
    case cover
    /// Exactly the box, aspect ratio ignored (stretched). Without `enlarge`, the box is first scaled down,
    /// keeping its own aspect, until no axis of the source would be upscaled.
    case fill
    /// Inside the box like `contain`, then extended to exactly the box with the background colour
    /// (transparent by default), the picture placed by the gravity (letterboxing).
    case pad
    /// Covers the box, aspect ratio kept, nothing cropped: one side matches the box, the other is larger or equal
    /// (thumbor's `full-fit-in`).
    case outside
    /// `cover` when the picture (after orientation and crop) and the box are both landscape (or square) or both
    /// portrait, else `contain` (imgproxy's `auto`).
    case auto
    /// `cover`; without `enlarge`, a box larger than the picture (on either side) first shrinks, keeping its aspect,
    /// to the largest size inside the picture (imgproxy's `fill-down`). With `enlarge` it is `cover`.
    case coverDown = "cover-down"
}

/// Which part of the picture a `cover` crop keeps.
package enum Gravity: String, Hashable, Sendable, CaseIterable {
    case centre
    case north
    case northEast = "northeast"
    case east
    case southEast = "southeast"
    case south
    case southWest = "southwest"
    case west
    case northWest = "northwest"
    /// libvips's attention strategy: the region with most edges, skin tones and saturated colour.
    case attention
    /// libvips's entropy strategy: the busiest region.
    case entropy
    /// The faces found in the source: the crop centred on the box holding them all (closer with `face_zoom` or
    /// `face_pad`), or libvips's attention when none is found (Cloudflare's `gravity=face`, imgix's `crop=faces`).
    case face
    /// thumbor's smart crop with its face and feature detectors: centred on the faces' centre of mass (each weighted
    /// by its area, its top raised by 12 % for the hair), else on the strongest corners', else on the centre.
    case smart

    /// Whether the render must first know the source's faces (``DetectedRegions``).
    package var needsDetection: Bool { self == .face || self == .smart }
    /// Whether it chooses the crop from the pixels (libvips's strategies, the detections) rather than a compass point.
    package var looksAtPixels: Bool { self == .attention || self == .entropy || needsDetection }
}

/// The output format a request asks for.
package enum FormatRequest: Hashable, Sendable {
    /// This format, or `ThumbnailError.outputFormatUnavailable`.
    case exactly(ImageFormat)
    /// Negotiated: the first of `Thumbnailer.Configuration.autoFormats` (default AVIF, JPEG XL, WebP) that is
    /// accepted and writable, else JPEG, or PNG when the thumbnail has transparent pixels. JPEG and PNG are always
    /// acceptable; HEIC is never negotiated.
    case auto(accepting: AcceptedFormats)
}

/// The optional formats a client accepts (from its `Accept` header), for `FormatRequest.auto`.
package struct AcceptedFormats: OptionSet, Hashable, Sendable {
    /// One bit per format.
    package let rawValue: UInt8
    /// The set with these bits.
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// `image/webp`.
    package static let webp = AcceptedFormats(rawValue: 1 << 0)
    /// `image/avif`.
    package static let avif = AcceptedFormats(rawValue: 1 << 1)
    /// `image/jxl`.
    package static let jxl = AcceptedFormats(rawValue: 1 << 2)

    /// The member for `format`, if `auto` can negotiate it (AVIF, JPEG XL, WebP).
    package init?(_ format: ImageFormat) {
        switch format {
        case .webp: self = .webp
        case .avif: self = .avif
        case .jxl: self = .jxl
        default: return nil
        }
    }
}

extension ThumbnailSpec {
    /// For values already checked (normalisation of a valid spec).
    init(
        validatedWidth width: Int?,
        height: Int?,
        fit: Fit,
        gravity: Gravity,
        quality: Int?,
        enlarge: Bool,
        format: FormatRequest,
        focalPoint: FocalPoint?,
        operations: Operations
    ) {
        self.width = width
        self.height = height
        self.fit = fit
        self.gravity = gravity
        self.quality = quality
        self.enlarge = enlarge
        self.format = format
        self.focalPoint = focalPoint
        self.operations = operations
    }
}
