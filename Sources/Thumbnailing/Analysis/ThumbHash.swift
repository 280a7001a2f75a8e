// SPDX-License-Identifier: Apache-2.0
import Foundation

/// ThumbHash, Evan Wallace's algorithm (https://evanw.github.io/thumbhash/, the reference `rgbaToThumbHash`): the
/// picture composited over its own average colour, turned into luminance, two colour differences and alpha, each
/// reduced to its lowest cosine components (a triangle of them), quantised to 4 bits, with the aspect ratio in the
/// header; base64 with the standard alphabet and padding. Takes at most 100 x 100 pixels (the miniature: 32).
enum ThumbHash {
    /// The ThumbHash bytes of width x height (each 1...100) RGBA pixels.
    static func encode(rgba: [UInt8], width w: Int, height h: Int) -> [UInt8] {
        precondition(w >= 1 && h >= 1 && w <= 100 && h <= 100, "ThumbHash takes at most 100 x 100 pixels")
        let count = w * h
        // The average colour, alpha-weighted (the colour transparent pixels are composited over).
        var averageR = 0.0, averageG = 0.0, averageB = 0.0, averageA = 0.0
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            averageR += alpha / 255 * Double(rgba[4 * i])
            averageG += alpha / 255 * Double(rgba[4 * i + 1])
            averageB += alpha / 255 * Double(rgba[4 * i + 2])
            averageA += alpha
        }
        if averageA > 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }
        let hasAlpha = averageA < Double(count)
        // Fewer luminance components when alpha takes room in the hash; the longer side gets the most.
        let limit = hasAlpha ? 5.0 : 7.0
        let longest = Double(max(w, h))
        let lx = max(1, jsRound(limit * Double(w) / longest)), ly = max(1, jsRound(limit * Double(h) / longest))
        var l = [Double](repeating: 0, count: count), p = l, q = l, a = l
        for i in 0..<count {
            let alpha = Double(rgba[4 * i + 3]) / 255
            let r = averageR * (1 - alpha) + alpha / 255 * Double(rgba[4 * i])
            let g = averageG * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 1])
            let b = averageB * (1 - alpha) + alpha / 255 * Double(rgba[4 * i + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b  // yellow - blue
            q[i] = r - g  // red - green
            a[i] = alpha
        }
        let (lDC, lAC, lScale) = components(l, w, h, nx: max(3, Int(lx)), ny: max(3, Int(ly)))
        let (pDC, pAC, pScale) = components(p, w, h, nx: 3, ny: 3)
        let (qDC, qAC, qScale) = components(q, w, h, nx: 3, ny: 3)
        let (aDC, aAC, aScale) = hasAlpha ? components(a, w, h, nx: 5, ny: 5) : (0, [], 0)

        let isLandscape = w > h
        let header24 =
            Int(jsRound(63 * lDC)) | Int(jsRound(31.5 + 31.5 * pDC)) << 6 | Int(jsRound(31.5 + 31.5 * qDC)) << 12
            | Int(jsRound(31 * lScale)) << 18 | (hasAlpha ? 1 : 0) << 23
        let header16 =
            Int(isLandscape ? ly : lx) | Int(jsRound(63 * pScale)) << 3 | Int(jsRound(63 * qScale)) << 9
            | (isLandscape ? 1 : 0) << 15
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8(header24 >> 16), UInt8(header16 & 255),
            UInt8(header16 >> 8),
        ]
        if hasAlpha { hash.append(UInt8(Int(jsRound(15 * aDC)) | Int(jsRound(15 * aScale)) << 4)) }
        // Two 4-bit factors a byte, the low nibble first.
        var index = 0
        for factors in hasAlpha ? [lAC, pAC, qAC, aAC] : [lAC, pAC, qAC] {
            for factor in factors {
                if index & 1 == 0 { hash.append(0) }
                hash[hash.count - 1] |= UInt8(Int(jsRound(15 * factor))) << ((index & 1) << 2)
                index += 1
            }
        }
        return hash
    }

    /// The constant component, the varying ones normalised to 0...1 around 0.5, and their largest magnitude, of the
    /// cosine components (cx, cy) with cx * ny < nx * (ny - cy): the triangle the reference keeps, in its order.
    private static func components(_ channel: [Double], _ w: Int, _ h: Int, nx: Int, ny: Int)
        -> (Double, [Double], Double)
    {
        var dc = 0.0, ac: [Double] = [], scale = 0.0
        var fx = [Double](repeating: 0, count: w)
        for cy in 0..<ny {
            var cx = 0
            while cx * ny < nx * (ny - cy) {
                for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                var f = 0.0
                // The reference's order of operations, term by term: on flat pictures many factors land on a
                // rounding boundary, where a different order would round them the other way.
                channel.withUnsafeBufferPointer { channel in
                    fx.withUnsafeBufferPointer { fx in
                        for y in 0..<h {
                            let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                            for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                        }
                    }
                }
                f /= Double(w * h)
                if cx > 0 || cy > 0 {
                    ac.append(f)
                    scale = max(scale, abs(f))
                } else {
                    dc = f
                }
                cx += 1
            }
        }
        if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
        return (dc, ac, scale)
    }

    /// JavaScript's Math.round (halves up), which the reference's quantisation uses.
    private static func jsRound(_ value: Double) -> Double { (value + 0.5).rounded(.down) }
}
