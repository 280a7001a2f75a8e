// SPDX-License-Identifier: Apache-2.0

extension ThumbnailSpec {
    /// The steps a plan runs around its resize, in the order they run (docs/api.md, "The pipeline"):
    /// orientation, trim, crop, [resize and cover crop], tone, grey, blur, sharpen, pixelate, padding, background.
    ///
    /// Every value is canonical by construction: numbers are fixed-point, an orientation is one rotation
    /// and at most one mirror, and every field's default does nothing. Two spellings of one plan are
    /// therefore equal values, and `Operations()` is a plain resize.
    ///
    /// Each field belongs to one descriptor (``OperationRegistry``), which owns its `/thumb` parameters, their parse
    /// into ``PlanValues`` and its build from them, its range, key token, canonical query text and C fill; a new
    /// operation is a field here and in ``PlanValues``, a descriptor file and its rows in the registry.
    package struct Operations: Hashable, Sendable {
        /// The page of a PDF source, from 1 (``PageOperation``); 1 for every other source.
        package var page = 1
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
        /// Moves the cover crop of a compass gravity (output pixels, or fractions of the resized picture's side).
        package var gravityOffset: CropOffset?
        /// How close `gravity=face` crops to the faces (`face_zoom`, `face_pad`); `nil`: as far as the box allows.
        package var faceCrop: FaceCrop?
        /// The box's sides trade places when its orientation (landscape or portrait) is not the picture's (after
        /// crop): thumbor's `adaptive-fit-in`. Nothing with a one-sided or square box.
        package var adaptive = false
        /// The box's sides that are the picture's own (after orientation, trim and crop), at most the box's side
        /// given: thumbor's `orig` beside a number, resolved on the render thread once the header is read.
        package var originalSides: OriginalSides = []
        /// The output's sides times this after the resize, truncated (0 < scale ≤ 1; 1 does nothing): thumbor's
        /// `proportion(p)`, decided by the render from the resized picture's size.
        package var scale = FixedDecimal.one
        /// The resized picture's least width and height in output pixels (0: none), the box's scale raised to
        /// reach them (imgproxy's `mw`/`mh`), resolved on the render thread once the header is read.
        package var minimumWidth = 0
        package var minimumHeight = 0
        /// The plan's dpr when, without `enlarge`, it is lowered for a picture smaller than the box asks (imgproxy's
        /// dpr); zero: the box is the dpr's exactly.
        package var dprLimit = FixedDecimal.zero
        /// Whose size arithmetic the box follows (nil: thumbd's): thumbor's, decided by the render from the
        /// picture's size.
        package var rounding: Rounding?
        /// Added to every colour channel, -255...255.
        package var brightness = 0
        /// Multiplies the distance from mid-grey, 0...10; 1 does nothing.
        package var contrast = FixedDecimal.one
        /// Multiplies the chroma, 0...10; 1 does nothing. With ``saturationModel`` `.hsp`, thumbor's factor,
        /// -1000...1000.
        package var saturation = FixedDecimal.one
        /// What `saturation` scales: the chroma in LCh, or (thumbor's) each band's distance from the HSP brightness.
        package var saturationModel = SaturationModel.lch
        /// Turns the picture grey (one channel, plus alpha): libvips's, or Pillow's Rec. 601 luma.
        package var greyscale = ThumbnailSpec.Greyscale.off
        /// Gaussian blur sigma in output pixels, 0...100; 0 does nothing.
        package var blur = FixedDecimal.zero
        /// Sharpening sigma, 0...10; 0 does nothing.
        package var sharpen = FixedDecimal.zero
        /// Pixelation block size in output pixels, 0 or 2...256; 0 does nothing.
        package var pixelate = 0
        /// Levels added to the red, green and blue bands (thumbor's `rgb`).
        package var channelShift = ChannelShift.zero
        /// Each colour band moved toward a colour (thumbor's `colorize`).
        package var colorize: Colorize?
        /// thumbor's spline curves of the colour bands.
        package var curve: Curve?
        /// thumbor's histogram equalisation of each colour band.
        package var equalize = false
        /// thumbor's convolution kernel.
        package var convolution: Convolution?
        /// thumbor's monochrome noise.
        package var noise: Noise?
        /// The filters above that do something, in the order they run, when it is not the table's (thumbor's URL
        /// order); empty: the table's order.
        package var filterOrder: [PixelFilter] = []
        /// Every detected face blurred, pixelated or outlined (`redact`), after the filters, before round corners.
        package var redact: Redaction?
        /// Rounded corners (thumbor's `round_corner`), after pixelate, before the canvas.
        package var roundCorner: RoundCorner?
        /// The canvas extended after the fit, to the box's sides or its aspect ratio.
        package var extend: Extend?
        /// Output pixels added on each side.
        package var padding = Padding.zero
        /// The colour of padded areas; when opaque, transparent pixels are also flattened onto it.
        package var background: RGBAColour?
        /// The background taken from the picture instead (`bg=auto`, `bg=blur`).
        package var backgroundFill: BackgroundFill?
        /// thumbor's nine-patch frame around the output, after the padding, before the watermark.
        package var frame: Frame?
        /// Images laid over the output, last, in order (the first underneath); at most
        /// ``ThumbnailSpec/Watermark/maxCount``.
        package var watermarks: [Watermark] = []
        /// Progressive JPEG / interlaced PNG; `nil` takes the configuration's.
        package var progressive: Bool?
        /// JPEG and AVIF chroma subsampling; `nil` lets libvips choose (4:2:0 below quality 90).
        package var chroma: Chroma?
        /// Lossless WebP, AVIF and JPEG XL.
        package var lossless = false
        /// AVIF encoder effort 0...9; `nil` takes the configuration's.
        package var avifEffort: Int?
        /// JPEG XL encoder effort 3...9; `nil` takes the configuration's.
        package var jxlEffort: Int?
        /// Largest body in bytes: lossy output is encoded again at lower qualities (down to
        /// `Operations.maxBytesQualityFloor`) until it fits.
        package var maxBytes: Int?
        /// Keeps the source's EXIF copyright and artist (JPEG, WebP and AVIF output).
        package var keepCopyright = false
        /// Keeps the source's ICC profile, pixels unconverted, instead of converting to sRGB.
        package var keepColourProfile = false
        /// The source's own bytes instead of a render (``ThumbnailSpec/raw``, `raw=1`).
        package var raw = false
        /// The source formats answered with the source's own bytes when the output format is `auto` or theirs
        /// (`skip=`); empty: none.
        package var skipProcessing: ThumbnailSpec.SourceFormats = []

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
        PageOperation.self, AnimatedOperation.self, AutoOrientOperation.self, OrientationOperation.self,
        AdaptiveOperation.self,
        OriginalSidesOperation.self, ScaleOperation.self,
        MinimumSidesOperation.self, DprLimitOperation.self, RoundingOperation.self,
        TrimOperation.self, CropOperation.self, GravityOffsetOperation.self, FaceCropOperation.self, ToneOperation.self,
        GreyscaleOperation.self, BlurOperation.self,
        SharpenOperation.self, PixelateOperation.self,
        ChannelShiftOperation.self, ColorizeOperation.self, CurveOperation.self, EqualizeOperation.self,
        ConvolutionOperation.self, NoiseOperation.self, FilterOrderOperation.self,
        RedactOperation.self,
        RoundCornerOperation.self,
        ExtendOperation.self,
        PaddingOperation.self,
        FrameOperation.self,
        WatermarkOperation.self,
        BackgroundOperation.self, KeepCopyrightOperation.self, ColourProfileOperation.self,
        ProgressiveOperation.self, ChromaOperation.self, LosslessOperation.self, AVIFEffortOperation.self,
        JXLEffortOperation.self, MaxBytesOperation.self,
        SkipProcessingOperation.self, RawOperation.self,
    ]

