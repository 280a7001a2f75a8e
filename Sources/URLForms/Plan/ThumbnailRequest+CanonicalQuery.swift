// SPDX-License-Identifier: Apache-2.0
package import OriginFetch
package import Thumbnailing

/// The way back from a plan to `/thumb`: one query string per spec, in one spelling.
extension ThumbnailRequest {
    /// The `/thumb` query (without `?` and without `sig`) that parses back to `spec`, with `Accept` deciding
    /// `format=auto` as it did for `spec`.
    ///
    /// Every field that differs from its default is written once, in the order of ``Parameter``'s cases (each
    /// operation's fields by its descriptor, in the registry's query order), in one
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
        // `raw` is the source's bytes whatever the rest of its spec (``ThumbnailSpec/raw``), and nothing else may be
        // written beside it.
        if spec.operations.raw { return "url=" + fields[0].1 + "&raw=1" }
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
        if !spec.formatQuality.isEmpty {
            let pairs = spec.formatQuality.sorted { $0.key.description < $1.key.description }
            fields.append((.fq, pairs.map { "\($0.key.description):\($0.value)" }.joined(separator: ",")))
        }
        if spec.enlarge { fields.append((.enlarge, "1")) }
        // As in the variant key, a plain resize skips the descriptors' loop: most plans have no operation.
        if spec.operations != ThumbnailSpec.Operations() {
            var operationFields: [CanonicalField] = []
            spec.operations.appendQuery(to: &operationFields)
            for field in operationFields {
                let value =
                    field.isURL
                    ? String(decoding: QueryParameters.percentEncoded(field.value), as: UTF8.self) : field.value
                fields.append((field.parameter, value))
            }
        }

        var query = ""
        for (parameter, value) in fields {
            if !query.isEmpty { query += "&" }
            query += parameter.rawValue
            query += "="
            query += value
        }
        return query
    }
}
