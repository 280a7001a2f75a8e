// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// imgproxy's processing options, read one by one in URL order into imgproxy's own state (a later option replaces
/// what an earlier one set, as in imgproxy), then compiled into the plan's typed values
/// (ImgproxyOptions+Plan.swift).
///
/// Options are known by their full names and short aliases (`resize`/`rs`, …). Reading checks each argument's
/// form and refuses, naming the option as written, what thumbd cannot do whatever the other options say
/// (`g:obj`, `sm:0`, `t:10::1`); refusals that depend on several options together (`rt:auto` with both sides,
/// `ex:1` without `el:1` on a `fill`) come at compilation. An unknown name is refused as an unknown parameter.
package struct ImgproxyOptions: Sendable {
    /// A value and the option, as written, that set it (what an error names).
    package struct Given<Value: Sendable>: Sendable {
        package var value: Value
        package var option: String
    }

    /// imgproxy's resizing types.
    package enum ResizingType: String, Sendable {
        case fit, fill, force, auto
        case fillDown = "fill-down"
    }

    /// A gravity without offsets (offsets are refused when read).
    package enum Gravity: Sendable, Equatable {
        case compass(Thumbnailing.Gravity)
        /// `sm`: libvips's attention-based smart crop.
        case smart
        /// `obj:face` (imgproxy Pro's object-oriented gravity with the face class): `/thumb`'s `gravity=face`.
        case faces
        /// `fp:x:y`, fractions of the picture.
        case focalPoint(x: FixedDecimal, y: FixedDecimal)
    }

    /// `extend` and `extend_aspect_ratio`.
    package struct Extend: Sendable {
        package var isEnabled: Bool
        package var gravity: Gravity?
    }

    /// One side of `crop`: the whole side (`0`), a fraction of it (below 1) or pixels (1 and above).
    package enum CropSide: Sendable, Equatable {
        case whole
        case fraction(FixedDecimal)
        case pixels(Int)
    }

    package struct Crop: Sendable {
        package var width: CropSide
        package var height: CropSide
        /// The crop's own gravity; `nil` uses `gravity`'s.
        package var gravity: Gravity?
        /// The crop gravity's offsets (a compass point's): pixels (|v| ≥ 1) or fractions of the picture's side.
        package var offsetX = FixedDecimal.zero
        package var offsetY = FixedDecimal.zero
    }

    package struct Watermark: Sendable {
        package var opacity: FixedDecimal
        package var position = ThumbnailSpec.Watermark.Position.gravity(.centre)
        /// Pixels (CSS, × dpr) or a fraction of the output's side; with `re`, the space between the tiles.
        package var offsetX = WatermarkOffset.pixels(0)
        package var offsetY = WatermarkOffset.pixels(0)
        package var scale = FixedDecimal.zero
    }

    // MARK: - State

    package var resizingType: Given<ResizingType>?
    package var width: Given<Int>?
    package var height: Given<Int>?
    package var enlarge: Given<Bool>?
    package var extend: Given<Extend>?
    package var extendAspectRatio: Given<Extend>?
    package var gravity: Given<Gravity>?
    /// `gravity`'s offsets (a compass point's): pixels (|v| ≥ 1) or fractions of the picture's side.
    package var gravityOffset = (x: FixedDecimal.zero, y: FixedDecimal.zero)
    package var crop: Given<Crop>?
    package var minWidth: Given<Int>?
    package var minHeight: Given<Int>?
    package var zoom: Given<(x: FixedDecimal, y: FixedDecimal)>?
    package var dpr: Given<FixedDecimal>?
    /// Top, right, bottom, left, as imgproxy keeps them (an unset side copies another when written).
    package var padding: [Int?] = [nil, nil, nil, nil]
    package var paddingOption: String?
    package var flipHorizontal: Given<Bool>?
    package var flipVertical: Given<Bool>?
    package var watermark: Given<Watermark>?
    package var watermarkURL: Given<String>?
    package var quality: Given<Int>?
    /// `format_quality`: format → quality (imgproxy's formats thumbd never writes are not kept).
    package var formatQuality: [ImageFormat: Int] = [:]
    package var formatQualityOption: String?
    package var format: Given<ImageFormat>?
    package var presets: [String] = []
    /// `raw`: the source's own bytes (ImgproxyOptions+Plan.swift, `compileRaw`).
    package var raw: Given<Bool>?
    /// What options set directly in the plan, each under its option (one that turned a step off unsets it).
    package var direct = ThumbnailPlan()

    /// The name of the configured watermark (`image.watermarks`) that imgproxy's `watermark` option draws:
    /// imgproxy has one watermark (`IMGPROXY_WATERMARK_*`), thumbd names its own.
    package static let watermarkName = "imgproxy"

    package init() {}

    // MARK: - Reading

    /// Reads one option into the state.
    /// - Throws: `RequestError` naming the option as written.
    package mutating func apply(_ option: ImgproxyPath.Option) throws(RequestError) {
        let name = option.name
        let arguments = option.arguments
        switch name {
        case "resize", "rs":
            try Self.count(arguments, name, 1...8)
            if !arguments[0].isEmpty { try applyResizingType(arguments[0], name) }
            if arguments.count > 1 { try applySize(Array(arguments.dropFirst()), name) }
        case "size", "s":
            try Self.count(arguments, name, 1...7)
            try applySize(arguments, name)
        case "resizing_type", "rt":
            try Self.count(arguments, name, 1...1)
            try applyResizingType(arguments[0], name)
        case "width", "w":
            try Self.count(arguments, name, 1...1)
            width = Given(value: try Self.whole(arguments[0], name, "width"), option: name)
        case "height", "h":
            try Self.count(arguments, name, 1...1)
            height = Given(value: try Self.whole(arguments[0], name, "height"), option: name)
        case "min-width", "mw":
            try Self.count(arguments, name, 1...1)
            minWidth = Given(value: try Self.whole(arguments[0], name, "min-width"), option: name)
        case "min-height", "mh":
            try Self.count(arguments, name, 1...1)
            minHeight = Given(value: try Self.whole(arguments[0], name, "min-height"), option: name)
        case "zoom", "z":
            try Self.count(arguments, name, 1...2)
            let x = try Self.positiveDecimal(arguments[0], name, "zoom")
            let y = arguments.count > 1 ? try Self.positiveDecimal(arguments[1], name, "zoom") : x
            zoom = Given(value: (x, y), option: name)
        case "dpr":
            try Self.count(arguments, name, 1...1)
            dpr = Given(value: try Self.positiveDecimal(arguments[0], name, "dpr"), option: name)
        case "enlarge", "el":
            try Self.count(arguments, name, 1...1)
            enlarge = Given(value: try Self.boolean(arguments[0], name), option: name)
        case "extend", "ex":
            extend = Given(value: try Self.extend(arguments, name), option: name)
        case "extend_aspect_ratio", "extend_ar", "exar":
            extendAspectRatio = Given(value: try Self.extend(arguments, name), option: name)
        case "gravity", "g":
            let (placement, offsets) = try Self.compassOffsets(arguments, name)
            gravity = Given(value: try Self.gravity(placement, name, smart: true), option: name)
            gravityOffset = offsets
        case "crop", "c":
            try applyCrop(arguments, name)
        case "trim", "t":
            try applyTrim(arguments, name)
        case "padding", "pd":
            try applyPadding(arguments, name)
        case "page", "pg":
            // imgproxy counts pages from 0, /thumb from 1. A page of a PDF only: imgproxy's frame of an animation is
            // refused by the render (422 naming the page), never answered with the first frame.
            try Self.count(arguments, name, 1...1)
            let page = try Self.whole(arguments[0], name, "page")
            guard page < DecoderPool.maxPage else {
                throw .invalidValue(name, reason: "the page must be 0...\(DecoderPool.maxPage - 1) (counted from 0)")
            }
            direct.set(.page, page + 1, option: name)
        case "auto_rotate", "ar":
            try Self.count(arguments, name, 1...1)
            direct.set(.autorotate, try Self.boolean(arguments[0], name), option: name)
        case "rotate", "rot":
            try Self.count(arguments, name, 1...1)
            let angle = try Self.whole(arguments[0], name, "angle")
            guard angle % 90 == 0 else { throw .invalidValue(name, reason: "the angle must be a multiple of 90") }
            direct.set(.rotate, angle % 360, option: name)
        case "flip", "fl":
            try Self.count(arguments, name, 1...2)
            if !arguments[0].isEmpty {
                flipHorizontal = Given(value: try Self.boolean(arguments[0], name), option: name)
            }
            if arguments.count > 1 && !arguments[1].isEmpty {
                flipVertical = Given(value: try Self.boolean(arguments[1], name), option: name)
            }
        case "background", "bg":
            if let colour = try Self.background(arguments, name) {
                direct.set(.bg, colour, option: name)
            } else {
                direct.remove(.bg)
            }
        case "blur", "bl":
            try Self.count(arguments, name, 1...1)
            direct.set(.blur, try Self.decimal(arguments[0], name, "sigma"), option: name)
        case "sharpen", "sh":
            try Self.count(arguments, name, 1...1)
            direct.set(.sharpen, try Self.decimal(arguments[0], name, "sigma"), option: name)
        case "pixelate", "pix":
            try Self.count(arguments, name, 1...1)
            direct.set(.pixelate, try Self.whole(arguments[0], name, "size"), option: name)
        case "blur_detections", "bd", "draw_detections", "dd":
            try applyDetections(arguments, name)
        case "brightness", "br", "contrast", "co", "saturation", "sa", "adjust", "a":
            try applyAdjustment(arguments, name)
        case "watermark", "wm":
            try applyWatermark(arguments, name)
        case "watermark_url", "wmu":
            try Self.count(arguments, name, 1...1)
            watermarkURL = Given(value: try Self.base64Text(arguments[0], name), option: name)
        case "strip_metadata", "sm":
            // thumbd always strips; keeping every field is not something it does.
            try Self.count(arguments, name, 1...1)
            if !(try Self.boolean(arguments[0], name)) { throw .unsupportedOption("\(name):\(arguments[0])") }
        case "keep_copyright", "kcr":
            try Self.count(arguments, name, 1...1)
            direct.set(.keep_copyright, try Self.boolean(arguments[0], name), option: name)
        case "strip_color_profile", "scp":
            try Self.count(arguments, name, 1...1)
            direct.set(.icc, !(try Self.boolean(arguments[0], name)), option: name)
        case "quality", "q":
            try Self.count(arguments, name, 1...1)
            quality = Given(value: try Self.quality(arguments[0], name), option: name)
        case "format_quality", "fq":
            try applyFormatQuality(arguments, name)
        case "max_bytes", "mb":
            try Self.count(arguments, name, 1...1)
            let bytes = try Self.whole(arguments[0], name, "size")
            if bytes == 0 { direct.remove(.max_bytes) } else { direct.set(.max_bytes, bytes, option: name) }
        case "format", "f", "ext":
            try Self.count(arguments, name, 1...1)
            format = Given(value: try Self.outputFormat(arguments[0], name), option: name)
        case "preset", "pr":
            presets += arguments
        case "cachebuster", "cb":
            // Changes only the URL (so the caches in front); thumbd's own caches key on the plan.
            try Self.count(arguments, name, 1...1)
        case "raw":
            try Self.count(arguments, name, 1...1)
            raw = Given(value: try Self.boolean(arguments[0], name), option: name)
        case "skip_processing", "skp":
            // imgproxy adds each option's formats to the list.
            let formats = try Self.skipFormats(arguments, name)
            direct.set(.skip, formats.union(direct.values.skipProcessing ?? []), option: name)
        case "enforce_thumbnail", "eth", "preserve_hdr", "ph":
            // Off is thumbd's behaviour; on asks for something thumbd does not do.
            try Self.count(arguments, name, 1...1)
            if try Self.boolean(arguments[0], name) { throw .unsupportedOption("\(name):\(arguments[0])") }
        case "return_attachment", "att":
            try Self.count(arguments, name, 1...1)
            direct.set(.attachment, try Self.boolean(arguments[0], name), option: name)
        case "filename", "fn":
            // `name[:encoded]`: the name as written (percent-decoded by the path's reader) or URL-safe base64.
            try Self.count(arguments, name, 1...2)
            let isEncoded = arguments.count > 1 && !arguments[1].isEmpty ? try Self.boolean(arguments[1], name) : false
            // (imgproxy reads Go's decoded path: `%20` is a space there too.)
            let filename =
                isEncoded
                ? try Self.base64Text(arguments[0], name)
                : QueryParameters.percentDecode(arguments[0].utf8) ?? arguments[0]
            if filename.isEmpty { direct.remove(.filename) } else { direct.set(.filename, filename, option: name) }
        case "expires", "exp":
            // A deadline (imgproxy's `0 < ts`; 0 or below: none): past it the URL is answered 404, checked by the app
            // on every answer, the hot set's and the alias table's included.
            try Self.count(arguments, name, 1...1)
            guard let timestamp = Int64(arguments[0]) else {
                throw .invalidValue(name, reason: "must be a unix timestamp")
            }
            if timestamp > 0 { direct.set(.expires, timestamp, option: name) } else { direct.remove(.expires) }
        case "resizing_algorithm", "ra":
            try Self.count(arguments, name, 1...1)
            // libvips's thumbnail resamples with lanczos3, imgproxy's default.
            if arguments[0] != "lanczos3" { throw .unsupportedOption("\(name):\(arguments[0])") }
        default:
            guard Self.unsupported.contains(name) else { throw .unknownParameter(name) }
            throw .unsupportedOption(name)
        }
    }

    /// Pro's `blur_detections:%sigma:%classes…` and `draw_detections:%draw:%classes…` with the `face` class alone:
    /// `/thumb`'s `redact=faces,blur,<sigma>` (the margin `redact`'s default: a Haar box is tighter than a YOLO one)
    /// and `redact=faces,box` (the boxes as found: no margin); sigma 0 or `dd:0` turns it off. Any other class, or
    /// none (every class), is refused by name: thumbd detects faces only.
    private mutating func applyDetections(_ arguments: [String], _ option: String) throws(RequestError) {
        try Self.count(arguments, option, 1...16)
        guard arguments.dropFirst() == ["face"] else { throw .unsupportedOption(option) }
        let isBlur = option == "blur_detections" || option == "bd"
        let on: Bool
        var redaction = ThumbnailSpec.Redaction(mode: isBlur ? .blur : .box)
        if isBlur {
            let sigma = try Self.decimal(arguments[0], option, "sigma")
            redaction.strength = sigma
            on = sigma != .zero
        } else {
            on = try Self.boolean(arguments[0], option)
        }
        guard on else {
            direct.remove(.redact)
            direct.remove(.redact_margin)
            return
        }
        direct.set(.redact, redaction, option: option)
        if isBlur { direct.remove(.redact_margin) } else { direct.set(.redact_margin, .zero, option: option) }
    }

    private mutating func applyResizingType(_ text: String, _ option: String) throws(RequestError) {
        guard let type = ResizingType(rawValue: text) else {
            throw .invalidValue(option, reason: "the resizing type must be fit, fill, fill-down, force or auto")
        }
        resizingType = Given(value: type, option: option)
    }

    /// `width:height:enlarge:extend:extend-gravity…`, each optional.
    private mutating func applySize(_ arguments: [String], _ option: String) throws(RequestError) {
        if !arguments[0].isEmpty { width = Given(value: try Self.whole(arguments[0], option, "width"), option: option) }
        if arguments.count > 1 && !arguments[1].isEmpty {
            height = Given(value: try Self.whole(arguments[1], option, "height"), option: option)
        }
        if arguments.count > 2 && !arguments[2].isEmpty {
            enlarge = Given(value: try Self.boolean(arguments[2], option), option: option)
        }
        if arguments.count > 3 && !arguments[3].isEmpty {
            extend = Given(value: try Self.extend(Array(arguments.dropFirst(3)), option), option: option)
        }
    }

    /// `width:height:gravity…`: sizes 0 (whole), below 1 (fraction) or pixels.
    private mutating func applyCrop(_ arguments: [String], _ option: String) throws(RequestError) {
        try Self.count(arguments, option, 1...5)
        func side(_ text: String) throws(RequestError) -> CropSide {
            let value = try Self.decimal(text, option, "crop size")
            if value == .zero { return .whole }
            if value < .one { return .fraction(value) }
            return .pixels(value.units / FixedDecimal.unitsPerOne)
        }
        let width = try side(arguments[0])
        let height = arguments.count > 1 ? try side(arguments[1]) : .whole
        let (placement, offsets) = try Self.compassOffsets(Array(arguments.dropFirst(2)), option)
        let gravity = placement.isEmpty ? nil : try Self.gravity(placement, option, smart: true)
        crop = Given(
            value: Crop(width: width, height: height, gravity: gravity, offsetX: offsets.x, offsetY: offsets.y),
            option: option)
    }

    /// A gravity's arguments without a compass point's offsets, and the offsets (zero when not written; other types
    /// keep their arguments: `fp:x:y`, and `sm` refuses any).
    static func compassOffsets(_ arguments: [String], _ option: String) throws(RequestError) -> (
        [String], (x: FixedDecimal, y: FixedDecimal)
    ) {
        guard let type = arguments.first, compassPoints[type] != nil, arguments.count > 1 else {
            return (arguments, (.zero, .zero))
        }
        guard arguments.count <= 3 else { throw .invalidValue(option, reason: "the gravity takes at most 2 offsets") }
        var offsets = (x: FixedDecimal.zero, y: FixedDecimal.zero)
        if !arguments[1].isEmpty { offsets.x = try decimal(arguments[1], option, "offset") }
        if arguments.count > 2 && !arguments[2].isEmpty { offsets.y = try decimal(arguments[2], option, "offset") }
        return ([type], offsets)
    }

    /// `threshold:colour:equal_hor:equal_ver`; an empty threshold turns trimming off (as in imgproxy).
    private mutating func applyTrim(_ arguments: [String], _ option: String) throws(RequestError) {
        try Self.count(arguments, option, 1...4)
        for (index, name) in [(2, "equal_hor"), (3, "equal_ver")] where arguments.count > index {
            if !arguments[index].isEmpty, try Self.boolean(arguments[index], option) {
                throw .unsupportedOption("\(option):\(name)")
            }
        }
        guard !arguments[0].isEmpty else {
            direct.remove(.trim)
            return
        }
        let threshold = try Self.decimal(arguments[0], option, "threshold")
        guard threshold.isWhole, threshold.units >= 0 else {
            throw .invalidValue(option, reason: "the threshold must be a whole number 0...255")
        }
        var colour: RGBAColour?
        if arguments.count > 1 && !arguments[1].isEmpty { colour = try Self.hexColour(arguments[1], option) }
        let value = ThumbnailSpec.Trim(threshold: threshold.units / FixedDecimal.unitsPerOne, colour: colour)
        direct.set(.trim, value, option: option)
    }

    /// `top:right:bottom:left`, CSS-style: an unwritten right copies top, bottom copies top, left copies right.
    private mutating func applyPadding(_ arguments: [String], _ option: String) throws(RequestError) {
        try Self.count(arguments, option, 1...4)
        var sides: [Int?] = []
        for argument in arguments {
            sides.append(argument.isEmpty ? nil : try Self.whole(argument, option, "padding"))
        }
        sides += Array(repeating: nil, count: 4 - sides.count)
        // imgproxy's copies read the value in force, which may be an earlier option's.
        if let top = sides[0] { padding[0] = top }
        padding[1] = sides[1] ?? padding[0]
        padding[2] = sides[2] ?? padding[0]
        padding[3] = sides[3] ?? padding[1]
        paddingOption = option
    }

    /// `brightness`, `contrast`, `saturation` (imgproxy Pro), or all three as `adjust:b:c:s`.
    private mutating func applyAdjustment(_ arguments: [String], _ option: String) throws(RequestError) {
        let isAdjust = option == "adjust" || option == "a"
        try Self.count(arguments, option, 1...(isAdjust ? 3 : 1))
        let parameters: [ThumbnailRequest.Parameter] =
            switch option {
            case "brightness", "br": [.brightness]
            case "contrast", "co": [.contrast]
            case "saturation", "sa": [.saturation]
            default: [.brightness, .contrast, .saturation]
            }
        for (parameter, text) in zip(parameters, arguments) where !text.isEmpty {
            let value = try Self.decimal(text, option, parameter.rawValue)
            switch parameter {
            case .brightness:
                guard value.isWhole else {
                    throw .invalidValue(option, reason: "the brightness must be a whole number -255...255")
                }
                direct.set(.brightness, value.units / FixedDecimal.unitsPerOne, option: option)
            case .contrast: direct.set(.contrast, value, option: option)
            default:
                // imgproxy's saturation is a factor of 0 or more (/thumb's negative ones are thumbor's).
                guard value >= .zero else {
                    throw .invalidValue(option, reason: "the saturation must be a number 0...10")
                }
                direct.set(.saturation, value, option: option)
            }
        }
    }

    /// `opacity:position:x:y:scale`; opacity 0 removes the watermark.
    private mutating func applyWatermark(_ arguments: [String], _ option: String) throws(RequestError) {
        try Self.count(arguments, option, 1...5)
        let opacity = try Self.decimal(arguments[0], option, "opacity")
        guard opacity <= .one, opacity >= .zero else {
            throw .invalidValue(option, reason: "the opacity must be 0...1")
        }
        var mark = Watermark(opacity: opacity)
        if arguments.count > 1 && !arguments[1].isEmpty {
            guard let position = Self.watermarkPositions[arguments[1]] else {
                if arguments[1] == "ch" { throw .unsupportedOption("\(option):ch") }
                throw .invalidValue(option, reason: "the position must be ce, a compass point (no, soea, …) or re")
            }
            mark.position = position
        }
        // imgproxy reads an offset below 1 as a fraction of the output's side, any other as pixels.
        func offset(_ text: String) throws(RequestError) -> WatermarkOffset {
            let value = try Self.decimal(text, option, "offset")
            guard value >= .zero else {
                throw .invalidValue(option, reason: "offsets must be ≥ 0 (inward from the edges)")
            }
            if value != .zero && value < .one { return .fraction(value) }
            guard value.isWhole else {
                throw .invalidValue(option, reason: "offsets must be whole pixels or a fraction below 1")
            }
            return .pixels(value.units / FixedDecimal.unitsPerOne)
        }
        if arguments.count > 2 && !arguments[2].isEmpty { mark.offsetX = try offset(arguments[2]) }
        if arguments.count > 3 && !arguments[3].isEmpty { mark.offsetY = try offset(arguments[3]) }
        if arguments.count > 4 && !arguments[4].isEmpty {
            mark.scale = try Self.positiveDecimal(arguments[4], option, "scale")
        }
        watermark = Given(value: mark, option: option)
    }

    /// imgproxy's watermark positions.
    private static let watermarkPositions: [String: ThumbnailSpec.Watermark.Position] = [
        "ce": .gravity(.centre), "no": .gravity(.north), "so": .gravity(.south), "ea": .gravity(.east),
        "we": .gravity(.west), "noea": .gravity(.northEast), "nowe": .gravity(.northWest),
        "soea": .gravity(.southEast), "sowe": .gravity(.southWest), "re": .tile,
    ]

    /// `format:quality:format:quality…`.
    private mutating func applyFormatQuality(_ arguments: [String], _ option: String) throws(RequestError) {
        guard arguments.count.isMultiple(of: 2) else {
            throw .invalidValue(option, reason: "must be pairs of format and quality")
        }
        for index in stride(from: 0, to: arguments.count, by: 2) {
            let format = Self.outputFormats[arguments[index]]
            // imgproxy's other formats are never thumbd's output, so their quality is never read.
            guard format != nil || Self.imgproxyOnlyFormats.contains(arguments[index]) else {
                throw .invalidValue(option, reason: "unknown format \(arguments[index])")
            }
            let quality = try Self.quality(arguments[index + 1], option)
            if let format { formatQuality[format] = quality }
        }
        formatQualityOption = option
    }
}