    /// The order of `/thumb`'s parameters (``ThumbParameter``): the canonical query's, and the order a plan's
    /// operations are built and checked in (so the first bad one is the one named). It differs from ``steps``: `bg` comes
    /// before the watermark here and after it in the key, and the metadata options come last.
    static let queryOrder: [any OperationDescriptor.Type] = [
        PageOperation.self, AnimatedOperation.self, AutoOrientOperation.self, OrientationOperation.self,
        AdaptiveOperation.self,
        OriginalSidesOperation.self, ScaleOperation.self,
        MinimumSidesOperation.self, DprLimitOperation.self, RoundingOperation.self,
        TrimOperation.self, CropOperation.self, GravityOffsetOperation.self, FaceCropOperation.self, ToneOperation.self,
        GreyscaleOperation.self, BlurOperation.self,
        SharpenOperation.self, PixelateOperation.self,
        ChannelShiftOperation.self, ColorizeOperation.self, CurveOperation.self, EqualizeOperation.self,
        ConvolutionOperation.self, NoiseOperation.self, FilterOrderOperation.self,
        RedactOperation.self,
        RoundCornerOperation.self,
        ExtendOperation.self,
        PaddingOperation.self, BackgroundOperation.self,
        FrameOperation.self,
        WatermarkOperation.self, ProgressiveOperation.self, ChromaOperation.self, LosslessOperation.self,
        AVIFEffortOperation.self, JXLEffortOperation.self, MaxBytesOperation.self, KeepCopyrightOperation.self,
        ColourProfileOperation.self,
        SkipProcessingOperation.self, RawOperation.self,
    ]

