// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import ThumbdSettings
@testable import URLForms

/// Presets (`presets:`, the `preset` parameter) and `image.presets_only`, as `/thumb`'s parser reads them: each
/// preset checked by the same strict parser when loaded, expanded in order under the request's own parameters, so
/// that a preset and the same parameters written out are one plan.
@Suite struct PresetTests {
    static let url = "url=http%3A%2F%2Fexample.com%2Fa.jpg"

    static func rules(_ presets: [String: String], onlyPresets: Bool = false) throws -> ThumbQueryRules {
        ThumbQueryRules(presets: try Presets(presets), allowsOnlyPresets: onlyPresets)
    }

    static func spec(_ query: String, _ rules: ThumbQueryRules, accept: String? = nil) throws -> ThumbnailSpec {
        try ThumbnailRequest(rawQuery: query, accept: accept, rules: rules).spec
    }

    static func error(_ query: String, _ rules: ThumbQueryRules) -> RequestError? {
        do {
            _ = try ThumbnailRequest(rawQuery: query, accept: nil, rules: rules)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Loading

    @Test(arguments: [
        ("w=400&wdth=3", "unknown parameter: wdth"),
        ("w=5000", "invalid w: must be an integer 1...4096"),
        ("w=3000&dpr=2", "invalid w: w × dpr must be at most 4096"),
        ("fit=squash", "invalid fit"),
        ("w=1&w=2", "duplicate parameter: w"),
        ("url=http%3A%2F%2Fexample.com%2F", "invalid url: not allowed in a preset"),
        ("sig=abc", "invalid sig: not allowed in a preset"),
        ("preset=other", "invalid preset: not allowed in a preset"),
        ("raw=1", "invalid raw: not allowed in a preset"),
        ("crop=1,2,3", "invalid crop"),
        ("bg=%ZZ", "malformed percent-encoding"),
    ])
    func aPresetTheParserRefusesIsAnErrorNamingThePresetAndTheParameter(text: String, message: String) {
        // Given a configuration whose `card` preset is wrong, when it is loaded, then the error names both
        #expect(throws: PresetError.self) { try Presets(["good": "w=10", "card": text]) }
        do {
            _ = try Presets(["good": "w=10", "card": text])
        } catch {
            #expect(error.preset == "card")
            #expect(error.reason.contains(message), "\(error.reason)")
        }
    }

    @Test func theSettingsErrorNamesPresetsDotName() throws {
        var settings = Settings()
        settings.presets = ["card": "w=400&wdth=3"]
        #expect(throws: SettingsError(key: "presets.card", reason: "unknown parameter: wdth")) {
            try settings.thumbQueryRules()
        }
        settings.presets = ["card": "w=400&h=300&fit=cover", "default": "q=70"]
        settings.image.allowsOnlyPresets = true
        let rules = try settings.thumbQueryRules()
        #expect(rules.allowsOnlyPresets)
        #expect(rules.presets.names == ["card", "default"])
    }

    @Test func checkConfigRefusesABadPresetNamingItsLine() throws {
        // Given a file whose second preset has a typo, when --check-config runs, then it exits 78 naming the
        // preset, its line and the parameter
        let files = try ConfigTestFiles()
        let path = try files.write("presets:\n  good: w=10\n  card: \"w=400&wdth=3\"\n")
        let report = try ThumbdCommand.parse(["--check-config", "--config", path]).checkConfigReport(environment: [:])
        #expect(report.status == ThumbdCommand.configurationErrorStatus)
        #expect(report.output.contains("presets.card (\(path):3): unknown parameter: wdth"), "\(report.output)")
    }

    @Test func presetsWithoutASizeOrWithOnlyEffectsAreValid() throws {
        let presets = try Presets([
            "sharp": "sharpen=1.5", "square": "h=100&fit=cover&gravity=attention", "jpeg": "format=jpg&q=60",
        ])
        #expect(presets.names == ["jpeg", "sharp", "square"])
    }

    // MARK: - Expansion

    @Test func aPresetIsTheSamePlanAsItsParametersWrittenOut() throws {
        // Given a card preset
        let rules = try Self.rules(["card": "w=400&h=300&fit=cover&sharpen=1"])

        // When one request names it and another writes its parameters out, in another order
        let named = try Self.spec("\(Self.url)&preset=card", rules)
        let written = try Self.spec("sharpen=1.0&fit=cover&h=300&\(Self.url)&w=400", .none)

        // Then the plans, and so the variant keys, are equal
        #expect(named == written)
        let source = try ThumbnailRequest(rawQuery: "\(Self.url)&w=1", accept: nil).source
        #expect(
            VariantKey(source: source, spec: named).cacheKey == VariantKey(source: source, spec: written).cacheKey)
    }

