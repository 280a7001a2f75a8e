// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct ErrorClassificationTests {
    let origin: LoopbackOrigin
    let fetcher: OriginFetcher

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
        fetcher = try OriginFetcher(configuration: testConfiguration())
    }

    @Test(arguments: [
        (404, FetchError.originNotFound(status: 404)), (410, .originNotFound(status: 410)),
        (400, .originClientError(status: 400)), (403, .originClientError(status: 403)),
        (500, .originServerError(status: 500)), (503, .originServerError(status: 503)),
        (304, .unexpectedStatus(status: 304)), (300, .unexpectedStatus(status: 300)),
    ])
    func originStatusesMapToClasses(_ status: Int, _ expected: FetchError) async {
        origin.route("/status", .status(status))
        #expect(await fetcher.fetch(origin.url("/status")).failure == expected)
        #expect(fetcher.counters.errors[expected.kind] == 1)
    }

    @Test func aCompletionAlreadySeesItsTransferCounted() async {
        // Given a source and a missing one
        origin.route("/found", .ok(sampleBody(100)))
        origin.route("/missing", .status(404))
        // When each completion reads the counters (on the fetch thread, before anyone else is answered)
        let fetcher = fetcher
        func countersSeenBy(_ path: String) async -> OriginFetcher.Counters {
            await withCheckedContinuation { continuation in
                fetcher.fetch(FetchRequest(url: origin.url(path))) { _ in
                    continuation.resume(returning: fetcher.counters)
                }
            }
        }
        let afterSuccess = await countersSeenBy("/found")
        let afterError = await countersSeenBy("/missing")
        // Then what led to the answer is counted already: a client answered from a completion, and then a
        // /metrics scrape, must never see its fetch uncounted
        #expect(afterSuccess.transfersSucceeded == 1)
        #expect(afterError.errors[.originNotFound] == 1)
    }

    @Test func aRedirectWithoutLocationIsUnexpected() async {
        origin.route("/nolocation", .respond(status: 302, headers: [], body: []))
        #expect(await fetcher.fetch(origin.url("/nolocation")).failure == .unexpectedStatus(status: 302))
    }

    @Test func htmlServedAsJPEGIsDeliveredForTheRendererToJudge() async throws {
        let html = Array("<html><body>not an image</body></html>".utf8)
        origin.route("/fake.jpg", .ok(html, contentType: "image/jpeg"))
        let source = try await fetcher.fetch(origin.url("/fake.jpg")).get()
        #expect(source.body == html)
        #expect(source.contentType == "image/jpeg")
    }

    @Test func connectionRefused() async throws {
        let port = try LoopbackSocket.unusedPort(host: allowedOriginHost)
        let result = await fetcher.fetch("http://\(allowedOriginHost):\(port)/x.jpg")
        guard case .connectionRefused(let detail) = result.failure else {
            Issue.record("expected connectionRefused, got \(result)")
            return
        }
        #expect(!detail.isEmpty)
    }

    @Test func dnsFailure() async {
        // A 70-character label is longer than DNS allows (63), so the resolver fails locally
        // without sending a query: no network traffic leaves the machine.
        let host = String(repeating: "a", count: 70) + ".invalid"
        guard case .dnsFailure = await fetcher.fetch("http://\(host)/x.jpg").failure else {
            Issue.record("expected dnsFailure")
            return
        }
    }

    @Test func tlsFailure() async {
        // https to a plain-HTTP origin: the handshake gets an HTTP answer instead of a ServerHello.
        let result = await fetcher.fetch("https://\(allowedOriginHost):\(origin.port)/x.jpg")
        guard case .tlsFailure = result.failure else {
            Issue.record("expected tlsFailure, got \(result)")
            return
        }
    }

    @Test func truncatedBodyIsAConnectionFailure() async {
        origin.route("/short.jpg", .lyingLength(declared: 1000, body: sampleBody(100), contentType: "image/jpeg"))
        let result = await fetcher.fetch(origin.url("/short.jpg"))
        guard case .connectionFailed = result.failure else {
            Issue.record("expected connectionFailed, got \(result)")
            return
        }
    }

    @Test(arguments: ["not a url", "http://user:pw@\(allowedOriginHost)/x.jpg"])
    func invalidURLs(_ url: String) async {
        guard case .invalidURL = await fetcher.fetch(url).failure else {
            Issue.record("expected invalidURL for \(url)")
            return
        }
    }

    @Test(arguments: ["ftp://\(allowedOriginHost)/x.jpg", "file:///etc/passwd", "gopher://\(allowedOriginHost)/"])
    func otherSchemesAreForbidden(_ url: String) async {
        guard case .schemeForbidden = await fetcher.fetch(url).failure else {
            Issue.record("expected schemeForbidden for \(url)")
            return
        }
    }
}

