// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// The configuration's `presets:`: named sets of `/thumb` parameters, read by `/thumb`'s own parsers into the plan's
/// typed values (``PlanValues``) and checked by its build when loaded, used by the `preset` parameter (docs/api.md,
/// "Presets").
///
/// A request's plan is its presets' values, in order, with its own on top, parameter by parameter: the `default`
/// preset (if there is one) first, then each name of `preset=a,b` (a later one replaces what an earlier one set), then
/// what the request sets itself, whatever its URL form. So `preset=card` and the same parameters written out are one
/// plan, one cache entry and one render.
///
/// ```swift
/// let presets = try Presets(["card": "w=400&h=300&fit=cover", "default": "q=75"])
/// var values = try presets.values(named: "card")   // w=400, h=300, fit=cover, q=75
/// values.layer(request)                            // the request's w=200 on top
/// ```
package struct Presets: Sendable, Equatable {
    /// The values of each preset, by name.
    private let table: [String: PlanValues]

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
        var table: [String: PlanValues] = [:]
        for (name, text) in configured.sorted(by: { $0.key < $1.key }) {
            do throws(RequestError) {
                table[name] = try Self.values(of: text)
            } catch {
                throw PresetError(preset: name, reason: error.publicMessage)
            }
        }
        self.table = table
    }

    /// The watermark names the presets' `wm=` use.
    package var watermarkNames: Set<String> { Set(table.values.flatMap(\.watermarks.names)) }

    /// The names, sorted.
    package var names: [String] { table.keys.sorted() }

    /// Whether a `default` preset applies to every request.
    package var hasDefault: Bool { table[Self.defaultName] != nil }

    /// The values a request that names `names` (the `preset` value, nil without one) gets from its presets: the
    /// `default` preset's, then each named preset's in order, each replacing what came before; the request's own go on
    /// top (``PlanValues/layer(_:)``).
    /// - Throws: `RequestError.invalidValue("preset", …)` for an empty or unknown name, or too many names.
    package func values(named names: String?) throws(RequestError) -> PlanValues {
        guard names != nil || hasDefault else { return PlanValues() }
        var values = table[Self.defaultName] ?? PlanValues()
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
                values.layer(preset)
            }
        }
        return values
    }

    /// One preset's values, each read as `/thumb` reads it, then the whole built once as a request would be.
    private static func values(of text: String) throws(RequestError) -> PlanValues {
        let parameters = try QueryParameters(parsing: text)
        var texts: [ThumbnailRequest.Parameter: String] = [:]
        for (name, value) in parameters.pairs {
            // `raw` is the source's own bytes, never under another request's parameters.
            guard name != URLSignature.parameterName, name != "preset", name != "url", name != "raw" else {
                throw .invalidValue(name, reason: "not allowed in a preset")
            }
            guard let parameter = ThumbnailRequest.Parameter(rawValue: name) else { throw .unknownParameter(name) }
            guard texts[parameter] == nil else { throw .duplicateParameter(name) }
            texts[parameter] = value
        }
        guard !texts.isEmpty else { throw .missingParameter("a parameter") }
        let values = try ThumbnailRequest.values(texts)
        // The whole build runs once over it, with a stand-in source and, when the preset sets no size, a stand-in
        // width: what it refuses is the preset's own doing (a value out of range, `w` × `dpr` over 4096, ...).
        var trial = values
        trial.url = "https://preset.invalid/"
        if trial.width == nil && trial.height == nil { trial.width = 1 }
        // A named watermark is checked against the watermarks the service loads (ThumbdService), not here: the
        // configuration check knows the names, not the files' contents.
        let watermarks = WatermarkDigests.standIns(named: trial.watermarks.names)
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
