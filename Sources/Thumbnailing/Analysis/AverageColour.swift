// SPDX-License-Identifier: Apache-2.0

/// The mean colour, as imgproxy's and imagor's `avg` give it: the mean of the sRGB values, each pixel weighted by its
/// alpha (a transparent pixel's colour is meaningless), over the miniature (a Lanczos-3 reduction keeps the mean).
enum AverageColour {
    /// The alpha-weighted mean of width x height RGBA pixels; black when every pixel is transparent.
    static func of(rgba: [UInt8], count: Int) -> SourceAnalysis.Colour {
        var r = 0, g = 0, b = 0, weight = 0
        for i in 0..<count {
            let alpha = Int(rgba[4 * i + 3])
            r += alpha * Int(rgba[4 * i])
            g += alpha * Int(rgba[4 * i + 1])
            b += alpha * Int(rgba[4 * i + 2])
            weight += alpha
        }
        guard weight > 0 else { return .init(red: 0, green: 0, blue: 0) }
        // Rounded to nearest, in integers.
        func mean(_ sum: Int) -> UInt8 { UInt8((2 * sum + weight) / (2 * weight)) }
        return .init(red: mean(r), green: mean(g), blue: mean(b))
    }
}
