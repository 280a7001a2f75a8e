// SPDX-License-Identifier: Apache-2.0

/// How light the picture looks: the mean CIE L* of its pixels over 100, each weighted by its alpha (what is not
/// there is neither light nor dark). L* rather than a mean of sRGB values because it is the scale on which equal
/// steps look equal, so 0.5 is the middle grey a viewer would call neither light nor dark (sRGB level 119).
enum Lightness {
    /// 0 (black) ... 1 (white); 0 when every pixel is transparent.
    static func of(rgba: [UInt8], count: Int) -> Double {
        var sum = 0.0, weight = 0.0
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            guard alpha > 0 else { continue }
            sum += alpha * SRGB.lightness(red: rgba[4 * i], green: rgba[4 * i + 1], blue: rgba[4 * i + 2])
            weight += alpha
        }
        return weight > 0 ? min(max(sum / weight / 100, 0), 1) : 0
    }
}
