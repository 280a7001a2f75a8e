// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

extension Integration {
    /// The reload entry points of a running service in this process (`ThumbdService.reload(from:)` and
    /// `apply(_:)`, what SIGHUP calls), where the components' state can be read directly.
    @Suite(.timeLimit(.minutes(2))) struct ConfigApplyTests {
        @Test func smallerMemoryBudgetEvictsDownAtOnce() async throws {
            // Given a service whose memory tier holds 12 thumbnails
            let harness = try Harness(["cache.memory.max_bytes": "64MB"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            for width in 20..<32 {
                let response = try await harness.request(harness.thumbTarget("/grid.png", "w=\(width)&format=png"))
                #expect(response.status == 200)
            }
            let memory = try #require(harness.service.cache.memory)
            let filled = try await blocking { waitUntil { memory.statistics.currentEntries == 12 } }
            #expect(filled, "\(memory.statistics)")
            let before = memory.statistics

            // When the file's memory budget drops to about a quarter of what is cached, and it is reloaded
            let budget = before.currentBytes / 4
            let path = harness.directory.appending("thumbd.yaml")
            var values = Harness.baseConfiguration
            values["cache.disk.path"] = harness.directory.appending("cache")
            values["cache.memory.max_bytes"] = "\(budget)B"
            try Data(Harness.yaml(values).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            let outcome = harness.service.reload(from: ConfigFile(path: path, environment: [:]))

            // Then the change is reported, and the tier is within the new budget as soon as the call returns
            #expect(outcome == ReloadOutcome(changedKeys: ["cache.memory.max_bytes"], restartKeys: []))
            let after = memory.statistics
            #expect(after.maxBytes == budget)
            #expect(after.currentBytes <= budget)
            #expect(after.currentEntries < before.currentEntries)
            #expect(after.evictions > before.evictions)
            #expect(harness.service.settings.cache.memory.maxBytes == budget)
        }

        @Test func smallerDiskBudgetEvictsOnTheDiskThread() async throws {
            // Given a service whose disk tier holds 12 thumbnails
            let harness = try Harness()
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            for width in 20..<32 {
                let response = try await harness.request(harness.thumbTarget("/grid.png", "w=\(width)&format=png"))
                #expect(response.status == 200)
            }
            let disk = try #require(harness.service.cache.variants)
            let stored = try await blocking { waitUntil { disk.statistics.currentEntries == 12 } }
            #expect(stored, "\(disk.statistics)")
            let before = disk.statistics

            // When the disk budget drops to about a third of what is stored
            var settings = harness.service.settings
            settings.cache.disk.maxBytes = before.currentBytes / 3
            let outcome = try harness.service.apply(settings)

            // Then the disk thread evicts down to it, and the service still answers
            #expect(outcome.changedKeys == ["cache.disk.max_bytes"])
            let budget = settings.cache.disk.maxBytes
            let evicted = try await blocking { waitUntil { disk.statistics.currentBytes <= budget } }
            #expect(evicted, "\(disk.statistics)")
            #expect(disk.statistics.currentEntries < before.currentEntries)
            let again = try await harness.request(harness.thumbTarget("/grid.png", "w=40&format=png"))
            #expect(again.status == 200)
        }

        @Test func reloadKeepsEnvironmentOverridesAndNamesKeysTheComponentsRefuse() async throws {
            // Given a running service, and its file with a new negative TTL
            let harness = try Harness()
            let path = harness.directory.appending("thumbd.yaml")
            var values = Harness.baseConfiguration
            values["cache.disk.path"] = harness.directory.appending("cache")
            values["cache.negative_ttl"] = "30s"
            values["cache.default_ttl"] = "2h"
            try Data(Harness.yaml(values).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)

            // When it is reloaded with an environment variable that overrides one of the two keys
            let environment = ["THUMBD_CACHE_NEGATIVE_TTL": "5s"]
            let outcome = harness.service.reload(from: ConfigFile(path: path, environment: environment))

            // Then the environment wins over the file, as at start
            #expect(outcome?.changedKeys == ["cache.default_ttl", "cache.negative_ttl"])
            #expect(harness.service.settings.cache.negativeTTL == .seconds(5))
            #expect(harness.service.settings.cache.defaultTTL == .seconds(7200))

            // When a value passes Settings' range but not the fetcher's own (at most 1024 per host)
            var settings = harness.service.settings
            settings.fetch.maxPerHost = 2000
            // Then the reload is refused, naming the key, and nothing changes
            #expect(throws: SettingsError.self) { try harness.service.apply(settings) }
            do {
                _ = try harness.service.apply(settings)
            } catch {
                #expect(error.key == "fetch.max_per_host")
            }
            #expect(harness.service.settings.fetch.maxPerHost == 16)
        }

        @Test func invalidSettingsChangeNothingAndRestartKeysKeepTheirRunningValue() async throws {
            // Given a running service
            let harness = try Harness(["cache.memory.max_bytes": "64MB"])
            let running = harness.service.settings

            // When settings that contradict each other are applied
            var invalid = running
            invalid.cache.memory.maxEntries = 0  // while max_bytes is positive
            invalid.fetch.maxSourceBytes = 1000
            #expect(throws: SettingsError.self) { try harness.service.apply(invalid) }

            // Then nothing changed, not even the valid part
            #expect(harness.service.settings == running)
            #expect(harness.service.cache.memory?.statistics.maxEntries == running.cache.memory.maxEntries)

            // When a restart key and a reloadable key change together
            var mixed = running
            mixed.server.threads = running.server.threads + 1
            mixed.cache.negativeTTL = .seconds(5)
            let outcome = try harness.service.apply(mixed)

            // Then only the reloadable one is applied, and the other is reported
            #expect(outcome == ReloadOutcome(changedKeys: ["cache.negative_ttl"], restartKeys: ["server.threads"]))
            #expect(harness.service.settings.server.threads == running.server.threads)
            #expect(harness.service.settings.cache.negativeTTL == .seconds(5))
        }

        @Test func aReloadedAdminTokenGuardsTheAdminAndStatusRoutesAtOnce() async throws {
            // Given a service without an admin token: the status page is open and the admin routes do not exist
            let harness = try Harness()
            #expect(try await harness.request("/status.json").status == 200)
            #expect(try await harness.request("/cache/trim", method: "POST", body: "{}").status == 404)

            // When a reload sets a token
            var settings = harness.service.settings
            settings.admin.token = "reloaded-admin-token-0123456789"
            let outcome = try harness.service.apply(settings)

            // Then the next requests need it, on the status page and on the admin routes alike
            #expect(outcome.changedKeys == ["admin.token"])
            #expect(try await harness.request("/status.json").status == 401)
            #expect(try await harness.request("/cache/trim", method: "POST", body: "{}").status == 403)
            let bearer = [("Authorization", "Bearer reloaded-admin-token-0123456789")]
            #expect(try await harness.request("/status.json", headers: bearer).status == 200)
            let trim = try await harness.request(
                "/cache/trim", method: "POST", headers: bearer, body: "{\"memory_bytes\": 0}")
            #expect(trim.status == 200)
        }
    }
}
