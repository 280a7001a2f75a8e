// SPDX-License-Identifier: Apache-2.0

import Logging

extension Settings {
    /// One configuration key: its dotted name, how its text is parsed and printed, and whether a reload can
    /// change it.
    ///
    /// `Settings.keys` is the single list that the YAML key check, the environment check, the derivation
    /// in `ConfigFile`, `--check-config` and the documentation test all walk, so a key added here is read,
    /// printed and required in `docs/configuration.md` at once.
    package struct Key {
        /// The dotted name: `cache.memory.max_bytes`.
        package let name: String
        /// What kind of value it holds (which also names its unit).
        package let kind: Kind
        /// Whether a running process can take a new value on reload.
        package let reload: Reload
        /// Whether the value is a secret that is never printed or logged.
        package let isSecret: Bool
        /// The property, used to name the key in validation errors.
        let keyPath: PartialKeyPath<Settings>
        /// Parses the text of the value and stores it.
        let apply: (inout Settings, Value) throws(InvalidValue) -> Void
        /// The value in the form `apply` accepts.
        let render: (Settings) -> Value

        /// The name's components: `["cache", "memory", "max_bytes"]`.
        package var components: [String] { name.split(separator: ".").map(String.init) }

        /// The environment variable that overrides it: `THUMBD_CACHE_MEMORY_MAX_BYTES`.
        package var environmentName: String {
            "THUMBD_" + name.uppercased().replacingDots()
        }

        /// The value of this key in `settings`, as printed by `--check-config` (secrets masked).
        package func displayValue(in settings: Settings) -> String {
            render(settings).yamlText(masked: isSecret, isFreeText: kind == .string)
        }
    }

    /// The kind of a key's value.
    package enum Kind: Sendable, Equatable {
        /// A byte count: `1048576`, `256MB`, `10GiB`.
        case bytes
        /// A duration: `500ms`, `10s`, `1m`, `1h`, `1d`.
        case duration
        /// A whole number.
        case integer
        /// `true` or `false`.
        case boolean
        /// Free text.
        case string
        /// One of a fixed set of words.
        case choice([String])
        /// `HOST:PORT` with a numeric host.
        case address
        /// A list (a YAML sequence, or comma-separated in an environment variable).
        case list
        /// Names with a text each (a YAML mapping, or `name:text;name:text` in an environment variable).
        case mapping

        /// Whether the value is a list.
        package var isList: Bool { self == .list }
    }

    /// When a changed value takes effect.
    package enum Reload: String, Sendable, Equatable {
        /// On reload (SIGHUP or file change), without dropping connections.
        case reloadable
        /// Only after a restart (a reload logs that it was ignored).
        case restart
    }

    /// The raw text of a value: one scalar, the items of a list, or the entries of a mapping.
    enum Value: Equatable {
        case scalar(String)
        case list([String])
        case mapping([String: String])

        /// YAML text for `--check-config`: plain when safe, else double-quoted; lists in flow style.
        func yamlText(masked: Bool, isFreeText: Bool) -> String {
            switch self {
            case .scalar(let text):
                if masked { return text.isEmpty ? "\"\"" : "\"<redacted>\"" }
                return YAMLText.scalar(text, isFreeText: isFreeText)
            case .list(let items):
                let shown = items.map { masked ? "\"<redacted>\"" : YAMLText.scalar($0, isFreeText: true) }
                return "[" + shown.joined(separator: ", ") + "]"
            case .mapping(let entries):
                let shown = entries.sorted { $0.key < $1.key }.map { name, text in
                    YAMLText.scalar(name, isFreeText: true) + ": "
                        + (masked ? "\"<redacted>\"" : YAMLText.scalar(text, isFreeText: true))
                }
                return "{" + shown.joined(separator: ", ") + "}"
            }
        }

