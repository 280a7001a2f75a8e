// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// Checks every section: ranges, address formats, and the rules that tie keys together
    /// (`fetch.connect_timeout` ≤ `fetch.timeout`, `cache.min_ttl` ≤ `cache.default_ttl` ≤ `cache.max_ttl`, ...).
    ///
    /// Parsing already rejected malformed text; this catches values that parse but make no sense, including
    /// values set in code. The first problem found is thrown.
    ///
    /// - Throws: `SettingsError` naming the key and why.
    package func validate() throws(SettingsError) {
        let check = Check(settings: self)
        try validateServer(check)
        try validateFetch(check)
        try validateImage(check)
        try validateCache(check)
        try validateSecrets(check)
        try validatePresets(check)
        try validateURLForms(check)
        try validateObjectStore(check)
        try check.address(\.metrics.listen)
        if let metrics = metrics.listen, metrics == server.listen, metrics.port != 0 {
            throw check.error(\.metrics.listen, "is the same as server.listen; leave it empty to serve /metrics there")
        }
    }

    private func validateServer(_ check: Check) throws(SettingsError) {
        try check.address(\.server.listen)
        try check.range(\.server.threads, 0...1024, "0 means one per CPU it may use")
        try check.range(\.server.maxConnections, 1...1_000_000)
        try check.range(\.server.maxBodyBytes, 0...(1 << 30))
        try check.range(\.info.batchMax, 1...10_000)
        try check.range(\.info.batchMaxBytes, 1...(1 << 30))
        try check.duration(\.server.headerTimeout, .milliseconds(1)...(.seconds(3_600)))
        try check.duration(\.server.idleTimeout, .milliseconds(1)...(.seconds(86_400)))
        try check.duration(\.server.writeTimeout, .milliseconds(1)...(.seconds(3_600)))
        try check.duration(\.server.shutdownTimeout, .zero...(.seconds(3_600)))
    }

    private func validateFetch(_ check: Check) throws(SettingsError) {
        try check.duration(\.fetch.timeout, .milliseconds(1)...(.seconds(3_600)))
        try check.duration(\.fetch.connectTimeout, .milliseconds(1)...(.seconds(3_600)))
        if fetch.connectTimeout > fetch.timeout {
            throw check.error(
                \.fetch.connectTimeout,
                "must not exceed fetch.timeout (\(DurationParsing.format(fetch.timeout))), "
                    + "got \(DurationParsing.format(fetch.connectTimeout))"
            )
        }
        try check.range(\.fetch.maxRedirects, 0...20)
        try check.range(\.fetch.maxSourceBytes, 1...(1 << 32))
        try check.range(\.fetch.maxPerHost, 1...10_000)
        let agent = fetch.userAgent
        guard !agent.isEmpty, agent.utf8.count <= 256, agent.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
            throw check.error(\.fetch.userAgent, "must be 1 to 256 printable ASCII characters")
        }
    }

    private func validateImage(_ check: Check) throws(SettingsError) {
        try check.range(\.image.renderThreads, 0...1024, "0 means one per CPU it may use, plus a quarter")
        try check.range(\.image.queueLimit, 0...1_000_000)
        try check.range(\.image.maxSourcePixels, 1...(1 << 40))
        try check.range(\.image.maxFrames, 1...10_000)
        try check.range(\.image.pdfMaxDPI, 1...2400)
        let names = image.watermarks.map(\.name)
        if Set(names).count != names.count {
            throw check.error(\.image.watermarks, "a watermark name is listed twice")
        }
        if Set(image.autoFormats).count != image.autoFormats.count {
            throw check.error(\.image.autoFormats, "a format is listed twice")
        }
        try check.range(\.image.intermediateCacheBytes, 0...(1 << 40), "0 keeps none")
        try check.range(\.image.defaultQuality, 1...100)
        if image.faceSide != 0 {
            try check.range(\.image.faceSide, 64...512, "0 searches the 512 px intermediate itself")
        }
        try check.range(\.image.blurhashX, 1...9)
        try check.range(\.image.blurhashY, 1...9)
        try check.range(\.image.paletteColours, 2...256)
        if image.fallback.utf8.contains(0) {
            throw check.error(\.image.fallback, "must be a file path")
        }
        try check.duration(\.image.fallbackTTL, .zero...(.seconds(365 * 86_400)))
        try check.range(\.image.sandboxHelpers, 0...256, "helpers kept started between jobs")
        try check.range(\.image.sandboxJobsPerHelper, 1...1_000_000)
        try check.duration(\.image.sandboxDeadline, .milliseconds(100)...(.seconds(600)))
        try check.range(\.image.sandboxMemoryBytes, (64 << 20)...(1 << 40), "64 MiB at least: libvips and its loaders")
    }

    /// The longest preset name, and how many presets and bytes of parameters a configuration may hold.
    package static let presetLimits = (nameBytes: 64, count: 1000, textBytes: 4096)

    /// Names and sizes of `presets`; their parameters are checked by `/thumb`'s parser when they are loaded.
    private func validatePresets(_ check: Check) throws(SettingsError) {
        guard presets.count <= Self.presetLimits.count else {
            throw check.error(\.presets, "at most \(Self.presetLimits.count) presets, got \(presets.count)")
        }
        for (name, text) in presets.sorted(by: { $0.key < $1.key }) {
            let isWord = name.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            }
            guard isWord, (1...Self.presetLimits.nameBytes).contains(name.utf8.count) else {
                throw SettingsError(
                    key: "presets",
                    reason: "a preset's name must be 1 to \(Self.presetLimits.nameBytes) letters, digits, '-' or '_', "
                        + "got \"\(name)\"")
            }
            guard !text.isEmpty, text.utf8.count <= Self.presetLimits.textBytes,
                text.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
            else {
                throw SettingsError(
                    key: "presets.\(name)",
                    reason: "must be /thumb parameters such as w=400&h=300&fit=cover: 1 to "
                        + "\(Self.presetLimits.textBytes) printable characters without spaces (percent-encode them)")
            }
        }
        if image.allowsOnlyPresets && presets.isEmpty {
            throw check.error(\.image.allowsOnlyPresets, "needs at least one preset under presets:")
        }
    }

    private func validateCache(_ check: Check) throws(SettingsError) {
        let day = Duration.seconds(86_400)
        try check.duration(\.cache.clientMaxAge, .zero...(day * 3_650))
        try check.duration(\.cache.minTTL, .zero...(day * 3_650))
        try check.duration(\.cache.maxTTL, .seconds(1)...(day * 3_650))
        if cache.minTTL > cache.maxTTL {
            throw check.error(\.cache.minTTL, "must not exceed cache.max_ttl (\(DurationParsing.format(cache.maxTTL)))")
        }
        if cache.defaultTTL < cache.minTTL || cache.defaultTTL > cache.maxTTL {
            throw check.error(
                \.cache.defaultTTL,
                "must be between cache.min_ttl (\(DurationParsing.format(cache.minTTL))) and cache.max_ttl "
                    + "(\(DurationParsing.format(cache.maxTTL))), got \(DurationParsing.format(cache.defaultTTL))"
            )
        }
        try check.duration(\.cache.staleIfError, .zero...(day * 365))
        try check.duration(\.cache.negativeTTL, .zero...(day * 365))
        try check.range(\.cache.memory.maxBytes, 0...(1 << 50), "0 turns the memory tier off")
        try check.range(\.cache.memory.maxEntries, 0...1_000_000_000)
        if cache.memory.maxBytes > 0 && cache.memory.maxEntries == 0 {
            throw check.error(
                \.cache.memory.maxEntries,
                "must be positive; set cache.memory.max_bytes to 0 to turn the tier off"
            )
        }
        if cache.disk.path.isEmpty || cache.disk.path.utf8.contains(0) {
            throw check.error(\.cache.disk.path, "must be a directory path")
        }
        try check.range(\.cache.disk.maxBytes, 1...(1 << 60))
        try check.range(\.cache.disk.sourcesMaxBytes, 0...(1 << 60))
        try check.range(\.cache.disk.analysesMaxBytes, 0...(1 << 60), "0 keeps no analysis record on disk")
        if cache.keepsSources && cache.disk.sourcesMaxBytes == 0 {
            throw check.error(\.cache.disk.sourcesMaxBytes, "must be positive while cache.sources is true")
        }
    }

    private func validateObjectStore(_ check: Check) throws(SettingsError) {
        let endpoint = s3.endpoint
        if !endpoint.isEmpty {
            let rest =
                endpoint.hasPrefix("http://")
                ? endpoint.dropFirst(7) : endpoint.hasPrefix("https://") ? endpoint.dropFirst(8) : nil
            let authority = rest.map { $0.hasSuffix("/") ? $0.dropLast() : $0 }
            guard let authority, !authority.isEmpty,
                authority.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:[]".contains($0)) })
            else {
                throw check.error(\.s3.endpoint, "must be http(s)://host[:port] with no path, got \"\(endpoint)\"")
            }
        }
        if s3.region.isEmpty || !s3.region.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) {
            throw check.error(\.s3.region, "must be a region name such as us-east-1")
        }
        if !s3.sourceBuckets.isEmpty && endpoint.isEmpty {
            throw check.error(\.s3.sourceBuckets, "needs s3.endpoint")
        }
        try check.duration(\.cache.shared.timeout, .milliseconds(1)...(.seconds(60)))
        try check.range(\.cache.shared.breakerFailures, 1...1_000)
        try check.duration(\.cache.shared.breakerPause, .milliseconds(1)...(.seconds(3_600)))
        try check.range(\.cache.shared.putQueue, 0...100_000, "0 stores nothing (a read-only tier)")
        let tagHeader = cache.tagHeader
        if tagHeader.utf8.count > 64
            || !tagHeader.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
            || tagHeader.hasPrefix("-")
        {
            throw check.error(
                \.cache.tagHeader, "must be a header name: up to 64 of A-Z a-z 0-9 -, such as Surrogate-Key")
        }
        try validatePurgePush(check)
        let prefix = cache.shared.prefix
        if prefix.utf8.count > 200
            || !prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "/_.-".contains($0)) })
            || prefix.hasPrefix("/")
            || prefix.split(separator: "/", omittingEmptySubsequences: false).dropLast().contains(where: {
                $0.isEmpty || $0 == "." || $0 == ".."
            })
        {
            throw check.error(
                \.cache.shared.prefix,
                "must be up to 200 of A-Z a-z 0-9 / _ . - with no empty, . or .. segment, and not start with /")
        }
        // Bucket names are checked with the store's own rule where the store is made (Settings.objectStorage()).
        if cache.shared.isEnabled && endpoint.isEmpty {
            throw check.error(\.cache.shared.isEnabled, "needs s3.endpoint")
        }
    }

    private func validatePurgePush(_ check: Check) throws(SettingsError) {
        /// An absolute http(s) URL with a host, no spaces or controls, no fragment and no user information.
        func isEndpoint(_ url: String) -> Bool {
            let rest = url.hasPrefix("http://") ? url.dropFirst(7) : url.hasPrefix("https://") ? url.dropFirst(8) : nil
            guard let rest, url.utf8.count <= 2_000, let host = rest.split(separator: "/").first, !host.isEmpty
            else { return false }
            return !host.contains("@") && url.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "#") })
        }
        for (index, url) in cache.purge.varnish.enumerated() where !isEndpoint(url) {
            throw check.error(
                \.cache.purge.varnish, "item \(index + 1) must be an http(s) URL such as http://varnish:6081/")
        }
        if cache.purge.varnish.count > 16 {
            throw check.error(\.cache.purge.varnish, "at most 16 endpoints")
        }
        if !cache.purge.webhook.isEmpty && !isEndpoint(cache.purge.webhook) {
            throw check.error(\.cache.purge.webhook, "must be empty or an http(s) URL")
        }
        if !cache.purge.webhookToken.isEmpty
            && !cache.purge.webhookToken.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        {
            throw check.error(\.cache.purge.webhookToken, "must be printable characters without spaces")
        }
        if !cache.purge.varnish.isEmpty && cache.tagHeader.isEmpty {
            throw check.error(
                \.cache.purge.varnish, "needs cache.tag_header (Varnish bans the thumbnails by the tags it carries)")
        }
        if cache.sourceCheckInterval != .zero {
            try check.duration(\.cache.sourceCheckInterval, .seconds(1)...(.seconds(30 * 86_400)))
        }
        try check.range(\.cache.purge.queueLimit, 1...1_000_000)
        try check.range(\.cache.purge.attempts, 1...20)
        try check.duration(\.cache.purge.timeout, .milliseconds(1)...(.seconds(60)))
    }

    private func validateSecrets(_ check: Check) throws(SettingsError) {
        // Lengths keep guessable secrets out; the values themselves are never echoed.
        if !admin.token.isEmpty {
            guard admin.token.utf8.count >= 16, admin.token.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw check.error(
                    \.admin.token,
                    "must be empty (admin routes off) or at least 16 printable characters without spaces"
                )
            }
        }
        for (index, key) in security.signingKeys.enumerated() {
            guard key.utf8.count >= 32, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
                throw check.error(
                    \.security.signingKeys,
                    "item \(index + 1) must be at least 32 printable characters without spaces "
                        + "(e.g. openssl rand -hex 32)"
                )
            }
        }
        if Set(security.signingKeys).count != security.signingKeys.count {
            throw check.error(\.security.signingKeys, "lists the same key twice")
        }
    }

    /// thumbor's and imgproxy's forms: where they are mounted, and keys they can verify with.
    private func validateURLForms(_ check: Check) throws(SettingsError) {
        func checkPrefix(_ path: KeyPath<Settings, String>) throws(SettingsError) {
            let prefix = self[keyPath: path]
            guard prefix.hasPrefix("/"), prefix.hasSuffix("/"), !prefix.contains("//") || prefix == "/",
                prefix.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "?") })
            else {
                throw check.error(path, "must be a path that starts and ends with / (\"/\" or \"/thumbor/\")")
            }
        }
        try checkPrefix(\.thumbor.prefix)
        try checkPrefix(\.imgproxy.prefix)
        if thumbor.isEnabled && imgproxy.isEnabled && thumbor.prefix == imgproxy.prefix {
            throw check.error(
                \.imgproxy.prefix,
                "is thumbor.prefix too: the two forms cannot be told apart at one prefix (give each its own)")
        }
        for (index, key) in thumbor.securityKeys.enumerated()
        where key.isEmpty || !key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            throw check.error(\.thumbor.securityKeys, "item \(index + 1) must be printable characters without spaces")
        }
        if thumbor.isEnabled && thumbor.securityKeys.isEmpty && !thumbor.allowsUnsafe {
            throw check.error(
                \.thumbor.securityKeys, "is empty and thumbor.allow_unsafe is false: no thumbor URL could be answered")
        }
        for (path, values) in [(\Settings.imgproxy.keys, imgproxy.keys), (\Settings.imgproxy.salts, imgproxy.salts)] {
            for (index, value) in values.enumerated() {
                guard !value.isEmpty, value.utf8.count.isMultiple(of: 2),
                    value.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0 | 0x20) })
                else { throw check.error(path, "item \(index + 1) must be hexadecimal (an even number of digits)") }
            }
        }
        if imgproxy.keys.count != imgproxy.salts.count {
            throw check.error(\.imgproxy.salts, "must have one salt for each of imgproxy.keys")
        }
        try check.range(\.imgproxy.signatureSize, 1...32)
    }

    /// Range checks that name the key of the property they check.
    private struct Check {
        let settings: Settings
        let names: [PartialKeyPath<Settings>: String]

        init(settings: Settings) {
            self.settings = settings
            var names: [PartialKeyPath<Settings>: String] = [:]
            for key in Settings.keys { names[key.keyPath] = key.name }
            self.names = names
        }

        func error(_ path: PartialKeyPath<Settings>, _ reason: String) -> SettingsError {
            SettingsError(key: names[path] ?? "\(path)", reason: reason)
        }

        func range(
            _ path: KeyPath<Settings, Int>,
            _ range: ClosedRange<Int>,
            _ note: String? = nil
        ) throws(SettingsError) {
            let value = settings[keyPath: path]
            guard range.contains(value) else {
                let isBytes = Settings.keys.first { $0.name == names[path] }?.kind == .bytes
                func show(_ number: Int) -> String { isBytes ? ByteSize.format(number) : "\(number)" }
                let suffix = note.map { " (\($0))" } ?? ""
                throw error(
                    path,
                    "must be from \(show(range.lowerBound)) to \(show(range.upperBound))\(suffix), got \(show(value))"
                )
            }
        }

        func duration(_ path: KeyPath<Settings, Duration>, _ range: ClosedRange<Duration>) throws(SettingsError) {
            let value = settings[keyPath: path]
            guard range.contains(value) else {
                let show = DurationParsing.format
                throw error(
                    path,
                    "must be from \(show(range.lowerBound)) to \(show(range.upperBound)), got \(show(value))"
                )
            }
        }

        func address(_ path: KeyPath<Settings, ListenAddress>) throws(SettingsError) {
            do throws(InvalidValue) { try settings[keyPath: path].validate() } catch {
                throw self.error(path, error.reason)
            }
        }

        func address(_ path: KeyPath<Settings, ListenAddress?>) throws(SettingsError) {
            do throws(InvalidValue) { try settings[keyPath: path]?.validate() } catch {
                throw self.error(path, error.reason)
            }
        }
    }
}
