// SPDX-License-Identifier: Apache-2.0

import Caching
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Helpers for disk-cache tests. They read and damage the tree through its documented layout
/// (`blobs/<h0>/<h1h2>/<16 hex of key hash>-<random>`, `tmp/`, `index.sqlite`), as a crash or an
/// operator would, not through the cache.
enum DiskFixtures {
    static func metadata(_ contentType: String = "image/webp", etag: String? = "\"v1\"") -> DiskCache.EntryMetadata {
        let now = Timestamp(millisecondsSinceEpoch: 1_700_000_000_000)
        return DiskCache.EntryMetadata(
            contentType: contentType,
            etag: etag,
            createdAt: now,
            freshness: DiskCache.Freshness(
                validatedAt: now,
                expiresAt: now.advanced(by: .seconds(86_400)),
                staleIfErrorUntil: now.advanced(by: .seconds(2 * 86_400)),
                originETag: "\"origin-1\"",
                originLastModified: "Tue, 14 Nov 2023 22:13:20 GMT"
            )
        )
    }

    /// Deterministic bytes for a key and version: the hit checks can recompute them.
    static func bytes(_ seed: String, count: Int) -> [UInt8] {
        var state = CacheKey(seed).hash | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    static func cache(
        _ directory: TempDirectory,
        subdirectory: String = "cache",
        maxBytes: Int = 1 << 30,
        maxEntryBytes: Int? = nil,
        lowWatermark: Double = 0.9
    ) throws -> DiskCache {
        try DiskCache(
            configuration: .init(
                directory: directory.appending(subdirectory),
                maxBytes: maxBytes,
                maxEntryBytes: maxEntryBytes,
                lowWatermark: lowWatermark
            )
        )
    }

    /// Every file under `<root>/blobs`, as absolute paths.
    static func blobFiles(_ root: String) -> [String] {
        var found: [String] = []
        for top in list("\(root)/blobs") {
            for leaf in list("\(root)/blobs/\(top)") {
                found += list("\(root)/blobs/\(top)/\(leaf)").map { "\(root)/blobs/\(top)/\(leaf)/\($0)" }
            }
        }
        return found.sorted()
    }

    /// The blob file of `key`, found by its name's key-hash prefix.
    static func blobPath(_ root: String, _ key: CacheKey) -> String? {
        let hex = hex16(key.hash)
        return blobFiles(root).first { $0.split(separator: "/").last!.hasPrefix(hex) }
    }

    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func list(_ directory: String) -> [String] {
        guard let handle = opendir(directory) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    /// Writes `bytes` to `path` (created or truncated), as a crash or a stray process would.
    static func writeFile(_ path: String, _ bytes: [UInt8]) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        precondition(fd >= 0, "open \(path): \(errno)")
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Overwrites bytes in place from `offset`, keeping what comes before.
    static func overwrite(_ path: String, at offset: Int, with bytes: [UInt8]) {
        let fd = open(path, O_WRONLY)
        precondition(fd >= 0, "open \(path): \(errno)")
        _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        close(fd)
    }

    static func truncateFile(_ path: String, to size: Int) {
        precondition(truncate(path, off_t(size)) == 0, "truncate \(path): \(errno)")
    }

    /// Flips one byte in place (same size: only the checksum can tell).
    static func flipByte(_ path: String, at offset: Int) {
        let fd = open(path, O_RDWR)
        precondition(fd >= 0)
        var byte: UInt8 = 0
        _ = pread(fd, &byte, 1, off_t(offset))
        byte ^= 0xFF
        _ = pwrite(fd, &byte, 1, off_t(offset))
        close(fd)
    }

    /// Reads a whole descriptor with `pread` (what sendfile would send).
    static func readAll(_ fd: Int32, count: Int) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, 0) }
        return Array(buffer.prefix(max(0, n)))
    }
}

extension DiskFixtures {
    static func removeFile(_ path: String) {
        precondition(unlink(path) == 0, "unlink \(path): \(errno)")
    }

    static func makeDirectory(_ path: String) {
        _ = mkdir(path, 0o755)
    }
}