        /// The entries of an environment variable's mapping: `name:text` pairs separated by `;`
        /// (`card:w=400&h=300;thumb:w=100`); empty text is no entry. No `/thumb` parameter value contains `;`.
        static func mapping(parsingEnvironment text: String) throws(InvalidValue) -> [String: String] {
            var entries: [String: String] = [:]
            for item in text.split(separator: ";", omittingEmptySubsequences: true) {
                let item = trimmingASCIISpaces(item)
                if item.isEmpty { continue }
                guard let colon = item.firstIndex(of: ":") else {
                    throw InvalidValue("expected name:value pairs separated by ';', got \"\(item)\"")
                }
                let name = String(trimmingASCIISpaces(item[..<colon]))
                guard entries[name] == nil else { throw InvalidValue("\(name) is set twice") }
                entries[name] = String(trimmingASCIISpaces(item[item.index(after: colon)...]))
            }
            return entries
        }
    }

    /// Every key, grouped by section in the order of `config/thumbd.yaml`.
    package static var keys: [Key] {
        [
            .address("server.listen", \.server.listen, .restart),
            .integer("server.threads", \.server.threads, .restart),
            .integer("server.max_connections", \.server.maxConnections, .reloadable),
            .bytes("server.max_body_bytes", \.server.maxBodyBytes, .reloadable),
            .duration("server.header_timeout", \.server.headerTimeout, .reloadable),
            .duration("server.idle_timeout", \.server.idleTimeout, .reloadable),
            .duration("server.write_timeout", \.server.writeTimeout, .reloadable),
            .duration("server.shutdown_timeout", \.server.shutdownTimeout, .reloadable),

            .duration("fetch.timeout", \.fetch.timeout, .reloadable),
            .duration("fetch.connect_timeout", \.fetch.connectTimeout, .reloadable),
            .integer("fetch.max_redirects", \.fetch.maxRedirects, .reloadable),
            .bytes("fetch.max_source_bytes", \.fetch.maxSourceBytes, .reloadable),
            .integer("fetch.max_per_host", \.fetch.maxPerHost, .reloadable),
            .boolean("fetch.allow_private_networks", \.fetch.allowsPrivateNetworks, .reloadable),
            .list("fetch.allowed_networks", \.fetch.allowedNetworks, parse: IPNetwork.init(parsing:)),
            .list("fetch.allowed_hosts", \.fetch.allowedHosts, parse: HostPattern.init(parsing:)),
            .string("fetch.user_agent", \.fetch.userAgent, .reloadable),

            .integer("image.render_threads", \.image.renderThreads, .restart),
            .integer("image.queue_limit", \.image.queueLimit, .reloadable),
            .integer("image.max_source_pixels", \.image.maxSourcePixels, .reloadable),
            .integer("image.max_frames", \.image.maxFrames, .reloadable),
            .integer("image.pdf_max_dpi", \.image.pdfMaxDPI, .reloadable),
            .list("image.watermarks", \.image.watermarks, reload: .restart, parse: WatermarkFile.init(parsing:)),
            .integer("image.default_quality", \.image.defaultQuality, .reloadable),
            .boolean("image.avif", \.image.isAVIFEnabled, .reloadable),
            .list("image.auto_formats", \.image.autoFormats, reload: .restart, parse: AutoFormat.init(parsing:)),
            .boolean("image.heic_output", \.image.isHEICOutputEnabled, .reloadable),
            .bytes("image.intermediate_cache_bytes", \.image.intermediateCacheBytes, .restart),
            .boolean("image.faces", \.image.faces, .restart),
            .string("image.face_cascade", \.image.faceCascade, .restart),
            .integer("image.face_side", \.image.faceSide, .restart),
            .boolean("image.analysis", \.image.analysis, .restart),
            .integer("image.blurhash_x", \.image.blurhashX, .restart),
            .integer("image.blurhash_y", \.image.blurhashY, .restart),
            .integer("image.palette_colours", \.image.paletteColours, .restart),
            .boolean("image.placeholder_header", \.image.placeholderHeader, .restart),
            .boolean("image.presets_only", \.image.allowsOnlyPresets, .reloadable),
            .string("image.fallback", \.image.fallback, .reloadable),
            .fallbackStatus("image.fallback_status", \.image.fallbackStatus, .reloadable),
            .duration("image.fallback_ttl", \.image.fallbackTTL, .reloadable),
            .boolean("image.client_hints", \.image.readsClientHints, .reloadable),
            .choice("image.sandbox", \.image.sandbox, .restart),
            .integer("image.sandbox_helpers", \.image.sandboxHelpers, .restart),
            .integer("image.sandbox_jobs_per_helper", \.image.sandboxJobsPerHelper, .restart),
            .duration("image.sandbox_deadline", \.image.sandboxDeadline, .restart),
            .bytes("image.sandbox_memory", \.image.sandboxMemoryBytes, .restart),

            .integer("info.batch_max", \.info.batchMax, .reloadable),
            .bytes("info.batch_max_bytes", \.info.batchMaxBytes, .reloadable),

            .duration("cache.client_max_age", \.cache.clientMaxAge, .reloadable),
            .duration("cache.default_ttl", \.cache.defaultTTL, .reloadable),
            .duration("cache.min_ttl", \.cache.minTTL, .reloadable),
            .duration("cache.max_ttl", \.cache.maxTTL, .reloadable),
            .duration("cache.stale_if_error", \.cache.staleIfError, .reloadable),
            .duration("cache.negative_ttl", \.cache.negativeTTL, .reloadable),
            .boolean("cache.sources", \.cache.keepsSources, .restart),
            .string("cache.tag_header", \.cache.tagHeader, .restart),
            .duration("cache.source_check_interval", \.cache.sourceCheckInterval, .restart),
            .bytes("cache.memory.max_bytes", \.cache.memory.maxBytes, .reloadable),
            .integer("cache.memory.max_entries", \.cache.memory.maxEntries, .reloadable),
            .string("cache.disk.path", \.cache.disk.path, .restart),
            .bytes("cache.disk.max_bytes", \.cache.disk.maxBytes, .reloadable),
            .bytes("cache.disk.sources_max_bytes", \.cache.disk.sourcesMaxBytes, .reloadable),
            .bytes("cache.disk.analyses_max_bytes", \.cache.disk.analysesMaxBytes, .reloadable),
            .boolean("cache.shared.enabled", \.cache.shared.isEnabled, .restart),
            .string("cache.shared.bucket", \.cache.shared.bucket, .restart),
            .string("cache.shared.prefix", \.cache.shared.prefix, .restart),
            .duration("cache.shared.timeout", \.cache.shared.timeout, .restart),
            .integer("cache.shared.breaker_failures", \.cache.shared.breakerFailures, .restart),
            .duration("cache.shared.breaker_pause", \.cache.shared.breakerPause, .restart),
            .integer("cache.shared.put_queue", \.cache.shared.putQueue, .restart),
            .boolean("cache.shared.sources", \.cache.shared.keepsSources, .restart),
            .list("cache.purge.varnish", \.cache.purge.varnish, reload: .restart, parse: { $0 }),
            .string("cache.purge.webhook", \.cache.purge.webhook, .restart),
            .string("cache.purge.webhook_token", \.cache.purge.webhookToken, .restart, isSecret: true),
            .integer("cache.purge.queue_limit", \.cache.purge.queueLimit, .restart),
            .integer("cache.purge.attempts", \.cache.purge.attempts, .restart),
            .duration("cache.purge.timeout", \.cache.purge.timeout, .restart),

            .string("admin.token", \.admin.token, .reloadable, isSecret: true),
            .list("security.signing_keys", \.security.signingKeys, isSecret: true, parse: { $0 }),

            .boolean("thumbor.enabled", \.thumbor.isEnabled, .restart),
            .string("thumbor.prefix", \.thumbor.prefix, .restart),
            .list("thumbor.security_keys", \.thumbor.securityKeys, isSecret: true, parse: { $0 }),
            .boolean("thumbor.allow_unsafe", \.thumbor.allowsUnsafe, .reloadable),
            .choice("thumbor.skipped_filters", \.thumbor.skippedFilters, .reloadable),
            .boolean("thumbor.exact_crop", \.thumbor.exactCrop, .reloadable),

            .boolean("imgproxy.enabled", \.imgproxy.isEnabled, .restart),
            .string("imgproxy.prefix", \.imgproxy.prefix, .restart),
            .list("imgproxy.keys", \.imgproxy.keys, isSecret: true, parse: { $0 }),
            .list("imgproxy.salts", \.imgproxy.salts, isSecret: true, parse: { $0 }),
            .integer("imgproxy.signature_size", \.imgproxy.signatureSize, .reloadable),

            .choice("log.level", \.log.level, .reloadable),
            .choice("log.format", \.log.format, .restart),
            .boolean("log.access", \.log.isAccessLogEnabled, .reloadable),

            .optionalAddress("metrics.listen", \.metrics.listen, .restart),

            .string("s3.endpoint", \.s3.endpoint, .restart),
            .string("s3.region", \.s3.region, .restart),
            .string("s3.credentials_file", \.s3.credentialsFile, .restart),
            .list("s3.source_buckets", \.s3.sourceBuckets, reload: .restart, parse: { $0 }),

            .mapping("presets", \.presets, .reloadable),
        ]
    }