    @Test func laterPresetsOverrideEarlierOnesAndTheRequestOverridesThemAll() throws {
        // Given a default preset and two named ones that overlap
        let rules = try Self.rules([
            "default": "q=70&format=webp", "card": "w=400&h=300&fit=cover", "small": "w=100&h=75",
        ])

        // Then the default applies to a request that names nothing
        let plain = try Self.spec("\(Self.url)&w=10", rules)
        #expect(plain.quality == 70 && plain.format == .exactly(.webp) && plain.width == 10)
        // And `preset=card,small` takes small's size over card's, keeping card's fit and the default's format
        let both = try Self.spec("\(Self.url)&preset=card,small", rules)
        #expect(both.width == 100 && both.height == 75 && both.fit == .cover && both.format == .exactly(.webp))
        // And the order of the names matters: the later one wins
        let reversed = try Self.spec("\(Self.url)&preset=small,card", rules)
        #expect(reversed.width == 400 && reversed.height == 300)
        // And a request's own parameter wins over every preset, the default's included
        let own = try Self.spec("\(Self.url)&preset=card&h=200&q=90&format=png", rules)
        #expect(own.width == 400 && own.height == 200 && own.quality == 90 && own.format == .exactly(.png))
        // And a preset's dpr multiplies the request's own size
        let retina = try Self.spec("\(Self.url)&preset=hidpi&w=100", try Self.rules(["hidpi": "dpr=2"]))
        #expect(retina.width == 200)
    }

    @Test(arguments: [
        ("preset=nope", RequestError.invalidValue("preset", reason: "unknown preset \"nope\"")),
        ("preset=card,", .invalidValue("preset", reason: "empty preset name")),
        ("preset=", .invalidValue("preset", reason: "empty preset name")),
        ("preset=card&preset=card", .duplicateParameter("preset")),
        ("preset=card&w=10&w=10", .duplicateParameter("w")),
        ("preset=card&width=10", .unknownParameter("width")),
        (
            "preset=" + Array(repeating: "card", count: 17).joined(separator: ","),
            .invalidValue("preset", reason: "at most 16 names")
        ),
    ])
    func badPresetRequestsAre400sNamingTheParameter(query: String, expected: RequestError) throws {
        let rules = try Self.rules(["card": "w=400&h=300"])
        let error = try #require(Self.error("\(Self.url)&\(query)", rules))
        #expect(error == expected)
        #expect(ErrorResponse(error).status.code == 400)
    }

    @Test func aPresetNameIsRefusedWithoutPresetsToo() {
        #expect(
            Self.error("\(Self.url)&w=10&preset=card", .none)
                == .invalidValue("preset", reason: "unknown preset \"card\""))
    }

    // MARK: - presets_only

    @Test func presetsOnlyRefusesEveryParameterButUrlPresetSigFormatAndDpr() throws {
        // Given presets_only with a card preset
        let rules = try Self.rules(["card": "w=40&h=30&fit=cover"], onlyPresets: true)

        // Then a preset with the client's format and dpr is served
        let spec = try Self.spec("\(Self.url)&preset=card&format=webp&dpr=2&sig=ignored-here", rules)
        #expect(spec.width == 80 && spec.height == 60 && spec.format == .exactly(.webp))
        // And any other parameter is a 400 naming it, even one the preset sets to the same value
        for parameter in ["w=40", "h=30", "fit=cover", "q=50", "blur=2", "crop=0,0,1,1", "enlarge=1"] {
            let error = try #require(Self.error("\(Self.url)&preset=card&\(parameter)", rules))
            let name = String(parameter.prefix { $0 != "=" })
            #expect(error == .onlyPresetsAllowed(name))
            #expect(ErrorResponse(error).status.code == 400)
            #expect(error.publicMessage == "parameter not allowed: \(name) (only presets may set it here)")
        }
        // And a request without any preset is a 400 naming `preset`
        #expect(Self.error("\(Self.url)&format=png", rules) == .missingParameter("preset"))
        // And an unknown parameter is still called unknown
        #expect(Self.error("\(Self.url)&preset=card&width=3", rules) == .unknownParameter("width"))
    }

    @Test func presetsOnlyWithADefaultPresetServesABareURL() throws {
        let rules = try Self.rules(["default": "w=64&h=64&fit=cover"], onlyPresets: true)
        let spec = try Self.spec(Self.url, rules)
        #expect(spec.width == 64 && spec.height == 64 && spec.fit == .cover)
    }
}
