// SPDX-License-Identifier: Apache-2.0

/// Where blob files live under a cache root, and how they are named.
///
/// ```
/// <root>/index.sqlite            the index (the truth)
/// <root>/lock                    flock'ed while a DiskCache has the directory open
/// <root>/tmp/<name>.tmp          writes in progress; anything here at open is a crash leftover
/// <root>/blobs/a/bc/abc…-…       blob files: levels 1:2 of the key hash's hex digits (as nginx)
/// ```
///
/// A blob's name is `<16 hex digits of the key hash>-<16 random hex digits>`, new for every write.
/// Unique names mean a replaced or corrupt blob can be deleted without ever hitting a newer blob of the
/// same key, and a reader holding an old row finds either the old file or nothing, never new bytes
/// described by old metadata. The shard is the top 12 bits of the key hash, so the index rows whose
/// blobs belong in one leaf directory are one `key_hash BETWEEN` range (used by reconciliation).
struct BlobLayout: Sendable {
    /// Number of leaf directories (16 × 256).
    static let leafCount = 4096

    let root: String
    let databasePath: String
    let lockPath: String
    let temporaryDirectory: String
    let blobsDirectory: String

    init(root: String) {
        let root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.root = root
        databasePath = "\(root)/index.sqlite"
        lockPath = "\(root)/lock"
        temporaryDirectory = "\(root)/tmp"
        blobsDirectory = "\(root)/blobs"
    }

    /// A fresh blob name for `keyHash`.
    static func newFileName(keyHash: UInt64) -> String {
        hex16(keyHash) + "-" + hex16(UInt64.random(in: .min ... .max))
    }

    /// Whether `name` has the blob-name shape (anything else in the tree is left alone).
    static func isBlobName(_ name: String) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == 33 else { return false }
        for (offset, byte) in utf8.enumerated() {
            let isHex = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66)
            if offset == 16 ? byte != 0x2D : !isHex { return false }
        }
        return true
    }

    /// Leaf index (top 12 bits) of a key hash.
    static func leaf(ofKeyHash keyHash: UInt64) -> Int {
        Int(keyHash >> 52)
    }

    /// The inclusive range of key hashes, as stored (signed bit patterns), whose blobs live in `leaf`.
    static func keyHashRange(ofLeaf leaf: Int) -> ClosedRange<Int64> {
        let low = UInt64(leaf) << 52
        let high = low | ((1 << 52) - 1)
        // Both ends share the top bit, so their signed bit patterns keep the same order.
        return Int64(bitPattern: low)...Int64(bitPattern: high)
    }

    /// `<root>/blobs/a/bc` for a leaf index.
    func leafDirectory(_ leaf: Int) -> String {
        let digits = Self.hex16(UInt64(leaf) << 52)
        return "\(blobsDirectory)/\(digits.prefix(1))/\(digits.dropFirst().prefix(2))"
    }

    /// The top-level directory (`<root>/blobs/a`) that contains `leaf`.
    func topDirectory(ofLeaf leaf: Int) -> String {
        let digits = Self.hex16(UInt64(leaf) << 52)
        return "\(blobsDirectory)/\(digits.prefix(1))"
    }

    /// Absolute path of a blob file.
    func path(ofBlob name: String) -> String {
        let utf8 = name.utf8
        let first = utf8.prefix(1)
        let next = utf8.dropFirst().prefix(2)
        return "\(blobsDirectory)/\(String(first)!)/\(String(next)!)/\(name)"
    }

    /// Absolute path of the temporary file used while writing blob `name`.
    func temporaryPath(ofBlob name: String) -> String {
        "\(temporaryDirectory)/\(name).tmp"
    }

    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
