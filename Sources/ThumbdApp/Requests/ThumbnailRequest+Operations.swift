// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Thumbnailing

/// The `/thumb` parameters of the pipeline's steps (docs/api.md): `autorotate`, `rotate`, `flip`, `trim`,
/// `crop`, `brightness`, `contrast`, `saturation`, `grayscale`, `blur`, `sharpen`, `pixelate`, `padding` and
/// `bg`, plus the focal point written as `gravity=fp:x,y`. Each value is strict: anything else is a 400
/// naming the parameter.
extension ThumbnailRequest {
    /// The steps the parameters ask for. `dpr` scales the values given in CSS pixels (`padding`).
    static func operations(
        _ values: [Parameter: String], dpr: Double, watermarks: WatermarkSource = .none
    ) throws(RequestError) -> ThumbnailSpec.Operations {
        var operations = ThumbnailSpec.Operations()
        if let text = values[.animated] { operations.animated = try boolean(text, name: "animated") }
        if let text = values[.autorotate] { operations.autoOrient = try boolean(text, name: "autorotate") }
        let degrees = try values[.rotate].map { text throws(RequestError) in
            guard let degrees = integer(text), [0, 90, 180, 270].contains(degrees) else {
                throw .invalidValue("rotate", reason: "must be 0, 90, 180 or 270")
            }
            return degrees
        }
        let flip = try values[.flip].map { text throws(RequestError) in
            switch text {
            case "h": return (horizontal: true, vertical: false)
            case "v": return (horizontal: false, vertical: true)
            case "hv", "vh": return (horizontal: true, vertical: true)
            default: throw .invalidValue("flip", reason: "must be h, v or hv")
            }
        }
        if degrees != nil || flip != nil {
            operations.orientation =
                ThumbnailSpec.Orientation.rotated(
                    degrees ?? 0, flippedHorizontally: flip?.horizontal ?? false, vertically: flip?.vertical ?? false)
                ?? .none
        }
        if let text = values[.adaptive] { operations.adaptive = try boolean(text, name: "adaptive") }
        if let text = values[.trim] { operations.trim = try trim(text) }
        if let text = values[.crop] { operations.crop = try crop(text) }
        if let text = values[.brightness] {
            guard let value = signedInteger(text), ThumbnailSpec.Operations.brightnessRange.contains(value) else {
                throw .invalidValue("brightness", reason: "must be an integer -255...255")
            }
            operations.brightness = value
        }
        if let text = values[.contrast] {
            operations.contrast = try decimal(text, name: "contrast", in: ThumbnailSpec.Operations.multiplierRange)
        }
        if let text = values[.saturation] {
            operations.saturation = try decimal(
                text, name: "saturation", in: ThumbnailSpec.Operations.multiplierRange)
        }
        if let text = values[.grayscale] { operations.greyscale = try boolean(text, name: "grayscale") }
        if let text = values[.blur] {
            operations.blur = try decimal(text, name: "blur", in: ThumbnailSpec.Operations.blurRange)
        }
        if let text = values[.sharpen] {
            operations.sharpen = try decimal(text, name: "sharpen", in: ThumbnailSpec.Operations.sharpenRange)
        }
        if let text = values[.pixelate] {
            guard let value = integer(text), ThumbnailSpec.Operations.pixelateRange.contains(value) else {
                throw .invalidValue("pixelate", reason: "must be an integer 0...256")
            }
            operations.pixelate = value
        }
        if let text = values[.padding] { operations.padding = try padding(text, dpr: dpr) }
        if let text = values[.bg] {
            guard let colour = RGBAColour(hex: text) else {
                throw .invalidValue("bg", reason: "must be RRGGBB or RRGGBBAA (hexadecimal)")
            }
            operations.background = colour
        }
        operations.watermark = try watermark(values, dpr: dpr, watermarks: watermarks)
        return operations
    }

