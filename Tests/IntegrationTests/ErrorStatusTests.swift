// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Every error class through HTTP: its status, and the JSON body `{"status": N, "error": "..."}` with a short
    /// public reason (never the internal detail).
    @Suite(.timeLimit(.minutes(2))) struct ErrorStatusTests {
        // MARK: - 400

        /// A bad query and the parameter its error must name.
        static let badQueries: [(query: String, names: String)] = [
            ("w=32", "url"),  // no url at all
            ("url=&w=32", "url"),
            ("url=images%2Fa.jpg&w=32", "url"),  // relative
            ("url=ftp%3A%2F%2Fexample.com%2Fa.jpg&w=32", "url"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg", "w or h"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=abc", "w"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=0", "w"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&h=4097", "h"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=-5", "w"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=3000&dpr=2", "w"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&dpr=5", "dpr"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&fit=squash", "fit"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&fit=cover&gravity=up", "gravity"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&format=tiff", "format"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&q=0", "q"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&q=101", "q"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&enlarge=yes", "enlarge"),
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&w=64", "w"),  // duplicate
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=32&width=64", "width"),  // unknown
            ("url=http%3A%2F%2Fexample.com%2Fa.jpg&w=3%2", "w"),  // malformed escape
        ]

        @Test(arguments: badQueries)
        func badParameterIs400NamingIt(_ query: String, names parameter: String) async throws {
            // Given the shared service
            let harness = try Harness.shared()
            // When the query is bad
            let response = try await harness.request("/thumb?\(query)")
            // Then it is 400 with a JSON reason that names the parameter, and nothing was fetched
            expectJSONError(response, status: 400, mentioning: parameter)
            #expect(response.header("cache-control") == "no-store")
        }

        @Test func urlLongerThanTheRequestLineLimitIsRefusedBeforeTheHandler() async throws {
            // Given a source URL of more than 8 KiB (the request line itself is limited to 8 KiB)
            let harness = try Harness.shared()
            let url = "http://example.com/" + String(repeating: "a", count: 8 * 1024)
            // When it is asked for
            let response = try await harness.request(Harness.thumbTarget(url: url))
            // Then the server refuses the request line (414) before /thumb sees it
            expectJSONError(response, status: 414)
        }

        @Test func formatThatCannotBeWrittenIs400WithoutFetching() async throws {
            // Given a service with AVIF output turned off
            let harness = try Harness(["image.avif": "false"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // When AVIF is asked for explicitly
            let response = try await harness.request(harness.thumbTarget("/a.jpg", "w=32&format=avif"))
            // Then it is refused up front, naming the parameter
            expectJSONError(response, status: 400, mentioning: "format")
            #expect(harness.origin.hits("/a.jpg") == 0)
        }

        // MARK: - 403 (SSRF)

        @Test func loopbackOriginIsForbidden() async throws {
            // Given an origin on 127.0.0.1, which the SSRF guard refuses
            let harness = try Harness.shared()
            let forbidden = try LoopbackOrigin(host: "127.0.0.1")
            forbidden.route("/secret.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // When it is the source, by address or by a name that resolves to it
            let byAddress = try await harness.request(Harness.thumbTarget(url: forbidden.url("/secret.jpg")))
            let byName = try await harness.request(
                Harness.thumbTarget(url: "http://localhost:\(forbidden.port)/secret.jpg"))
            // Then both are 403 and the forbidden origin never saw a request
            expectJSONError(byAddress, status: 403)
            expectJSONError(byName, status: 403)
            #expect(forbidden.hits("/secret.jpg") == 0)
        }

        @Test func redirectToLoopbackIsForbidden() async throws {
            // Given an allowed origin that redirects to 127.0.0.1
            let harness = try Harness.shared()
            let forbidden = try LoopbackOrigin(host: "127.0.0.1")
            forbidden.route("/secret.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            harness.origin.route("/to-loopback", .redirect(to: forbidden.url("/secret.jpg")))
            harness.origin.route("/to-localhost", .redirect(to: "http://localhost:\(forbidden.port)/secret.jpg"))
            // When the redirecting URLs are asked for
            let direct = try await harness.request(harness.thumbTarget("/to-loopback"))
            let named = try await harness.request(harness.thumbTarget("/to-localhost"))
            // Then the redirect targets are refused with 403, and nothing reached them
            expectJSONError(direct, status: 403)
            expectJSONError(named, status: 403)
            #expect(harness.origin.hits("/to-loopback") == 1)
            #expect(forbidden.hits("/secret.jpg") == 0)
        }

        @Test func redirectToAnotherSchemeIsForbidden() async throws {
            let harness = try Harness.shared()
            harness.origin.route("/to-file", .redirect(to: "file:///etc/passwd"))
            let response = try await harness.request(harness.thumbTarget("/to-file"))
            expectJSONError(response, status: 403)
        }

        // MARK: - 404, 413, 422, 502

        /// An origin behaviour and the status thumbd must answer for it.
        struct OriginOutcome: Sendable, CustomTestStringConvertible {
            let name: String
            let script: LoopbackOrigin.Script
            let status: Int
            var testDescription: String { "\(name) → \(status)" }
        }

        static let originOutcomes = [
            OriginOutcome(name: "origin-404", script: .status(404), status: 404),
            OriginOutcome(name: "origin-410", script: .status(410), status: 404),
            OriginOutcome(name: "origin-403", script: .status(403), status: 404),
            OriginOutcome(name: "origin-500", script: .status(500), status: 502),
            OriginOutcome(name: "origin-503", script: .status(503), status: 502),
            OriginOutcome(
                name: "html", script: .ok(Fixtures.bytes("page.html"), contentType: "text/html"), status: 422),
            OriginOutcome(
                name: "html-as-jpeg", script: .ok(Fixtures.bytes("page.html"), contentType: "image/jpeg"), status: 422),
            OriginOutcome(name: "empty", script: .ok([], contentType: "image/jpeg"), status: 422),
            OriginOutcome(name: "bomb", script: .ok(Fixtures.bytes("bomb.png"), contentType: "image/png"), status: 422),
            OriginOutcome(name: "truncated", script: .ok(Fixtures.bytes("truncated.jpg")), status: 422),
            // The connection closes before the announced length: a broken transfer, not a broken image.
            OriginOutcome(
                name: "cut-short",
                script: .lyingLength(
                    declared: 5000, body: Array(Fixtures.bytes("progressive.jpg").prefix(600)),
                    contentType: "image/jpeg"),
                status: 502),
        ]

        @Test(arguments: originOutcomes)
        func originOutcomeHasItsStatus(_ outcome: OriginOutcome) async throws {
            // Given an origin path with this behaviour
            let harness = try Harness.shared()
            harness.origin.route("/outcome-\(outcome.name)", outcome.script)
            // When its thumbnail is asked for
            let response = try await harness.request(harness.thumbTarget("/outcome-\(outcome.name)"))
            // Then the status is the mapped one, with a JSON reason
            expectJSONError(response, status: outcome.status)
            #expect(response.header("x-cache") == "MISS")
        }

        @Test(arguments: [
            ("svg", "image.svg", "image/svg+xml"), ("pdf", "document.pdf", "application/pdf"),
            ("bmp", "image.bmp", "image/bmp"),
        ])
        func untrustedFormatIsRefusedWithTheSandboxOff(_ name: String, _ fixture: String, _ type: String)
            async throws
        {
            // Given the decoder sandbox turned off: the untrusted loaders stay blocked in the server
            let harness = try Harness(["image.sandbox": "off"])
            harness.origin.route("/untrusted.\(name)", .ok(Fixtures.bytes(fixture), contentType: type))
            // When its thumbnail is asked for
            let response = try await harness.request(harness.thumbTarget("/untrusted.\(name)"))
            // Then it is refused as an unsupported source, with a JSON reason
            expectJSONError(response, status: 422)
            #expect(harness.origin.hits("/untrusted.\(name)") == 1)
        }

        @Test func sandboxedHeaderOnlyBombIsRefusedNamingPixels() async throws {
            // Given every source decoded by the sandbox's helpers, and a PNG header announcing 30000x30000 pixels
            let harness = try Harness(["image.sandbox": "all"])
            harness.origin.route("/bomb.png", .ok(Fixtures.bytes("bomb.png"), contentType: "image/png"))
            // When it is asked for
            let start = ContinuousClock.now
            let response = try await harness.request(harness.thumbTarget("/bomb.png"))
            // Then the helper refuses it from the header, and the answer names pixels as an in-process refusal does
            expectJSONError(response, status: 422, mentioning: "pixels")
            #expect(ContinuousClock.now - start < .seconds(3))
        }

        @Test func headerOnlyBombIsRefusedFast() async throws {
            // Given a PNG header announcing 30000x30000 pixels (900 MP)
            let harness = try Harness.shared()
            harness.origin.route("/bomb-timed.png", .ok(Fixtures.bytes("bomb.png"), contentType: "image/png"))
            // When it is asked for
            let start = ContinuousClock.now
            let response = try await harness.request(harness.thumbTarget("/bomb-timed.png"))
            // Then it is refused from the header (decoding 900 MP would take many seconds)
            expectJSONError(response, status: 422, mentioning: "pixels")
            #expect(ContinuousClock.now - start < .seconds(3))
        }

        @Test func tooLargeSourceIs413WhetherAnnouncedOrStreamed() async throws {
            // Given a 64 KB source limit
            let harness = try Harness(["fetch.max_source_bytes": "64KB"])
            harness.origin.route("/announced", .ok([UInt8](repeating: 0xFF, count: 200_000)))
            harness.origin.route("/endless", .endless(contentType: "image/jpeg"))
            // When a bigger body is announced by Content-Length, or streamed without one
            let announced = try await harness.request(harness.thumbTarget("/announced"))
            let endless = try await harness.request(harness.thumbTarget("/endless"))
            // Then both are 413
            expectJSONError(announced, status: 413)
            expectJSONError(endless, status: 413)
        }

        @Test func unreachableOriginsAre502() async throws {
            // Given a port that refuses connections, a redirect loop, too many redirects and redirects to
            // invalid URLs
            let harness = try Harness.shared()
            let refusing = try RefusingPort()
            harness.origin.route("/loop-a", .redirect(to: "/loop-b"))
            harness.origin.route("/loop-b", .redirect(to: "/loop-a"))
            for hop in 0..<8 { harness.origin.route("/chain-\(hop)", .redirect(to: "/chain-\(hop + 1)")) }
            let withUserinfo = "http://user:pw@\(originHost):\(harness.origin.port)/a.jpg"
            harness.origin.route("/to-userinfo", .redirect(to: withUserinfo))
            harness.origin.route("/to-junk", .redirect(to: "http://exa mple.com/a.jpg"))
            // When they are the source
            let refused = try await harness.request(
                Harness.thumbTarget(url: "http://\(originHost):\(refusing.port)/a.jpg"))
            let loop = try await harness.request(harness.thumbTarget("/loop-a"))
            let chain = try await harness.request(harness.thumbTarget("/chain-0"))
            let userinfo = try await harness.request(harness.thumbTarget("/to-userinfo"))
            let junk = try await harness.request(harness.thumbTarget("/to-junk"))
            // Then each is 502 (a bad redirect is the origin's fault, not a bad request)
            expectJSONError(refused, status: 502)
            expectJSONError(loop, status: 502)
            expectJSONError(chain, status: 502)
            expectJSONError(userinfo, status: 502)
            expectJSONError(junk, status: 502)
            #expect(harness.origin.hits("/chain-6") == 0)  // five redirects followed, no more
        }

        // MARK: - 504

        @Test func slowOriginsAre504() async throws {
            // Given a 1 s fetch timeout, an origin that never answers and one that sends 1 byte per 200 ms
            let harness = try Harness(["fetch.timeout": "1s", "fetch.connect_timeout": "1s"])
            harness.origin.route("/hang", .hang)
            let body = Fixtures.bytes("progressive.jpg")
            harness.origin.route(
                "/trickle", .trickle(body: body, interval: .milliseconds(200), contentType: "image/jpeg"))
            // When they are asked for
            let start = ContinuousClock.now
            let hang = try await harness.request(harness.thumbTarget("/hang"))
            let trickle = try await harness.request(harness.thumbTarget("/trickle"))
            // Then both time out with 504, each after about the timeout (not the trickle's whole ~4 minutes)
            expectJSONError(hang, status: 504)
            expectJSONError(trickle, status: 504)
            #expect(ContinuousClock.now - start < .seconds(15))
        }

        // MARK: - 503

        @Test func fullRenderQueueIs503WithRetryAfter() async throws {
            // Given one render thread that is busy and a queue of one that is full
            let harness = try Harness(["image.render_threads": "1", "image.queue_limit": "1"])
            harness.origin.route("/busy.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let release = DispatchSemaphore(value: 0)
            defer {
                release.signal()
                release.signal()
            }
            let pool = harness.service.renderPool
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            #expect(await eventually { pool.runningCount == 1 })  // taken off the queue by the only thread
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            #expect(pool.queueDepth.interactive == 1)

            // When a thumbnail's source arrives
            let refused = try await harness.request(harness.thumbTarget("/busy.jpg", "w=40"))

            // Then it is 503 with Retry-After, and no render was queued
            expectJSONError(refused, status: 503)
            #expect(refused.header("retry-after") == "1")
            #expect(harness.service.renderCounters.renderQueueRejections == 1)

            // And once the pool is free again the same request succeeds
            release.signal()
            release.signal()
            #expect(await eventually { pool.runningCount == 0 && pool.queueDepth.interactive == 0 })
            #expect(try await harness.request(harness.thumbTarget("/busy.jpg", "w=40")).status == 200)
        }
    }
}
