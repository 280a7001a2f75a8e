// SPDX-License-Identifier: Apache-2.0

extension ThumbnailSpec {
    /// The steps a plan runs around its resize, in the order they run (docs/api.md, "The pipeline"):
    /// orientation, trim, crop, [resize and cover crop], tone, grey, blur, sharpen, pixelate, padding, background.
    ///
    /// Every value is canonical by construction: numbers are fixed-point, an orientation is one rotation
    /// and at most one mirror, and every field's default does nothing. Two spellings of one plan are
    /// therefore equal values, and `Operations()` is a plain resize.
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

        /// Brightness range.
        package static let brightnessRange = -255...255
        /// Contrast and saturation range.
        package static let multiplierRange = FixedDecimal.zero...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)
        /// Blur sigma range.
        package static let blurRange = FixedDecimal.zero...FixedDecimal(units: 100 * FixedDecimal.unitsPerOne)
        /// Sharpen sigma range.
        package static let sharpenRange = FixedDecimal.zero...FixedDecimal(units: 10 * FixedDecimal.unitsPerOne)
        /// Pixelate block range (0 and 1 mean none).
        package static let pixelateRange = 0...256
        /// Largest padding on one side, in output pixels.
        package static let maxPadding = 1024
        /// `maxBytes` range.
        package static let maxBytesRange = 1024...100_000_000
        /// The lowest quality `maxBytes` goes down to.
        package static let maxBytesQualityFloor = 10

        /// Checks every range; the error names the field as `/thumb` spells it.
        package func validate() throws(SpecError) {
            guard Self.brightnessRange.contains(brightness) else {
                throw SpecError(field: "brightness", reason: "must be -255...255")
            }
            guard Self.multiplierRange.contains(contrast) else {
                throw SpecError(field: "contrast", reason: "must be 0...10")
            }
            guard Self.multiplierRange.contains(saturation) else {
                throw SpecError(field: "saturation", reason: "must be 0...10")
            }
            guard Self.blurRange.contains(blur) else { throw SpecError(field: "blur", reason: "must be 0...100") }
            guard Self.sharpenRange.contains(sharpen) else {
                throw SpecError(field: "sharpen", reason: "must be 0...10")
            }
            guard Self.pixelateRange.contains(pixelate) else {
                throw SpecError(field: "pixelate", reason: "must be 0...256")
            }
            guard padding.sides.allSatisfy({ (0...Self.maxPadding).contains($0) }) else {
                throw SpecError(field: "padding", reason: "each side must be 0...\(Self.maxPadding)")
            }
            if let trim, !(0...255).contains(trim.threshold) {
                throw SpecError(field: "trim", reason: "threshold must be 0...255")
            }
            if let crop { try crop.validate() }
            if let watermark { try watermark.validate() }
            if let avifEffort, !(0...9).contains(avifEffort) {
                throw SpecError(field: "avif_effort", reason: "must be 0...9")
            }
            if let maxBytes, !Self.maxBytesRange.contains(maxBytes) {
                throw SpecError(field: "max_bytes", reason: "must be 1024...100000000")
            }
        }

        /// Chroma subsampling.
        package enum Chroma: String, Hashable, Sendable {
            /// 4:2:0: colour at half resolution on both axes.
            case subsampled = "420"
            /// 4:4:4: colour at full resolution.
            case full = "444"
        }

        /// The canonical form: neutral values removed (pixelate 1, a crop of the whole picture).
        package var normalized: Operations {
            var copy = self
            if copy.pixelate == 1 { copy.pixelate = 0 }
            if copy.crop?.isWholePicture == true { copy.crop = nil }
            if copy.watermark?.opacity == .zero { copy.watermark = nil }
            return copy
        }
    }

    /// A clockwise rotation by a multiple of 90°, then an optional left-right mirror: every combination of
    /// rotations and flips is exactly one of these eight.
    package struct Orientation: Hashable, Sendable {
        /// 0, 90, 180 or 270.
        package let degrees: Int
        /// Mirrored left-right after the rotation.
        package let mirrored: Bool

        /// Nothing.
        package static let none = Orientation(validDegrees: 0, mirrored: false)

        /// `nil` unless `degrees` is 0, 90, 180 or 270 (after reduction modulo 360).
        package init?(degrees: Int, mirrored: Bool = false) {
            guard degrees % 90 == 0 else { return nil }
            self.init(validDegrees: ((degrees % 360) + 360) % 360, mirrored: mirrored)
        }

        private init(validDegrees: Int, mirrored: Bool) {
            degrees = validDegrees
            self.mirrored = mirrored
        }

        /// Rotate by `degrees`, then flip left-right (`horizontal`) and top-bottom (`vertical`).
        package static func rotated(_ degrees: Int, flippedHorizontally horizontal: Bool, vertically vertical: Bool)
            -> Orientation?
        {
            guard let rotation = Orientation(degrees: degrees) else { return nil }
            var result = rotation
            if horizontal { result = result.then(Orientation(validDegrees: 0, mirrored: true)) }
            // A top-bottom flip is a half turn and a left-right mirror.
            if vertical { result = result.then(Orientation(validDegrees: 180, mirrored: true)) }
            return result
        }

        /// This orientation, then `next`. A mirror followed by a rotation is the opposite rotation followed
        /// by the mirror.
        package func then(_ next: Orientation) -> Orientation {
            let turn = mirrored ? 360 - next.degrees : next.degrees
            return Orientation(validDegrees: (degrees + turn) % 360, mirrored: mirrored != next.mirrored)
        }

        /// Whether width and height trade places.
        package var swapsSides: Bool { degrees == 90 || degrees == 270 }
    }

    /// Which borders a trim removes: pixels within `threshold` (0...255) of `colour`, or of the pixel in
    /// `corner` (the top-left by default) when `colour` is nil.
    package struct Trim: Hashable, Sendable {
        package let threshold: Int
        package let colour: RGBAColour?
        /// The corner whose pixel is the background when no colour is given (`.topLeft` when one is).
        package let corner: Corner

        /// A corner of the (turned) picture, spelt as `/thumb`'s `trim` writes it.
        package enum Corner: String, Hashable, Sendable, CaseIterable {
            case topLeft = "tl", topRight = "tr", bottomLeft = "bl", bottomRight = "br"
        }

        package init(threshold: Int, colour: RGBAColour?, corner: Corner = .topLeft) {
            self.threshold = threshold
            self.colour = colour
            self.corner = colour == nil ? corner : .topLeft
        }
    }

    /// A region of the picture, in source pixels or in fractions of its size; what overhangs the picture is
    /// dropped, and a region that misses it entirely fails the render (`ThumbnailError.cropOutsidePicture`).
    package enum Crop: Hashable, Sendable {
        case pixels(left: Int, top: Int, width: Int, height: Int)
        case fractions(left: FixedDecimal, top: FixedDecimal, width: FixedDecimal, height: FixedDecimal)

        /// Largest pixel coordinate accepted.
        package static let maxPixels = 1_000_000

        func validate() throws(SpecError) {
            switch self {
            case .pixels(let left, let top, let width, let height):
                guard [left, top].allSatisfy({ (0...Self.maxPixels).contains($0) }),
                    [width, height].allSatisfy({ (1...Self.maxPixels).contains($0) })
                else { throw SpecError(field: "crop", reason: "pixels must be 0...\(Self.maxPixels), sizes ≥ 1") }
            case .fractions(let left, let top, let width, let height):
                guard [left, top, width, height].allSatisfy({ (FixedDecimal.zero...FixedDecimal.one).contains($0) }),
                    width > .zero, height > .zero
                else { throw SpecError(field: "crop", reason: "fractions must be 0...1, sizes above 0") }
            }
        }

        var isWholePicture: Bool {
            self == .fractions(left: .zero, top: .zero, width: .one, height: .one)
        }
    }

    /// Output pixels added on each side.
    package struct Padding: Hashable, Sendable {
        package var top: Int
        package var right: Int
        package var bottom: Int
        package var left: Int

        /// None.
        package static let zero = Padding(top: 0, right: 0, bottom: 0, left: 0)

        package init(top: Int, right: Int, bottom: Int, left: Int) {
            self.top = top
            self.right = right
            self.bottom = bottom
            self.left = left
        }

        /// In the order top, right, bottom, left.
        package var sides: [Int] { [top, right, bottom, left] }
    }
}

