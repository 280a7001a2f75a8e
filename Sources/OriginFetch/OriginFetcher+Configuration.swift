// SPDX-License-Identifier: Apache-2.0

extension OriginFetcher {
    /// Settings of the fetch layer (`fetch.*` in the config file; see docs/configuration.md).
    package struct Configuration: Sendable, Equatable {
        /// Redirects followed per fetch (`fetch.max_redirects`); one more is ``FetchError/tooManyRedirects(limit:)``.
        package var maxRedirects = 5
        /// Largest accepted body in bytes (`fetch.max_source_bytes`, default 25 MiB). Enforced
        /// from Content-Length when the origin sends one and, regardless, while streaming.
        package var maxSourceBytes = 25 * 1024 * 1024
        /// Time allowed to establish a connection, TLS included (`fetch.connect_timeout`).
        package var connectTimeout: Duration = .seconds(3)
        /// Total time allowed for a fetch from its start (after any wait in the per-host queue)
        /// to its last byte, redirects included (`fetch.timeout`). A trickling origin hits it.
        package var timeout: Duration = .seconds(10)
        /// Transfers running at once per host name (`fetch.max_per_host`); more wait in a FIFO
        /// queue per host, interactive ones before background ones.
        package var maxPerHost = 16
        /// When true, the SSRF address check is off (`fetch.allow_private_networks`).
        package var allowPrivateNetworks = false
        /// Special-purpose networks that may be dialled anyway (`fetch.allowed_networks`), e.g.
        /// `10.1.2.0/24`. Public addresses are allowed regardless; see ``AddressPolicy``.
        package var allowedNetworks: [IPNetwork] = []
        /// When set, only these hosts may be fetched, checked on the URL and every redirect
        /// target (`fetch.allowed_hosts`): `example.com` matches that name exactly,
        /// `*.example.com` matches any name below it (not `example.com` itself). Case-insensitive.
        package var allowedHosts: [String]? = nil
        /// The User-Agent sent to origins. The app sets it to `thumbd/<version>`.
        package var userAgent = "thumbd/0.1.0"
        /// The Accept header sent to origins: images preferred, anything accepted (the renderer
        /// decides what it can decode).
        package var accept = "image/avif,image/webp,image/apng,image/*;q=0.9,*/*;q=0.5"
        /// How long resolved addresses are reused (libcurl's DNS cache, shared by the multi handle).
        package var dnsCacheTimeout: Duration = .seconds(60)
        /// Where `s3://bucket/key` sources are read, and which buckets may be (`s3.*`); nil refuses the scheme.
        package var s3Sources: S3Sources? = nil

        /// `s3://` sources: the store and the buckets clients may name (any other is ``FetchError/hostForbidden(host:)``).
        package struct S3Sources: Sendable, Equatable {
            /// The store.
            package var storage: ObjectStorage
            /// Buckets that may be read.
            package var buckets: [String]

            /// A store and its readable buckets.
            package init(storage: ObjectStorage, buckets: [String]) {
                self.storage = storage
                self.buckets = buckets
            }
        }

        /// The defaults listed above.
        package init() {}

        /// The address policy these settings describe.
        package var addressPolicy: AddressPolicy {
            AddressPolicy(allowPrivateNetworks: allowPrivateNetworks, allowedNetworks: allowedNetworks)
        }

        /// Checks every value's range.
        /// - Throws: ``ConfigurationError`` naming the first bad key.
        package func validate() throws(ConfigurationError) {
            func require(_ condition: Bool, _ key: String, _ reason: String) throws(ConfigurationError) {
                if !condition { throw ConfigurationError(key: "fetch.\(key)", reason: reason) }
            }
            try require((0...20).contains(maxRedirects), "max_redirects", "must be 0...20, got \(maxRedirects)")
            try require(maxSourceBytes >= 1, "max_source_bytes", "must be at least 1 byte")
            try require(maxSourceBytes <= 1 << 31, "max_source_bytes", "must be at most 2 GiB")
            try require(connectTimeout >= .milliseconds(1), "connect_timeout", "must be at least 1 ms")
            try require(timeout >= .milliseconds(1), "timeout", "must be at least 1 ms")
            try require(connectTimeout <= timeout, "connect_timeout", "must not exceed fetch.timeout")
            try require((1...1024).contains(maxPerHost), "max_per_host", "must be 1...1024, got \(maxPerHost)")
            try require(!userAgent.isEmpty && !userAgent.contains(where: \.isNewline), "user_agent", "must be one line")
            try require(!accept.contains(where: \.isNewline), "accept", "must be one line")
            try require(dnsCacheTimeout >= .zero, "dns_cache_timeout", "must not be negative")
            for bucket in s3Sources?.buckets ?? [] {
                if !ObjectStorage.isValidBucket(bucket) {
                    throw ConfigurationError(key: "s3.source_buckets", reason: "bad bucket name \"\(bucket)\"")
                }
            }
            for pattern in allowedHosts ?? [] {
                try require(HostPattern(pattern) != nil, "allowed_hosts", "bad pattern \"\(pattern)\"")
            }
        }
    }
}

/// One `allowedHosts` entry: an exact host name or `*.` followed by a domain.
struct HostPattern: Sendable, Equatable {
    private let suffix: String
    private let isWildcard: Bool

    init?(_ text: String) {
        let lowered = text.lowercased()
        let name = lowered.hasPrefix("*.") ? String(lowered.dropFirst(2)) : lowered
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-.[]:")
        guard !name.isEmpty, name.allSatisfy(allowed.contains), !name.hasPrefix("."), !name.contains("..")
        else { return nil }
        self.isWildcard = lowered.hasPrefix("*.")
        self.suffix = name.hasSuffix(".") ? String(name.dropLast()) : name
    }

    /// Whether `host` (already lower-cased; one trailing dot ignored) matches.
    func matches(_ host: String) -> Bool {
        let name = host.hasSuffix(".") ? Substring(host.dropLast()) : Substring(host)
        if !isWildcard { return name == suffix }
        return name.count > suffix.count + 1 && name.hasSuffix("." + suffix)
    }
}
