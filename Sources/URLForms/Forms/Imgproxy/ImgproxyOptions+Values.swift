// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// The forms of imgproxy's arguments, each refused with a 400 naming the option as written, and the names of the
/// options thumbd refuses outright. Stricter than imgproxy
/// in two ways, both listed in docs/compatibility.md: a boolean that is not one of Go's (`1`, `t`, `true`, …) is
/// refused rather than read as false, and numbers are plain decimals with at most four fraction digits.
extension ImgproxyOptions {
    /// Checks the number of arguments.
    package static func count(_ arguments: [String], _ option: String, _ range: ClosedRange<Int>) throws(RequestError) {
        guard range.contains(arguments.count) else {
            let most = range.upperBound == 1 ? "one argument" : "at most \(range.upperBound) arguments"
            throw .invalidValue(option, reason: "takes \(most)")
        }
    }

    /// Go's `strconv.ParseBool`: `1 t T TRUE true True`, `0 f F FALSE false False`.
    package static func boolean(_ text: String, _ option: String) throws(RequestError) -> Bool {
        switch text {
        case "1", "t", "T", "TRUE", "true", "True": return true
        case "0", "f", "F", "FALSE", "false", "False": return false
        default: throw .invalidValue(option, reason: "\(text.prefix(16)) is not a boolean (1, t, true, 0, f, false)")
        }
    }

    /// A whole number ≥ 0 (digits only, at most 9).
    package static func whole(_ text: String, _ option: String, _ what: String) throws(RequestError) -> Int {
        guard let value = ThumbnailRequest.integer(text) else {
            throw .invalidValue(option, reason: "the \(what) must be a whole number ≥ 0")
        }
        return value
    }

    /// A plain decimal (`-` allowed, `.5` read as `0.5`), at most four fraction digits.
    package static func decimal(_ text: String, _ option: String, _ what: String) throws(RequestError) -> FixedDecimal {
        let written = text.hasPrefix(".") ? "0" + text : text.hasPrefix("-.") ? "-0" + text.dropFirst() : text
        guard let value = FixedDecimal(parsing: written) else {
            throw .invalidValue(option, reason: "the \(what) must be a number with at most 4 decimals")
        }
        return value
    }

    /// A decimal above 0.
    package static func positiveDecimal(_ text: String, _ option: String, _ what: String) throws(RequestError)
        -> FixedDecimal
    {
        let value = try decimal(text, option, what)
        guard value > .zero else { throw .invalidValue(option, reason: "the \(what) must be above 0") }
        return value
    }

    /// 0...100; 0 is the configured default.
    package static func quality(_ text: String, _ option: String) throws(RequestError) -> Int {
        guard let value = ThumbnailRequest.integer(text), (0...100).contains(value) else {
            throw .invalidValue(option, reason: "the quality must be a whole number 0...100")
        }
        return value
    }

    /// `rgb` or `rrggbb` (either case).
    package static func hexColour(_ text: String, _ option: String) throws(RequestError) -> RGBAColour {
        let digits = Array(text.lowercased().utf8)
        let long = digits.count == 3 ? digits.flatMap { [$0, $0] } : digits
        guard digits.count == 3 || digits.count == 6,
            digits.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let colour = RGBAColour(hex: String(decoding: long, as: UTF8.self))
        else { throw .invalidValue(option, reason: "the colour must be hexadecimal RGB or RRGGBB") }
        return colour
    }

    /// `R:G:B` (0...255 each) or a hex colour; no argument, or an empty one, clears it.
    package static func background(_ arguments: [String], _ option: String) throws(RequestError) -> RGBAColour? {
        switch arguments.count {
        case 1:
            return arguments[0].isEmpty ? nil : try hexColour(arguments[0], option)
        case 3:
            var channels: [UInt8] = []
            for channel in arguments {
                guard let value = ThumbnailRequest.integer(channel), value <= 255 else {
                    throw .invalidValue(option, reason: "each of R, G and B must be 0...255")
                }
                channels.append(UInt8(value))
            }
            return RGBAColour(red: channels[0], green: channels[1], blue: channels[2], alpha: 255)
        default:
            throw .invalidValue(option, reason: "must be R:G:B or a hex colour")
        }
    }

    /// `extend:gravity…`: a boolean, then a gravity without `sm`.
    package static func extend(_ arguments: [String], _ option: String) throws(RequestError) -> Extend {
        try count(arguments, option, 1...4)
        let isEnabled = try boolean(arguments[0], option)
        let gravity = arguments.count > 1 ? try gravity(Array(arguments.dropFirst()), option, smart: false) : nil
        return Extend(isEnabled: isEnabled, gravity: gravity)
    }

    /// imgproxy's gravity types → thumbd's.
    package static let compassPoints: [String: Thumbnailing.Gravity] = [
        "ce": .centre, "no": .north, "so": .south, "ea": .east, "we": .west, "noea": .northEast,
        "nowe": .northWest, "soea": .southEast, "sowe": .southWest,
    ]