extension ThumbnailSpec {
    /// An image laid over the output (after padding), placed by a compass point and offsets or tiled, with
    /// an opacity and a width relative to the output's.
    package struct Watermark: Hashable, Sendable {
        /// Which image: one named in the configuration (with a digest of its bytes, so that replacing the file
        /// makes new variants), or one fetched from a URL (canonical, absolute http or https).
        package enum Image: Hashable, Sendable {
            case named(String, digest: UInt64)
            case url(String)
        }

        /// Where it goes.
        package enum Position: Hashable, Sendable {
            /// At a compass point (smart gravities are not positions), moved inward by the offsets.
            case gravity(Gravity)
            /// Repeated across the whole output from the top-left corner.
            case tile
        }

        package var image: Image
        package var position = Position.gravity(.southEast)
        /// Output pixels from the edge(s) the position names; for `centre`, a shift right and down.
        package var offsetX = 0
        package var offsetY = 0
        /// 0...1; 0 removes the watermark (normalisation drops it).
        package var opacity = FixedDecimal.one
        /// Width as a fraction of the output's width, 0...1; 0 keeps the image's own size.
        package var scale = FixedDecimal.zero

        /// Largest offset, in output pixels.
        package static let maxOffset = 4096

        package init(image: Image) { self.image = image }

        func validate() throws(SpecError) {
            if case .gravity(let gravity) = position, gravity == .attention || gravity == .entropy {
                throw SpecError(field: "wm_pos", reason: "must be a compass point, centre or tile")
            }
            guard (0...Self.maxOffset).contains(offsetX), (0...Self.maxOffset).contains(offsetY) else {
                throw SpecError(field: "wm_x", reason: "offsets must be 0...\(Self.maxOffset)")
            }
            guard (FixedDecimal.zero...FixedDecimal.one).contains(opacity) else {
                throw SpecError(field: "wm_opacity", reason: "must be 0...1")
            }
            guard (FixedDecimal.zero...FixedDecimal.one).contains(scale) else {
                throw SpecError(field: "wm_scale", reason: "must be 0...1")
            }
        }
    }
}

