// SPDX-License-Identifier: Apache-2.0

extension ThumbnailSpec {
    /// The steps a plan runs around its resize, in the order they run (docs/api.md, "The pipeline"):
    /// orientation, trim, crop, [resize and cover crop], tone, grey, blur, sharpen, pixelate, padding, background.
    ///
    /// Every value is canonical by construction: numbers are fixed-point, an orientation is one rotation
    /// and at most one mirror, and every field's default does nothing. Two spellings of one plan are
    /// therefore equal values, and `Operations()` is a plain resize.
    ///
    /// Each field belongs to one descriptor (``OperationRegistry``), which owns its `/thumb` parameters, parse and
    /// range, key token, canonical query text and C fill; a new operation is a field here, a descriptor file and its
    /// rows in the registry.
    package struct Operations: Hashable, Sendable {
        /// Renders every frame of an animated source when the output format can hold them (GIF, WebP); off
        /// renders the first frame only. On by default.
        package var animated = true
        /// Applies the source's EXIF orientation first. On by default.
        package var autoOrient = true
        /// A rotation and mirror after the EXIF orientation: boxes, crops and gravities refer to the picture
        /// as turned.
        package var orientation = Orientation.none
        /// Removes borders of one colour before the crop.
        package var trim: Trim?
        /// The region of the (oriented, trimmed) picture that is resized.
        package var crop: Crop?
        /// The box's sides trade places when its orientation (landscape or portrait) is not the picture's (after
        /// crop): thumbor's `adaptive-fit-in`. Nothing with a one-sided or square box.
        package var adaptive = false
        /// Added to every colour channel, -255...255.
        package var brightness = 0
        /// Multiplies the distance from mid-grey, 0...10; 1 does nothing.
        package var contrast = FixedDecimal.one
        /// Multiplies the chroma, 0...10; 1 does nothing.
        package var saturation = FixedDecimal.one
        /// Turns the picture grey (one channel, plus alpha).
        package var greyscale = false
        /// Gaussian blur sigma in output pixels, 0...100; 0 does nothing.
        package var blur = FixedDecimal.zero
        /// Sharpening sigma, 0...10; 0 does nothing.
        package var sharpen = FixedDecimal.zero
        /// Pixelation block size in output pixels, 0 or 2...256; 0 does nothing.
        package var pixelate = 0
        /// Output pixels added on each side.
        package var padding = Padding.zero
        /// The colour of padded areas; when opaque, transparent pixels are also flattened onto it.
        package var background: RGBAColour?
        /// An image laid over the output, last.
        package var watermark: Watermark?
        /// Progressive JPEG / interlaced PNG; `nil` takes the configuration's.
        package var progressive: Bool?
        /// JPEG and AVIF chroma subsampling; `nil` lets libvips choose (4:2:0 below quality 90).
        package var chroma: Chroma?
        /// Lossless WebP and AVIF.
        package var lossless = false
        /// AVIF encoder effort 0...9; `nil` takes the configuration's.
        package var avifEffort: Int?
        /// Largest body in bytes: lossy output is encoded again at lower qualities (down to
        /// `Operations.maxBytesQualityFloor`) until it fits.
        package var maxBytes: Int?
        /// Keeps the source's EXIF copyright and artist (JPEG, WebP and AVIF output).
        package var keepCopyright = false
        /// Keeps the source's ICC profile, pixels unconverted, instead of converting to sRGB.
        package var keepColourProfile = false

        /// A plain resize.
        package init() {}

        /// Largest padding on one side, in output pixels.
        package static let maxPadding = 1024
        /// `maxBytes` range.
        package static let maxBytesRange = 1024...100_000_000
        /// The lowest quality `maxBytes` goes down to.
        package static let maxBytesQualityFloor = 10
    }
}

/// Every operation's descriptor, in the two orders the persisted and public texts need. Both lists name every
/// descriptor once (OperationRegistryTests checks it); a new operation adds one row to each.
enum OperationRegistry {
    /// The order the steps run in, which is the variant key's order (persisted: never reorder).
    static let steps: [any OperationDescriptor.Type] = [
        AnimatedOperation.self, AutoOrientOperation.self, OrientationOperation.self, AdaptiveOperation.self,
        TrimOperation.self, CropOperation.self, ToneOperation.self, GreyscaleOperation.self, BlurOperation.self,
        SharpenOperation.self, PixelateOperation.self, PaddingOperation.self, WatermarkOperation.self,
        BackgroundOperation.self, KeepCopyrightOperation.self, ColourProfileOperation.self,
        ProgressiveOperation.self, ChromaOperation.self, LosslessOperation.self, AVIFEffortOperation.self,
        MaxBytesOperation.self,
    ]

