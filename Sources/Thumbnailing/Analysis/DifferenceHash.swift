// SPDX-License-Identifier: Apache-2.0

/// dHash as imagehash 4.3.2's `dhash` defines it: a 9 x 8 grey copy, each bit set when a pixel is brighter than the
/// one on its left (`pixels[:, 1:] > pixels[:, :-1]`); bits in imagehash's order, row by row, the first the most
/// significant.
enum DifferenceHash {
    /// The hash of 9 across x 8 down grey pixels, rows packed.
    static func of(grey: [UInt8]) -> UInt64 {
        precondition(grey.count == 9 * 8)
        var hash: UInt64 = 0
        for y in 0..<8 {
            for x in 0..<8 where grey[y * 9 + x + 1] > grey[y * 9 + x] { hash |= 1 << UInt64(63 - (y * 8 + x)) }
        }
        return hash
    }
}
