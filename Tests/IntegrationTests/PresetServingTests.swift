// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings
@testable import URLForms

extension Integration {
    /// Presets through the whole service (`presets:`, `preset=`, `image.presets_only`): a preset and the same
    /// parameters written out are one cache entry, one fetch and one render; the `default` preset applies to
    /// every request; a reload that changes a preset reaches requests the alias table and the hot sets answered a
    /// moment before; a bad preset is refused by a reload, which keeps the running ones.
    @Suite(.timeLimit(.minutes(2))) struct PresetServingTests {
        static let card = "\"w=40&h=30&fit=cover&format=png\""

        /// A service with `presets` (YAML values as text) and `overrides`, and the quadrant picture on its origin.
        static func harness(_ presets: [String: String], _ overrides: [String: String] = [:]) throws -> Harness {
            var values = overrides
            for (name, text) in presets { values["presets.\(name)"] = text }
            let harness = try Harness(values)
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            harness.origin.route("/p.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            return harness
        }

        @Test func aPresetAndTheSameParametersWrittenOutAreOneEntryOneFetchAndOneRender() async throws {
            // Given a card preset
            let harness = try Self.harness(["card": Self.card])

            // When the card is asked by name, then with its parameters written out (another order)
            let named = try await harness.request(harness.thumbTarget("/q.png", "preset=card"))
            let written = try await harness.request(harness.thumbTarget("/q.png", "format=png&fit=cover&h=30&w=40"))

            // Then the first is rendered, 40x30 PNG with the quadrants in place; the second is the same bytes
            // from memory: one origin fetch, one render
            #expect(named.status == 200 && named.header("x-cache") == "MISS", "\(named.text)")
            let image = try named.image()
            #expect(image.mimeType == "image/png" && image.width == 40 && image.height == 30)
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 40, height: 30)) == nil)
            #expect(written.status == 200)
            #expect(written.header("x-cache") == "HIT-MEMORY")
            #expect(written.body == named.body)
            #expect(written.header("etag") == named.header("etag"))
            #expect(harness.origin.hits("/q.png") == 1)
            #expect(harness.service.renderCounters.rendersStarted == 1)
        }

        @Test func theDefaultPresetAppliesToEveryRequestAndARequestOverridesIt() async throws {
            // Given a default preset that asks for PNG at a fixed height
            let harness = try Self.harness(["default": "\"format=png&h=24\""])

            // When a request gives only a width, in a browser that accepts WebP
            let plain = try await harness.request(
                harness.thumbTarget("/q.png", "w=16"), headers: [("Accept", "image/webp,*/*")])
            // and another overrides the default's format
            let own = try await harness.request(
                harness.thumbTarget("/q.png", "w=16&format=webp"), headers: [("Accept", "image/webp,*/*")])

            // Then the first is the default's PNG in a 16x24 box (no Vary: the format is not negotiated), the second
            // WebP
            #expect(plain.status == 200 && plain.header("content-type") == "image/png")
            #expect(plain.header("vary") == nil)
            let image = try plain.image()
            #expect(image.width == 16 && image.height == 12)  // 64x48 inside 16x24
            #expect(own.header("content-type") == "image/webp")
        }

        @Test func aReloadThatChangesAPresetReachesAliasedAndHotRequestsAtOnce() async throws {
            // Given a card preset whose URL the loops answer from their hot copies
            let harness = try Self.harness(["card": Self.card])
            let target = harness.thumbTarget("/q.png", "preset=card")
            #expect(try await harness.request(target).header("x-cache") == "MISS")
            let hot = try await HotSetTests.hotHit(harness, target)
            #expect(try hot.image().width == 40)

            // When a reload changes the card's size
            var settings = harness.service.settings
            settings.presets["card"] = "w=20&h=16&fit=cover&format=png"
            let outcome = try harness.service.apply(settings)

            // Then the reload names `presets`, and the very same URL, asked on both loops' connections, is the new
            // card: rendered once, then from memory; never the old answer
            #expect(outcome.changedKeys == ["presets"])
            var outcomes: [String] = []
            for _ in 0..<6 {
                let response = try await harness.request(target)
                #expect(response.status == 200)
                let image = try response.image()
                #expect(image.width == 20 && image.height == 16, "\(response.header("x-cache") ?? "")")
                outcomes.append(response.header("x-cache") ?? "")
            }
            #expect(outcomes.first == "MISS")
            #expect(outcomes.dropFirst().allSatisfy { $0 == "HIT-MEMORY" }, "\(outcomes)")
            #expect(harness.service.renderCounters.rendersStarted == 2)
        }

        @Test func presetsOnlyRefusesOtherParametersWithA400NamingThem() async throws {
            // Given a closed deployment: presets only
            let harness = try Self.harness(["card": Self.card], ["image.presets_only": "true"])

            // When a client sets a size itself, or names no preset
            let own = try await harness.request(harness.thumbTarget("/p.jpg", "preset=card&w=400"))
            let none = try await harness.request(harness.thumbTarget("/p.jpg", ""))
            // and when it asks for the card in another format at 2x
            let card = try await harness.request(harness.thumbTarget("/p.jpg", "preset=card&format=webp&dpr=2"))

            // Then the first two are 400 JSON naming the parameter, and nothing was fetched for them
            expectJSONError(own, status: 400, mentioning: "parameter not allowed: w")
            expectJSONError(none, status: 400, mentioning: "missing parameter: preset")
            // And the card is served, 80x60 WebP
            #expect(card.status == 200 && card.header("content-type") == "image/webp", "\(card.text)")
            let image = try card.image()
            #expect(image.width == 80 && image.height == 60)
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 80, height: 60)) == nil)
            #expect(harness.origin.hits("/p.jpg") == 1)
        }

        @Test func aReloadWithABadPresetIsRefusedAndTheRunningPresetsStay() async throws {
            // Given a running service with a card preset, and its file rewritten with a typo in the card
            let logs = LogRecorder()
            let directory = try TempDirectory(prefix: "thumbd-presets")
            let harness = try Harness(["presets.card": Self.card], directory: directory, logs: logs)
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            var values = Harness.baseConfiguration
            values["cache.disk.path"] = directory.appending("cache")
            values["presets.card"] = "\"w=40&hieght=30\""
            let path = directory.appending("thumbd.yaml")
            try Data(Harness.yaml(values).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)

            // When it is reloaded
            let outcome = harness.service.reload(from: ConfigFile(path: path, environment: [:]))

            // Then the reload is refused with a warning naming the preset, the parameter and the line
            #expect(outcome == nil)
            let warning = try #require(logs.matching("config reload refused", atLeast: .warning).last)
            #expect(warning.metadata["key"] == "presets.card")
            #expect(warning.metadata["problem"] == "unknown parameter: hieght")
            #expect(warning.metadata["source"]?.hasPrefix(path + ":") == true)
            // And the card still is what it was
            #expect(harness.service.settings.presets["card"] == "w=40&h=30&fit=cover&format=png")
            let card = try await harness.request(harness.thumbTarget("/q.png", "preset=card"))
            #expect(try card.image().height == 30)
        }

        @Test func thumbdWithABadPresetExits78NamingThePresetItsLineAndTheParameter() async throws {
            // Given a configuration file whose card preset has a typo
            let directory = try TempDirectory(prefix: "thumbd-bad-preset")
            let path = directory.appending("thumbd.yaml")
            try Data("presets:\n  good: \"w=10\"\n  card: \"w=40&wdth=30\"\n".utf8).write(
                to: URL(fileURLWithPath: path))
            let executable = try ChildProcess.builtExecutable(named: "thumbd")

            // When thumbd is started on it
            let output = try await blocking {
                let child = try ChildProcess(
                    executable: executable,
                    arguments: ["--config", path, "--port", "0", "--cache-dir", directory.appending("cache")],
                    inheritsEnvironment: false)
                return (child.wait(timeout: .seconds(30)), child.standardError)
            }

            // Then it does not start: exit 78 and one line naming the preset, where it is written, and why
            #expect(output.0 == .exited(ThumbdCommand.configurationErrorStatus))
            #expect(
                output.1.contains("thumbd: configuration error: presets.card (\(path):3): unknown parameter: wdth"),
                "\(output.1)")
        }

        @Test func theSignatureCoversTheQueryAsSentWithItsPresetName() async throws {
            // Given signed URLs and two presets
            let key = "integration-signing-key-0123456789abcdef"
            let harness = try Self.harness(
                ["card": Self.card, "tiny": "\"w=8&format=png\""], ["security.signing_keys": "[\(key)]"])
            let query = String(harness.thumbTarget("/q.png", "preset=card").dropFirst("/thumb?".count))
            let signed = "/thumb?" + (try URLSignature.signedQuery(query, key: key))

            // When the signed URL is asked, then the same signature with another preset name
            let served = try await harness.request(signed)
            let swapped = try await harness.request(signed.replacingOccurrences(of: "preset=card", with: "preset=tiny"))

            // Then the first is the card, the second is refused: the name is signed, not what it expands to
            #expect(served.status == 200)
            #expect(try served.image().width == 40)
            expectJSONError(swapped, status: 403, mentioning: "invalid signature")
        }
    }
}
