// SPDX-License-Identifier: Apache-2.0
import Crypto

/// imgproxy's URL signature (docs.imgproxy.net, "Signing the URL"): HMAC-SHA256 keyed by the hex-decoded key,
/// over the hex-decoded salt followed by the path from the `/` after the signature segment (query excluded),
/// truncated to `signature_size` bytes, in URL-safe base64 without padding.
///
/// Several key and salt pairs may be configured (`imgproxy.keys`, `imgproxy.salts`); any of them verifies. With no
/// pair, the signature segment is any text and is not checked (imgproxy's behaviour), except that it cannot hold a
/// `:` — the first option of a URL written without a signature segment would otherwise be taken for one.
///
/// ```swift
/// let path = "/rs:fit:300:0/plain/https://example.com/a.jpg"
/// let signature = ImgproxySignature.signature(path: path.utf8, pair: keys.pairs[0], size: 32)
/// try ImgproxySignature.verify(signature[...], path: path.utf8, keys: keys)  // else throws .invalidSignature
/// ```
package enum ImgproxySignature {
    /// Checks `signature` for `path` (the bytes ``ImgproxyPath/signedPath`` holds) under `keys`.
    ///
    /// The expected MAC is computed for each pair and compared with the decoded signature byte by byte without an
    /// early exit, so the time taken tells nothing about how much of a forged signature was right.
    /// - Throws: `RequestError.missingSignature` (an empty segment), `.invalidSignature` (not base64url, another
    ///   length, or no pair verifies it; with no pairs, a segment holding `:`).
    package static func verify(
        _ signature: Substring, path: some Collection<UInt8>, keys: ImgproxyForm.Keys
    ) throws(RequestError) {
        guard !signature.isEmpty else { throw .missingSignature }
        guard !keys.pairs.isEmpty else {
            if signature.utf8.contains(UInt8(ascii: ":")) { throw .invalidSignature }
            return
        }
        let size = min(max(keys.signatureSize, 1), SHA256.byteCount)
        guard let given = URLSignature.base64URLDecoded(signature.utf8), given.count == size else {
            throw .invalidSignature
        }
        let message = Array(path)
        for pair in keys.pairs where constantTimeEqual(given, mac(message, pair: pair, size: size)) {
            return
        }
        throw .invalidSignature
    }

    /// The signature of `path` under `pair`, `size` bytes (1...32) of the MAC in unpadded base64url: what a client
    /// puts in the signature segment.
    package static func signature(path: some Collection<UInt8>, pair: ImgproxyForm.Keys.Pair, size: Int) -> String {
        URLSignature.base64URLEncoded(mac(Array(path), pair: pair, size: min(max(size, 1), SHA256.byteCount)))
    }

    /// The first `size` bytes of HMAC-SHA256(key, salt ‖ path).
    private static func mac(_ path: [UInt8], pair: ImgproxyForm.Keys.Pair, size: Int) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: pair.key.key)
        hmac.update(data: pair.salt)
        hmac.update(data: path)
        return Array(Array(hmac.finalize()).prefix(size))
    }

    /// Equal lengths and bytes, every byte looked at whatever the others hold.
    private static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}
