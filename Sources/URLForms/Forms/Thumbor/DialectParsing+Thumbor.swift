// SPDX-License-Identifier: Apache-2.0

extension DialectParsing {
    /// A thumbor path after its prefix (`unsafe/…` or `<signature>/…`), compiled as ``ThumborForm`` does after the
    /// signature check.
    package static func thumbor(_ path: Substring, accept: String?) throws(RequestError) -> ThumbnailRequest {
        let parsed = try ThumborPath(afterPrefix: path)
        return try parsed.plan().request(accept: accept, rules: .none, hints: nil, watermarks: .none)
    }

    /// thumbor's signature check of a path after its prefix, under `key` (unsafe URLs allowed).
    package static func verifyThumbor(_ path: Substring, key: String) throws(RequestError) {
        var keys = ThumborForm.Keys()
        keys.securityKeys = [URLSignature.SharedKey(bytes: Array(key.utf8))]
        keys.allowsUnsafe = true
        try ThumborForm.verify(try ThumborPath(afterPrefix: path), keys: keys)
    }
}
