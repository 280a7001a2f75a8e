// SPDX-License-Identifier: Apache-2.0
package import OriginFetch
package import Thumbnailing

/// The way back from a plan to `/thumb`: one query string per spec, in one spelling.
extension ThumbnailRequest {
    /// The `/thumb` query (without `?` and without `sig`) that parses back to `spec`, with `Accept` deciding
    /// `format=auto` as it did for `spec`.
    ///
    /// Every field that differs from its default is written once, in the order of ``Parameter``'s cases, in one
    /// spelling: `url` percent-encoded (RFC 3986 unreserved bytes kept), whole numbers in decimal, fixed-point
    /// numbers as ``FixedDecimal`` writes them (`0.5`, `2`), crop fractions always with a `.` (`0.0`), padding in
    /// its shortest CSS form, colours lowercase, the orientation as `rotate` then `flip=h`. `dpr` is never written:
    /// the parser has already multiplied `w`, `h` and `padding` by it, so the spec holds output pixels.
    ///
    /// Parsing the result gives `spec` again (the fuzz target `FuzzThumbParameters` checks it), so two
    /// spellings of one plan have one canonical query, as they have one variant key.
    ///
    /// ```swift
    /// let request = try ThumbnailRequest(rawQuery: "w=200&url=http%3A%2F%2Fa%2Fb.jpg&flip=v", accept: nil)
    /// ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec)
    /// // url=http%3A%2F%2Fa%2Fb.jpg&w=200&rotate=180&flip=h
    /// ```
    package static func canonicalQuery(source: SourceURL, spec: ThumbnailSpec) -> String {
        var fields: [(Parameter, String)] = []
        fields.append((.url, String(decoding: QueryParameters.percentEncoded(source.string), as: UTF8.self)))
        if let width = spec.width { fields.append((.w, String(width))) }
        if let height = spec.height { fields.append((.h, String(height))) }
        if spec.fit != .contain { fields.append((.fit, spec.fit.rawValue)) }
        if let focalPoint = spec.focalPoint {
            fields.append((.gravity, focalPoint.text))
        } else if spec.gravity != .centre {
            fields.append((.gravity, spec.gravity.rawValue))
        }
        if case .exactly(let format) = spec.format { fields.append((.format, format.description)) }
        if let quality = spec.quality { fields.append((.q, String(quality))) }
        if spec.enlarge { fields.append((.enlarge, "1")) }
        fields += operationFields(spec.operations)

        var query = ""
        for (parameter, value) in fields {
            if !query.isEmpty { query += "&" }
            query += parameter.rawValue
            query += "="
            query += value
        }
        return query
    }

    /// The pipeline's parameters that differ from `Operations()`, in ``Parameter`` order.
    private static func operationFields(_ operations: ThumbnailSpec.Operations) -> [(Parameter, String)] {
        var fields: [(Parameter, String)] = []
        if !operations.animated { fields.append((.animated, "0")) }
        if !operations.autoOrient { fields.append((.autorotate, "0")) }
        if operations.orientation.degrees != 0 { fields.append((.rotate, String(operations.orientation.degrees))) }
        // `Orientation.rotated(d, h, false)` is the rotation then the mirror, exactly what the value holds.
        if operations.orientation.mirrored { fields.append((.flip, "h")) }
        if operations.adaptive { fields.append((.adaptive, "1")) }
        if let trim = operations.trim {
            let corner = trim.corner == .topLeft ? "" : ",\(trim.corner.rawValue)"
            fields.append((.trim, String(trim.threshold) + (trim.colour.map { ",\($0)" } ?? corner)))
        }
        switch operations.crop {
        case nil: break
        case .pixels(let left, let top, let width, let height)?:
            fields.append((.crop, [left, top, width, height].map(String.init).joined(separator: ",")))
        case .fractions(let left, let top, let width, let height)?:
            fields.append((.crop, [left, top, width, height].map(fraction).joined(separator: ",")))
        }
        if operations.brightness != 0 { fields.append((.brightness, String(operations.brightness))) }
        if operations.contrast != .one { fields.append((.contrast, operations.contrast.description)) }
        if operations.saturation != .one { fields.append((.saturation, operations.saturation.description)) }
        if operations.greyscale { fields.append((.grayscale, "1")) }
        if operations.blur != .zero { fields.append((.blur, operations.blur.description)) }
        if operations.sharpen != .zero { fields.append((.sharpen, operations.sharpen.description)) }
        if operations.pixelate != 0 { fields.append((.pixelate, String(operations.pixelate))) }
        if operations.padding != .zero { fields.append((.padding, shortestPadding(operations.padding))) }
        if let background = operations.background { fields.append((.bg, background.description)) }
        if let watermark = operations.watermark { fields += watermarkFields(watermark) }
        if let progressive = operations.progressive { fields.append((.progressive, progressive ? "1" : "0")) }
        if let chroma = operations.chroma { fields.append((.chroma, chroma.rawValue)) }
        if operations.lossless { fields.append((.lossless, "1")) }
        if let effort = operations.avifEffort { fields.append((.avif_effort, String(effort))) }
        if let maxBytes = operations.maxBytes { fields.append((.max_bytes, String(maxBytes))) }
        if operations.keepCopyright { fields.append((.keep_copyright, "1")) }
        if operations.keepColourProfile { fields.append((.icc, "keep")) }
        return fields
    }

    /// `wm` (a configured name; the digest is the configuration's) or `wm_url`, then the options that differ from
    /// their defaults.
    private static func watermarkFields(_ watermark: ThumbnailSpec.Watermark) -> [(Parameter, String)] {
        var fields: [(Parameter, String)] = []
        switch watermark.image {
        case .named(let name, _): fields.append((.wm, name))
        case .url(let url):
            fields.append((.wm_url, String(decoding: QueryParameters.percentEncoded(url), as: UTF8.self)))
        }
        switch watermark.position {
        case .tile: fields.append((.wm_pos, "tile"))
        case .gravity(let gravity) where gravity != .southEast: fields.append((.wm_pos, gravity.rawValue))
        case .gravity: break
        }
        if watermark.offsetX != 0 { fields.append((.wm_x, String(watermark.offsetX))) }
        if watermark.offsetY != 0 { fields.append((.wm_y, String(watermark.offsetY))) }
        if watermark.opacity != .one { fields.append((.wm_opacity, watermark.opacity.description)) }
        if watermark.scale != .zero { fields.append((.wm_scale, watermark.scale.description)) }
        return fields
    }

    /// A crop fraction with the `.` that tells it from a pixel count (`0.0`, `1.0`, `0.25`).
    private static func fraction(_ value: FixedDecimal) -> String {
        value.isWhole ? "\(value).0" : value.description
    }

    /// CSS shorthand: `all`, `vertical,horizontal`, `top,horizontal,bottom` or `top,right,bottom,left`.
    private static func shortestPadding(_ padding: ThumbnailSpec.Padding) -> String {
        let sides: [Int]
        if padding.left != padding.right {
            sides = padding.sides
        } else if padding.top != padding.bottom {
            sides = [padding.top, padding.right, padding.bottom]
        } else if padding.top != padding.right {
            sides = [padding.top, padding.right]
        } else {
            sides = [padding.top]
        }
        return sides.map(String.init).joined(separator: ",")
    }
}
