// SPDX-License-Identifier: Apache-2.0

import Caching
import Testing

/// Reference values from the `xxhash` Python package (the C reference implementation).
@Suite("XXHash64")
struct XXHash64Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let input: [UInt8]
        let expected: UInt64
        var testDescription: String { "\(input.count) bytes" }
    }

    static let vectors: [Vector] = [
        Vector(input: [], expected: 0xEF46_DB37_51D8_E999),
        Vector(input: Array("a".utf8), expected: 0xD24E_C4F1_A98C_6E5B),
        Vector(input: Array("abc".utf8), expected: 0x44BC_2CF5_AD77_0999),
        // 70 bytes: two 32-byte stripes, then the 4-byte and 1-byte tails.
        Vector(input: Array(String(repeating: "0123456789", count: 7).utf8), expected: 0x4916_A0F3_F0E1_C781),
        // 1027 bytes: many stripes, then 8-, 1-byte tails.
        Vector(input: allBytesFourTimesPlusXYZ(), expected: 0xE146_CB31_B65B_C21A),
    ]

    static func allBytesFourTimesPlusXYZ() -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<4 { bytes += (0...255).map { UInt8($0) } }
        return bytes + Array("xyz".utf8)
    }

    @Test(arguments: vectors)
    func matchesReference(_ vector: Vector) {
        #expect(XXHash64.hash(vector.input) == vector.expected)
    }

    @Test func stringAndBytesAgree() {
        #expect(XXHash64.hash("abc") == XXHash64.hash(Array("abc".utf8)))
        #expect(CacheKey("abc").hash == 0x44BC_2CF5_AD77_0999)
    }
}
