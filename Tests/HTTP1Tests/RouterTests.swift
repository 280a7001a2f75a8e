import Testing

// SPDX-License-Identifier: Apache-2.0
@testable import HTTP1

@Suite struct RouterTests {
    static func request(_ line: String) -> HTTPRequest {
        parse(Array("\(line) HTTP/1.1\r\nHost: a\r\n\r\n".utf8)).requests[0]
    }

    static func name(_ match: Router.Match) -> String {
        switch match {
        case .handler: "handler"
        case .notFound: "404"
        case .methodNotAllowed(let allow): "405 \(allow)"
        case .notImplemented: "501"
        }
    }

    @Test func matchesExactPathsPerMethod() {
        var router = Router()
        router.add(.get, "/a") { _, _ in }
        router.add(.post, "/a") { _, _ in }
        router.add(.get, "/ab") { _, _ in }
        #expect(Self.name(router.match(Self.request("GET /a"))) == "handler")
        #expect(Self.name(router.match(Self.request("GET /a?x=1"))) == "handler")
        #expect(Self.name(router.match(Self.request("GET /ab"))) == "handler")
        #expect(Self.name(router.match(Self.request("GET /a/"))) == "404")
        #expect(Self.name(router.match(Self.request("GET /A"))) == "404")
        #expect(Self.name(router.match(Self.request("HEAD /a"))) == "handler")
        #expect(Self.name(router.match(Self.request("DELETE /a"))) == "405 GET, HEAD, POST")
        #expect(Self.name(router.match(Self.request("PUT /ab"))) == "405 GET, HEAD")
        #expect(Self.name(router.match(Self.request("BREW /a"))) == "501")
        #expect(Self.name(router.match(Self.request("BREW /nowhere"))) == "501")
        #expect(Self.name(router.match(Self.request("GET http://host/ab"))) == "handler")
    }

    @Test func prefixRoutesMatchLongerPathsAfterExactOnes() {
        // Given an exact route and prefix routes under it
        var router = Router()
        router.add(.post, "/job") { _, _ in }
        router.add(.get, prefix: "/job/") { _, _ in }
        router.add(.delete, prefix: "/job/") { _, _ in }
        // Then a path under the prefix reaches them, per method; the prefix alone and other paths do not
        #expect(Self.name(router.match(Self.request("GET /job/abc"))) == "handler")
        #expect(Self.name(router.match(Self.request("HEAD /job/abc?x=1"))) == "handler")
        #expect(Self.name(router.match(Self.request("DELETE /job/abc"))) == "handler")
        #expect(Self.name(router.match(Self.request("PUT /job/abc"))) == "405 DELETE, GET, HEAD")
        #expect(Self.name(router.match(Self.request("POST /job"))) == "handler")
        #expect(Self.name(router.match(Self.request("GET /job"))) == "405 POST")
        #expect(Self.name(router.match(Self.request("GET /job/"))) == "404")
        #expect(Self.name(router.match(Self.request("GET /jobs/abc"))) == "404")
    }

    @Test func explicitHeadRouteWinsOverGetAndReplacingKeepsOneEntry() {
        var router = Router()
        router.add(.get, "/x") { _, _ in }
        router.add(.head, "/x") { _, _ in }
        router.add(.get, "/x") { _, _ in }
        #expect(Self.name(router.match(Self.request("POST /x"))) == "405 GET, HEAD")
    }
}

@Suite struct HTTPRequestMakeTests {
    @Test func buildsWhatTheParserWouldHaveBuilt() throws {
        let request = try #require(
            HTTPRequest(method: .post, target: "/p?x=1", headers: [("Accept", "image/webp")], body: Array("hi".utf8)))
        #expect(request.method == .post)
        #expect(request.path == "/p")
        #expect(request.query == "x=1")
        #expect(request.headers["accept"] == "image/webp")
        #expect(request.headers["host"] == "localhost")
        #expect(request.body == Array("hi".utf8))
        #expect(request.keepAlive)
        #expect(HTTPRequest(method: .get, target: "no-slash") == nil)
        #expect(HTTPRequest(method: .get, target: "/", headers: [("Bad Name", "v")]) == nil)
    }
}
