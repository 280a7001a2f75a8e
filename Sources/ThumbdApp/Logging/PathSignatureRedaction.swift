// SPDX-License-Identifier: Apache-2.0

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
    func redacted(_ path: String, note: String?) -> String {
        guard !mounts.isEmpty, note != nil else { return path }
        guard let mount = mounts.first(where: { path.hasPrefix($0.prefix) }) else { return path }
        var start = path.index(path.startIndex, offsetBy: mount.prefix.count)
        if mount.infoBeforeSignature, path[start...].hasPrefix("info/") {
            start = path.index(start, offsetBy: 5)
        }
        guard let end = path[start...].firstIndex(of: "/"), start < end, path[start..<end] != "unsafe" else {
            return path
        }
        return String(path[..<start]) + LoggingRedaction.placeholder + path[end...]
    }
}
