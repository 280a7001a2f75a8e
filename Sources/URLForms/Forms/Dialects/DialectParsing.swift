// SPDX-License-Identifier: Apache-2.0

/// The foreign URL forms' parse step on its own, for the fuzz target (fuzz/FuzzDialectURLs): a path as a form's
/// route hands it over, compiled into a request with no presets and no keys.
package enum DialectParsing {
    /// A thumbor path after its prefix (`unsafe/…` or `<signature>/…`), compiled as ``ThumborForm`` does after the
    /// signature check.
    package static func thumbor(_ path: Substring, accept: String?) throws(RequestError) -> ThumbnailRequest {
        let parsed = try ThumborPath(afterPrefix: path)
        return try parsed.plan().request(accept: accept, rules: .none, hints: nil, watermarks: .none)
    }

    /// thumbor's signature check of a path after its prefix, under `key` (unsafe URLs allowed).
    package static func verifyThumbor(_ path: Substring, key: String) throws(RequestError) {
        var values = DialectKeys.Values()
        values.thumbor = [URLSignature.SharedKey(bytes: Array(key.utf8))]
        values.allowsUnsafeThumbor = true
        try ThumborForm.verify(try ThumborPath(afterPrefix: path), keys: values)
    }

    /// An imgproxy target (`/<signature>/<options>/<source>`, prefix `/`), compiled as ``ImgproxyForm`` does after the
    /// signature check.
    package static func imgproxy(_ target: String, accept: String?) throws(RequestError) -> ThumbnailRequest {
        let path = try ImgproxyPath(target: target, prefix: "/")
        let components = try path.components(presetsOnly: false)
        return try ImgproxyOptions.plan(components, rules: .none).request(
            accept: accept, rules: .none, hints: nil, watermarks: .none)
    }

    /// imgproxy's signature check of a target (prefix `/`) under one key and salt (hexadecimal bytes).
    package static func verifyImgproxy(_ target: String, key: [UInt8], salt: [UInt8]) throws(RequestError) {
        let path = try ImgproxyPath(target: target, prefix: "/")
        var values = DialectKeys.Values()
        values.imgproxy = [DialectKeys.ImgproxyKey(key: URLSignature.SharedKey(bytes: key), salt: salt)]
        try ImgproxySignature.verify(path.signature, path: path.signedPath.utf8, keys: values)
    }
}
