// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdSettings

@Suite struct ConfigFileTests {
    /// Loads with `yaml` as the file (nil for none), `environment` and `overrides`.
    private func load(
        yaml: String?,
        environment: [String: String] = [:],
        overrides: ConfigFile.Overrides = .init()
    ) throws -> ConfigFile.Resolution {
        let files = try ConfigTestFiles()
        let path = try yaml.map { try files.write($0) }
        return try ConfigFile(path: path, environment: environment, overrides: overrides).resolve()
    }

    /// The error loading would throw, or nil if it loads.
    private func loadError(
        yaml: String?,
        environment: [String: String] = [:],
        overrides: ConfigFile.Overrides = .init()
    ) throws -> SettingsError? {
        do {
            _ = try load(yaml: yaml, environment: environment, overrides: overrides)
            return nil
        } catch let error as SettingsError {
            return error
        }
    }

    // MARK: - The example file

    @Test func exampleConfigEqualsTheDefaults() throws {
        // Given config/thumbd.yaml from the repository, when loaded without environment or flags,
        // then it equals Settings() apart from the documented development differences (currently none:
        // the defaults already listen on 127.0.0.1:8080 and cache under ./var/cache).
        let path = ConfigTestFiles.repositoryRoot.appendingPathComponent("config/thumbd.yaml").path
        let resolution = try ConfigFile(path: path, environment: [:]).resolve()
        let documentedDevelopmentDifferences = Settings()
        #expect(resolution.settings == documentedDevelopmentDifferences)
        // And it really lists every key (so the file documents each one).
        for key in Settings.keys {
            #expect(resolution.origins[key.name]?.hasPrefix(path + ":") == true, "config/thumbd.yaml lacks \(key.name)")
        }
    }

    @Test func noFileMeansDefaults() throws {
        #expect(try load(yaml: nil).settings == Settings())
    }

    @Test func emptyOrCommentOnlyFileMeansDefaults() throws {
        #expect(try load(yaml: "").settings == Settings())
        #expect(try load(yaml: "# nothing here\n").settings == Settings())
    }

    // MARK: - Reading values

    @Test func readsEveryKindOfValueFromTheFile() throws {
        // Given a file with non-default values of each kind, when loaded, then each lands in its property.
        let settings = try load(
            yaml: """
                server:
                  listen: "[::1]:9000"
                  threads: 4
                  max_body_bytes: 2MiB
                  header_timeout: 500ms
                fetch:
                  allow_private_networks: yes
                  allowed_networks: [10.1.0.0/16, "fd00::/8"]
                  allowed_hosts:
                    - example.com
                    - "*.example.org"
                image:
                  avif: false
                cache:
                  memory:
                    max_bytes: 1GB
                  disk:
                    path: /var/cache/thumbd
                security:
                  signing_keys: [\(String(repeating: "a", count: 32))]
                log:
                  level: DEBUG
                  format: json
                metrics:
                  listen: 127.0.0.1:9100
                """
        ).settings
        #expect(settings.server.listen == .init(host: "::1", port: 9000))
        #expect(settings.server.threads == 4)
        #expect(settings.server.maxBodyBytes == 2 << 20)
        #expect(settings.server.headerTimeout == .milliseconds(500))
        #expect(settings.fetch.allowsPrivateNetworks)
        #expect(settings.fetch.allowedNetworks.map(\.description) == ["10.1.0.0/16", "fd00::/8"])
        #expect(settings.fetch.allowedHosts.map(\.description) == ["example.com", "*.example.org"])
        #expect(!settings.image.isAVIFEnabled)
        #expect(settings.cache.memory.maxBytes == 1_000_000_000)
        #expect(settings.cache.disk.path == "/var/cache/thumbd")
        #expect(settings.security.signingKeys == [String(repeating: "a", count: 32)])
        #expect(settings.log.level == .debug && settings.log.format == .json)
        #expect(settings.metrics.listen == .init(host: "127.0.0.1", port: 9100))
    }

    @Test func keysWithoutAValueMeanEmpty() throws {
        // Given `allowed_hosts:` and `token:` with nothing after them, when loaded, then they are empty.
        let settings = try load(yaml: "fetch:\n  allowed_hosts:\nadmin:\n  token:\nmetrics:\n  listen:\n").settings
        #expect(settings.fetch.allowedHosts.isEmpty && settings.admin.token.isEmpty && settings.metrics.listen == nil)
        let error = try loadError(yaml: "server:\n  threads:\n")
        #expect(error?.key == "server.threads")
    }