    /// The dotted name of the key stored at `keyPath` (used to name keys in validation errors).
    static func keyName(of keyPath: PartialKeyPath<Settings>) -> String {
        keys.first { $0.keyPath == keyPath }?.name ?? "\(keyPath)"
    }
}

// MARK: - Key constructors

extension Settings.Key {
    static func bytes(_ name: String, _ path: WritableKeyPath<Settings, Int>, _ reload: Settings.Reload) -> Self {
        scalar(name, .bytes, path, reload, parse: ByteSize.parse, format: ByteSize.format)
    }

    static func duration(
        _ name: String,
        _ path: WritableKeyPath<Settings, Duration>,
        _ reload: Settings.Reload
    ) -> Self {
        scalar(name, .duration, path, reload, parse: DurationParsing.parse, format: DurationParsing.format)
    }

    static func integer(_ name: String, _ path: WritableKeyPath<Settings, Int>, _ reload: Settings.Reload) -> Self {
        scalar(
            name,
            .integer,
            path,
            reload,
            parse: { (text) throws(InvalidValue) in
                guard let number = WholeNumber.parse(trimmingASCIISpaces(text[...])) else {
                    throw InvalidValue("expected a whole number, got \"\(text)\"")
                }
                return number
            },
            format: { "\($0)" }
        )
    }

