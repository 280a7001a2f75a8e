// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Hot reload of the config file on a running `thumbd` child process (issue 5): SIGHUP and polling, a
    /// valid change applied without dropping a connection, an invalid file refused, a restart key reported.
    @Suite(.timeLimit(.minutes(3))) struct ConfigReloadTests {
        /// The child's configuration: the harness's base settings, with the keys the tests change.
        static func configuration(
            allowedHosts: String = "[]", maxSourceBytes: String = "25MB", host: String = "127.0.0.1",
            level: String = "info"
        )
            -> String
        {
            """
            server:
              listen: \(host):0
              threads: 2
            fetch:
              allowed_networks: [\(originHost)/32]
              allowed_hosts: \(allowedHosts)
              max_source_bytes: \(maxSourceBytes)
            image:
              render_threads: 2
            log:
              access: false
              level: \(level)

            """
        }

        /// A running child on `configuration`, and an origin serving the same PNG under `/0.png` ... `/9.png`
        /// (a new path per step, so no answer comes from the cache).
        struct Setup {
            let directory: TempDirectory
            let path: String
            let origin: LoopbackOrigin
            let child: ThumbdChild

            init(_ configuration: String) throws {
                directory = try TempDirectory(prefix: "thumbd-reload")
                path = directory.appending("thumbd.yaml")
                origin = try LoopbackOrigin(host: originHost)
                for index in 0..<10 {
                    origin.route("/\(index).png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
                }
                try Setup.write(configuration, to: path)
                child = try ThumbdChild(configuration: path, cacheDirectory: directory.appending("cache"))
            }

            /// Replaces the file in one step (temp file + rename), as deployment tools do.
            static func write(_ text: String, to path: String) throws {
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            }

            func target(_ index: Int) -> String {
                Harness.thumbTarget(url: origin.url("/\(index).png"), "w=32&format=png")
            }

            /// Lines of the child's standard error that contain every one of `parts`.
            func logLines(containing parts: String...) -> [String] {
                child.process.standardError.split(separator: "\n").map(String.init).filter { line in
                    parts.allSatisfy { line.contains($0) }
                }
            }

            /// Waits (bounded) until at least `count` log lines contain every one of `parts`.
            func waitForLog(_ parts: String..., count: Int = 1, timeout: Duration = .seconds(20)) -> Bool {
                waitUntil(timeout: timeout) {
                    child.process.standardError.split(separator: "\n").filter { line in
                        parts.allSatisfy { line.contains($0) }
                    }.count >= count
                }
            }

            func stop() {
                _ = child.stop()
                origin.stop()
            }
        }

        @Test func sighupAppliesAnAllowlistChangeAndAKeepAliveConnectionOpenedBeforeStillWorks() async throws {
            // Given a child that fetches from the origin, and a keep-alive connection that got a thumbnail
            let setup = try await blocking { try Setup(Self.configuration()) }
            defer { setup.stop() }
            let (client, before) = try await blocking {
                let client = try RawHTTPClient(host: "127.0.0.1", port: setup.child.port)
                try client.send(ThumbdChild.requestText(setup.target(0)))
                return (UncheckedBox(client), try client.readResponse(timeout: .seconds(30)))
            }
            #expect(before.status == 200, "\(before.text)")

            // When SIGHUP comes with the file unchanged, then the reload is logged as changing nothing
            #expect(setup.child.process.kill(SIGHUP))
            let quiet = try await blocking { setup.waitForLog("config reloaded, nothing changed", "trigger=SIGHUP") }
            #expect(quiet, "stderr: \(setup.child.process.standardError)")

            // When the file allows only example.com and SIGHUP comes
            try Setup.write(Self.configuration(allowedHosts: "[example.com]"), to: setup.path)
            #expect(setup.child.process.kill(SIGHUP))
            let reloaded = try await blocking { setup.waitForLog("config reloaded", "fetch.allowed_hosts") }
            #expect(reloaded, "stderr: \(setup.child.process.standardError)")

            // Then a new source is refused (403), on the connection opened before the reload
            let after = try await blocking {
                try client.value.send(ThumbdChild.requestText(setup.target(1)))
                return try client.value.readResponse(timeout: .seconds(30))
            }
            expectJSONError(after, status: 403)
            // and on a new connection too
            let fresh = try await blocking { try setup.child.get(setup.target(2)) }
            expectJSONError(fresh, status: 403)
            #expect(setup.origin.hits("/1.png") == 0 && setup.origin.hits("/2.png") == 0)
        }

        @Test func sighupAppliesASizeLimit() async throws {
            // Given a child that renders the PNG
            let setup = try await blocking { try Setup(Self.configuration()) }
            defer { setup.stop() }
            let before = try await blocking { try setup.child.get(setup.target(0)) }
            #expect(before.status == 200, "\(before.text)")

            // When fetch.max_source_bytes drops below the source's size and SIGHUP comes
            #expect(Fixtures.bytes("grid.png").count > 100)
            try Setup.write(Self.configuration(maxSourceBytes: "100B"), to: setup.path)
            #expect(setup.child.process.kill(SIGHUP))
            let reloaded = try await blocking { setup.waitForLog("config reloaded", "fetch.max_source_bytes") }
            #expect(reloaded, "stderr: \(setup.child.process.standardError)")

            // Then a new source of that size is refused as too large
            let after = try await blocking { try setup.child.get(setup.target(1)) }
            expectJSONError(after, status: 413)
        }

        @Test func invalidFileIsRefusedWithAWarningNamingTheKeyAndTheOldConfigurationStays() async throws {
            // Given a running child
            let setup = try await blocking { try Setup(Self.configuration()) }
            defer { setup.stop() }

            // When the file gets a bad value next to a valid change, and SIGHUP comes
            try Setup.write(
                Self.configuration(allowedHosts: "[example.com]", maxSourceBytes: "lots"), to: setup.path)
            #expect(setup.child.process.kill(SIGHUP))

            // Then a warning names the key, and nothing was applied: the allowlist change neither
            let refused = try await blocking {
                setup.waitForLog("config reload refused", "fetch.max_source_bytes")
            }
            #expect(refused, "stderr: \(setup.child.process.standardError)")
            #expect(setup.logLines(containing: "config reload refused", "warning").count >= 1)
            #expect(setup.logLines(containing: "config reloaded").isEmpty)
            let after = try await blocking { try setup.child.get(setup.target(1)) }
            #expect(after.status == 200, "\(after.text)")
            #expect(setup.child.process.exitStatus == nil, "the child exited")
        }

        @Test func restartKeyChangeIsLoggedAndTheOldAddressKeepsServing() async throws {
            // Given a running child on 127.0.0.1
            let setup = try await blocking { try Setup(Self.configuration()) }
            defer { setup.stop() }

            // When server.listen moves to another address, and SIGHUP comes
            try Setup.write(Self.configuration(host: "127.0.0.3"), to: setup.path)
            #expect(setup.child.process.kill(SIGHUP))

            // Then the key is logged as needing a restart, and thumbd still answers on the old address
            let logged = try await blocking { setup.waitForLog("needs a restart", "server.listen") }
            #expect(logged, "stderr: \(setup.child.process.standardError)")
            let after = try await blocking { try setup.child.get(setup.target(0)) }
            #expect(after.status == 200, "\(after.text)")
        }

        @Test func logLevelChangeIsReportedAndThenApplies() async throws {
            // Given a child logging at info
            let setup = try await blocking { try Setup(Self.configuration()) }
            defer { setup.stop() }

            // When the level goes up to warning, then that reload is still reported
            try Setup.write(Self.configuration(level: "warning"), to: setup.path)
            #expect(setup.child.process.kill(SIGHUP))
            let reported = try await blocking { setup.waitForLog("config reloaded", "log.level") }
            #expect(reported, "stderr: \(setup.child.process.standardError)")

            // When the allowlist changes next, then it applies (403) but its notice is below the level now
            try Setup.write(Self.configuration(allowedHosts: "[example.com]", level: "warning"), to: setup.path)
            #expect(setup.child.process.kill(SIGHUP))
            let refused = try await blocking { () -> Bool in
                for index in 1..<10 {
                    if try setup.child.get(setup.target(index)).status == 403 { return true }
                    usleep(300_000)
                }
                return false
            }
            #expect(refused, "the allowlist change was not applied")
            #expect(setup.logLines(containing: "config reloaded", "fetch.allowed_hosts").isEmpty)
        }

        @Test func aChangedFileIsAppliedWithoutASignal() async throws {
            // Given a running child
            let setup = try await blocking { try Setup(Self.configuration()) }
            defer { setup.stop() }

            // When the file changes and no signal comes
            try Setup.write(Self.configuration(allowedHosts: "[example.com]"), to: setup.path)

            // Then the poll (every 2 s) applies it within a few seconds
            let reloaded = try await blocking {
                setup.waitForLog("config reloaded", "fetch.allowed_hosts", "trigger=file", timeout: .seconds(30))
            }
            #expect(reloaded, "stderr: \(setup.child.process.standardError)")
            let after = try await blocking { try setup.child.get(setup.target(1)) }
            expectJSONError(after, status: 403)
        }
    }
}

/// Carries a single-owner, non-Sendable value (a test client) across `blocking` calls that never overlap.
private final class UncheckedBox<Value>: @unchecked Sendable {  // Sendable: used by one thread at a time.
    let value: Value
    init(_ value: Value) { self.value = value }
}
