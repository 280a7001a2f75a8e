// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

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
    }
}
