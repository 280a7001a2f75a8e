// SPDX-License-Identifier: Apache-2.0
package import HTTP1
package import OriginFetch

/// imgproxy's `/info/<signature>/<info options>/<source>` under the form's prefix: what a source is, as imgproxy's
/// JSON (the app's ``ImgproxyInfoAnswering``), signed as a processing URL is (the signature covers the
/// path after it). Info options: `size`/`s`, `format`/`f`, `dimensions`/`d` (on by default) and `exif` (off by
/// default: the camera's make and model and when the picture was taken); any other is refused by name.
extension ImgproxyForm {
    /// What an info URL asks to see.
    package struct InfoOptions: Sendable, Equatable {
        package var size = true
        package var format = true
        package var dimensions = true
        package var exif = false
    }

    /// Whether a request under this form's prefix is an info URL (`info/` right after the prefix): a look at the
    /// path's bytes in place, so processing URLs go on to the front door untouched.
    package func isInfo(_ request: HTTPRequest) -> Bool {
        let skipped = prefix.utf8.count
        return request.withPathBytes { path in
            path.count > skipped && path[(path.startIndex + skipped)...].starts(with: "info/".utf8)
        }
    }

    /// The source and options of an info URL, its signature checked first.
    /// - Throws: `RequestError`: 403 for the signature, 400 naming an option imgproxy's info has and thumbd does not
    ///   show, or a source that is not an http(s) URL.
    package func infoRequest(for identity: RequestIdentity) throws(RequestError) -> (SourceURL, InfoOptions) {
        let path = try ImgproxyPath(target: identity.target, prefix: prefix + "info/")
        try ImgproxySignature.verify(path.signature, path: path.signedPath.utf8, keys: keys.current.values)
        let components = try path.components(presetsOnly: false)
        var options = InfoOptions()
        for option in components.options {
            let name = option.name
            let field: WritableKeyPath<InfoOptions, Bool>
            switch name {
            case "size", "s": field = \.size
            case "format", "f": field = \.format
            case "dimensions", "d": field = \.dimensions
            case "exif": field = \.exif
            case "cachebuster", "cb": continue
            default: throw .unsupportedOption(name)
            }
            try ImgproxyOptions.count(option.arguments, name, 1...1)
            options[keyPath: field] = try ImgproxyOptions.boolean(option.arguments[0], name)
        }
        if components.sourceExtension != nil { throw .unsupportedOption("an extension on an info URL") }
        guard components.source.utf8.count <= ThumbnailRequest.maxURLBytes,
            let source = try? SourceURL(components.source)
        else { throw .invalidValue("source", reason: "must be an absolute http(s) URL or s3://bucket/key") }
        return (source, options)
    }
}
