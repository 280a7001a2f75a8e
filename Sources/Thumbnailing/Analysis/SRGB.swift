// SPDX-License-Identifier: Apache-2.0
import Foundation

/// sRGB's transfer function (IEC 61966-2-1), which BlurHash, the lightness and the colour distances need: values
/// are averaged in linear light, where light adds up, and shown in sRGB.
enum SRGB {
    /// The linear value (0...1) of each 8-bit sRGB level: a table, since every analyser looks up 10,000 pixels.
    static let linear: [Double] = (0...255).map { level in
        let value = Double(level) / 255
        return value <= 0.04045 ? value / 12.92 : pow((value + 0.055) / 1.055, 2.4)
    }

    /// The 8-bit sRGB level of a linear value (clamped to 0...1), rounded to nearest.
    static func level(ofLinear value: Double) -> Int {
        let v = min(max(value, 0), 1)
        let encoded = v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055
        return Int(encoded * 255 + 0.5)
    }

    /// CIE L* (0...100) of an sRGB colour (D65): L* of its relative luminance Y (Rec. 709 primaries).
    static func lightness(red: UInt8, green: UInt8, blue: UInt8) -> Double {
        let y = 0.2126 * linear[Int(red)] + 0.7152 * linear[Int(green)] + 0.0722 * linear[Int(blue)]
        // CIE 1976: the cube root above (6/29)^3, its linear extension below.
        return y > 216.0 / 24389 ? 116 * cbrt(y) - 16 : y * 24389 / 27
    }
}
