// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the signatures of thumbor's and imgproxy's URLs out of the access log and /status: in those forms the
/// signature is the path's first segment after the form's prefix (after `info/` for imgproxy's info), not a `sig=`
/// parameter. A logged signature is as good as the key for the URL it signs.
///
/// Only answers of the thumbnail front door are rewritten (their access-log note is the cache outcome): with a form
/// mounted at `/`, `/prefetch/<id>` and the other routes keep their paths. `unsafe` is not a secret and stays.
struct PathSignatureRedaction: Sendable {
    /// One mounted form: its prefix, and whether an `info/` segment may come before the signature.
    struct Mount: Sendable {
        let prefix: String
        let infoBeforeSignature: Bool
    }

    private let mounts: [Mount]

    init(_ mounts: [Mount]) {
        // The longer prefix first, as the router tries them.
        self.mounts = mounts.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }
    }

    /// Whether any form is mounted (else there is nothing to redact).
    var isActive: Bool { !mounts.isEmpty }

    /// `path` with the signature segment replaced by `REDACTED` when a form's answer; else `path` itself.
    /// Runs for every answer (it feeds /status even with the access log off), so it scans the bytes: Character
    /// indexing of the path cost each thumbor-form hit about 2,000 instructions (`bench/hit-instructions.sh`).
    func redacted(_ path: String, note: String?) -> String {
        guard !mounts.isEmpty, note != nil else { return path }
        // Where the signature segment starts and ends, as byte offsets.
        let segment: (start: Int, end: Int)? = LoggingText.withUTF8(path) { bytes in
            guard let mount = mounts.first(where: { Self.has($0.prefix, in: bytes, at: 0) }) else { return nil }
            var start = mount.prefix.utf8.count
            if mount.infoBeforeSignature, Self.has("info/", in: bytes, at: start) { start += 5 }
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")), start < end,
                end - start != 6 || !Self.has("unsafe", in: bytes, at: start)
            else { return nil }
            return (start, end)
        }
        guard let segment else { return path }
        // Prefixes and the separators are ASCII, so both offsets are character boundaries.
        let bytes = path.utf8
        let start = bytes.index(bytes.startIndex, offsetBy: segment.start)
        let end = bytes.index(bytes.startIndex, offsetBy: segment.end)
        return String(path[..<start]) + LoggingRedaction.placeholder + path[end...]
    }

    /// Whether `text`'s bytes are in `bytes` at `offset` (a `memcmp`: the generic sequence comparisons were
    /// most of this type's cost).
    private static func has(_ text: String, in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        LoggingText.withUTF8(text) { text in
            guard let base = bytes.baseAddress, let other = text.baseAddress, bytes.count - offset >= text.count
            else { return text.isEmpty }
            return memcmp(base + offset, other, text.count) == 0
        }
    }
}