    static func boolean(_ name: String, _ path: WritableKeyPath<Settings, Bool>, _ reload: Settings.Reload) -> Self {
        scalar(
            name,
            .boolean,
            path,
            reload,
            parse: { (text) throws(InvalidValue) in
                switch text.lowercased() {
                case "true", "yes", "on", "1": return true
                case "false", "no", "off", "0": return false
                default: throw InvalidValue("expected true or false, got \"\(text)\"")
                }
            },
            format: { $0 ? "true" : "false" }
        )
    }

    static func string(
        _ name: String,
        _ path: WritableKeyPath<Settings, String>,
        _ reload: Settings.Reload,
        isSecret: Bool = false
    ) -> Self {
        scalar(name, .string, path, reload, isSecret: isSecret, parse: { $0 }, format: { $0 })
    }

    static func choice<T: RawRepresentable<String> & CaseIterable>(
        _ name: String,
        _ path: WritableKeyPath<Settings, T>,
        _ reload: Settings.Reload
    ) -> Self {
        let words = T.allCases.map(\.rawValue)
        return scalar(
            name,
            .choice(words),
            path,
            reload,
            parse: { (text) throws(InvalidValue) in
                guard let value = T(rawValue: text.lowercased()) else {
                    throw InvalidValue("expected one of \(words.joined(separator: ", ")), got \"\(text)\"")
                }
                return value
            },
            format: { $0.rawValue }
        )
    }