/// A point as fractions 0...1 of the picture's width and height, for focal-point gravity.
package struct FocalPoint: Hashable, Sendable {
    /// Fractions 0...1 of the picture after crop, or (``inPixels``) whole pixels of the turned picture, the frame
    /// `crop` is written in.
    package let x: FixedDecimal
    package let y: FixedDecimal
    /// Whether ``x`` and ``y`` are pixels (thumbor's `focal()`), converted into fractions of the region once the
    /// render knows the picture's size.
    package let inPixels: Bool

    /// A focal point in fractions; `nil` unless both are 0...1.
    package init?(x: FixedDecimal, y: FixedDecimal) {
        let range = FixedDecimal.zero...FixedDecimal.one
        guard range.contains(x), range.contains(y) else { return nil }
        self.x = x
        self.y = y
        inPixels = false
    }

    /// A focal point in pixels of the turned picture; `nil` unless both are 0...`ThumbnailSpec.Crop.maxPixels`.
    package init?(pixelX: Int, pixelY: Int) {
        let range = 0...ThumbnailSpec.Crop.maxPixels
        guard range.contains(pixelX), range.contains(pixelY) else { return nil }
        x = FixedDecimal(units: pixelX * FixedDecimal.one.units)
        y = FixedDecimal(units: pixelY * FixedDecimal.one.units)
        inPixels = true
    }

    /// `fp:x,y` (fractions) or `fpx:x,y` (whole pixels): how keys and `/thumb`'s `gravity` spell it.
    package var text: String {
        inPixels
            ? "fpx:\(x.units / FixedDecimal.one.units),\(y.units / FixedDecimal.one.units)" : "fp:\(x),\(y)"
    }
}

