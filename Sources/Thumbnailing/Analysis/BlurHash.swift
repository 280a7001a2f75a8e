// SPDX-License-Identifier: Apache-2.0
import Foundation

/// BlurHash, Wolt's reference algorithm (https://github.com/woltapp/blurhash, Algorithm.md): the picture's
/// `x` x `y` lowest cosine components in linear light, quantised and written in base 83. Computed on the
/// miniature: the components are averages over the picture, which 32 px keep to about a level of 255.
/// BlurHash has no alpha: transparent pixels count with the colour they hold (black, once premultiplied away).
enum BlurHash {
    private static let digits = Array(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    /// The BlurHash of width x height RGBA pixels with `x` components across and `y` down (1...9 each).
    static func encode(rgba: [UInt8], width: Int, height: Int, x componentsX: Int, y componentsY: Int) -> String {
        // Each basis function is cos(pi i x / width) cos(pi j y / height): tables per axis make the sum a product.
        let cosX = (0..<componentsX).map { i in (0..<width).map { cos(Double.pi * Double(i * $0) / Double(width)) } }
        let cosY = (0..<componentsY).map { j in (0..<height).map { cos(Double.pi * Double(j * $0) / Double(height)) } }
        // Each pixel in linear light once (not once per component), in planes the sums read in order.
        let count = width * height
        var red = [Double](repeating: 0, count: count), green = red, blue = red
        for index in 0..<count {
            red[index] = SRGB.linear[Int(rgba[4 * index])]
            green[index] = SRGB.linear[Int(rgba[4 * index + 1])]
            blue[index] = SRGB.linear[Int(rgba[4 * index + 2])]
        }
        var factors: [(Double, Double, Double)] = []
        factors.reserveCapacity(componentsX * componentsY)
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                var r = 0.0, g = 0.0, b = 0.0
                cosX[i].withUnsafeBufferPointer { fx in
                    red.withUnsafeBufferPointer { red in
                        green.withUnsafeBufferPointer { green in
                            blue.withUnsafeBufferPointer { blue in
                                for row in 0..<height {
                                    let fy = cosY[j][row]
                                    let offset = row * width
                                    for column in 0..<width {
                                        let basis = fy * fx[column]
                                        r += basis * red[offset + column]
                                        g += basis * green[offset + column]
                                        b += basis * blue[offset + column]
                                    }
                                }
                            }
                        }
                    }
                }
                // The constant term is the mean; the others are scaled by 2, as a DCT's are.
                let scale = (i == 0 && j == 0 ? 1.0 : 2.0) / Double(width * height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        var hash: [UInt8] = []
        append(&hash, (componentsX - 1) + (componentsY - 1) * 9, length: 1)
        let ac = factors.dropFirst()
        var maximum = 1.0
        if ac.isEmpty {
            append(&hash, 0, length: 1)
        } else {
            let actual = ac.map { max(abs($0.0), abs($0.1), abs($0.2)) }.max() ?? 0
            let quantised = Int(max(0, min(82, (actual * 166 - 0.5).rounded(.down))))
            maximum = Double(quantised + 1) / 166
            append(&hash, quantised, length: 1)
        }
        let dc = factors[0]
        append(
            &hash, SRGB.level(ofLinear: dc.0) << 16 | SRGB.level(ofLinear: dc.1) << 8 | SRGB.level(ofLinear: dc.2),
            length: 4)
        for factor in ac {
            // Each AC value: its signed square root over the maximum, in 19 steps.
            func step(_ value: Double) -> Int {
                let root = (value / maximum).magnitude.squareRoot() * (value < 0 ? -1 : 1)
                return Int(max(0, min(18, (root * 9 + 9.5).rounded(.down))))
            }
            append(&hash, step(factor.0) * 19 * 19 + step(factor.1) * 19 + step(factor.2), length: 2)
        }
        return String(decoding: hash, as: UTF8.self)
    }

    /// Appends `value` in base 83 with `length` digits, the most significant first.
    private static func append(_ hash: inout [UInt8], _ value: Int, length: Int) {
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            hash.append(digits[(value / divisor) % 83])
            divisor /= 83
        }
    }
}