    static func address(
        _ name: String,
        _ path: WritableKeyPath<Settings, Settings.ListenAddress>,
        _ reload: Settings.Reload
    ) -> Self {
        scalar(name, .address, path, reload, parse: Settings.ListenAddress.init(parsing:), format: \.description)
    }

    /// An address that may be empty, meaning "none" (nil).
    static func optionalAddress(
        _ name: String,
        _ path: WritableKeyPath<Settings, Settings.ListenAddress?>,
        _ reload: Settings.Reload
    ) -> Self {
        scalar(
            name,
            .address,
            path,
            reload,
            parse: { (text) throws(InvalidValue) in
                text.isEmpty ? nil : try Settings.ListenAddress(parsing: text)
            },
            format: { $0?.description ?? "" }
        )
    }

    /// `image.fallback_status`: `original` or a status code.
    static func fallbackStatus(
        _ name: String,
        _ path: WritableKeyPath<Settings, Settings.FallbackStatus>,
        _ reload: Settings.Reload
    ) -> Self {
        scalar(name, .string, path, reload, parse: Settings.FallbackStatus.init(parsing:), format: \.description)
    }

    /// Names with a text each: a YAML mapping in the file, `name:text;name:text` in the environment.
    static func mapping(
        _ name: String,
        _ path: WritableKeyPath<Settings, [String: String]>,
        _ reload: Settings.Reload
    ) -> Self {
        Self(
            name: name,
            kind: .mapping,
            reload: reload,
            isSecret: false,
            keyPath: path,
            apply: { (settings, value) throws(InvalidValue) in
                guard case .mapping(let entries) = value else { throw InvalidValue("expected a mapping of names") }
                settings[keyPath: path] = entries
            },
            render: { .mapping($0[keyPath: path]) }
        )
    }

    static func list<T>(
        _ name: String,
        _ path: WritableKeyPath<Settings, [T]>,
        isSecret: Bool = false,
        reload: Settings.Reload = .reloadable,
        parse: @escaping (String) throws(InvalidValue) -> T
    ) -> Self where T: CustomStringConvertible {
        Self(
            name: name,
            kind: .list,
            reload: reload,
            isSecret: isSecret,
            keyPath: path,
            apply: { (settings, value) throws(InvalidValue) in
                guard case .list(let items) = value else { throw InvalidValue("expected a list") }
                var parsed: [T] = []
                for (index, item) in items.enumerated() {
                    do throws(InvalidValue) {
                        parsed.append(try parse(item))
                    } catch {
                        throw InvalidValue("item \(index + 1): \(error.reason)")
                    }
                }
                settings[keyPath: path] = parsed
            },
            render: { .list($0[keyPath: path].map(\.description)) }
        )
    }

    private static func scalar<T>(
        _ name: String,
        _ kind: Settings.Kind,
        _ path: WritableKeyPath<Settings, T>,
        _ reload: Settings.Reload,
        isSecret: Bool = false,
        parse: @escaping (String) throws(InvalidValue) -> T,
        format: @escaping (T) -> String
    ) -> Self {
        Self(
            name: name,
            kind: kind,
            reload: reload,
            isSecret: isSecret,
            keyPath: path,
            apply: { (settings, value) throws(InvalidValue) in
                guard case .scalar(let text) = value else { throw InvalidValue("expected a single value, not a list") }
                settings[keyPath: path] = try parse(text)
            },
            render: { .scalar(format($0[keyPath: path])) }
        )
    }
}

extension String {
    /// The text with `.` replaced by `_` (environment variable names).
    fileprivate func replacingDots() -> String {
        String(map { $0 == "." ? "_" : $0 })
    }
}
