// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport

/// The SSRF guard end to end. Only loopback addresses are dialled here: refusals of other
/// private ranges are covered by the AddressPolicy table (no traffic may leave the machine).
@Suite(.ownThread, .timeLimit(.minutes(1)))
struct AddressGuardTests {
    let loopbackOrigin: LoopbackOrigin

    init() throws {
        loopbackOrigin = try LoopbackOrigin(host: "127.0.0.1")
        loopbackOrigin.route("/secret", .ok(Array("secret".utf8)))
    }

    @Test func loopbackLiteralIsRefusedByDefault() async throws {
        let fetcher = try OriginFetcher(configuration: OriginFetcher.Configuration())
        let result = await fetcher.fetch(loopbackOrigin.url("/secret"))
        #expect(result.failure == .addressForbidden(address: "127.0.0.1", range: .loopback))
        #expect(loopbackOrigin.connectionsAccepted == 0)
        #expect(fetcher.counters.errors[.addressForbidden] == 1)
    }

    @Test func hostNameResolvingToLoopbackIsRefused() async throws {
        // `localhost` passes any check on the URL text; the resolved address does not
        let fetcher = try OriginFetcher(configuration: testConfiguration())
        let result = await fetcher.fetch("http://localhost:\(loopbackOrigin.port)/secret")
        guard case .addressForbidden(_, let range) = result.failure else {
            Issue.record("expected addressForbidden, got \(result)")
            return
        }
        #expect(range == .loopback)
        #expect(loopbackOrigin.connectionsAccepted == 0)
    }

    @Test func otherLoopbackAddressesStayRefusedWhenOneIsAllowed() async throws {
        // 127.0.0.2/32 is allowed, so 127.0.0.3 is still loopback and refused
        let fetcher = try OriginFetcher(configuration: testConfiguration())
        let neighbour = try LoopbackOrigin(host: "127.0.0.3")
        #expect(
            await fetcher.fetch(neighbour.url("/x")).failure
                == .addressForbidden(address: "127.0.0.3", range: .loopback))
        #expect(neighbour.connectionsAccepted == 0)
    }

    /// Spellings that reach this machine without saying 127.0.0.1. The refusal happens before a
    /// socket exists, so the result does not depend on IPv6 being configured here.
    @Test(arguments: [
        ("[::1]", "::1", SpecialRange.loopback),
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1", .embeddedIPv4(.loopback)),
        ("0.0.0.0", "0.0.0.0", .thisNetwork),
        ("2130706433", "127.0.0.1", .loopback),
        ("0x7f.0.0.1", "127.0.0.1", .loopback),
    ])
    func disguisedLoopbackIsRefused(_ host: String, _ address: String, _ range: SpecialRange) async throws {
        let fetcher = try OriginFetcher(configuration: testConfiguration())
        let result = await fetcher.fetch("http://\(host):\(loopbackOrigin.port)/secret")
        #expect(result.failure == .addressForbidden(address: address, range: range))
        #expect(loopbackOrigin.connectionsAccepted == 0)
    }

    @Test func allowPrivateNetworksLiftsTheGuard() async throws {
        let fetcher = try OriginFetcher(
            configuration: OriginFetcher.Configuration().with { $0.allowPrivateNetworks = true })
        #expect(await fetcher.fetch(loopbackOrigin.url("/secret")).success?.body == Array("secret".utf8))
    }

    @Test func allowedNetworksAdmitTheirAddressesEvenByName() async throws {
        let fetcher = try OriginFetcher(
            configuration: testConfiguration { $0.allowedNetworks = [IPNetwork("127.0.0.1/32")!] })
        #expect(
            await fetcher.fetch("http://localhost:\(loopbackOrigin.port)/secret").success?.body == Array("secret".utf8))
    }

    @Test func allowlistedHostsOnly() async throws {
        let origin = try LoopbackOrigin(host: allowedOriginHost)
        origin.route("/a.jpg", .ok(sampleBody(5)))
        let allowing = try OriginFetcher(
            configuration: testConfiguration { $0.allowedHosts = [allowedOriginHost, "*.example.com"] })
        let refusing = try OriginFetcher(configuration: testConfiguration { $0.allowedHosts = ["*.example.com"] })
        #expect(await allowing.fetch(origin.url("/a.jpg")).success != nil)
        #expect(await refusing.fetch(origin.url("/a.jpg")).failure == .hostForbidden(host: allowedOriginHost))
        #expect(origin.hits("/a.jpg") == 1)
    }

    @Test func updatedConfigurationAppliesToTheNextFetches() async throws {
        // Given a fetcher that fetches from the origin
        let origin = try LoopbackOrigin(host: allowedOriginHost)
        origin.route("/a.jpg", .ok(sampleBody(5)))
        origin.route("/big.jpg", .ok(sampleBody(5_000)))
        let fetcher = try OriginFetcher(configuration: testConfiguration())
        #expect(await fetcher.fetch(origin.url("/a.jpg")).success != nil)

        // When only other hosts are allowed, then the origin is refused without being asked
        try fetcher.update(configuration: testConfiguration { $0.allowedHosts = ["*.example.com"] })
        #expect(fetcher.configuration.allowedHosts == ["*.example.com"])
        #expect(await fetcher.fetch(origin.url("/a.jpg")).failure == .hostForbidden(host: allowedOriginHost))
        #expect(origin.hits("/a.jpg") == 1)

        // When it is allowed again with a smaller size limit, then a larger source is too large
        try fetcher.update(configuration: testConfiguration { $0.maxSourceBytes = 1_000 })
        #expect(await fetcher.fetch(origin.url("/a.jpg")).success != nil)
        #expect(await fetcher.fetch(origin.url("/big.jpg")).failure == .tooLarge(limit: 1_000))

        // When the configuration is invalid, then it is refused and the one in force stays
        #expect(throws: ConfigurationError.self) {
            try fetcher.update(configuration: testConfiguration { $0.maxPerHost = 0 })
        }
        #expect(fetcher.configuration.maxSourceBytes == 1_000)
    }
}

extension OriginFetcher.Configuration {
    /// A modified copy.
    func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}
