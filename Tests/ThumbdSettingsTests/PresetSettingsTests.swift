// SPDX-License-Identifier: Apache-2.0

import Testing
import ThumbdTestSupport

@testable import ThumbdSettings

/// `presets:` (a mapping of names to `/thumb` parameter strings, the one key that is a mapping) and
/// `image.presets_only`, as the settings layer reads and checks them. Their parameters are checked by `/thumb`'s
/// parser in ThumbdApp (PresetTests).
@Suite struct PresetSettingsTests {
    private func resolve(_ yaml: String, environment: [String: String] = [:]) throws -> ConfigFile.Resolution {
        let files = try ConfigTestFiles()
        return try ConfigFile(path: try files.write(yaml), environment: environment).resolve()
    }

    private func error(_ yaml: String, environment: [String: String] = [:]) throws -> SettingsError {
        let files = try ConfigTestFiles()
        let path = try files.write(yaml)
        do {
            _ = try ConfigFile(path: path, environment: environment).resolve()
        } catch {
            return error
        }
        Issue.record("loaded without an error")
        throw CancellationError()
    }

    @Test func aMappingInTheFileGivesThePresetsAndWhereEachWasWritten() throws {
        // Given presets written as a block mapping (quoted and plain values) and presets_only
        let resolution = try resolve(
            """
            image:
              presets_only: true
            presets:
              card: "w=400&h=300&fit=cover&sharpen=1"
              avatar: w=64&h=64&fit=cover
            """)

        // Then both are read as written, and each entry's line is known (for errors naming it)
        #expect(
            resolution.settings.presets == ["card": "w=400&h=300&fit=cover&sharpen=1", "avatar": "w=64&h=64&fit=cover"])
        #expect(resolution.settings.image.allowsOnlyPresets)
        #expect(resolution.origins["presets"]?.hasSuffix(":3") == true)
        #expect(resolution.origins["presets.card"]?.hasSuffix(":4") == true)
        #expect(resolution.origins["presets.avatar"]?.hasSuffix(":5") == true)
        // And an error about one entry is located at its line, an error about the environment at its variable
        #expect(ConfigFile.Resolution.origin(of: "presets.avatar", in: resolution.origins)?.hasSuffix(":5") == true)
    }

    @Test func aFlowMappingAnEmptyOneAndNoValueAreReadToo() throws {
        #expect(try resolve("presets: {a: \"w=10\", b: \"h=20\"}\n").settings.presets == ["a": "w=10", "b": "h=20"])
        #expect(try resolve("presets: {}\n").settings.presets == [:])
        #expect(try resolve("presets:\n").settings.presets == [:])
    }

    @Test func theEnvironmentSpellsPresetsAsNameColonParametersSeparatedBySemicolons() throws {
        // Given THUMBD_PRESETS over a file that sets other presets
        let resolution = try resolve(
            "presets:\n  old: w=1\n", environment: ["THUMBD_PRESETS": "card:w=400&h=300;thumb: w=100 ;"])

        // Then the variable replaces the file's presets as a whole, and is named as their source
        #expect(resolution.settings.presets == ["card": "w=400&h=300", "thumb": "w=100"])
        #expect(resolution.origins["presets"] == "THUMBD_PRESETS")
        #expect(ConfigFile.Resolution.origin(of: "presets.card", in: resolution.origins) == "THUMBD_PRESETS")

        // And an item without a colon is refused naming the key and the variable
        let refused = try error("", environment: ["THUMBD_PRESETS": "card=w=400"])
        #expect(refused.key == "presets")
        #expect(refused.source == "THUMBD_PRESETS")
    }

    @Test func presetsOfTheWrongShapeAreRefusedNamingTheKey() throws {
        let list = try error("presets: [a, b]\n")
        #expect(list.key == "presets")
        #expect(list.reason.contains("mapping"))
        let nested = try error("presets:\n  card:\n    w: 400\n")
        #expect(nested.key == "presets")
        #expect(nested.source?.hasSuffix(":2") == true)
        let scalar = try error("presets: w=400\n")
        #expect(scalar.key == "presets")
    }

    @Test func badNamesEmptyOrSpacedParametersAndPresetsOnlyWithoutPresetsAreRefused() throws {
        let name = try error("presets:\n  \"two words\": w=1\n")
        #expect(name.key == "presets")
        #expect(name.reason.contains("two words"))
        let empty = try error("presets:\n  card: \"\"\n")
        #expect(empty.key == "presets.card")
        #expect(empty.source?.hasSuffix(":2") == true)
        let spaced = try error("presets:\n  card: \"w=1 &h=2\"\n")
        #expect(spaced.key == "presets.card")
        let alone = try error("image:\n  presets_only: true\n")
        #expect(alone.key == "image.presets_only")
        #expect(alone.reason.contains("at least one preset"))
    }

    @Test func checkConfigPrintsPresetsAsAFlowMappingThatReadsBack() throws {
        // Given presets with characters YAML would misread unquoted
        var settings = Settings()
        settings.presets = ["card": "w=400&h=300&fit=cover", "null": "bg=ff00ff&trim=10,ffffff"]

        // When printed as --check-config prints it, and read back as a file
        let text = settings.checkConfigText()
        #expect(text.contains("presets: {card: \"w=400&h=300&fit=cover\", \"null\": \"bg=ff00ff&trim=10,ffffff\"}"))
        let files = try ConfigTestFiles()
        let reread = try ConfigFile(path: try files.write(text), environment: [:]).load()

        // Then the presets are the same
        #expect(reread.presets == settings.presets)
    }

    @Test func aReloadSeesAChangeOfPresets() {
        var next = Settings()
        next.presets = ["card": "w=10"]
        #expect(Settings().changedReloadableKeys(in: next) == ["presets"])
        #expect(Settings.keys.first { $0.name == "presets" }?.reload == .reloadable)
    }
}

/// `image.fallback_status` and `image.fallback_ttl`: what the settings layer accepts.
@Suite struct FallbackSettingsTests {
    @Test(arguments: [
        ("original", "original"), ("ORIGINAL", "original"), ("200", "200"), ("404", "404"), ("599", "599"),
    ])
    func statusesAccepted(text: String, shown: String) throws {
        #expect(try Settings.FallbackStatus(parsing: text).description == shown)
    }

    @Test(arguments: ["204", "302", "399", "600", "0", "ok", ""])
    func statusesRefused(text: String) {
        #expect(throws: InvalidValue.self) { try Settings.FallbackStatus(parsing: text) }
    }

    @Test func theKeysReadFromAFile() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("image:\n  fallback: /srv/missing.png\n  fallback_status: 200\n  fallback_ttl: 5m\n")
        let settings = try ConfigFile(path: path, environment: [:]).load()
        #expect(settings.image.fallback == "/srv/missing.png")
        #expect(settings.image.fallbackStatus == .fixed(200))
        #expect(settings.image.fallbackTTL == .seconds(300))
        let bad = try files.write("image:\n  fallback_status: 302\n", named: "bad.yaml")
        #expect(throws: SettingsError.self) { try ConfigFile(path: bad, environment: [:]).load() }
        let long = try files.write("image:\n  fallback_ttl: 400d\n", named: "long.yaml")
        #expect(throws: SettingsError.self) { try ConfigFile(path: long, environment: [:]).load() }
    }
}
