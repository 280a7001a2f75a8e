// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import HTTP1
import Logging
import OriginFetch
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// The front door every URL form goes through (``ThumbnailService/handle(_:_:form:)``): a form is one parse step,
/// and everything around it (each loop's hot set and the alias table, keyed by the request's whole target; the
/// tiers and the render, keyed by the variant) is the same for every form. Shown with a toy form that carries
/// its options in the path, as thumbor's and imgproxy's do, mounted beside `/thumb` on a real server, with a real
/// fetcher, render threads and libvips.
@Suite(.timeLimit(.minutes(1))) struct FrontDoorTests {
    /// `/w/<width>/<percent-encoded source URL>`, format negotiated like `/thumb` without `format`. Counts how
    /// often its parse step runs.
    struct WidthPathForm: URLForm {
        let parses: Counter

        var keyGeneration: UInt64 { 0 }

        func thumbnailRequest(for identity: RequestIdentity) throws(RequestError) -> VerifiedRequest {
            parses.add()
            let parts = identity.target.split(separator: "/", maxSplits: 2)
            guard parts.count == 3, let width = Int(parts[1]), let url = QueryParameters.percentDecode(parts[2].utf8),
                let source = try? SourceURL(url),
                let spec = try? ThumbnailSpec(
                    width: width, height: nil, format: .auto(accepting: AcceptHeader.acceptedFormats(identity.accept)))
            else { throw .invalidValue("path", reason: "must be /w/<width>/<url>") }
            return VerifiedRequest(
                request: ThumbnailRequest(source: source, spec: spec, signature: nil), keyGeneration: 0)
        }
    }

    final class Counter: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var value: Int { count.load(ordering: .relaxed) }
    }

    /// A thumbnail service with a memory tier and no disk, `/thumb` and `/w/` mounted on a one-loop server (one
    /// loop, so one hot-set table), and an origin on 127.0.0.2.
    final class Fixture: Sendable {
        let origin: LoopbackOrigin
        let fetcher: OriginFetcher
        let pool: WorkerPool
        let coordinator: RenderCoordinator
        let cache: ThumbnailCache
        let server: HTTPServer
        let pathForm = WidthPathForm(parses: Counter())

        /// - Parameter mount: adds more routes (another URL form) beside `/thumb` and `/w/`.
        init(mount: (inout Router, ThumbnailService) -> Void = { _, _ in }) throws {
            origin = try LoopbackOrigin(host: "127.0.0.2")
            var fetching = OriginFetcher.Configuration()
            fetching.allowedNetworks = [IPNetwork("127.0.0.2/32")!]
            fetcher = try OriginFetcher(configuration: fetching)
            pool = try WorkerPool(
                configuration: .init(
                    threads: 1, interactiveQueueCapacity: 16, backgroundQueueCapacity: 16, name: "test-render"),
                onThreadExit: { _ in Vips.shutdownCurrentThread() })
            let thumbnailer = try Thumbnailer(vips: Vips.initialize())
            var caching = ThumbnailCache.Configuration()
            caching.memory = .init(maxBytes: 1 << 20, maxEntries: 100)
            let logger = Logger(label: "front-door") { _ in SwiftLogNoOpLogHandler() }
            cache = try ThumbnailCache(configuration: caching, logger: logger)
            coordinator = RenderCoordinator(fetcher: fetcher, renderPool: pool, thumbnailer: thumbnailer, cache: cache)
            let service = ThumbnailService(
                coordinator: coordinator, thumbnailer: thumbnailer, cache: cache, revalidator: nil,
                clientMaxAge: .seconds(60), logger: logger)
            var router = Router()
            router.add(.get, "/thumb", handler: service.handler(for: ThumbQueryForm(verifier: .init(keys: []))))
            router.add(.get, prefix: "/w/", handler: service.handler(for: pathForm))
            mount(&router, service)
            var serving = HTTPServer.Configuration()
            serving.host = "127.0.0.1"
            serving.port = 0
            serving.threads = 1
            server = HTTPServer(configuration: serving, router: router)
            try server.start()
        }

        deinit {
            server.shutdown(timeout: .seconds(5))
            coordinator.shutdown()
            fetcher.shutdown()
            pool.shutdown()
            cache.shutdown()
            origin.stop()
        }

        /// Sends each target on one keep-alive connection and returns the `X-Cache` of each answer (all 200).
        func xCache(_ targets: [String]) throws -> [String?] {
            let client = try RawHTTPClient(port: try #require(server.port))
            defer { client.close() }
            return try targets.map { target in
                try client.send("GET \(target) HTTP/1.1\r\nHost: thumbd.test\r\nAccept: image/webp\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200, "\(target)")
                #expect(response.header("Content-Type") == "image/webp", "\(target)")
                return response.header("X-Cache")
            }
        }
    }

    @Test func aPathFormGetsTheHitPathWithoutASpecialCase() throws {
        // Given a source and the path form's URL for it
        let fixture = try Fixture()
        fixture.origin.route("/a.png", .ok(Fixtures.bytes("quadrants.png")))
        let target = "/w/32/" + Self.percentEncoded(fixture.origin.url("/a.png"))

        // When the same path URL is asked three times
        let outcomes = try fixture.xCache([target, target, target])

        // Then it is rendered once, then answered from memory through its alias (copied into the loop's hot set),
        // then from the hot set; the form parsed it once, and the origin saw one fetch
        #expect(outcomes == ["MISS", "HIT-MEMORY", "HIT-MEMORY"])
        #expect(fixture.pathForm.parses.value == 1)
        #expect(fixture.cache.hotSet?.hits == 1)
        #expect(fixture.origin.hits("/a.png") == 1)
    }

    @Test func thePictureAskedInTwoFormsIsOneEntryOneFetchAndOneRender() throws {
        // Given a source
        let fixture = try Fixture()
        fixture.origin.route("/b.png", .ok(Fixtures.bytes("quadrants.png")))
        let url = Self.percentEncoded(fixture.origin.url("/b.png"))

        // When it is asked in the path form, then as /thumb with the same width
        let outcomes = try fixture.xCache(["/w/32/" + url, "/thumb?url=\(url)&w=32"])

        // Then the /thumb request finds the path form's render in memory: one fetch, one render
        #expect(outcomes == ["MISS", "HIT-MEMORY"])
        #expect(fixture.origin.hits("/b.png") == 1)
        #expect(fixture.coordinator.counters.rendersStarted == 1)
    }

    /// Every byte outside RFC 3986's unreserved set as `%XX`.
    static func percentEncoded(_ text: String) -> String {
        String(decoding: QueryParameters.percentEncoded(text), as: UTF8.self)
    }
}