    /// The order of `/thumb`'s parameters (``ThumbParameter``): the canonical query's, and the order a request's
    /// parameters are checked in (so the first bad one is the one named). It differs from ``steps``: `bg` comes
    /// before the watermark here and after it in the key, and the metadata options come last.
    static let queryOrder: [any OperationDescriptor.Type] = [
        AnimatedOperation.self, AutoOrientOperation.self, OrientationOperation.self, AdaptiveOperation.self,
        TrimOperation.self, CropOperation.self, ToneOperation.self, GreyscaleOperation.self, BlurOperation.self,
        SharpenOperation.self, PixelateOperation.self, PaddingOperation.self, BackgroundOperation.self,
        WatermarkOperation.self, ProgressiveOperation.self, ChromaOperation.self, LosslessOperation.self,
        AVIFEffortOperation.self, MaxBytesOperation.self, KeepCopyrightOperation.self, ColourProfileOperation.self,
    ]
}

/// The `/thumb` query's parameters besides `sig` and `preset`: the box and output ones, then each operation's,
/// in the canonical query's order. They live beside the descriptors that read them (like imgproxy's
/// `options/keys` beside `processing/`), because the canonical query and the key are the plan's identity.
package enum ThumbParameter: String, CaseIterable, Sendable {
    case url, w, h, fit, gravity, format, q, dpr, enlarge
    // The pipeline's steps, in ``OperationRegistry/queryOrder``.
    case animated, autorotate, rotate, flip, adaptive, trim, crop, brightness, contrast, saturation, grayscale,
        blur, sharpen
    case pixelate, padding, bg
    case wm, wm_url, wm_pos, wm_x, wm_y, wm_opacity, wm_scale
    case progressive, chroma, lossless, avif_effort, max_bytes, keep_copyright, icc
}

/// What parsing an operation needs besides its parameters' text.
package struct OperationContext {
    /// The device pixel ratio that values in CSS pixels (padding, watermark offsets) are multiplied by.
    package var dpr: Double
    /// The format asked for by name; an encoder option it cannot honour is refused (`nil`: `format=auto`).
    package var explicitFormat: ImageFormat?
    /// The watermarks `wm=` may name, and the check of `wm_url`.
    package var watermarks: any WatermarkCatalog

    package init(dpr: Double, explicitFormat: ImageFormat?, watermarks: any WatermarkCatalog) {
        self.dpr = dpr
        self.explicitFormat = explicitFormat
        self.watermarks = watermarks
    }
}

/// The configured watermarks and the source URL rules, which live above this module.
package protocol WatermarkCatalog {
    /// The digest of the named watermark's bytes, `nil` when no watermark has that name.
    func digest(named name: String) -> UInt64?
    /// The canonical form of a watermark URL, `nil` when it is not one a source could be.
    func canonicalURL(_ text: String) -> String?
}

/// One `/thumb` field of the canonical query: the value is written as is, or percent-encoded (URLs).
package struct CanonicalField: Sendable {
    package let parameter: ThumbParameter
    package let value: String
    package let isURL: Bool

    init(_ parameter: ThumbParameter, _ value: String, isURL: Bool = false) {
        self.parameter = parameter
        self.value = value
        self.isURL = isURL
    }
}

extension ThumbnailSpec.Operations {
    /// The operations `/thumb`'s parameters ask for, checked in query order; the error names the parameter.
    package static func parse(
        _ values: [ThumbParameter: String], context: OperationContext
    ) throws(SpecError) -> Self {
        var operations = Self()
        for descriptor in OperationRegistry.queryOrder {
            try descriptor.parse(values, context, into: &operations)
        }
        return operations
    }

    /// Checks every range, with the same checks and messages as ``parse(_:context:)``.
    package func validate() throws(SpecError) {
        for descriptor in OperationRegistry.queryOrder { try descriptor.validate(self) }
    }

    /// The canonical form: neutral values removed (pixelate 1, a crop of the whole picture, an invisible watermark).
    package var normalized: Self {
        var copy = self
        for descriptor in OperationRegistry.steps { descriptor.normalize(&copy) }
        return copy
    }

    /// Appends the key's tokens (` still ao=0 o=90m … max_bytes=…`): only the steps that do something, in the
    /// order they run. A plain resize adds nothing, so its key is the one it had before the pipeline existed.
    package func appendKey(to text: inout String) {
        for descriptor in OperationRegistry.steps { descriptor.appendKey(self, to: &text) }
    }

    /// The `/thumb` fields that differ from `Operations()`, in query order.
    package func appendQuery(to fields: inout [CanonicalField]) {
        for descriptor in OperationRegistry.queryOrder { descriptor.appendQuery(self, to: &fields) }
    }
}
