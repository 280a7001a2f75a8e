// SPDX-License-Identifier: Apache-2.0
import URLForms

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps the secrets of the path-mounted forms' URLs (thumbor's, imgproxy's) out of the access log and /status. In
/// those forms the URL's signature is a segment of the path after the form's prefix, not a `sig=` parameter; and a
/// source or watermark URL written into the path carries its own query, whose secret values
/// (``LoggingRedaction/secretParameters``: a presigned URL's signature, a token) must go too, whether the URL is
/// percent-encoded or base64url. A logged signature is as good as the key for the URL it signs. Where they are is
/// the form's to say (``URLForms/PathForm/secretRanges(in:after:)``, carried by its ``FormDescriptor``): this type
/// finds the form by its prefix and replaces what the form's reader returns.
///
/// Every answer on a form's route is rewritten: thumbnails, side answers (thumbor's `meta/`, imgproxy's `info/`) and
/// errors alike. Only the paths of the other routes are left as they are: with a form mounted at `/`, `/prefetch/<id>` or
/// `/health` is not a form's URL (``init(_:otherRoutes:)``). `unsafe` is not a secret and stays.
struct PathSignatureRedaction: Sendable {
    /// One mounted form: its prefix and how its paths are read.
    struct Mount: Sendable {
        let prefix: String
        /// The form, whose ``URLForms/PathForm/secretRanges(in:after:)`` reads its paths: one call through its witness
        /// table per answer, and a metatype is not reference-counted as a closure's context would be.
        let form: any PathForm.Type
        /// The other routes under this prefix (exact paths and path prefixes), whose paths are not this form's.
        fileprivate var exactRoutes: [String] = []
        fileprivate var prefixRoutes: [String] = []

        init(prefix: String, form: any PathForm.Type) {
            self.prefix = prefix
            self.form = form
        }
    }

    private let mounts: [Mount]

    /// - Parameters:
    ///   - mounts: the mounted forms.
    ///   - otherRoutes: the exact paths and path prefixes of every other route (the router tries them before the
    ///     forms): a path among them is left as it is.
    init(_ mounts: [Mount], otherRoutes: (exact: [String], prefixes: [String]) = ([], [])) {
        // The longer prefix first, as the router tries them; each keeps only the other routes under it, so a form
        // at `/thumbor/` compares nothing more on its hits.
        self.mounts = mounts.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }.map { mount in
            var mount = mount
            mount.exactRoutes = otherRoutes.exact.filter { $0.hasPrefix(mount.prefix) }
            mount.prefixRoutes = otherRoutes.prefixes.filter { $0.hasPrefix(mount.prefix) && $0 != mount.prefix }
            return mount
        }
    }

    /// Whether any form is mounted (else there is nothing to redact).
    var isActive: Bool { !mounts.isEmpty }

    /// `path` with its secrets replaced by `REDACTED` when it is a form's; else `path` itself.
    /// Runs for every answer (it feeds /status even with the access log off), so it scans the bytes: Character
    /// indexing of the path cost each thumbor-form hit about 2,000 instructions (`bench/hit-instructions.sh`); the
    /// form's reader is one indirect call.
    func redacted(_ path: String) -> String {
        guard !mounts.isEmpty else { return path }
        let ranges: [Range<Int>] = LoggingText.withUTF8(path) { bytes in
            guard let mount = mounts.first(where: { Self.has($0.prefix, in: bytes, at: 0) }),
                !mount.isOtherRoute(bytes)
            else { return [] }
            return mount.form.secretRanges(in: bytes, after: mount.prefix.utf8.count)
        }
        guard !ranges.isEmpty else { return path }
        // Every range starts and ends at an ASCII byte (a separator or an escape), so each is a character
        // boundary and what is kept stays valid UTF-8.
        var redacted: [UInt8] = []
        redacted.reserveCapacity(path.utf8.count)
        LoggingText.withUTF8(path) { bytes in
            var kept = 0
            for range in ranges {
                redacted.append(contentsOf: bytes[kept..<range.lowerBound])
                redacted.append(contentsOf: LoggingRedaction.placeholder.utf8)
                kept = range.upperBound
            }
            redacted.append(contentsOf: bytes[kept...])
        }
        return String(decoding: redacted, as: UTF8.self)
    }

    /// Whether `text`'s bytes are in `bytes` at `offset` (a `memcmp`: the generic sequence comparisons were
    /// most of this type's cost).
    fileprivate static func has(_ text: String, in bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        LoggingText.withUTF8(text) { text in
            guard let base = bytes.baseAddress, let other = text.baseAddress, bytes.count - offset >= text.count
            else { return text.isEmpty }
            return memcmp(base + offset, other, text.count) == 0
        }
    }
}

extension PathSignatureRedaction.Mount {
    /// Whether `bytes` is the path of another route under this prefix (so not this form's).
    /// The lengths first, then `memcmp`: with a form mounted at `/`, every other route is asked on each of its hits,
    /// and the generic `elementsEqual` cost a thumbor-form hit about 1,900 instructions (`bench/hit-instructions.sh`).
    fileprivate func isOtherRoute(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        exactRoutes.contains { route in
            route.utf8.count == bytes.count && PathSignatureRedaction.has(route, in: bytes, at: 0)
        } || prefixRoutes.contains { route in PathSignatureRedaction.has(route, in: bytes, at: 0) }
    }
}
