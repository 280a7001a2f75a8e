// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import ThumbdSettings

@Suite struct SettingsValidationTests {
    @Test func defaultsAreValid() throws {
        // Given the built-in defaults, when validated, then nothing is refused.
        try Settings().validate()
    }

    /// One invalid setting per row, with the key its error must name.
    static let invalidSettings: [(String, @Sendable (inout Settings) -> Void)] = [
        ("server.listen", { $0.server.listen = .init(host: "localhost", port: 8080) }),
        ("server.listen", { $0.server.listen = .init(host: "127.0.0.1", port: 70_000) }),
        ("server.threads", { $0.server.threads = 5_000 }),
        ("server.max_connections", { $0.server.maxConnections = 0 }),
        ("server.max_body_bytes", { $0.server.maxBodyBytes = -1 }),
        ("server.header_timeout", { $0.server.headerTimeout = .zero }),
        ("server.idle_timeout", { $0.server.idleTimeout = .seconds(2 * 86_400) }),
        ("server.write_timeout", { $0.server.writeTimeout = .zero }),
        ("server.shutdown_timeout", { $0.server.shutdownTimeout = .seconds(-1) }),
        ("fetch.timeout", { $0.fetch.timeout = .zero }),
        ("fetch.connect_timeout", { $0.fetch.connectTimeout = .seconds(30) }),
        ("fetch.max_redirects", { $0.fetch.maxRedirects = 21 }),
        ("fetch.max_source_bytes", { $0.fetch.maxSourceBytes = 0 }),
        ("fetch.max_per_host", { $0.fetch.maxPerHost = 0 }),
        ("fetch.user_agent", { $0.fetch.userAgent = "thumbd\r\nX-Injected: 1" }),
        ("fetch.user_agent", { $0.fetch.userAgent = "" }),
        ("image.render_threads", { $0.image.renderThreads = -1 }),
        ("image.queue_limit", { $0.image.queueLimit = -1 }),
        ("image.max_source_pixels", { $0.image.maxSourcePixels = 0 }),
        ("image.default_quality", { $0.image.defaultQuality = 101 }),
        ("image.default_quality", { $0.image.defaultQuality = 0 }),
        ("image.auto_formats", { $0.image.autoFormats = [.jxl, .webp, .jxl] }),
        ("cache.client_max_age", { $0.cache.clientMaxAge = .seconds(-1) }),
        ("cache.min_ttl", { $0.cache.minTTL = .seconds(40 * 86_400) }),
        ("cache.max_ttl", { $0.cache.maxTTL = .zero }),
        ("cache.default_ttl", { $0.cache.defaultTTL = .seconds(1) }),
        ("cache.default_ttl", { $0.cache.defaultTTL = .seconds(31 * 86_400) }),
        ("cache.stale_if_error", { $0.cache.staleIfError = .seconds(400 * 86_400) }),
        ("cache.negative_ttl", { $0.cache.negativeTTL = .seconds(-5) }),
        ("cache.memory.max_bytes", { $0.cache.memory.maxBytes = -1 }),
        ("cache.memory.max_entries", { $0.cache.memory.maxEntries = 0 }),
        ("cache.disk.path", { $0.cache.disk.path = "" }),
        ("cache.disk.max_bytes", { $0.cache.disk.maxBytes = 0 }),
        ("cache.disk.sources_max_bytes", { $0.cache.disk.sourcesMaxBytes = 0 }),
        ("cache.source_check_interval", { $0.cache.sourceCheckInterval = .milliseconds(10) }),
        ("cache.purge.varnish", { $0.cache.purge.varnish = ["http://varnish:6081/"] }),  // without cache.tag_header
        (
            "cache.purge.varnish",
            {
                $0.cache.tagHeader = "Surrogate-Key"
                $0.cache.purge.varnish = ["varnish:6081"]
            }
        ),
        ("cache.purge.webhook", { $0.cache.purge.webhook = "https://user@hooks.example.com/x" }),
        ("cache.purge.webhook", { $0.cache.purge.webhook = "https://hooks.example.com/a b" }),
        ("cache.purge.webhook_token", { $0.cache.purge.webhookToken = "has space" }),
        ("cache.purge.queue_limit", { $0.cache.purge.queueLimit = 0 }),
        ("cache.purge.attempts", { $0.cache.purge.attempts = 0 }),
        ("cache.purge.timeout", { $0.cache.purge.timeout = .zero }),
        ("admin.token", { $0.admin.token = "short" }),
        ("admin.token", { $0.admin.token = "has a space in it, long enough" }),
        ("security.signing_keys", { $0.security.signingKeys = ["too-short"] }),
        (
            "security.signing_keys",
            { $0.security.signingKeys = [String(repeating: "k", count: 32), String(repeating: "k", count: 32)] }
        ),
        ("metrics.listen", { $0.metrics.listen = .init(host: "127.0.0.1", port: 8080) }),
        ("metrics.listen", { $0.metrics.listen = .init(host: "example.org", port: 9090) }),
    ]