    /// The descriptor that owns each operation parameter (the one that reads its text).
    static let owners: [ThumbParameter: any OperationDescriptor.Type] = Dictionary(
        uniqueKeysWithValues: queryOrder.flatMap { descriptor in descriptor.parameters.map { ($0, descriptor) } })
}

/// The `/thumb` query's parameters besides `sig` and `preset`: the box and output ones, then each operation's,
/// in the canonical query's order. They live beside the descriptors that read them (like imgproxy's
/// `options/keys` beside `processing/`), because the canonical query and the key are the plan's identity.
package enum ThumbParameter: String, CaseIterable, Sendable {
    case url, w, h, fit, gravity, format, q, dpr, enlarge
    // The pipeline's steps, in ``OperationRegistry/queryOrder``.
    case page, animated, autorotate, rotate, flip, adaptive, orig, scale
    case min_w, min_h, dpr_limit, rounding
    case trim, crop
    case crop_gravity, crop_offset, crop_frame, gravity_offset
    case face_zoom, face_pad
    case brightness, contrast, saturation, saturation_model, grayscale, blur, sharpen
    case pixelate
    case rgb, colorize, curve, equalize
    case convolution, noise, order
    case redact, redact_margin
    case radius, radius_bg
    case extend
    case padding, bg
    case frame, frame_url, frame_optional
    case wm, wm_url, wm_pos, wm_x, wm_y, wm_opacity, wm_scale, wm_hscale, wm_place, wm_fade
    case wm2, wm2_url, wm2_pos, wm2_x, wm2_y, wm2_opacity, wm2_scale, wm2_hscale, wm2_place, wm2_fade
    case wm3, wm3_url, wm3_pos, wm3_x, wm3_y, wm3_opacity, wm3_scale, wm3_hscale, wm3_place, wm3_fade
    case wm4, wm4_url, wm4_pos, wm4_x, wm4_y, wm4_opacity, wm4_scale, wm4_hscale, wm4_place, wm4_fade
    case progressive, chroma, lossless, avif_effort, jxl_effort, max_bytes, keep_copyright, icc
    case skip, raw
    // The answer's headers, not the picture (URLForms' AnswerOptions): never part of the variant key.
    case expires, max_age, filename, attachment, tags
    // The quality by output format, folded into `q` once the format is negotiated (Thumbnailer.normalized).
    case fq
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
    /// The operations a plan's typed values ask for (every layer put together), built in query order: each
    /// descriptor builds its field, checks its range (``validate()``'s check, its one message) and what the plan's
    /// other choices forbid, so the first bad value in query order is the one named.
    package static func build(_ values: PlanValues, context: OperationContext) throws(SpecError) -> Self {
        var operations = Self()
        for descriptor in OperationRegistry.queryOrder {
            try descriptor.build(values, context, into: &operations)
            try descriptor.validate(operations)
            try descriptor.check(operations, context)
        }
        return operations
    }

    /// Checks every range, with the checks and messages a plan's values are built with (``build(_:context:)``).
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

// MARK: - The plan's typed values

/// A plan as its request states it, before it is built: one typed field per `/thumb` parameter, `nil` when not set.
/// Every URL form fills one: `/thumb`'s query and the presets through the parsers (the box's and output's in
/// URLForms' ThumbnailRequest+Query.swift, each operation's by its descriptor, ``OperationDescriptor/parse(_:_:into:)``),
/// thumbor's and imgproxy's forms by setting fields (``PlanField``). Layers are put together parameter by parameter
/// (``layer(_:)``), then the whole is built once (``ThumbnailSpec/Operations/build(_:context:)`` for the operations):
/// so lengths are still in CSS pixels here (`dpr` multiplies them at the build) and no range is checked yet (the
/// build checks each value once, with the message `/thumb`'s parser gives for it).
///
/// A new operation adds its field(s) here, their ``PlanField``s and a line each in ``layer(_:)``.
package struct PlanValues: Hashable, Sendable {
    // The box and the output: read and built by URLForms (ThumbnailRequest+Query.swift).
    package var url: String?
    package var width: Int?
    package var height: Int?
    package var fit: Fit?
    package var gravity: PlanGravity?
    package var format: FormatChoice?
    package var quality: Int?
    package var dpr: FixedDecimal?
    package var enlarge: Bool?
    // The operations', each read and built by its descriptor.
    package var page: Int?
    package var animated: Bool?
    package var autoOrient: Bool?
    package var rotate: Int?
    package var flip: ThumbnailSpec.Flip?
    package var adaptive: Bool?
    package var originalSides: ThumbnailSpec.Operations.OriginalSides?
    package var scale: FixedDecimal?
    /// In CSS pixels.
    package var minimumWidth: Int?
    package var minimumHeight: Int?
    /// 1: the request's dpr; above 1: that dpr (the sides already scaled by it); 0: none.
    package var dprLimit: FixedDecimal?
    package var rounding: ThumbnailSpec.Operations.Rounding?
    package var trim: ThumbnailSpec.Trim?
    package var crop: ThumbnailSpec.Crop?
    /// A placed crop's gravity (offsets zero: they are ``cropOffset``).
    package var cropGravity: ThumbnailSpec.CropGravity?
    package var cropOffset: ThumbnailSpec.CropOffset?
    /// `crop_frame=source`: a pixel crop measured in the picture before the trim.
    package var cropFrameIsSource: Bool?
    /// In CSS pixels (or fractions).
    package var gravityOffset: ThumbnailSpec.CropOffset?
    package var faceZoom: FixedDecimal?
    package var facePad: FixedDecimal?
    package var brightness: Int?
    package var contrast: FixedDecimal?
    package var saturation: FixedDecimal?
    package var saturationModel: ThumbnailSpec.Operations.SaturationModel?
    package var greyscale: ThumbnailSpec.Greyscale?
    package var blur: FixedDecimal?
    package var sharpen: FixedDecimal?
    package var pixelate: Int?
    package var channelShift: ThumbnailSpec.ChannelShift?
    package var colorize: ThumbnailSpec.Colorize?
    package var curve: ThumbnailSpec.Curve?
    package var equalize: Bool?
    package var convolution: ThumbnailSpec.Convolution?
    package var noise: ThumbnailSpec.Noise?
    package var filterOrder: [ThumbnailSpec.PixelFilter]?
    /// `redact`'s mode and strength (its margin is ``redactMargin``).
    package var redact: ThumbnailSpec.Redaction?
    package var redactMargin: FixedDecimal?
    /// Output pixels (not CSS pixels: thumbor's radii are the output's); the colour is ``radiusColour``'s.
    package var radius: ThumbnailSpec.RoundCorner?
    package var radiusColour: RGBAColour?
    package var extend: PlanExtend?
    /// In CSS pixels.
    package var padding: ThumbnailSpec.Padding?
    package var background: RGBAColour?
    /// `bg=auto` or `bg=blur` (``background`` then nil).
    package var backgroundFill: ThumbnailSpec.BackgroundFill?
    package var frameName: String?
    /// As written; made canonical when the plan is built.
    package var frameURL: String?
    /// `frame_optional=1`: a frame image that is no usable nine-patch is left out instead of failing the render.
    package var frameOptional: Bool?
    /// The watermarks' values, slot by slot (`wm*` the first, `wm2*`...`wm4*` the others).
    package var watermarks = WatermarkSlots()
    package var progressive: Bool?
    package var chroma: ThumbnailSpec.Operations.Chroma?
    package var lossless: Bool?
    package var avifEffort: Int?
    package var jxlEffort: Int?
    package var maxBytes: Int?
    package var keepCopyright: Bool?
    package var keepColourProfile: Bool?
    package var skipProcessing: Set<ImageFormat>?
    package var raw: Bool?
    // The answer's (URLForms' AnswerOptions), read and checked by URLForms; not the picture's.
    /// Seconds since the epoch.
    package var expires: Int64?
    /// Seconds.
    package var maxAge: Int?
    package var filename: String?
    package var attachment: Bool?
    /// Operator tags for the source tag header and purges by tag, not yet checked.
    package var tags: [String]?
    /// The quality by output format (imgproxy's `format_quality`), not yet checked.
    package var formatQuality: [ImageFormat: Int]?

    /// Nothing set.
    package init() {}

    /// `upper`'s values over these, parameter by parameter: what `upper` sets replaces what was here, the rest stays
    /// (a preset under the next one, the presets under the request).
    package mutating func layer(_ upper: PlanValues) {
        url = upper.url ?? url
        width = upper.width ?? width
        height = upper.height ?? height
        fit = upper.fit ?? fit
        gravity = upper.gravity ?? gravity
        format = upper.format ?? format
        quality = upper.quality ?? quality
        dpr = upper.dpr ?? dpr
        enlarge = upper.enlarge ?? enlarge
        page = upper.page ?? page
        animated = upper.animated ?? animated
        autoOrient = upper.autoOrient ?? autoOrient
        rotate = upper.rotate ?? rotate
        flip = upper.flip ?? flip
        adaptive = upper.adaptive ?? adaptive
        originalSides = upper.originalSides ?? originalSides
        scale = upper.scale ?? scale
        minimumWidth = upper.minimumWidth ?? minimumWidth
        minimumHeight = upper.minimumHeight ?? minimumHeight
        dprLimit = upper.dprLimit ?? dprLimit
        rounding = upper.rounding ?? rounding
        trim = upper.trim ?? trim
        crop = upper.crop ?? crop
        cropGravity = upper.cropGravity ?? cropGravity
        cropOffset = upper.cropOffset ?? cropOffset
        cropFrameIsSource = upper.cropFrameIsSource ?? cropFrameIsSource
        gravityOffset = upper.gravityOffset ?? gravityOffset
        faceZoom = upper.faceZoom ?? faceZoom
        facePad = upper.facePad ?? facePad
        brightness = upper.brightness ?? brightness
        contrast = upper.contrast ?? contrast
        saturation = upper.saturation ?? saturation
        saturationModel = upper.saturationModel ?? saturationModel
        greyscale = upper.greyscale ?? greyscale
        blur = upper.blur ?? blur
        sharpen = upper.sharpen ?? sharpen
        pixelate = upper.pixelate ?? pixelate
        channelShift = upper.channelShift ?? channelShift
        colorize = upper.colorize ?? colorize
        curve = upper.curve ?? curve
        equalize = upper.equalize ?? equalize
        convolution = upper.convolution ?? convolution
        noise = upper.noise ?? noise
        filterOrder = upper.filterOrder ?? filterOrder
        redact = upper.redact ?? redact
        redactMargin = upper.redactMargin ?? redactMargin
        radius = upper.radius ?? radius
        radiusColour = upper.radiusColour ?? radiusColour
        extend = upper.extend ?? extend
        padding = upper.padding ?? padding
        background = upper.background ?? background
        backgroundFill = upper.background != nil ? nil : upper.backgroundFill ?? backgroundFill
        if upper.backgroundFill != nil { background = nil }
        frameName = upper.frameName ?? frameName
        frameURL = upper.frameURL ?? frameURL
        frameOptional = upper.frameOptional ?? frameOptional
        watermarks.layer(upper.watermarks)
        progressive = upper.progressive ?? progressive
        chroma = upper.chroma ?? chroma
        lossless = upper.lossless ?? lossless
        avifEffort = upper.avifEffort ?? avifEffort
        jxlEffort = upper.jxlEffort ?? jxlEffort
        maxBytes = upper.maxBytes ?? maxBytes
        keepCopyright = upper.keepCopyright ?? keepCopyright
        keepColourProfile = upper.keepColourProfile ?? keepColourProfile
        skipProcessing = upper.skipProcessing ?? skipProcessing
        raw = upper.raw ?? raw
        expires = upper.expires ?? expires
        maxAge = upper.maxAge ?? maxAge
        filename = upper.filename ?? filename
        attachment = upper.attachment ?? attachment
        tags = upper.tags ?? tags
        formatQuality = upper.formatQuality ?? formatQuality
    }

    /// Reads the text of an operation's parameter into its field (the descriptor that owns it reads it).
    /// - Throws: `SpecError` naming the parameter.
    package mutating func parseOperation(_ parameter: ThumbParameter, _ text: String) throws(SpecError) {
        guard let owner = OperationRegistry.owners[parameter] else {
            throw SpecError(field: parameter.rawValue, reason: "is not an operation's")
        }
        try owner.parse(parameter, text, into: &self)
    }
}

/// `gravity` as a plan states it: a gravity, or a focal point, not yet checked (``FocalPoint``'s ranges are).
package enum PlanGravity: Hashable, Sendable {
    case gravity(Gravity)
    /// `fp:x,y`: fractions of the picture.
    case focalPoint(x: FixedDecimal, y: FixedDecimal)
    /// `fpx:x,y[,corner]`: whole pixels of the turned picture (from `corner` of the trimmed picture when given).
    case focalPixels(x: Int, y: Int, corner: Gravity? = nil)
}

/// `format` as a plan states it: a format by name, or `auto` (negotiated from `Accept` when the plan is built).
package enum FormatChoice: Hashable, Sendable {
    case auto
    case exactly(ImageFormat)
}

/// One typed field of ``PlanValues`` and the `/thumb` parameter it stands for, so that a foreign form sets a value
/// and says which of its options set it in one call (`plan.set(.w, 200, option: "rs")`, URLForms' `ThumbnailPlan`).
package struct PlanField<Value> {
    /// The `/thumb` parameter (what layering and `image.presets_only` go by, what an error names).
    package let parameter: ThumbParameter
    /// Its field.
    package let keyPath: WritableKeyPath<PlanValues, Value?>
}

extension PlanField where Value == String {
    package static var url: Self { Self(parameter: .url, keyPath: \.url) }
    package static var frame: Self { Self(parameter: .frame, keyPath: \.frameName) }
    package static var frame_url: Self { Self(parameter: .frame_url, keyPath: \.frameURL) }
    package static var wm: Self { wm(slot: 0) }
    package static var wm_url: Self { wm_url(slot: 0) }
    package static var filename: Self { Self(parameter: .filename, keyPath: \.filename) }
}

extension PlanField where Value == Int {
    package static var w: Self { Self(parameter: .w, keyPath: \.width) }
    package static var h: Self { Self(parameter: .h, keyPath: \.height) }
    package static var q: Self { Self(parameter: .q, keyPath: \.quality) }
    package static var rotate: Self { Self(parameter: .rotate, keyPath: \.rotate) }
    package static var brightness: Self { Self(parameter: .brightness, keyPath: \.brightness) }
    package static var pixelate: Self { Self(parameter: .pixelate, keyPath: \.pixelate) }
    package static var avif_effort: Self { Self(parameter: .avif_effort, keyPath: \.avifEffort) }
    package static var jxl_effort: Self { Self(parameter: .jxl_effort, keyPath: \.jxlEffort) }
    package static var page: Self { Self(parameter: .page, keyPath: \.page) }
    package static var max_bytes: Self { Self(parameter: .max_bytes, keyPath: \.maxBytes) }
    package static var max_age: Self { Self(parameter: .max_age, keyPath: \.maxAge) }
    package static var min_w: Self { Self(parameter: .min_w, keyPath: \.minimumWidth) }
    package static var min_h: Self { Self(parameter: .min_h, keyPath: \.minimumHeight) }
}

extension PlanField where Value == Bool {
    package static var enlarge: Self { Self(parameter: .enlarge, keyPath: \.enlarge) }
    package static var animated: Self { Self(parameter: .animated, keyPath: \.animated) }
    package static var autorotate: Self { Self(parameter: .autorotate, keyPath: \.autoOrient) }
    package static var crop_frame: Self { Self(parameter: .crop_frame, keyPath: \.cropFrameIsSource) }
    package static var adaptive: Self { Self(parameter: .adaptive, keyPath: \.adaptive) }
    package static var progressive: Self { Self(parameter: .progressive, keyPath: \.progressive) }
    package static var lossless: Self { Self(parameter: .lossless, keyPath: \.lossless) }
    package static var keep_copyright: Self { Self(parameter: .keep_copyright, keyPath: \.keepCopyright) }
    package static var equalize: Self { Self(parameter: .equalize, keyPath: \.equalize) }
    package static var frame_optional: Self { Self(parameter: .frame_optional, keyPath: \.frameOptional) }
    /// `icc=keep` (true) or `icc=srgb` (false).
    package static var icc: Self { Self(parameter: .icc, keyPath: \.keepColourProfile) }
    package static var attachment: Self { Self(parameter: .attachment, keyPath: \.attachment) }
    package static var raw: Self { Self(parameter: .raw, keyPath: \.raw) }
}

extension PlanField where Value == Set<ImageFormat> {
    package static var skip: Self { Self(parameter: .skip, keyPath: \.skipProcessing) }
}

extension PlanField where Value == ThumbnailSpec.Greyscale {
    package static var grayscale: Self { Self(parameter: .grayscale, keyPath: \.greyscale) }
}

extension PlanField where Value == ThumbnailSpec.Operations.SaturationModel {
    package static var saturation_model: Self { Self(parameter: .saturation_model, keyPath: \.saturationModel) }
}

extension PlanField where Value == [ImageFormat: Int] {
    package static var fq: Self { Self(parameter: .fq, keyPath: \.formatQuality) }
}

extension PlanField where Value == Int64 {
    package static var expires: Self { Self(parameter: .expires, keyPath: \.expires) }
}

extension PlanField where Value == FixedDecimal {
    package static var dpr: Self { Self(parameter: .dpr, keyPath: \.dpr) }
    package static var contrast: Self { Self(parameter: .contrast, keyPath: \.contrast) }
    package static var saturation: Self { Self(parameter: .saturation, keyPath: \.saturation) }
    package static var blur: Self { Self(parameter: .blur, keyPath: \.blur) }
    package static var scale: Self { Self(parameter: .scale, keyPath: \.scale) }
    package static var sharpen: Self { Self(parameter: .sharpen, keyPath: \.sharpen) }
    package static var wm_opacity: Self { wm_opacity(slot: 0) }
    package static var wm_scale: Self { wm_scale(slot: 0) }
    package static var dpr_limit: Self { Self(parameter: .dpr_limit, keyPath: \.dprLimit) }
    package static var wm_hscale: Self { wm_hscale(slot: 0) }
    package static var face_zoom: Self { Self(parameter: .face_zoom, keyPath: \.faceZoom) }
    package static var face_pad: Self { Self(parameter: .face_pad, keyPath: \.facePad) }
    package static var redact_margin: Self { Self(parameter: .redact_margin, keyPath: \.redactMargin) }
}

extension PlanField where Value == Fit {
    package static var fit: Self { Self(parameter: .fit, keyPath: \.fit) }
}

extension PlanField where Value == PlanGravity {
    package static var gravity: Self { Self(parameter: .gravity, keyPath: \.gravity) }
}

extension PlanField where Value == FormatChoice {
    package static var format: Self { Self(parameter: .format, keyPath: \.format) }
}

extension PlanField where Value == ThumbnailSpec.Flip {
    package static var flip: Self { Self(parameter: .flip, keyPath: \.flip) }
}

extension PlanField where Value == ThumbnailSpec.Operations.Rounding {
    package static var rounding: Self { Self(parameter: .rounding, keyPath: \.rounding) }
}

extension PlanField where Value == ThumbnailSpec.Operations.OriginalSides {
    package static var orig: Self { Self(parameter: .orig, keyPath: \.originalSides) }
}

extension PlanField where Value == ThumbnailSpec.Trim {
    package static var trim: Self { Self(parameter: .trim, keyPath: \.trim) }
}

extension PlanField where Value == ThumbnailSpec.Crop {
    package static var crop: Self { Self(parameter: .crop, keyPath: \.crop) }
}

extension PlanField where Value == ThumbnailSpec.CropGravity {
    package static var crop_gravity: Self { Self(parameter: .crop_gravity, keyPath: \.cropGravity) }
}

extension PlanField where Value == ThumbnailSpec.CropOffset {
    package static var crop_offset: Self { Self(parameter: .crop_offset, keyPath: \.cropOffset) }
    package static var gravity_offset: Self { Self(parameter: .gravity_offset, keyPath: \.gravityOffset) }
}

extension PlanField where Value == PlanExtend {
    package static var extend: Self { Self(parameter: .extend, keyPath: \.extend) }
}

extension PlanField where Value == ThumbnailSpec.Padding {
    package static var padding: Self { Self(parameter: .padding, keyPath: \.padding) }
}

extension PlanField where Value == RGBAColour {
    package static var bg: Self { Self(parameter: .bg, keyPath: \.background) }
    package static var radius_bg: Self { Self(parameter: .radius_bg, keyPath: \.radiusColour) }
}

extension PlanField where Value == ThumbnailSpec.BackgroundFill {
    /// `bg=auto` / `bg=blur`.
    package static var bg_fill: Self { Self(parameter: .bg, keyPath: \.backgroundFill) }
}

extension PlanField where Value == ThumbnailSpec.Watermark.Position {
    package static var wm_pos: Self { wm_pos(slot: 0) }
}

extension PlanField where Value == ThumbnailSpec.Operations.Chroma {
    package static var chroma: Self { Self(parameter: .chroma, keyPath: \.chroma) }
}

extension PlanField where Value == ThumbnailSpec.RoundCorner {
    /// The radii (its colour is ``radius_bg``'s).
    package static var radius: Self { Self(parameter: .radius, keyPath: \.radius) }
}

extension PlanField where Value == ThumbnailSpec.ChannelShift {
    package static var rgb: Self { Self(parameter: .rgb, keyPath: \.channelShift) }
}

extension PlanField where Value == ThumbnailSpec.Colorize {
    package static var colorize: Self { Self(parameter: .colorize, keyPath: \.colorize) }
}

extension PlanField where Value == ThumbnailSpec.Convolution {
    package static var convolution: Self { Self(parameter: .convolution, keyPath: \.convolution) }
}

extension PlanField where Value == ThumbnailSpec.Noise {
    package static var noise: Self { Self(parameter: .noise, keyPath: \.noise) }
}

extension PlanField where Value == [ThumbnailSpec.PixelFilter] {
    package static var order: Self { Self(parameter: .order, keyPath: \.filterOrder) }
}

extension PlanField where Value == ThumbnailSpec.Redaction {
    /// `redact`'s mode and strength (the margin is ``redact_margin``'s).
    package static var redact: Self { Self(parameter: .redact, keyPath: \.redact) }
}

extension PlanField where Value == ThumbnailSpec.Curve {
    package static var curve: Self { Self(parameter: .curve, keyPath: \.curve) }
}

extension PlanField where Value == ThumbnailSpec.Watermark.Place {
    package static var wm_place: Self { wm_place(slot: 0) }
}
