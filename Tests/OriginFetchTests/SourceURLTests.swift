// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import OriginFetch

@Suite struct SourceURLTests {
    @Test(arguments: [
        ("http://example.com/a.jpg", "http://example.com/a.jpg"),
        ("HTTP://Example.COM/a.jpg", "http://example.com/a.jpg"),
        ("http://example.com:80/a.jpg", "http://example.com/a.jpg"),
        ("https://example.com:443/a.jpg", "https://example.com/a.jpg"),
        ("https://example.com:80/a.jpg", "https://example.com:80/a.jpg"),
        ("http://example.com:8080/a.jpg", "http://example.com:8080/a.jpg"),
        ("http://example.com/a.jpg#fragment", "http://example.com/a.jpg"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/A/B.JPG?Q=1&b=2", "http://example.com/A/B.JPG?Q=1&b=2"),
        ("http://example.com/a/./b/../c.jpg", "http://example.com/a/c.jpg"),
        ("http://example.com/%41%2f.jpg", "http://example.com/%41%2f.jpg"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("http://[2001:DB8::1]/x", "http://[2001:db8::1]/x"),
        ("http://127.0.0.2:1234/x?y#z", "http://127.0.0.2:1234/x?y"),
        // numeric IPv4 spellings are normalised by libcurl, so the allowlist and the key see the dotted form
        ("http://2130706433/x", "http://127.0.0.1/x"), ("http://0x7f.1/x", "http://127.0.0.1/x"),
        ("http://0177.0.0.1/x", "http://127.0.0.1/x"),
    ])
    func normalises(_ input: String, _ expected: String) throws {
        #expect(try SourceURL(input).string == expected)
    }

    @Test func keepsHostAndPortApart() throws {
        let url = try SourceURL("https://Img.Example.com:8443/x")
        #expect(url.scheme == "https")
        #expect(url.host == "img.example.com")
        #expect(url.port == 8443)
        #expect(try SourceURL("http://[::1]/").bareHost == "::1")
    }

    @Test(arguments: ["ftp://example.com/a", "file:///etc/passwd", "gopher://example.com/", "dict://example.com/"])
    func refusesOtherSchemes(_ input: String) {
        #expect(throws: FetchError.self) { try SourceURL(input) }
        #expect(throws: FetchError.schemeForbidden(scheme: String(input.prefix { $0 != ":" }))) { try SourceURL(input) }
    }

    @Test(arguments: [
        "", "not a url", "/relative/path.jpg", "http://", "http://user:secret@example.com/a.jpg",
        "http://user@example.com/",
        "http://exa mple.com/", "http://[fe80::1%25eth0]/x",
        // libcurl reads a C string: everything after a NUL would be silently dropped, so a different URL
        // than the caller's would be checked and fetched.
        "http://example.com/a.jpg\u{0}http://other.example/", "\u{0}http://example.com/",
    ])
    func refusesInvalidURLs(_ input: String) {
        #expect {
            try SourceURL(input)
        } throws: { error in
            guard case FetchError.invalidURL = error else { return false }
            return true
        }
    }
}

@Suite struct HostPatternTests {
    @Test(arguments: [
        ("example.com", "example.com", true), ("example.com", "EXAMPLE.com".lowercased(), true),
        ("example.com", "img.example.com", false), ("example.com", "example.com.", true),
        ("*.example.com", "img.example.com", true), ("*.example.com", "a.b.example.com", true),
        ("*.example.com", "example.com", false), ("*.example.com", "badexample.com", false),
        ("*.Example.COM", "img.example.com", true), ("127.0.0.2", "127.0.0.2", true),
    ])
    func matches(_ pattern: String, _ host: String, _ expected: Bool) throws {
        #expect(try #require(HostPattern(pattern)).matches(host) == expected)
    }

    @Test(arguments: ["", "*", "*.", "a*.example.com", "exa mple.com", ".example.com", "a..b", "*.*.example.com"])
    func rejectsBadPatterns(_ pattern: String) {
        #expect(HostPattern(pattern) == nil)
    }
}

@Suite struct ConfigurationTests {
    @Test func defaultsAreValidAndDocumented() throws {
        let configuration = OriginFetcher.Configuration()
        try configuration.validate()
        #expect(configuration.maxRedirects == 5)
        #expect(configuration.maxSourceBytes == 25 * 1024 * 1024)
        #expect(configuration.connectTimeout == .seconds(3))
        #expect(configuration.timeout == .seconds(10))
        #expect(configuration.maxPerHost == 16)
        #expect(configuration.allowPrivateNetworks == false)
        #expect(configuration.allowedHosts == nil)
        #expect(configuration.userAgent.hasPrefix("thumbd/"))
        #expect(configuration.accept.hasPrefix("image/"))
    }

    static func changed(_ change: (inout OriginFetcher.Configuration) -> Void) -> OriginFetcher.Configuration {
        var configuration = OriginFetcher.Configuration()
        change(&configuration)
        return configuration
    }

    static let badConfigurations: [(String, OriginFetcher.Configuration)] = [
        ("fetch.max_redirects", changed { $0.maxRedirects = -1 }),
        ("fetch.max_redirects", changed { $0.maxRedirects = 21 }),
        ("fetch.max_source_bytes", changed { $0.maxSourceBytes = 0 }),
        ("fetch.connect_timeout", changed { $0.connectTimeout = .zero }),
        ("fetch.timeout", changed { $0.timeout = .zero }),
        ("fetch.connect_timeout", changed { $0.connectTimeout = .seconds(11) }),
        ("fetch.max_per_host", changed { $0.maxPerHost = 0 }),
        ("fetch.user_agent", changed { $0.userAgent = "a\r\nCookie: x" }),
        ("fetch.allowed_hosts", changed { $0.allowedHosts = ["*"] }),
    ]

    @Test(arguments: badConfigurations)
    func rejectsOutOfRange(_ key: String, _ configuration: OriginFetcher.Configuration) {
        #expect {
            try configuration.validate()
        } throws: { error in
            (error as? ConfigurationError)?.key == key
        }
    }

    @Test func initRefusesInvalidConfiguration() {
        var configuration = OriginFetcher.Configuration()
        configuration.maxPerHost = 0
        #expect(throws: FetchError.self) { try OriginFetcher(configuration: configuration) }
    }
}