    @Test(arguments: invalidSettings)
    func everyValidationErrorNamesItsKey(key: String, mutate: @Sendable (inout Settings) -> Void) {
        // Given valid defaults with one bad value, when validated, then the error names exactly that key.
        var settings = Settings()
        mutate(&settings)
        #expect(throws: SettingsError.self) { try settings.validate() }
        do {
            try settings.validate()
        } catch {
            #expect(error.key == key)
            #expect(!error.reason.isEmpty)
            #expect(Settings.keys.contains { $0.name == error.key }, "an error names a key that does not exist")
        }
    }

    @Test func secretsAreNotEchoedInErrors() {
        // Given a too-short token, when validated, then the message does not contain the token.
        var settings = Settings()
        settings.admin.token = "hunter2"
        do {
            try settings.validate()
            Issue.record("a 7-character token was accepted")
        } catch {
            #expect(!error.description.contains("hunter2"))
        }
    }

    @Test func zeroMemoryBudgetTurnsTheTierOffAndIsValid() throws {
        // Given the memory tier switched off, when validated, then it is accepted (the disk-hit benchmark needs it).
        var settings = Settings()
        settings.cache.memory.maxBytes = 0
        settings.cache.memory.maxEntries = 0
        try settings.validate()
    }

    @Test func validSignedAndAdminSettingsPass() throws {
        // Given well-formed secrets and an IPv6 metrics listener, when validated, then they are accepted.
        var settings = Settings()
        settings.admin.token = "0123456789abcdef"
        settings.security.signingKeys = [String(repeating: "a", count: 32), String(repeating: "b", count: 64)]
        settings.metrics.listen = try .init(parsing: "[::1]:9090")
        try settings.validate()
        #expect(settings.admin.isEnabled)
        #expect(settings.security.requiresSignature)
    }

    @Test func keyNamesAreUniqueAndMapToDistinctProperties() {
        // Given the key registry, then no name and no property is listed twice.
        let keys = Settings.keys
        #expect(Set(keys.map(\.name)).count == keys.count)
        #expect(Set(keys.map(\.keyPath)).count == keys.count)
        #expect(Set(keys.map(\.environmentName)).count == keys.count)
    }

    @Test func keysRoundTripThroughTheirText() throws {
        // Given non-default settings, when each key's text is applied to defaults, then the settings are equal.
        var settings = Settings()
        settings.server.listen = try .init(parsing: "[::1]:9000")
        settings.fetch.allowedNetworks = [try .init(parsing: "10.1.0.0/16"), try .init(parsing: "fd00::/8")]
        settings.fetch.allowedHosts = [try .init(parsing: "*.example.com")]
        settings.cache.clientMaxAge = .seconds(90)
        settings.cache.memory.maxBytes = 300 << 20
        settings.log.level = .debug
        settings.log.format = .json
        settings.metrics.listen = try .init(parsing: "127.0.0.1:9090")
        var copy = Settings()
        for key in Settings.keys {
            try key.apply(&copy, key.render(settings))
        }
        #expect(copy == settings)
    }
}