    // MARK: - Unknown keys

    @Test func unknownKeyInTheFileIsRejectedWithLineAndSuggestion() throws {
        // Given a misspelt key on line 3, when loaded, then the error names it, its line and the likely key.
        let files = try ConfigTestFiles()
        let path = try files.write("server:\n  listen: 127.0.0.1:8080\n  max_conections: 5\n")
        #expect(throws: SettingsError.self) { try ConfigFile(path: path, environment: [:]).load() }
        do {
            _ = try ConfigFile(path: path, environment: [:]).load()
        } catch {
            #expect(error.key == "server.max_conections")
            #expect(error.source == "\(path):3")
            #expect(error.reason.contains("unknown key"))
            #expect(error.reason.contains("server.max_connections"))
        }
    }

    @Test(arguments: [
        ("bogus: 1\n", "bogus"),
        ("server:\n  nested:\n    deep: 1\n", "server.nested"),
        ("cache:\n  memory:\n    max_byte: 1\n", "cache.memory.max_byte"),
        ("log:\n  level: info\n  colour: true\n", "log.colour"),
    ])
    func unknownKeysAnywhereAreRejected(yaml: String, key: String) throws {
        let error = try loadError(yaml: yaml)
        #expect(error?.key == key)
        #expect(error?.reason.contains("unknown key") == true)
    }

    @Test(arguments: [
        ("server: 5\n", "server"),
        ("server:\n  listen: [a, b]\n", "server.listen"),
        ("fetch:\n  allowed_hosts: example.com\n", "fetch.allowed_hosts"),
        ("fetch:\n  allowed_hosts: [[a]]\n", "fetch.allowed_hosts"),
        ("cache:\n  memory: 5\n", "cache.memory"),
        ("server:\n  listen: 127.0.0.1:1\nserver.listen: 127.0.0.1:2\n", "server.listen"),
    ])
    func misshapenValuesAreRejected(yaml: String, key: String) throws {
        #expect(try loadError(yaml: yaml)?.key == key)
    }

