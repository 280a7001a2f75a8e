// SPDX-License-Identifier: Apache-2.0

extension DialectParsing {
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
        var keys = ImgproxyForm.Keys()
        keys.pairs = [ImgproxyForm.Keys.Pair(key: URLSignature.SharedKey(bytes: key), salt: salt)]
        try ImgproxySignature.verify(path.signature, path: path.signedPath.utf8, keys: keys)
    }
}
