// SPDX-License-Identifier: Apache-2.0

import Caching
import Testing

/// Reference values from the `xxhash` Python package (the C reference implementation).
@Suite("XXHash64")
struct XXHash64Tests {
    @Test(arguments: [
        ([UInt8](), 0xEF46_DB37_51D8_E999 as UInt64),
        (Array("a".utf8), 0xD24E_C4F1_A98C_6E5B),
        (Array("abc".utf8), 0x44BC_2CF5_AD77_0999),
        // 70 bytes: two 32-byte stripes, then the 8-byte, 4-byte and 1-byte tails.
        (Array(String(repeating: "0123456789", count: 7).utf8), 0x4916_A0F3_F0E1_C781),
        ((0..<4).flatMap { _ in (0...255).map(UInt8.init) } + Array("xyz".utf8), 0xE146_CB31_B65B_C21A),
    ])
    func matchesReference(input: [UInt8], expected: UInt64) {
        #expect(XXHash64.hash(input) == expected)
    }

    @Test func stringAndBytesAgree() {
        #expect(XXHash64.hash("abc") == XXHash64.hash(Array("abc".utf8)))
        #expect(CacheKey("abc").hash == 0x44BC_2CF5_AD77_0999)
    }
}
