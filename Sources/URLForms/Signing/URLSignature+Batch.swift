// SPDX-License-Identifier: Apache-2.0
import Crypto

/// The whole-batch signature of `POST /info?sig=…` (docs/api.md, "POST /info"): `sig` is
/// `base64url(HMAC-SHA256(key, "POST /info\n" + body))`, without padding, over the body's exact bytes (no
/// canonical form: the client signs what it sends), with the same keys as `/thumb`.
///
/// The prefix keeps the two kinds of signature apart. A query's canonical form (``URLSignature/canonicalBytes(_:)``)
/// holds only RFC 3986's unreserved characters, `%`, `=` and `&`, so it never holds the prefix's space or line feed:
/// no whole-batch signature verifies as a URL's, and no URL's signature verifies a batch.
///
/// ```swift
/// let body = Array(#"["https://example.com/a.jpg","https://example.com/b.jpg"]"#.utf8)
/// let sig = URLSignature.batchSignature(body: body, key: key)  // POST /info?sig=<sig> with that body
/// ```
extension URLSignature {
    /// What the whole-batch signature covers before the body.
    package static let batchPrefix = Array("POST /info\n".utf8)

    /// The bytes the HMAC of a whole-batch signature covers: ``batchPrefix`` then `body`.
    package static func batchMessage(body: [UInt8]) -> [UInt8] {
        batchPrefix + body
    }

    /// The `sig` of a whole `POST /info` body under `key` (the secret's UTF-8 bytes).
    package static func batchSignature(body: [UInt8], key: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: batchMessage(body: body), using: symmetricKey(key))
        return base64URLEncoded(Array(code))
    }
}
