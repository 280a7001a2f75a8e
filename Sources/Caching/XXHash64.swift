// SPDX-License-Identifier: Apache-2.0

/// XXH64, the 64-bit xxHash by Yann Collet (spec: github.com/Cyan4973/xxHash, doc/xxhash_spec.md).
///
/// Used for cache keys and as the blob checksum: it detects truncation, bit flips and torn writes
/// at several GB/s in plain Swift (see `bench/`), which matters because a hit may checksum up to a
/// megabyte. It is not a cryptographic hash; nothing here needs one (keys are ours, not an attacker's).
package enum XXHash64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// Hashes a string's UTF-8 bytes.
    package static func hash(_ string: String, seed: UInt64 = 0) -> UInt64 {
        var string = string
        return string.withUTF8 { hash(UnsafeRawBufferPointer($0), seed: seed) }
    }

    /// Hashes a byte array.
    package static func hash(_ bytes: [UInt8], seed: UInt64 = 0) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    /// Hashes raw bytes.
    package static func hash(_ buffer: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let count = buffer.count
        guard let base = buffer.baseAddress else { return finish(seed &+ prime5, tail: buffer, length: 0) }
        var offset = 0
        var h: UInt64
        if count >= 32 {
            var v1 = seed &+ prime1 &+ prime2
            var v2 = seed &+ prime2
            var v3 = seed
            var v4 = seed &- prime1
            let limit = count - 32
            while offset <= limit {
                v1 = round(v1, read64(base, offset))
                v2 = round(v2, read64(base, offset + 8))
                v3 = round(v3, read64(base, offset + 16))
                v4 = round(v4, read64(base, offset + 24))
                offset += 32
            }
            h = rotl(v1, 1) &+ rotl(v2, 7) &+ rotl(v3, 12) &+ rotl(v4, 18)
            h = merge(h, v1)
            h = merge(h, v2)
            h = merge(h, v3)
            h = merge(h, v4)
        } else {
            h = seed &+ prime5
        }
        let tail = UnsafeRawBufferPointer(rebasing: buffer[offset...])
        return finish(h, tail: tail, length: count)
    }

    @inline(__always)
    private static func finish(_ start: UInt64, tail: UnsafeRawBufferPointer, length: Int) -> UInt64 {
        var h = start &+ UInt64(length)
        var offset = 0
        let count = tail.count
        if let base = tail.baseAddress {
            while offset + 8 <= count {
                h ^= round(0, read64(base, offset))
                h = rotl(h, 27) &* prime1 &+ prime4
                offset += 8
            }
            if offset + 4 <= count {
                let word = UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                h ^= UInt64(word) &* prime1
                h = rotl(h, 23) &* prime2 &+ prime3
                offset += 4
            }
            while offset < count {
                h ^= UInt64(base.load(fromByteOffset: offset, as: UInt8.self)) &* prime5
                h = rotl(h, 11) &* prime1
                offset += 1
            }
        }
        h ^= h >> 33
        h = h &* prime2
        h ^= h >> 29
        h = h &* prime3
        h ^= h >> 32
        return h
    }

    @inline(__always)
    private static func read64(_ base: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func rotl(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        rotl(accumulator &+ input &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func merge(_ accumulator: UInt64, _ value: UInt64) -> UInt64 {
        (accumulator ^ round(0, value)) &* prime1 &+ prime4
    }
}
