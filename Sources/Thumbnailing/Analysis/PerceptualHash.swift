// SPDX-License-Identifier: Apache-2.0
import Foundation

/// pHash as imagehash 4.3.2's `phash` defines it (after Neal Krawetz's "Looks Like It"): the DCT-II of a 32 x 32 grey
/// copy (scipy.fftpack.dct, unnormalised: 2 sum x[n] cos(pi k (2n + 1) / 2N), down the columns then along the rows),
/// its 8 x 8 lowest frequencies, each bit set when its coefficient is above their median. Bits in imagehash's order:
/// row by row, the first the most significant (its hex string is this number's 16 hex digits).
enum PerceptualHash {
    /// cos(pi k (2n + 1) / 64) for the 8 kept frequencies k and the 32 samples n.
    private static let basis: [[Double]] = (0..<8).map { k in
        (0..<32).map { n in cos(Double.pi * Double(k) * Double(2 * n + 1) / 64) }
    }

    /// The hash of 32 x 32 grey pixels, rows packed.
    static func of(grey: [UInt8]) -> UInt64 {
        precondition(grey.count == 32 * 32)
        // Only 8 of the 32 frequencies of each axis are kept, so only those are computed: first down the columns
        // (axis 0: column[u][x] for frequency u), then along the rows (axis 1).
        var columns = [Double](repeating: 0, count: 8 * 32)
        for u in 0..<8 {
            for y in 0..<32 {
                let weight = 2 * basis[u][y]
                for x in 0..<32 { columns[u * 32 + x] += weight * Double(grey[y * 32 + x]) }
            }
        }
        var low = [Double](repeating: 0, count: 64)
        for u in 0..<8 {
            for v in 0..<8 {
                var sum = 0.0
                for x in 0..<32 { sum += basis[v][x] * columns[u * 32 + x] }
                low[u * 8 + v] = 2 * sum
            }
        }
        // numpy.median of 64 values: the mean of the two middle ones.
        let sorted = low.sorted()
        let median = (sorted[31] + sorted[32]) / 2
        var hash: UInt64 = 0
        for (index, value) in low.enumerated() where value > median { hash |= 1 << UInt64(63 - index) }
        return hash
    }
}