    /// The encoder and metadata options: `progressive`, `chroma` (`420|444`), `lossless`, `avif_effort` (0...9),
    /// `max_bytes` (1024...100000000), `keep_copyright`, `icc` (`srgb|keep`). An option the explicitly asked
    /// format cannot honour is refused (under `format=auto` it applies when the negotiated format can).
    static func encoderOptions(
        _ values: [Parameter: String], format: FormatRequest, into operations: inout ThumbnailSpec.Operations
    ) throws(RequestError) {
        let explicit: ImageFormat? = if case .exactly(let format) = format { format } else { nil }
        func refuse(_ name: String, unless formats: Set<ImageFormat>, _ what: String) throws(RequestError) {
            if let explicit, !formats.contains(explicit) {
                throw .invalidValue(name, reason: "\(explicit.rawValue) output has no \(what)")
            }
        }
        if let text = values[.progressive] {
            operations.progressive = try boolean(text, name: "progressive")
            try refuse("progressive", unless: [.jpeg, .png], "progressive or interlaced mode")
        }
        if let text = values[.chroma] {
            guard let chroma = ThumbnailSpec.Operations.Chroma(rawValue: text) else {
                throw .invalidValue("chroma", reason: "must be 420 or 444")
            }
            operations.chroma = chroma
            try refuse("chroma", unless: [.jpeg, .avif], "chroma subsampling setting")
        }
        if let text = values[.lossless] {
            operations.lossless = try boolean(text, name: "lossless")
            if operations.lossless { try refuse("lossless", unless: [.webp, .avif], "lossless mode") }
        }
        if let text = values[.avif_effort] {
            guard let effort = integer(text), (0...9).contains(effort) else {
                throw .invalidValue("avif_effort", reason: "must be an integer 0...9")
            }
            operations.avifEffort = effort
            try refuse("avif_effort", unless: [.avif], "AVIF encoder")
        }
        if let text = values[.max_bytes] {
            let range = ThumbnailSpec.Operations.maxBytesRange
            guard let bytes = integer(text), range.contains(bytes) else {
                throw .invalidValue("max_bytes", reason: "must be an integer \(range.lowerBound)...\(range.upperBound)")
            }
            operations.maxBytes = bytes
            try refuse("max_bytes", unless: [.jpeg, .webp, .avif], "quality to lower")
            if operations.lossless {
                throw .invalidValue("max_bytes", reason: "lossless output has no quality to lower")
            }
        }
        if let text = values[.keep_copyright] {
            operations.keepCopyright = try boolean(text, name: "keep_copyright")
            if operations.keepCopyright { try refuse("keep_copyright", unless: [.jpeg, .webp, .avif], "EXIF") }
        }
        if let text = values[.icc] {
            switch text {
            case "srgb": operations.keepColourProfile = false
            case "keep": operations.keepColourProfile = true
            default: throw .invalidValue("icc", reason: "must be srgb or keep")
            }
            if operations.keepColourProfile {
                try refuse("icc", unless: [.jpeg, .png, .webp, .avif], "colour profile")
            }
        }
    }

