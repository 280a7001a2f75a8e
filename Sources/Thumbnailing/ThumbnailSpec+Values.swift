// SPDX-License-Identifier: Apache-2.0

/// A point as fractions 0...1 of the picture's width and height, for focal-point gravity.
package struct FocalPoint: Hashable, Sendable {
    /// Fractions 0...1 of the picture after crop, or (``inPixels``) whole pixels of the turned picture, the frame
    /// `crop` is written in.
    package let x: FixedDecimal
    package let y: FixedDecimal
    /// Whether ``x`` and ``y`` are pixels (thumbor's `focal()`), converted into fractions of the region once the
    /// render knows the picture's size.
    package let inPixels: Bool
    /// For a point in pixels: the corner of the trimmed picture (as turned) the pixels are measured from, inward
    /// (thumbor's `focal()` beside a flip, a rotate or a trim, whose point is measured in the picture before its
    /// turn and after its trim); `nil`: from the top-left corner of the untrimmed picture.
    package let corner: Gravity?

    /// The corners a point in pixels may be measured from, as `fpx:x,y,<corner>` writes them.
    package static let corners: [Gravity: String] = [
        .northWest: "nw", .northEast: "ne", .southEast: "se", .southWest: "sw",
    ]

    /// A focal point in fractions; `nil` unless both are 0...1.
    package init?(x: FixedDecimal, y: FixedDecimal) {
        let range = FixedDecimal.zero...FixedDecimal.one
        guard range.contains(x), range.contains(y) else { return nil }
        self.x = x
        self.y = y
        inPixels = false
        corner = nil
    }

    /// A focal point in pixels of the turned picture, measured from `corner` of the trimmed picture when one is
    /// given; `nil` unless both are 0...`ThumbnailSpec.Crop.maxPixels` and the corner is one of ``corners``.
    package init?(pixelX: Int, pixelY: Int, corner: Gravity? = nil) {
        let range = 0...ThumbnailSpec.Crop.maxPixels
        guard range.contains(pixelX), range.contains(pixelY) else { return nil }
        if let corner, Self.corners[corner] == nil { return nil }
        x = FixedDecimal(units: pixelX * FixedDecimal.one.units)
        y = FixedDecimal(units: pixelY * FixedDecimal.one.units)
        inPixels = true
        self.corner = corner
    }

    /// The same point without its corner when the corner names the untrimmed picture's top-left (no trim).
    package func measuredFromTopLeft(trimmed: Bool) -> FocalPoint {
        guard corner == .northWest, !trimmed,
            let point = FocalPoint(
                pixelX: x.units / FixedDecimal.one.units, pixelY: y.units / FixedDecimal.one.units)
        else { return self }
        return point
    }

    /// `fp:x,y` (fractions) or `fpx:x,y[,corner]` (whole pixels): how keys and `/thumb`'s `gravity` spell it.
    package var text: String {
        guard inPixels else { return "fp:\(x),\(y)" }
        let pixels = "fpx:\(x.units / FixedDecimal.one.units),\(y.units / FixedDecimal.one.units)"
        guard let corner, let name = Self.corners[corner] else { return pixels }
        return pixels + "," + name
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
