// SPDX-License-Identifier: Apache-2.0

import Configuration

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads thumbd's settings from one YAML file, `THUMBD_*` environment variables and command-line flags.
///
/// Precedence, lowest first: built-in defaults (`Settings()`), the file, the environment, the flags. The
/// file is read with swift-configuration's `YAMLSnapshot`, the environment with its
/// `EnvironmentVariablesProvider`, the flags with an `InMemoryProvider`; every key of `Settings.keys` is
/// then looked up in those snapshots, highest layer first. Because swift-configuration does not report keys
/// nobody asked for, the file's YAML tree is also walked with Yams so that a typo fails the start instead of
/// silently leaving a default in force; unknown `THUMBD_*` variables are reported as warnings (they may be
/// meant for another program, see `unknownEnvironmentNames()`).
///
/// Loading is synchronous and cheap (one small file), so a reload (SIGHUP, or a `ReloadingFileProvider`
/// `watchSnapshot` update used as the trigger) calls `load()` again and gets a whole new `Settings` from one
/// fresh snapshot of the file, or an error that leaves the running settings alone.
///
/// ```swift
/// let file = ConfigFile(path: "config/thumbd.yaml", environment: ProcessInfo.processInfo.environment)
/// let settings = try file.load()
/// ```
package struct ConfigFile: Sendable {
    /// The values of the command-line flags that override configuration keys; nil for flags not given.
    package struct Overrides: Sendable, Equatable {
        /// `--listen HOST:PORT` → `server.listen`.
        package var listen: String?
        /// `--port N` → the port of `server.listen`, keeping its host.
        package var port: Int?
        /// `--cache-dir DIR` → `cache.disk.path`.
        package var cacheDirectory: String?
        /// `--log-level LEVEL` → `log.level`.
        package var logLevel: String?

        /// Overrides for the given flags.
        package init(listen: String? = nil, port: Int? = nil, cacheDirectory: String? = nil, logLevel: String? = nil) {
            self.listen = listen
            self.port = port
            self.cacheDirectory = cacheDirectory
            self.logLevel = logLevel
        }
    }

    /// The environment variable naming the config file when `--config` is not given.
    package static let pathVariable = "THUMBD_CONFIG"

    /// The file to read, or nil for built-in defaults (plus environment and flags).
    package let path: String?
    /// The process environment (or a test's); only `THUMBD_*` variables are read.
    package let environment: [String: String]
    /// The command-line flags.
    package let overrides: Overrides

    /// Creates a reader; nothing is read until `load()`.
    ///
    /// - Parameters:
    ///   - path: the `--config` file; nil falls back to `THUMBD_CONFIG`, and without that to the defaults.
    ///   - environment: the variables to read `THUMBD_*` overrides from.
    ///   - overrides: values of command-line flags, which win over everything else.
    package init(path: String?, environment: [String: String], overrides: Overrides = Overrides()) {
        let fromEnvironment = environment[Self.pathVariable].flatMap { $0.isEmpty ? nil : $0 }
        self.path = path ?? fromEnvironment
        self.environment = environment
        self.overrides = overrides
    }

    /// The settings, their validation passed.
    ///
    /// - Throws: `SettingsError` for an unreadable or malformed file, an unknown key,
    ///   a value that does not parse, or one that `Settings.validate()` refuses.
    package func load() throws(SettingsError) -> Settings {
        try resolve().settings
    }

    /// Valid settings together with where each non-default value came from.
    package struct Resolution: Sendable, Equatable {
        /// The effective settings.
        package var settings: Settings
        /// For each key not left at its default: `config/thumbd.yaml:12`, `THUMBD_FETCH_TIMEOUT` or `--listen`.
        package var origins: [String: String]
        /// Problems that do not stop the start but deserve a warning in the log (unknown `THUMBD_*` variables).
        package var warnings: [String] = []

        /// Where the value named `key` came from: its own origin, else that of the key it is part of
        /// (`presets.card` set through `THUMBD_PRESETS`); nil for a default.
        package static func origin(of key: String, in origins: [String: String]) -> String? {
            var name = Substring(key)
            while true {
                if let origin = origins[String(name)] { return origin }
                guard let dot = name.lastIndex(of: ".") else { return nil }
                name = name[..<dot]
            }
        }
    }

    /// Like `load()`, and also says where each value came from (for `--check-config`).
    ///
    /// - Throws: `SettingsError`, as `load()`.
    package func resolve() throws(SettingsError) -> Resolution {
        let warnings = unknownEnvironmentNames()
        var layers: [Layer] = [flagLayer(), environmentLayer()]
        if let fileLayer = try fileLayer() { layers.append(fileLayer) }

        var settings = Settings()
        var origins: [String: String] = [:]
        for key in Settings.keys {
            for layer in layers {
                guard let value = try layer.value(of: key) else { continue }
                let origin = layer.origin(key)
                do throws(InvalidValue) {
                    try key.apply(&settings, value)
                } catch {
                    throw SettingsError(key: key.name, source: origin, reason: error.reason)
                }
                origins[key.name] = origin
                for (entry, entryOrigin) in layer.entryOrigins where entry.hasPrefix(key.name + ".") {
                    origins[entry] = entryOrigin
                }
                break
            }
        }
        if let port = overrides.port {
            guard (0...65_535).contains(port) else {
                throw SettingsError(
                    key: "server.listen",
                    source: "--port",
                    reason: "port must be 0...65535, got \(port)"
                )
            }
            settings.server.listen.port = port
            origins["server.listen"] = origins["server.listen"].map { "\($0), --port" } ?? "--port"
        }
        do {
            try settings.validate()
        } catch {
            var error = error
            error.source = Resolution.origin(of: error.key, in: origins)
            throw error
        }
        return Resolution(settings: settings, origins: origins, warnings: warnings)
    }

    // MARK: - Layers

    /// One source of values, as swift-configuration snapshots it.
    struct Layer {
        let snapshot: any ConfigSnapshot
        /// Components put before each key's own (`thumbd` turns `server.listen` into `THUMBD_SERVER_LISTEN`).
        let keyPrefix: [String]
        /// Keys written with no value in YAML (`allowed_hosts:`), which mean empty.
        let nullKeys: Set<String>
        /// The file's mappings (`presets:`), read from its YAML tree; nil for a layer that spells a mapping as
        /// text (the environment: `name:text;name:text`).
        var mappings: [String: [String: String]]? = nil
        /// Where each entry of a mapping was written (`presets.card` → `thumbd.yaml:42`), for errors about one entry.
        var entryOrigins: [String: String] = [:]
        let origin: (Settings.Key) -> String

        /// The key's text in this layer, or nil if the layer does not set it.
        func value(of key: Settings.Key) throws(SettingsError) -> Settings.Value? {
            if nullKeys.contains(key.name) {
                switch key.kind {
                case .list: return .list([])
                case .mapping: return .mapping([:])
                default: return .scalar("")
                }
            }
            if key.kind == .mapping, let mappings {
                return mappings[key.name].map { .mapping($0) }
            }
            let absoluteKey = AbsoluteConfigKey(keyPrefix + key.components)
            let content: ConfigContent?
            do {
                content = try snapshot.value(forKey: absoluteKey, type: key.kind.isList ? .stringArray : .string).value?
                    .content
            } catch {
                throw SettingsError(key: key.name, source: origin(key), reason: "unreadable value: \(error)")
            }
            switch content {
            case .none: return nil
            case .string(let text) where key.kind == .mapping:
                do throws(InvalidValue) {
                    return .mapping(try Settings.Value.mapping(parsingEnvironment: text))
                } catch {
                    throw SettingsError(key: key.name, source: origin(key), reason: error.reason)
                }
            case .string(let text): return .scalar(text)
            // Comma-separated lists from the environment come back with empty items for "" or "a,,b".
            case .stringArray(let items): return .list(items.filter { !$0.isEmpty })
            case .some(let other):
                throw SettingsError(key: key.name, source: origin(key), reason: "unexpected value \(other)")
            }
        }
    }

    private func flagLayer() -> Layer {
        let flags: [(key: String, flag: String, value: String?)] = [
            ("server.listen", "--listen", overrides.listen),
            ("cache.disk.path", "--cache-dir", overrides.cacheDirectory),
            ("log.level", "--log-level", overrides.logLevel),
        ]
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        var names: [String: String] = [:]
        for (key, flag, value) in flags {
            guard let value else { continue }
            values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(
                .string(value),
                isSecret: false
            )
            names[key] = flag
        }
        let provider = InMemoryProvider(name: "flags", values: values)
        return Layer(snapshot: provider.snapshot(), keyPrefix: [], nullKeys: []) { names[$0.name] ?? "flags" }
    }

    private func environmentLayer() -> Layer {
        let provider = EnvironmentVariablesProvider(
            environmentVariables: environment.filter { $0.key.hasPrefix("THUMBD_") },
            secretsSpecifier: .specific(Set(Settings.keys.filter(\.isSecret).map(\.environmentName)))
        )
        return Layer(snapshot: provider.snapshot(), keyPrefix: ["thumbd"], nullKeys: []) { $0.environmentName }
    }

    /// `THUMBD_*` variables that name no key (nor `THUMBD_CONFIG`), each with a suggestion when one is close.
    ///
    /// These are warnings, not errors: scripts and orchestrators put their own `THUMBD_*` variables in the
    /// environment (the peers benchmark sets `THUMBD_PORT` and `THUMBD_CACHE_DIR` for its command line), and a
    /// service must not refuse to start because of a variable meant for someone else. A misspelt override is
    /// still named loudly at start-up and by `--check-config`.
    private func unknownEnvironmentNames() -> [String] {
        let known = Set(Settings.keys.map(\.environmentName)).union([Self.pathVariable])
        var warnings: [String] = []
        for name in environment.keys.sorted() where name.hasPrefix("THUMBD_") && !known.contains(name) {
            var warning = "\(name): unknown environment variable, ignored"
            if let suggestion = closestMatch(to: name, in: known) { warning += "; did you mean \(suggestion)?" }
            warnings.append(warning)
        }
        return warnings
    }

    private func fileLayer() throws(SettingsError) -> Layer? {
        guard let path else { return nil }
        let bytes = try Self.readFile(path)
        let shape = try Self.checkKeys(yaml: String(decoding: bytes, as: UTF8.self), path: path)
        guard !shape.isEmpty else { return nil }
        let snapshot: YAMLSnapshot
        do {
            snapshot = try YAMLSnapshot(data: bytes.span.bytes, providerName: path, parsingOptions: .default)
        } catch {
            throw SettingsError(key: path, reason: "cannot be read as configuration: \(error)")
        }
        return Layer(
            snapshot: snapshot, keyPrefix: [], nullKeys: shape.nullKeys, mappings: shape.mappings,
            entryOrigins: shape.entryLines.mapValues { "\(path):\($0)" }
        ) { key in
            shape.lines[key.name].map { "\(path):\($0)" } ?? path
        }
    }

    /// The file's bytes, refused above 1 MiB (a configuration file that large is a mistake).
    static func readFile(_ path: String) throws(SettingsError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SettingsError(key: path, reason: "cannot open the config file: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw SettingsError(
                    key: path,
                    reason: "cannot read the config file: \(String(cString: strerror(errno)))"
                )
            }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
            guard bytes.count <= 1 << 20 else {
                throw SettingsError(key: path, reason: "config file is larger than 1 MiB")
            }
        }
    }
}
