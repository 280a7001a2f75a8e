// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct RedirectTests {
    let origin: LoopbackOrigin
    let fetcher: OriginFetcher

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
        fetcher = try OriginFetcher(configuration: testConfiguration())
    }

    /// /chain/0 → /chain/1 → ... → /chain/<hops> (the image), with assorted redirect statuses.
    private func makeChain(_ name: String, hops: Int) -> String {
        let statuses = [301, 302, 303, 307, 308]
        for hop in 0..<hops {
            origin.route(
                "/\(name)/\(hop)", .redirect(to: "/\(name)/\(hop + 1)", status: statuses[hop % statuses.count]))
        }
        origin.route("/\(name)/\(hops)", .ok(sampleBody(64)))
        return origin.url("/\(name)/0")
    }

    @Test func followsUpToTheLimit() async throws {
        let source = try await fetcher.fetch(makeChain("five", hops: 5)).get()
        #expect(source.body == sampleBody(64))
        #expect(source.finalURL == origin.url("/five/5"))
        #expect(source.requestedURL == origin.url("/five/0"))
        #expect((0...5).allSatisfy { origin.hits("/five/\($0)") == 1 })
        #expect(fetcher.counters.redirectsFollowed == 5)
        #expect(fetcher.counters.transfersStarted == 1)
    }

    @Test func oneMoreIsTooMany() async {
        #expect(await fetcher.fetch(makeChain("six", hops: 6)).failure == .tooManyRedirects(limit: 5))
        #expect(origin.hits("/six/6") == 0)
    }

    @Test func loopIsDetected() async {
        origin.route("/loop/a", .redirect(to: "/loop/b"))
        origin.route("/loop/b", .redirect(to: "\(origin.url("/loop/a"))#again"))
        #expect(await fetcher.fetch(origin.url("/loop/a")).failure == .redirectLoop(url: origin.url("/loop/a")))
    }

    @Test func relativeAndAbsoluteLocationsResolve() async throws {
        origin.route("/rel/start", .redirect(to: "../abs/x?y=1"))
        origin.route("/abs/x", .redirect(to: origin.url("/final.png")))
        origin.route("/final.png", .ok(sampleBody(8), contentType: "image/png"))
        let source = try await fetcher.fetch(origin.url("/rel/start")).get()
        #expect(source.finalURL == origin.url("/final.png"))
        #expect(origin.requests.map(\.target).contains("/abs/x?y=1"))
    }

    @Test(arguments: ["ftp://\(allowedOriginHost)/x.jpg", "file:///etc/passwd", "gopher://\(allowedOriginHost)/x"])
    func redirectToAnotherSchemeIsForbidden(_ location: String) async {
        origin.route("/to-scheme", .redirect(to: location))
        guard case .schemeForbidden = await fetcher.fetch(origin.url("/to-scheme")).failure else {
            Issue.record("expected schemeForbidden for \(location)")
            return
        }
    }

    @Test func redirectToAForbiddenAddressIsRefusedBeforeConnecting() async throws {
        // Given a second origin on 127.0.0.1, which the policy does not allow
        let internalOrigin = try LoopbackOrigin(host: "127.0.0.1")
        internalOrigin.route("/secret", .ok(Array("secret".utf8)))
        origin.route("/to-internal", .redirect(to: internalOrigin.url("/secret")))
        // Then the redirect is refused as a policy matter and the internal origin sees nothing
        let result = await fetcher.fetch(origin.url("/to-internal"))
        #expect(result.failure == .addressForbidden(address: "127.0.0.1", range: .loopback))
        #expect(internalOrigin.connectionsAccepted == 0)
        #expect(fetcher.counters.addressRefusals >= 1)
    }

    @Test func redirectToAHostOutsideTheAllowlistIsRefused() async throws {
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.allowedHosts = [allowedOriginHost] })
        origin.route("/to-other", .redirect(to: "http://localhost:\(origin.port)/x.jpg"))
        #expect(await fetcher.fetch(origin.url("/to-other")).failure == .hostForbidden(host: "localhost"))
    }
}