    @Test func malformedYAMLNamesTheFile() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("server:\n  listen: [unclosed\n")
        #expect(throws: SettingsError.self) { try ConfigFile(path: path, environment: [:]).load() }
        let missing = files.path("missing.yaml")
        do {
            _ = try ConfigFile(path: missing, environment: [:]).load()
            Issue.record("a missing file was accepted")
        } catch {
            #expect(error.key == missing && error.reason.contains("cannot open"))
        }
    }

    @Test func unknownEnvironmentVariableIsAWarning() throws {
        // Given a misspelt THUMBD_ variable and one meant for another program, when loaded, then loading
        // succeeds with the defaults and each is named in a warning, the typo with the real name suggested.
        let environment = ["THUMBD_FETCH_TIMOUT": "5s", "THUMBD_PORT": "18040", "HOME": "/root"]
        let resolution = try ConfigFile(path: nil, environment: environment).resolve()
        #expect(resolution.settings == Settings())
        #expect(resolution.warnings.count == 2)
        let typo = resolution.warnings.first { $0.hasPrefix("THUMBD_FETCH_TIMOUT:") }
        #expect(typo?.contains("did you mean THUMBD_FETCH_TIMEOUT?") == true)
        #expect(resolution.warnings.contains { $0.hasPrefix("THUMBD_PORT: unknown environment variable") })
    }

    // MARK: - Precedence

    @Test func environmentOverridesTheFile() throws {
        // Given a timeout in the file and another in the environment, then the environment wins and says so.
        let resolution = try load(
            yaml: "fetch:\n  timeout: 20s\n  max_redirects: 2\n",
            environment: ["THUMBD_FETCH_TIMEOUT": "30s", "THUMBD_CACHE_MEMORY_MAX_BYTES": "64MiB"]
        )
        #expect(resolution.settings.fetch.timeout == .seconds(30))
        #expect(resolution.settings.fetch.maxRedirects == 2)
        #expect(resolution.settings.cache.memory.maxBytes == 64 << 20)
        #expect(resolution.origins["fetch.timeout"] == "THUMBD_FETCH_TIMEOUT")
    }

    @Test func flagsOverrideTheEnvironment() throws {
        // Given listen, cache dir and log level in file, environment and flags, then the flags win.
        let resolution = try load(
            yaml: "server:\n  listen: 127.0.0.1:1000\nlog:\n  level: error\n",
            environment: [
                "THUMBD_SERVER_LISTEN": "127.0.0.1:2000", "THUMBD_CACHE_DISK_PATH": "/env",
                "THUMBD_LOG_LEVEL": "warning",
            ],
            overrides: .init(listen: "127.0.0.2:3000", cacheDirectory: "/flag", logLevel: "debug")
        )
        #expect(resolution.settings.server.listen == .init(host: "127.0.0.2", port: 3000))
        #expect(resolution.settings.cache.disk.path == "/flag")
        #expect(resolution.settings.log.level == .debug)
        #expect(resolution.origins["server.listen"] == "--listen")
    }

    @Test func portFlagKeepsTheConfiguredHost() throws {
        let resolution = try load(
            yaml: nil,
            environment: ["THUMBD_SERVER_LISTEN": "[::1]:8080"],
            overrides: .init(port: 9001)
        )
        #expect(resolution.settings.server.listen == .init(host: "::1", port: 9001))
        #expect(try loadError(yaml: nil, overrides: .init(port: 70_000))?.key == "server.listen")
    }

    @Test func listsFromTheEnvironmentAreCommaSeparated() throws {
        let settings = try load(
            yaml: "fetch:\n  allowed_hosts: [a.example]\n",
            environment: [
                "THUMBD_FETCH_ALLOWED_HOSTS": "example.com, *.example.org", "THUMBD_FETCH_ALLOWED_NETWORKS": "",
            ]
        ).settings
        #expect(settings.fetch.allowedHosts.map(\.description) == ["example.com", "*.example.org"])
        #expect(settings.fetch.allowedNetworks.isEmpty)
    }

    @Test func configPathFallsBackToTheEnvironment() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("server:\n  threads: 3\n")
        #expect(ConfigFile(path: nil, environment: ["THUMBD_CONFIG": path]).path == path)
        #expect(try ConfigFile(path: nil, environment: ["THUMBD_CONFIG": path]).load().server.threads == 3)
        #expect(ConfigFile(path: "/explicit.yaml", environment: ["THUMBD_CONFIG": path]).path == "/explicit.yaml")
        #expect(ConfigFile(path: nil, environment: ["THUMBD_CONFIG": ""]).path == nil)
    }

    // MARK: - Errors name keys and sources

    @Test func everyUnparsableValueNamesItsKeyFromTheFile() throws {
        // Given each non-text key set to garbage in a file, when loaded, then the error names that key and line.
        for key in Settings.keys where key.kind != .string && !key.kind.isList {
            let components = key.components
            var yaml = ""
            for (depth, component) in components.dropLast().enumerated() {
                yaml += String(repeating: "  ", count: depth) + component + ":\n"
            }
            yaml += String(repeating: "  ", count: components.count - 1) + components.last! + ": \"not valid!\"\n"
            let error = try loadError(yaml: yaml)
            #expect(error?.key == key.name, "for \(key.name)")
            #expect(
                error?.source?.hasSuffix(":\(components.count)") == true,
                "for \(key.name): \(String(describing: error))"
            )
        }
    }

    @Test func everyUnparsableValueNamesItsKeyFromTheEnvironment() throws {
        for key in Settings.keys where key.kind != .string {
            let error = try loadError(yaml: nil, environment: [key.environmentName: "not valid!"])
            #expect(error?.key == key.name, "for \(key.environmentName)")
            #expect(error?.source == key.environmentName)
        }
    }

    @Test func validationErrorsCarryTheSourceOfTheValue() throws {
        let error = try loadError(yaml: "fetch:\n  timeout: 2s\n", environment: ["THUMBD_FETCH_CONNECT_TIMEOUT": "5s"])
        #expect(error?.key == "fetch.connect_timeout")
        #expect(error?.source == "THUMBD_FETCH_CONNECT_TIMEOUT")
        #expect(error?.description.hasPrefix("fetch.connect_timeout (THUMBD_FETCH_CONNECT_TIMEOUT): ") == true)
    }
}
