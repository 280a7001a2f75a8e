// SPDX-License-Identifier: Apache-2.0
package import HTTP1
package import OriginFetch

/// imgproxy's `/info/<signature>/<info options>/<source>` under the form's prefix: what a source is, as imgproxy's
/// JSON (the app's ``ImgproxyInfoAnswering``), signed as a processing URL is (the signature covers the
/// path after it). Info options: `size`/`s`, `format`/`f`, `dimensions`/`d` (on by default), `exif` (off by
/// default: the camera's make and model and when the picture was taken), `colorspace`/`cs`, `pages_number`/`pn`, and
/// the source's analysis: `palette`/`p`, `average`/`avg`, `dominant_colors`/`dc`, `blurhash`/`bh`,
/// `thumb_hash`/`th`, `perceptual_hash`/`phash`/`ph`; any other is refused by name, and so is an argument thumbd
/// cannot honour (`avg:1:0`, averaging transparent pixels too).
extension ImgproxyForm {
    /// What an info URL asks to see.
    package struct InfoOptions: Sendable, Equatable {
        package var size = true
        package var format = true
        package var dimensions = true
        package var exif = false
        package var colorspace = false
        package var pagesNumber = false
        /// Colours of the palette; 0 for none.
        package var palette = 0
        package var average = false
        package var dominantColours = false
        /// `dc`'s second argument: roles no colour of the picture fits are made from the found ones.
        package var buildsMissedColours = false
        /// BlurHash components (across, down); `nil` for none (`bh:0:0`).
        package var blurhash: [Int]?
        package var thumbhash = false
        package var perceptualHash = false

        /// Whether the source's analysis is asked.
        package var needsAnalysis: Bool {
            palette > 0 || average || dominantColours || blurhash != nil || thumbhash || perceptualHash
        }
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
            let arguments = option.arguments
            let field: WritableKeyPath<InfoOptions, Bool>
            switch name {
            case "size", "s": field = \.size
            case "format", "f": field = \.format
            case "dimensions", "d": field = \.dimensions
            case "exif": field = \.exif
            case "colorspace", "cs": field = \.colorspace
            case "pages_number", "pn": field = \.pagesNumber
            case "thumb_hash", "th": field = \.thumbhash
            case "perceptual_hash", "phash", "ph": field = \.perceptualHash
            case "palette", "p":
                try ImgproxyOptions.count(arguments, name, 1...1)
                let colours = try ImgproxyOptions.whole(arguments[0], name, "colours")
                guard colours == 0 || (2...256).contains(colours) else {
                    throw .invalidValue(name, reason: "colours must be 0 or 2-256")
                }
                options.palette = colours
                continue
            case "average", "avg":
                try ImgproxyOptions.count(arguments, name, 1...2)
                options.average = try ImgproxyOptions.boolean(arguments[0], name)
                if arguments.count == 2, !(try ImgproxyOptions.boolean(arguments[1], name)) {
                    throw .invalidValue(name, reason: "thumbd averages the opaque pixels only (ignore_transparent)")
                }
                continue
            case "dominant_colors", "dc":
                try ImgproxyOptions.count(arguments, name, 1...2)
                options.dominantColours = try ImgproxyOptions.boolean(arguments[0], name)
                options.buildsMissedColours =
                    arguments.count == 2 ? try ImgproxyOptions.boolean(arguments[1], name) : false
                continue
            case "blurhash", "bh":
                try ImgproxyOptions.count(arguments, name, 2...2)
                let x = try ImgproxyOptions.whole(arguments[0], name, "x components")
                let y = try ImgproxyOptions.whole(arguments[1], name, "y components")
                if x == 0 && y == 0 {
                    options.blurhash = nil
                    continue
                }
                guard (1...9).contains(x), (1...9).contains(y) else {
                    throw .invalidValue(name, reason: "components must be 1-9 (or 0:0 for none)")
                }
                options.blurhash = [x, y]
                continue
            case "cachebuster", "cb": continue
            default: throw .unsupportedOption(name)
            }
            try ImgproxyOptions.count(arguments, name, 1...1)
            options[keyPath: field] = try ImgproxyOptions.boolean(arguments[0], name)
        }
        if components.sourceExtension != nil { throw .unsupportedOption("an extension on an info URL") }
        guard components.source.utf8.count <= ThumbnailRequest.maxURLBytes,
            let source = try? SourceURL(components.source)
        else { throw .invalidValue("source", reason: "must be an absolute http(s) URL or s3://bucket/key") }
        return (source, options)
    }
}
