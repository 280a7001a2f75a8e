// SPDX-License-Identifier: Apache-2.0
import EventLoops
import HTTP1
import Synchronization
import Testing
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// End-to-end behaviour over real loopback sockets. Serialized: each test runs its own server
/// with two loops, and the machine has two cores.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ServerTests {
    // MARK: Keep-alive and pipelining

    @Test func fiftyPipelinedRequestsInOneWriteComeBackCompleteAndInOrder() throws {
        let server = try TestServer()
        let client = try server.client()
        // Given 50 requests written with one send
        let requests = (0..<50).map { "GET /echo?n=\($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined()
        try client.send(requests)
        // Then 50 responses arrive, each complete, in request order
        for i in 0..<50 {
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "n=\(i)")
        }
        #expect(try client.readAvailable(timeout: .milliseconds(100)).isEmpty)
    }

    @Test func keepAliveServesManyRequestsOnOneConnection() throws {
        let server = try TestServer()
        let client = try server.client()
        for i in 0..<20 {
            let response = try client.get("/echo?i=\(i)")
            #expect(response.status == 200)
            #expect(response.text == "i=\(i)")
            #expect(response.header("connection") == nil)
        }
        #expect(server.server.connectionCount == 1)
    }

    @Test func http10ClosesUnlessItAsksForKeepAlive() throws {
        let server = try TestServer()
        let closing = try server.client()
        try closing.send("GET /echo?a HTTP/1.0\r\n\r\n")
        let first = try closing.readResponse()
        #expect(first.status == 200)
        #expect(first.header("connection") == "close")
        #expect(try closing.readUntilClosed().isEmpty)

        let keeping = try server.client()
        for _ in 0..<2 {
            try keeping.send("GET /echo?b HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let response = try keeping.readResponse()
            #expect(response.text == "b")
            #expect(response.header("connection") == "keep-alive")
        }
    }

    @Test func connectionCloseIsHonouredAndNothingAfterItIsAnswered() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send(
            "GET /echo?1 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\nGET /echo?2 HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.text == "1")
        #expect(response.header("connection") == "close")
        #expect(try client.readUntilClosed().isEmpty)
    }

    @Test func headSendsHeadersOnlyWithTheGetContentLength() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("HEAD /big?n=5000 HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readResponse(forHead: true)
        #expect(head.status == 200)
        #expect(head.header("content-length") == "5000")
        // The next response starts right after the head: no body bytes were sent.
        let next = try client.get("/echo?after")
        #expect(next.text == "after")
    }

    @Test func responsesCarryDateAndDropUnsafeOrReservedHandlerFields() throws {
        let server = try TestServer(routes: { router, _ in
            router.add(.get, "/fields") { _, responder in
                responder.respond(
                    HTTPResponse(
                        status: .ok,
                        headers: [
                            .init(name: "X-Good", value: "yes"), .init(name: "X-Evil", value: "a\r\nSet-Cookie: x=1"),
                            .init(name: "Content-Length", value: "999"), .init(name: "Connection", value: "close"),
                        ], body: .bytes(Array("ok".utf8))))
            }
        })
        let client = try server.client()
        let response = try client.get("/fields")
        #expect(response.header("x-good") == "yes")
        #expect(response.header("x-evil") == nil)
        #expect(response.header("set-cookie") == nil)
        #expect(response.header("content-length") == "2")
        #expect(response.header("connection") == nil)
        let date = try #require(response.header("date"))
        #expect(date.count == 29 && date.hasSuffix(" GMT"))
        #expect(try client.get("/echo?still-open").text == "still-open")
    }

    @Test func preparedFieldsComeFirstUnderTheSameRules() throws {
        let prepared = PreparedFields([
            .init(name: "X-First", value: "1"), .init(name: "X-Evil", value: "a\r\nSet-Cookie: x=1"),
            .init(name: "Content-Length", value: "999"), .init(name: "X-Second", value: "2"),
        ])
        #expect(String(decoding: prepared.bytes, as: UTF8.self) == "X-First: 1\r\nX-Second: 2\r\n")
        let server = try TestServer(routes: { router, _ in
            router.add(.get, "/prepared") { _, responder in
                responder.respond(
                    HTTPResponse(
                        status: .ok, preparedFields: prepared, headers: [.init(name: "X-Third", value: "3")],
                        body: .bytes(Array("ok".utf8))))
            }
        })
        let client = try server.client()
        // The same prepared fields serve answer after answer on one connection.
        for _ in 0..<3 {
            let response = try client.get("/prepared")
            #expect(response.text == "ok")
            #expect(response.header("x-first") == "1" && response.header("x-second") == "2")
            #expect(response.header("x-third") == "3")
            #expect(response.header("x-evil") == nil && response.header("set-cookie") == nil)
            #expect(response.header("content-length") == "2")
            let names = response.headers.map { $0.name.lowercased() }.filter { $0.hasPrefix("x-") }
            #expect(names == ["x-first", "x-second", "x-third"])
        }
    }

    @Test func anAgeIsWrittenAfterTheOtherFieldsAndANegativeOneNot() throws {
        let prepared = PreparedFields([.init(name: "X-First", value: "1")])
        let server = try TestServer(routes: { router, _ in
            router.add(.get, "/aged") { request, responder in
                let age = Int(request.query ?? "") ?? 0
                responder.respond(
                    HTTPResponse(
                        status: .ok, preparedFields: prepared, headers: [.init(name: "X-Second", value: "2")],
                        age: age, body: .bytes(Array("ok".utf8))))
            }
        })
        let client = try server.client()
        let aged = try client.get("/aged?42")
        #expect(aged.header("age") == "42")
        let names = aged.headers.map { $0.name.lowercased() }.filter { $0.hasPrefix("x-") || $0 == "age" }
        #expect(names == ["x-first", "x-second", "age"])
        #expect(try client.get("/aged?-1").header("age") == nil)
    }

    @Test func customReasonPhraseCannotSplitTheHead() throws {
        let server = try TestServer(routes: { router, _ in
            router.add(.get, "/odd") { _, responder in
                responder.respond(HTTPResponse(status: HTTPStatus(code: 299, reasonPhrase: "Odd\r\nX-Injected: 1")))
            }
        })
        let client = try server.client()
        let response = try client.get("/odd")
        #expect(response.status == 299)
        #expect(response.reason == "OddX-Injected: 1")
        #expect(response.header("x-injected") == nil)
        #expect(HTTPStatus(code: 200, reasonPhrase: "OK") == .ok)
        #expect(HTTPStatus.notFound.reasonPhrase == "Not Found")
    }

    // MARK: Routing and server errors

    @Test func unknownPathMethodAndWrongMethodGetJSONErrors() throws {
        let server = try TestServer()
        let client = try server.client()
        let notFound = try client.get("/nope")
        #expect(notFound.status == 404)
        #expect(notFound.header("content-type") == "application/json")
        #expect(notFound.text == #"{"status": 404, "error": "Not Found"}"#)
        try client.send("DELETE /echo HTTP/1.1\r\nHost: t\r\n\r\n")
        let wrongMethod = try client.readResponse()
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("allow") == "GET, HEAD")
        try client.send("BREW /echo HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 501)
        // Router errors keep the connection usable.
        #expect(try client.get("/echo?ok").text == "ok")
    }

    // MARK: Limits (each answered, then the connection closes)

    static let limitCases: [(String, String, Int)] = [
        ("414", "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
        ("431 size", "GET / HTTP/1.1\r\nHost: t\r\nX: " + String(repeating: "v", count: 33_000) + "\r\n\r\n", 431),
        ("431 count", "GET / HTTP/1.1\r\nHost: t\r\n" + (0..<101).map { "X\($0): v\r\n" }.joined() + "\r\n", 431),
        ("413", "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n", 413),
        ("505", "GET / HTTP/2.0\r\nHost: t\r\n\r\n", 505),
        ("400 bare LF", "GET / HTTP/1.1\nHost: t\n\n", 400),
        ("400 NUL", "GET / HTTP/1.1\r\nHost: t\r\nX: \u{0}\r\n\r\n", 400),
        ("400 obs-fold", "GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n", 400),
        ("400 HTTP/0.9", "GET /echo\r\n\r\n", 400),
        ("417", "GET /echo HTTP/1.1\r\nHost: t\r\nExpect: later\r\n\r\n", 417),
    ]

    @Test(arguments: limitCases)
    func limitViolationsAreAnsweredThenClosed(_ name: String, _ request: String, _ status: Int) throws {
        let server = try TestServer(configure: { $0.maxBodyBytes = 1000 })
        let client = try server.client()
        try client.send(request)
        let response = try client.readResponse()
        #expect(response.status == status, "\(name)")
        #expect(response.header("connection") == "close")
        #expect(response.header("content-type") == "application/json")
        #expect(response.text == "{\"status\": \(status), \"error\": \"\(response.reason)\"}")
        #expect(try client.readUntilClosed().isEmpty)
    }

    @Test func smuggledRequestBehindConflictingFramingIsNeverAnswered() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                + "GET /echo?smuggled HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(try client.readUntilClosed().isEmpty)
        #expect(server.context.handlerCalls.load(ordering: .relaxed) == 0)
    }

    @Test func tlsClientHelloGets400AndClose() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send(
            [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 7, count: 200))
        #expect(try client.readResponse().status == 400)
        #expect(try client.readUntilClosed().isEmpty)
    }

    // MARK: Bodies

    @Test func contentLengthAndChunkedBodiesReachTheHandler() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(try client.readResponse().text == "hello world")
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        usleep(50_000)
        try client.send("4;x=y\r\ndefg\r\n0\r\n\r\n")
        #expect(try client.readResponse().text == "abcdefg")
    }

    @Test func chunkedBodyOverTheLimitGets413() throws {
        let server = try TestServer(configure: { $0.maxBodyBytes = 100 })
        let client = try server.client()
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send("40\r\n" + String(repeating: "x", count: 64) + "\r\n40\r\n")
        #expect(try client.readResponse().status == 413)
        #expect(try client.readUntilClosed().isEmpty)
    }

    @Test func expectContinueGetsAnInterimResponseBeforeTheBody() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        try client.send("data")
        let final = try client.readResponse()
        #expect(final.status == 200)
        #expect(final.text == "data")
    }

    @Test func expectContinueOverTheLimitGets413WithoutContinue() throws {
        let server = try TestServer(configure: { $0.maxBodyBytes = 10 })
        let client = try server.client()
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n")
        #expect(try client.readResponse().status == 413)
    }
}