/// An sRGB colour with alpha, 8 bits per channel.
package struct RGBAColour: Hashable, Sendable, CustomStringConvertible {
    package let red: UInt8
    package let green: UInt8
    package let blue: UInt8
    package let alpha: UInt8

    package init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// `RRGGBB` or `RRGGBBAA`, hexadecimal, either case; `nil` otherwise.
    package init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 6 || digits.count == 8 else { return nil }
        var channels: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            channels.append(high << 4 | low)
            index += 2
        }
        self.init(
            red: channels[0], green: channels[1], blue: channels[2], alpha: channels.count == 4 ? channels[3] : 255)
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x61...0x66: byte - 0x61 + 10
        case 0x41...0x46: byte - 0x41 + 10
        default: nil
        }
    }

    /// Canonical spelling: lowercase `rrggbb`, with `aa` only when not opaque.
    package var description: String {
        let channels = alpha == 255 ? [red, green, blue] : [red, green, blue, alpha]
        let hexDigits = Array("0123456789abcdef")
        return String(channels.flatMap { [hexDigits[Int($0 >> 4)], hexDigits[Int($0 & 15)]] })
    }
}

/// A decimal with at most four fraction digits, held exactly as an integer count of 1/10000: equal values
/// written differently (`0.5`, `0.50`) are equal, and the canonical text (`description`) is unique.
package struct FixedDecimal: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// Units in 1.
    package static let unitsPerOne = 10_000
    /// The value times 10000.
    package let units: Int

    package static let zero = FixedDecimal(units: 0)
    package static let one = FixedDecimal(units: unitsPerOne)

    package init(units: Int) { self.units = units }

    /// A plain decimal: optional `-`, digits, optionally `.` and 1...4 digits (no exponent, no `+`, no spaces,
    /// at most 7 integer digits). `nil` otherwise.
    package init?(parsing text: some StringProtocol) {
        var bytes = Substring(text).utf8[...]
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes = bytes.dropFirst() }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, (1...7).contains(whole.count), whole.allSatisfy(Self.isDigit) else {
            return nil
        }
        var units = whole.reduce(0) { $0 * 10 + Int($1 - 0x30) } * Self.unitsPerOne
        if parts.count == 2 {
            let fraction = parts[1]
            guard (1...4).contains(fraction.count), fraction.allSatisfy(Self.isDigit) else { return nil }
            var scale = Self.unitsPerOne / 10
            for digit in fraction {
                units += Int(digit - 0x30) * scale
                scale /= 10
            }
        }
        self.units = negative ? -units : units
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// The value as a `Double`.
    package var value: Double { Double(units) / Double(Self.unitsPerOne) }

    /// Whether it has a fraction part.
    package var isWhole: Bool { units % Self.unitsPerOne == 0 }

    package static func < (lhs: FixedDecimal, rhs: FixedDecimal) -> Bool { lhs.units < rhs.units }

    /// `0.5`, `2`, `-1.25`: no trailing zeros, no `.` for whole numbers.
    package var description: String {
        let magnitude = units.magnitude
        var text = units < 0 ? "-" : ""
        text += String(magnitude / UInt(Self.unitsPerOne))
        var fraction = Int(magnitude % UInt(Self.unitsPerOne))
        guard fraction != 0 else { return text }
        var digits = 4
        while fraction % 10 == 0 {
            fraction /= 10
            digits -= 1
        }
        let padded = String(fraction)
        return text + "." + String(repeating: "0", count: digits - padded.count) + padded
    }
}