    /// `type:x:y`: a compass point (offsets 0 only), `sm` and `obj:face` (when `smart`), or `fp:x:y`; `obj` with any
    /// other class and `objw` (imgproxy Pro's object detection of classes thumbd has no detector for) are refused by
    /// name.
    package static func gravity(_ arguments: [String], _ option: String, smart: Bool) throws(RequestError) -> Gravity {
        let type = arguments[0]
        if type == "obj" && smart && arguments.dropFirst() == ["face"] { return .faces }
        if type == "obj" || type == "objw" { throw .unsupportedOption(type) }
        if type == "sm" && smart {
            guard arguments.count == 1 else { throw .invalidValue(option, reason: "sm takes no offsets") }
            return .smart
        }
        if type == "fp" {
            guard arguments.count == 3 else { throw .invalidValue(option, reason: "fp needs x and y") }
            let x = try decimal(arguments[1], option, "focal point")
            let y = try decimal(arguments[2], option, "focal point")
            guard (FixedDecimal.zero...FixedDecimal.one).contains(x), (FixedDecimal.zero...FixedDecimal.one).contains(y)
            else { throw .invalidValue(option, reason: "the focal point's x and y must be 0...1") }
            return .focalPoint(x: x, y: y)
        }
        guard let point = compassPoints[type] else {
            throw .invalidValue(
                option, reason: "the gravity must be ce, a compass point (no, soea, …)\(smart ? ", sm" : "") or fp")
        }
        guard arguments.count <= 3 else { throw .invalidValue(option, reason: "the gravity takes at most 2 offsets") }
        // Offsets are read by the options that honour them (`g`, `c`: compassOffsets); here they must be 0.
        for offset in arguments.dropFirst() where !offset.isEmpty {
            if try decimal(offset, option, "offset") != .zero { throw .unsupportedOption("\(option):offset") }
        }
        return .compass(point)
    }

    /// The output formats thumbd writes, by imgproxy's names.
    package static let outputFormats: [String: ImageFormat] = [
        "jpg": .jpeg, "jpeg": .jpeg, "png": .png, "webp": .webp, "avif": .avif, "gif": .gif, "jxl": .jxl,
        "heic": .heif,
    ]

    /// `skip_processing`'s formats, by imgproxy's names: the source formats thumbd reads; imgproxy's others (`svg`,
    /// `bmp`, `ico`, `jxl`) are refused by name, since thumbd refuses such a source rather than pass it through.
    package static func skipFormats(_ arguments: [String], _ option: String) throws(RequestError) -> Set<ImageFormat> {
        var formats = Set<ImageFormat>()
        for name in arguments {
            if name != "jxl", let format = outputFormats[name] ?? ["tiff": .tiff][name] {
                formats.insert(format)
            } else if imgproxyOnlyFormats.contains(name) {
                throw .unsupportedOption("\(option):\(name)")
            } else {
                throw .invalidValue(option, reason: "the formats must be jpg, png, webp, avif, gif, heic or tiff")
            }
        }
        return formats
    }

    /// imgproxy's other format names (and Pro's `best`): refused as output formats (`jxl` and `heic` are output
    /// formats, and `jxl` is refused by `skip_processing`, which reads sources).
    package static let imgproxyOnlyFormats: Set<String> = ["tiff", "bmp", "ico", "jxl", "svg", "best"]

    /// An output format by imgproxy's name.
    package static func outputFormat(_ text: String, _ option: String) throws(RequestError) -> ImageFormat {
        if let format = outputFormats[text] { return format }
        if imgproxyOnlyFormats.contains(text) { throw .unsupportedOption("\(option):\(text)") }
        throw .invalidValue(option, reason: "the format must be jpg, png, webp, avif, jxl, heic or gif")
    }

    /// URL-safe base64 (padding optional) of UTF-8 text.
    package static func base64Text(_ text: String, _ option: String) throws(RequestError) -> String {
        var encoded = Substring(text)
        while encoded.hasSuffix("=") { encoded = encoded.dropLast() }
        guard let bytes = URLSignature.base64URLDecoded(encoded.utf8, ignoringUnusedBits: true),
            let decoded = String(validating: bytes, as: UTF8.self)
        else { throw .invalidValue(option, reason: "must be URL-safe base64 of a URL") }
        return decoded
    }

    /// imgproxy's options (open-source and Pro) that thumbd does not honour at all.
    package static let unsupported: Set<String> = [
        "max_src_resolution", "msr", "max_src_file_size", "msfs",
        "max_animation_frames", "maf", "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd",
        "objects_position", "obj_pos", "op", "crop_aspect_ratio", "crop_ar", "car", "background_alpha", "bga",
        "monochrome", "mc", "duotone", "dt", "unsharp_masking", "ush", "blur_areas", "ba", "progressive_blur", "pbl",
        "crop_objects", "colorize", "col", "gradient", "gr",
        "watermark_text", "wmt", "watermark_size", "wms", "watermark_rotate", "wm_rot", "wmr", "watermark_shadow",
        "wmsh", "style", "st", "dpi", "color_profile", "cp", "icc", "autoquality", "aq", "jpeg_options", "jpgo",
        "png_options", "pngo", "webp_options", "webpo", "avif_options", "avifo", "pages", "pgs",
        "disable_animation", "da", "video_thumbnail_second", "vts", "video_thumbnail_keyframes", "vtk",
        "video_thumbnail_tile", "vtt", "video_thumbnail_animation", "vta", "fallback_image_url", "fiu",
        "bypass_cache", "bc", "cache_tags", "ct", "hashsum", "hs",
    ]
}