@Suite(.ownThread, .timeLimit(.minutes(1)))
struct LimitTests {
    let origin: LoopbackOrigin

    init() throws {
        origin = try LoopbackOrigin(host: allowedOriginHost)
    }

    @Test func honestContentLengthOverTheLimitIsRefused() async throws {
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxSourceBytes = 1000 })
        origin.route("/big.jpg", .ok(sampleBody(1001)))
        origin.route("/exact.jpg", .ok(sampleBody(1000)))
        #expect(await fetcher.fetch(origin.url("/big.jpg")).failure == .tooLarge(limit: 1000))
        #expect(await fetcher.fetch(origin.url("/exact.jpg")).success?.body.count == 1000)
        #expect(fetcher.counters.errors[.tooLarge] == 1)
    }

    @Test func theLimitAppliesToImagesNotToErrorPages() async throws {
        // Given a 404 page larger than the limit
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxSourceBytes = 1000 })
        origin.route("/big-404", .respond(status: 404, headers: [], body: sampleBody(5000)))
        // Then it is still a 404 (its body is dropped), not "too large"
        #expect(await fetcher.fetch(origin.url("/big-404")).failure == .originNotFound(status: 404))
    }

    @Test func bodyWithoutContentLengthIsStoppedAtTheLimit() async throws {
        // Given an origin that streams forever without announcing a length
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxSourceBytes = 100_000 })
        origin.route("/endless.jpg", .endless(contentType: "image/jpeg"))
        // Then the fetch stops at the limit and the connection is closed
        #expect(await fetcher.fetch(origin.url("/endless.jpg")).failure == .tooLarge(limit: 100_000))
        #expect(await eventually { origin.clientCloses("/endless.jpg") == 1 })
    }

    @Test func understatedContentLengthCannotSmuggleExtraBytes() async throws {
        // Given a Content-Length of 10 followed by far more bytes
        let fetcher = try OriginFetcher(configuration: testConfiguration { $0.maxSourceBytes = 1000 })
        origin.route("/lie.jpg", .lyingLength(declared: 10, body: sampleBody(5000), contentType: "image/jpeg"))
        // Then only the announced bytes are read
        #expect(await fetcher.fetch(origin.url("/lie.jpg")).success?.body == Array(sampleBody(5000).prefix(10)))
    }

    @Test func trickleHitsTheTotalTimeout() async throws {
        // Given an origin sending one byte per second (each read resets any idle timer)
        let fetcher = try OriginFetcher(
            configuration: testConfiguration {
                $0.connectTimeout = .milliseconds(500)
                $0.timeout = .milliseconds(1500)
            })
        origin.route("/trickle.jpg", .trickle(body: sampleBody(30), interval: .seconds(1), contentType: "image/jpeg"))
        let start = ContinuousClock.now
        let result = await fetcher.fetch(origin.url("/trickle.jpg"))
        // Then the total timeout ends it, and the origin sees the connection close
        guard case .timedOut = result.failure else {
            Issue.record("expected timedOut, got \(result)")
            return
        }
        #expect(ContinuousClock.now - start < .seconds(10))
        #expect(await eventually { origin.clientCloses("/trickle.jpg") == 1 })
    }

    @Test func silentOriginTimesOut() async throws {
        let fetcher = try OriginFetcher(
            configuration: testConfiguration {
                $0.connectTimeout = .milliseconds(500)
                $0.timeout = .milliseconds(500)
            })
        origin.route("/hang.jpg", .hang)
        guard case .timedOut = await fetcher.fetch(origin.url("/hang.jpg")).failure else {
            Issue.record("expected timedOut")
            return
        }
    }

    @Test func unansweredConnectHitsTheConnectTimeout() async throws {
        // Given a listener whose accept queue is full: SYNs are dropped and connect() hangs
        let blackhole = try BlackholeListener(host: allowedOriginHost)
        let fetcher = try OriginFetcher(
            configuration: testConfiguration {
                $0.connectTimeout = .milliseconds(300)
                $0.timeout = .seconds(20)
            })
        let start = ContinuousClock.now
        let result = await fetcher.fetch("http://\(allowedOriginHost):\(blackhole.port)/x.jpg")
        guard case .timedOut = result.failure else {
            Issue.record("expected timedOut, got \(result)")
            return
        }
        #expect(ContinuousClock.now - start < .seconds(10))  // the connect timeout, not the total one
    }
}