    /// `wm=<name>` or `wm_url=<url>`, placed by `wm_pos` (a compass point or `tile`; default `southeast`),
    /// `wm_x`/`wm_y` (CSS px inward from the edges, × dpr), `wm_opacity` (0...1) and `wm_scale` (0...1 of the
    /// output's width). The `wm_*` options without an image are refused, not ignored.
    private static func watermark(
        _ values: [Parameter: String], dpr: Double, watermarks: WatermarkSource
    ) throws(RequestError) -> ThumbnailSpec.Watermark? {
        let options: [Parameter] = [.wm_pos, .wm_x, .wm_y, .wm_opacity, .wm_scale]
        var watermark: ThumbnailSpec.Watermark
        switch (values[.wm], values[.wm_url]) {
        case (nil, nil):
            if let given = options.first(where: { values[$0] != nil }) {
                throw .invalidValue(given.rawValue, reason: "needs wm or wm_url")
            }
            return nil
        case (.some, .some):
            throw .invalidValue("wm_url", reason: "give wm or wm_url, not both")
        case (let name?, nil):
            guard let digest = watermarks.digest(named: name) else {
                throw .invalidValue("wm", reason: "no watermark of that name is configured")
            }
            watermark = ThumbnailSpec.Watermark(image: .named(name, digest: digest))
        case (nil, let text?):
            guard text.utf8.count <= maxURLBytes, let url = try? SourceURL(text) else {
                throw .invalidValue("wm_url", reason: "must be an absolute http(s) URL or s3://bucket/key")
            }
            watermark = ThumbnailSpec.Watermark(image: .url(url.string))
        }
        if let text = values[.wm_pos] {
            if text == "tile" {
                watermark.position = .tile
            } else if let gravity = Gravity(rawValue: text == "center" ? "centre" : text),
                gravity != .attention && gravity != .entropy
            {
                watermark.position = .gravity(gravity)
            } else {
                throw .invalidValue("wm_pos", reason: "must be centre, a compass point or tile")
            }
        }
        for (parameter, keyPath) in [(Parameter.wm_x, \ThumbnailSpec.Watermark.offsetX), (.wm_y, \.offsetY)] {
            guard let text = values[parameter] else { continue }
            let limit = ThumbnailSpec.Watermark.maxOffset
            guard let value = integer(text), case let scaled = Int((Double(value) * dpr).rounded()), scaled <= limit
            else { throw .invalidValue(parameter.rawValue, reason: "must be a whole number 0...\(limit) (× dpr)") }
            if watermark.position == .tile, scaled != 0 {
                throw .invalidValue(parameter.rawValue, reason: "a tiled watermark has no offset")
            }
            watermark[keyPath: keyPath] = scaled
        }
        let unit = FixedDecimal.zero...FixedDecimal.one
        if let text = values[.wm_opacity] { watermark.opacity = try decimal(text, name: "wm_opacity", in: unit) }
        if let text = values[.wm_scale] { watermark.scale = try decimal(text, name: "wm_scale", in: unit) }
        return watermark
    }

    /// `fp:x,y` (fractions 0...1) or `fpx:x,y` (whole pixels of the turned picture): the focal point of `gravity`.
    static func focalPoint(_ text: String) throws(RequestError) -> FocalPoint {
        if text.hasPrefix("fpx:") {
            let parts = text.dropFirst(4).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = integer(String(parts[0])), let y = integer(String(parts[1])),
                let point = FocalPoint(pixelX: x, pixelY: y)
            else { throw .invalidValue("gravity", reason: "fpx:x,y needs two whole numbers 0...1000000") }
            return point
        }
        let parts = text.dropFirst(3).split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = FixedDecimal(parsing: parts[0]), let y = FixedDecimal(parsing: parts[1]),
            let point = FocalPoint(x: x, y: y)
        else { throw .invalidValue("gravity", reason: "fp:x,y needs two fractions 0...1") }
        return point
    }

    // MARK: - Values

    static func boolean(_ text: String, name: String) throws(RequestError) -> Bool {
        switch text {
        case "1", "true": return true
        case "0", "false": return false
        default: throw .invalidValue(name, reason: "must be 0, 1, true or false")
        }
    }

    /// An optional `-`, then `integer`'s digits.
    private static func signedInteger(_ text: String) -> Int? {
        guard text.hasPrefix("-") else { return integer(text) }
        return integer(String(text.dropFirst())).map { -$0 }
    }