@Suite struct SettingsValueTests {
    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080, false),
        ("0.0.0.0:0", "0.0.0.0", 0, false),
        ("[::1]:8080", "::1", 8080, true),
        ("[::]:443", "::", 443, true),
    ])
    func parsesListenAddresses(text: String, host: String, port: Int, isIPv6: Bool) throws {
        let address = try Settings.ListenAddress(parsing: text)
        #expect(address.host == host && address.port == port && address.isIPv6 == isIPv6)
        #expect(address.description == text)
    }

    @Test(arguments: [
        "8080", ":8080", "localhost:8080", "::1:8080", "[::1]8080", "[::1]", "127.0.0.1:", "127.0.0.1:65536",
        "127.0.0.1:-1", "1.2.3:80", "[fe80::1%eth0]:80",
    ])
    func refusesBadListenAddresses(text: String) {
        #expect(throws: InvalidValue.self) { try Settings.ListenAddress(parsing: text) }
    }

    @Test(arguments: [
        ("10.0.0.0/8", "10.0.0.0/8"), ("192.168.1.7", "192.168.1.7/32"), ("fd00::/8", "fd00::/8"),
        ("0.0.0.0/0", "0.0.0.0/0"), ("2001:DB8::/32", "2001:db8::/32"),
    ])
    func parsesNetworks(text: String, canonical: String) throws {
        #expect(try Settings.IPNetwork(parsing: text).description == canonical)
    }

    @Test(arguments: ["10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "example.com/8", "fd00::/129", "10.1.2.3/8", ""])
    func refusesBadNetworks(text: String) {
        #expect(throws: InvalidValue.self) { try Settings.IPNetwork(parsing: text) }
    }

    @Test func hostBitsErrorSuggestsTheNetwork() {
        do {
            _ = try Settings.IPNetwork(parsing: "10.1.2.3/16")
            Issue.record("host bits were accepted")
        } catch {
            #expect(error.reason.contains("10.1.0.0/16"))
        }
    }

    @Test func networkContainsItsAddressesOnly() throws {
        let network = try Settings.IPNetwork(parsing: "10.1.0.0/16")
        #expect(network.contains([10, 1, 200, 3]))
        #expect(!network.contains([10, 2, 0, 1]))
        #expect(!network.contains(Array(repeating: 0, count: 16)))
    }

    @Test func hostPatternsMatchAsDocumented() throws {
        let exact = try Settings.HostPattern(parsing: "Example.COM.")
        #expect(exact.description == "example.com")
        #expect(exact.matches("EXAMPLE.com") && exact.matches("example.com."))
        #expect(!exact.matches("a.example.com") && !exact.matches("badexample.com"))

        let wildcard = try Settings.HostPattern(parsing: "*.example.com")
        #expect(wildcard.matches("a.example.com") && wildcard.matches("a.b.example.com"))
        #expect(!wildcard.matches("example.com") && !wildcard.matches("aexample.com"))

        let address = try Settings.HostPattern(parsing: "[::1]")
        #expect(address.matches("::1") && !address.matches("::2"))
    }

    @Test(arguments: [
        "", "*", "*.", "a.*.com", "exa mple.com", "-bad.com", "bücher.de", "*.10.0.0.1", "http://example.com",
    ])
    func refusesBadHostPatterns(text: String) {
        #expect(throws: InvalidValue.self) { try Settings.HostPattern(parsing: text) }
    }
}

@Suite struct SettingsReloadTests {
    @Test func reloadKeepsRestartKeysAndReportsThem() throws {
        // Given running settings and a new file changing a budget, the listener and the disk path,
        // when reloaded, then the budget changes, the restart keys keep their values and are reported.
        let running = Settings()
        var new = Settings()
        new.cache.memory.maxBytes = 64 << 20
        new.server.listen = try .init(parsing: "0.0.0.0:9000")
        new.cache.disk.path = "/elsewhere"
        new.log.level = .debug
        let (applied, restartKeys) = running.reloaded(with: new)
        #expect(applied.cache.memory.maxBytes == 64 << 20)
        #expect(applied.log.level == .debug)
        #expect(applied.server.listen == running.server.listen)
        #expect(applied.cache.disk.path == running.cache.disk.path)
        #expect(restartKeys == ["server.listen", "cache.disk.path"])
    }

    @Test func reloadWithoutChangesReportsNothing() {
        let (applied, restartKeys) = Settings().reloaded(with: Settings())
        #expect(applied == Settings() && restartKeys.isEmpty)
    }

    @Test func autoFormatsNamesOnlyTheNegotiableFormats() throws {
        // Given the names auto can answer, and others, then only avif, jxl and webp parse (any case)
        #expect(try Settings.AutoFormat(parsing: "JXL") == .jxl)
        for name in ["jpeg", "png", "heic", "gif", ""] {
            #expect(throws: InvalidValue.self) { try Settings.AutoFormat(parsing: name) }
        }
    }
}
