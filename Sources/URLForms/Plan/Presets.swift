// SPDX-License-Identifier: Apache-2.0

/// The configuration's `presets:`: named sets of `/thumb` parameters, each checked by `/thumb`'s own parser when
/// loaded, used by the `preset` parameter (docs/api.md, "Presets").
///
/// A request's plan is its presets' parameters, in order, with its own on top: the `default` preset (if there is
/// one) first, then each name of `preset=a,b` (a later one replaces what an earlier one set), then the request's own
/// parameters. So `preset=card` and the same parameters written out are one plan, one cache entry and one render.
///
/// ```swift
/// let presets = try Presets(["card": "w=400&h=300&fit=cover", "default": "q=75"])
/// let values = try presets.expand("card", under: [.w: "200"])   // w=200, h=300, fit=cover, q=75
/// ```
package struct Presets: Sendable, Equatable {
    /// The parameters of each preset, by name.
    private let table: [String: [ThumbnailRequest.Parameter: String]]

    /// The name of the preset that applies to every request.
    package static let defaultName = "default"
    /// The most names one `preset` value may list.
    package static let maxNamesPerRequest = 16

    /// No presets.
    package init() { table = [:] }

    /// Checks every preset with `/thumb`'s parser: each must be a query of known parameters, none repeated,
    /// without `url`, `sig` or `preset`, each value valid on its own (`w=5000` is refused here, not at the first
    /// request that uses it).
    /// - Throws: ``PresetError`` naming the preset and what is wrong with it.
    package init(_ configured: [String: String]) throws(PresetError) {
        var table: [String: [ThumbnailRequest.Parameter: String]] = [:]
        for (name, text) in configured.sorted(by: { $0.key < $1.key }) {
            do throws(RequestError) {
                table[name] = try Self.parameters(of: text)
            } catch {
                throw PresetError(preset: name, reason: error.publicMessage)
            }
        }
        self.table = table
    }

    /// The watermark names the presets' `wm=` use.
    package var watermarkNames: Set<String> { Set(table.values.compactMap { $0[.wm] }) }

    /// The names, sorted.
    package var names: [String] { table.keys.sorted() }

    /// Whether a `default` preset applies to every request.
    package var hasDefault: Bool { table[Self.defaultName] != nil }

    /// The parameters of a request that names `names` (the `preset` value, nil without one) and sets `request`
    /// itself: the `default` preset's, then each named preset's in order, then the request's, each replacing what
    /// came before.
    /// - Throws: `RequestError.invalidValue("preset", …)` for an empty or unknown name, or too many names.
    package func expand(
        _ names: String?, under request: [ThumbnailRequest.Parameter: String]
    ) throws(RequestError) -> [ThumbnailRequest.Parameter: String] {
        guard names != nil || hasDefault else { return request }
        var values = table[Self.defaultName] ?? [:]
        if let names {
            let list = names.split(separator: ",", omittingEmptySubsequences: false)
            guard list.count <= Self.maxNamesPerRequest else {
                throw .invalidValue("preset", reason: "at most \(Self.maxNamesPerRequest) names")
            }
            for name in list {
                guard !name.isEmpty else { throw .invalidValue("preset", reason: "empty preset name") }
                guard let preset = table[String(name)] else {
                    throw .invalidValue("preset", reason: "unknown preset \(Self.printable(name))")
                }
                values.merge(preset) { _, later in later }
            }
        }
        values.merge(request) { _, requested in requested }
        return values
    }

    /// One preset's parameters, each checked as `/thumb` checks it.
    private static func parameters(of text: String) throws(RequestError) -> [ThumbnailRequest.Parameter: String] {
        let parameters = try QueryParameters(parsing: text)
        var values: [ThumbnailRequest.Parameter: String] = [:]
        for (name, value) in parameters.pairs {
            guard name != URLSignature.parameterName, name != "preset", name != "url" else {
                throw .invalidValue(name, reason: "not allowed in a preset")
            }
            guard let parameter = ThumbnailRequest.Parameter(rawValue: name) else { throw .unknownParameter(name) }
            guard values[parameter] == nil else { throw .duplicateParameter(name) }
            values[parameter] = value
        }
        guard !values.isEmpty else { throw .missingParameter("a parameter") }
        // The whole parser runs once over it, with a stand-in source and, when the preset sets no size, a stand-in
        // width: what it refuses is the preset's own doing (a value out of range, `w` × `dpr` over 4096, ...).
        var trial = values
        trial[.url] = "https://preset.invalid/"
        if trial[.w] == nil && trial[.h] == nil { trial[.w] = "1" }
        // A named watermark is checked against the watermarks the service loads (ThumbdService), not here: the
        // configuration check knows the names, not the files' contents.
        let watermarks = trial[.wm].map { WatermarkDigests.standIn(named: $0) } ?? WatermarkDigests.empty
        _ = try ThumbnailRequest(values: trial, signature: nil, accept: nil, hints: nil, watermarks: watermarks)
        return values
    }

    /// A client-chosen name echoed back: at most 64 characters, quoted, without control characters.
    private static func printable(_ name: Substring) -> String {
        "\""
            + String(
                String.UnicodeScalarView(
                    name.unicodeScalars.prefix(64).filter { $0.value >= 0x20 && $0.value != 0x7F && $0 != "\"" }))
            + "\""
    }
}

/// A preset the configuration gives that `/thumb`'s parser refuses (a configuration error naming `presets.<name>`).
package struct PresetError: Error, Sendable, Equatable {
    /// The preset's name.
    package let preset: String
    /// What the parser said, naming the parameter (`invalid w: must be an integer 1...4096`).
    package let reason: String
}