    static func decimal(
        _ text: String, name: String, in range: ClosedRange<FixedDecimal>
    ) throws(RequestError) -> FixedDecimal {
        guard let value = FixedDecimal(parsing: text), range.contains(value) else {
            throw .invalidValue(name, reason: "must be a number \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// `threshold` or `threshold,RRGGBB`; an empty value is the default threshold, 10.
    private static func trim(_ text: String) throws(RequestError) -> ThumbnailSpec.Trim {
        if text.isEmpty { return ThumbnailSpec.Trim(threshold: 10, colour: nil) }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let threshold = integer(String(parts[0])), (0...255).contains(threshold)
        else {
            throw .invalidValue(
                "trim", reason: "must be a threshold 0...255, optionally followed by ,RRGGBB or a corner")
        }
        var colour: RGBAColour?
        var corner = ThumbnailSpec.Trim.Corner.topLeft
        if parts.count == 2 {
            if let named = ThumbnailSpec.Trim.Corner(rawValue: String(parts[1])) {
                corner = named
            } else {
                guard parts[1].utf8.count == 6, let parsed = RGBAColour(hex: parts[1]) else {
                    throw .invalidValue(
                        "trim", reason: "the colour must be RRGGBB (hexadecimal), or a corner tl, tr, bl, br")
                }
                colour = parsed
            }
        }
        return ThumbnailSpec.Trim(threshold: threshold, colour: colour, corner: corner)
    }

    /// `left,top,width,height`: all whole numbers (source pixels) or all written with a decimal point
    /// (fractions 0...1 of the picture).
    private static func crop(_ text: String) throws(RequestError) -> ThumbnailSpec.Crop {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else {
            throw .invalidValue("crop", reason: "must be left,top,width,height")
        }
        let fractional = parts.map { $0.contains(".") }
        if fractional.allSatisfy({ !$0 }) {
            let pixels = parts.compactMap { integer(String($0)) }
            let range = 0...ThumbnailSpec.Crop.maxPixels
            guard pixels.count == 4, pixels.allSatisfy(range.contains), pixels[2] >= 1, pixels[3] >= 1 else {
                throw .invalidValue("crop", reason: "pixels must be whole numbers 0...\(range.upperBound), sizes ≥ 1")
            }
            return .pixels(left: pixels[0], top: pixels[1], width: pixels[2], height: pixels[3])
        }
        guard fractional.allSatisfy({ $0 }) else {
            throw .invalidValue("crop", reason: "write all four as pixels or all four as fractions (with a '.')")
        }
        let values = parts.compactMap { FixedDecimal(parsing: $0) }
        let unit = FixedDecimal.zero...FixedDecimal.one
        guard values.count == 4, values.allSatisfy(unit.contains), values[2] > .zero, values[3] > .zero else {
            throw .invalidValue("crop", reason: "fractions must be 0...1, sizes above 0")
        }
        return .fractions(left: values[0], top: values[1], width: values[2], height: values[3])
    }

    /// CSS shorthand in CSS pixels: `all`, `vertical,horizontal`, `top,horizontal,bottom` or
    /// `top,right,bottom,left`; multiplied by `dpr`.
    private static func padding(_ text: String, dpr: Double) throws(RequestError) -> ThumbnailSpec.Padding {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let values = parts.compactMap { integer(String($0)) }
        let limit = ThumbnailSpec.Operations.maxPadding
        guard (1...4).contains(parts.count), values.count == parts.count else {
            throw .invalidValue("padding", reason: "must be 1 to 4 whole numbers (top,right,bottom,left)")
        }
        let scaled = values.map { Int((Double($0) * dpr).rounded()) }
        guard scaled.allSatisfy({ (0...limit).contains($0) }) else {
            throw .invalidValue("padding", reason: "each side × dpr must be at most \(limit)")
        }
        switch scaled.count {
        case 1: return .init(top: scaled[0], right: scaled[0], bottom: scaled[0], left: scaled[0])
        case 2: return .init(top: scaled[0], right: scaled[1], bottom: scaled[0], left: scaled[1])
        case 3: return .init(top: scaled[0], right: scaled[1], bottom: scaled[2], left: scaled[1])
        default: return .init(top: scaled[0], right: scaled[1], bottom: scaled[2], left: scaled[3])
        }
    }
}
