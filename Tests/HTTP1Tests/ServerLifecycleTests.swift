// SPDX-License-Identifier: Apache-2.0
import EventLoops
import HTTP1
import Synchronization
import Testing
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Timeouts, slow and vanishing clients, asynchronous answers, limits on connections, shutdown.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ServerLifecycleTests {
    static func short(_ configuration: inout HTTPServer.Configuration) {
        configuration.headerReadTimeout = .milliseconds(300)
        configuration.idleTimeout = .milliseconds(300)
        configuration.writeStallTimeout = .milliseconds(300)
    }

    // MARK: Timeouts

    @Test func partialHeadGets408WithinTheHeaderTimeout() throws {
        let server = try TestServer(configure: Self.short)
        let client = try server.client()
        try client.send("GET /echo HTTP/1.1\r\nHost: t\r\n")
        let response = try client.readResponse(timeout: .seconds(5))
        #expect(response.status == 408)
        #expect(try client.readUntilClosed(timeout: .seconds(5)).isEmpty)
    }

    @Test func slowlorisTricklingBytesIsCutAtTheHeaderTimeout() throws {
        let server = try TestServer(configure: Self.short)
        let client = try server.client()
        let start = ContinuousClock.now
        var cut = false
        // One byte every 50 ms would take far longer than 300 ms to finish the head.
        for byte in Array("GET /echo HTTP/1.1\r\nHost: t\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".utf8) {
            do { try client.send([byte]) } catch { cut = true; break }
            usleep(50_000)
            if ContinuousClock.now - start > .seconds(3) { break }
        }
        let rest = try client.readAvailable(timeout: .seconds(3))
        #expect(cut || String(decoding: rest, as: UTF8.self).hasPrefix("HTTP/1.1 408"))
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func silentConnectionIsClosedWithoutAResponse() throws {
        let server = try TestServer(configure: Self.short)
        let client = try server.client()
        #expect(try client.readUntilClosed(timeout: .seconds(5)).isEmpty)
    }

    @Test func idleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws {
        let server = try TestServer(configure: {
            $0.idleTimeout = .milliseconds(300)
        })
        let client = try server.client()
        #expect(try client.get("/echo?x").status == 200)
        let start = ContinuousClock.now
        #expect(try client.readUntilClosed(timeout: .seconds(5)).isEmpty)
        #expect(ContinuousClock.now - start >= .milliseconds(250))
        #expect(waitUntil { server.server.connectionCount == 0 })
    }

    @Test func bodyThatStopsArrivingGets408() throws {
        let server = try TestServer(configure: Self.short)
        let client = try server.client()
        try client.send("POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        #expect(try client.readResponse(timeout: .seconds(5)).status == 408)
    }

    @Test func readerThatNeverReadsIsDroppedAfterTheWriteStallTimeout() throws {
        let server = try TestServer(configure: Self.short)
        let client = try server.client(receiveBufferBytes: 4096)
        // 16 MiB cannot fit in the socket buffers, so the server's writes stall.
        try client.send("GET /big?n=16777216 HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readRaw(count: 17, chunk: 17)
        #expect(String(decoding: head, as: UTF8.self) == "HTTP/1.1 200 OK\r\n")
        #expect(server.server.connectionCount == 1)
        let stalled = ContinuousClock.now
        // The client stops reading here; the server must give up on it.
        #expect(waitUntil(timeout: .seconds(10)) { server.server.connectionCount == 0 })
        #expect(ContinuousClock.now - stalled >= .milliseconds(250))
    }

    @Test func clientThatResetsMidResponseCostsNothing() throws {
        let server = try TestServer()
        for _ in 0..<5 {
            let client = try server.client(receiveBufferBytes: 4096)
            try client.send("GET /big?n=8388608 HTTP/1.1\r\nHost: t\r\n\r\n")
            _ = try client.readRaw(count: 1000, chunk: 1000)
            client.close(reset: true)
        }
        // The server survived the resets (EPIPE/ECONNRESET, no SIGPIPE), closed them, and serves on.
        #expect(waitUntil { server.server.connectionCount == 0 })
        #expect(try server.client().get("/echo?alive").text == "alive")
    }

    @Test func onlyTheFirstAnswerCounts() throws {
        let server = try TestServer(routes: { router, _ in
            router.add(.get, "/twice") { _, responder in
                responder.respond(HTTPResponse(status: .ok, body: .bytes(Array("first".utf8))))
                responder.respond(HTTPResponse(status: .ok, body: .bytes(Array("second".utf8))))
            }
        })
        let client = try server.client()
        #expect(try client.get("/twice").text == "first")
        #expect(try client.get("/echo?next").text == "next")
        #expect(try client.readAvailable(timeout: .milliseconds(100)).isEmpty)
    }

    // MARK: Slow reader, files

    @Test func slowReaderGetsTheWholeLargeBodyIntact() throws {
        let server = try TestServer()
        let client = try server.client(receiveBufferBytes: 8192)
        let size = 2 * 1024 * 1024
        try client.send("GET /big?n=\(size) HTTP/1.1\r\nHost: t\r\n\r\nGET /echo?after HTTP/1.1\r\nHost: t\r\n\r\n")
        // Read the head, then the body in small bites with pauses: the server sees partial writes.
        var head: [UInt8] = []
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) { head += try client.readRaw(count: 1, chunk: 1) }
        let headText = String(decoding: head, as: UTF8.self)
        #expect(headText.contains("Content-Length: \(size)\r\n"))
        var body: [UInt8] = []
        body.reserveCapacity(size)
        var reads = 0
        while body.count < size {
            body += try client.readRaw(count: min(65_536, size - body.count), chunk: 65_536)
            reads += 1
            if reads % 8 == 0 { usleep(5_000) }
        }
        #expect(body == TestServer.pattern(size))
        #expect(try client.readResponse().text == "after")
    }

    @Test func fileBodiesAreSentWithSendfileAndClosedAfterwards() throws {
        let bytes = TestServer.pattern(300_000)
        var template = Array("/tmp/thumbd-sendfile-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        #expect(fd >= 0)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
        close(fd)
        let server = try TestServer(routes: { router, _ in
            router.add(.get, "/file") { request, responder in
                let offset = Int64(TestServer.queryValue(request, "offset") ?? "0") ?? 0
                do {
                    let whole = try FileRegion.open(path: path)
                    let region = FileRegion(
                        takingOwnershipOf: dup(whole.fileDescriptor), offset: offset, length: whole.length - offset)
                    responder.respond(HTTPResponse(status: .ok, body: .file(region)))
                } catch {
                    responder.respond(.error(.internalServerError))
                }
            }
        })
        let client = try server.client(receiveBufferBytes: 16_384)
        let whole = try client.get("/file")
        #expect(whole.body == bytes)
        let tail = try client.get("/file?offset=1000")
        #expect(tail.body == Array(bytes[1000...]))
        try client.send("HEAD /file HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readResponse(forHead: true)
        #expect(head.header("content-length") == "300000")
        #expect(try client.get("/echo?x").text == "x")
    }

    // MARK: Asynchronous answers and vanishing clients

    @Test func answerFromAnotherThreadHopsBackToTheConnection() throws {
        let server = try TestServer()
        let client = try server.client()
        let response = try client.get("/later?ms=50&id=7")
        #expect(response.status == 200)
        #expect(response.text == "ms=50&id=7")
    }

    @Test func pipelinedAnswersInReverseOrderStillLeaveInRequestOrder() throws {
        let server = try TestServer()
        let client = try server.client()
        let delays = [300, 10, 150, 0, 80]
        try client.send(delays.map { "GET /later?ms=\($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined())
        for delay in delays {
            #expect(try client.readResponse().text == "ms=\(delay)")
        }
    }

    @Test func clientThatClosesBeforeTheAnswerIsReportedGoneOnce() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("GET /gone HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(waitUntil { server.context.goneRegistered.load(ordering: .sequentiallyConsistent) == 1 })
        client.close()
        #expect(waitUntil { server.context.goneCount.load(ordering: .sequentiallyConsistent) == 1 })
        #expect(waitUntil { server.server.connectionCount == 0 })
        usleep(100_000)
        #expect(server.context.goneCount.load(ordering: .sequentiallyConsistent) == 1)
    }

    @Test func clientThatResetsIsReportedGone() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("GET /gone HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(waitUntil { server.context.goneRegistered.load(ordering: .sequentiallyConsistent) == 1 })
        client.close(reset: true)
        #expect(waitUntil { server.context.goneCount.load(ordering: .sequentiallyConsistent) == 1 })
    }

    @Test func onlyUnanswerableRequestsAreReportedGone() throws {
        let server = try TestServer()
        let client = try server.client()
        // Answered, unanswered, unanswered: two notifications, and the first answer still arrives.
        try client.send(
            "GET /echo?first HTTP/1.1\r\nHost: t\r\n\r\nGET /gone HTTP/1.1\r\nHost: t\r\n\r\nGET /gone HTTP/1.1\r\nHost: t\r\n\r\n"
        )
        #expect(try client.readResponse().text == "first")
        #expect(waitUntil { server.context.goneRegistered.load(ordering: .sequentiallyConsistent) == 2 })
        client.shutdownWrite()
        #expect(waitUntil { server.context.goneCount.load(ordering: .sequentiallyConsistent) == 2 })
        #expect(try client.readUntilClosed().isEmpty)
    }

    @Test func lateAnswerForAVanishedClientIsDroppedSafely() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("GET /later?ms=300 HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(50_000)
        client.close()
        #expect(waitUntil { server.server.connectionCount == 0 })
        usleep(400_000)  // the worker answers into the void
        let next = try server.client()
        #expect(try next.get("/echo?fine").text == "fine")
    }

    // MARK: Connection limit

    @Test func acceptingPausesAtMaxConnectionsAndResumesWhenOneCloses() throws {
        let server = try TestServer(configure: { $0.maxConnections = 2 })
        let first = try server.client()
        let second = try server.client()
        #expect(try first.get("/echo?1").text == "1")
        #expect(try second.get("/echo?2").text == "2")
        // The kernel completes the handshake, but the server does not accept a third connection.
        let third = try server.client()
        try third.send("GET /echo?3 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try third.readAvailable(timeout: .milliseconds(400)).isEmpty)
        #expect(server.server.connectionCount == 2)
        first.close()
        let response = try third.readResponse(timeout: .seconds(5))
        #expect(response.text == "3")
        #expect(try second.get("/echo?still").text == "still")
    }

    @Test func raisingMaxConnectionsByUpdateResumesAcceptingWithoutClosingAny() throws {
        // Given a server at its limit of 1, with a second connection waiting to be accepted
        let server = try TestServer(configure: { $0.maxConnections = 1 })
        let first = try server.client()
        #expect(try first.get("/echo?1").text == "1")
        let second = try server.client()
        try second.send("GET /echo?2 HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try second.readAvailable(timeout: .milliseconds(400)).isEmpty)

        // When the limit is raised to 2 (and the listener settings given are ignored)
        var configuration = server.server.configuration
        configuration.maxConnections = 2
        configuration.port = 1
        try server.server.update(configuration: configuration)

        // Then the waiting connection is accepted and answered, and the first one still works
        #expect(try second.readResponse(timeout: .seconds(5)).text == "2")
        #expect(try first.get("/echo?again").text == "again")
        #expect(server.server.configuration.maxConnections == 2)
        #expect(server.server.configuration.port != 1)
    }

    @Test func smallerBodyLimitByUpdateAppliesToNewConnections() throws {
        // Given a connection opened under the default body limit
        let server = try TestServer()
        let before = try server.client()
        #expect(try before.get("/echo?x").status == 200)

        // When the limit drops to 10 bytes
        var configuration = server.server.configuration
        configuration.maxBodyBytes = 10
        try server.server.update(configuration: configuration)

        // Then a new connection gets 413 for a 20-byte body, and the old one keeps its limit
        let body = String(repeating: "a", count: 20)
        let request = "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 20\r\n\r\n" + body
        let after = try server.client()
        try after.send(request)
        #expect(try after.readResponse(timeout: .seconds(5)).status == 413)
        try before.send(request)
        #expect(try before.readResponse(timeout: .seconds(5)).text == body)
    }

    @Test func accessLogCanBeSwitchedOffAndOn() throws {
        let server = try TestServer()
        let client = try server.client()
        server.server.isAccessLogEnabled = false
        _ = try client.get("/echo?off")
        server.server.isAccessLogEnabled = true
        _ = try client.get("/echo?on")
        #expect(waitUntil { server.logRecorder.count == 1 })
        #expect(server.logRecorder.values.map(\.path) == ["/echo"])
        #expect(server.logRecorder.values.first?.bodyBytes == 2)
    }

    // MARK: Shutdown

    @Test func gracefulShutdownFinishesTheRequestInFlight() throws {
        let server = try TestServer()
        let busy = try server.client()
        let idle = try server.client()
        #expect(try idle.get("/echo?idle").status == 200)
        try busy.send("GET /later?ms=400 HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(50_000)
        let finished = Atomic<Bool>(false)
        let stopper = try WorkerPool(configuration: .init(threads: 1, name: "stopper"))
        let http = server.server
        try stopper.submit {
            http.shutdown(timeout: .seconds(5))
            finished.store(true, ordering: .sequentiallyConsistent)
        }
        // The idle connection is closed, the busy one gets its answer with Connection: close.
        #expect(try idle.readUntilClosed(timeout: .seconds(5)).isEmpty)
        let response = try busy.readResponse(timeout: .seconds(5))
        #expect(response.status == 200)
        #expect(response.header("connection") == "close")
        #expect(waitUntil { finished.load(ordering: .sequentiallyConsistent) })
        stopper.shutdown()
        #expect(throws: RawHTTPClient.ClientError.self) { try RawHTTPClient(port: server.port) }
    }

    @Test func requestCompletedDuringShutdownGets503() throws {
        let server = try TestServer()
        let busy = try server.client()
        let late = try server.client()
        try busy.send("GET /later?ms=600 HTTP/1.1\r\nHost: t\r\n\r\n")  // keeps the server draining
        try late.send("GET /echo?late HTTP/1.1\r\nHost: t\r\n")  // head not complete yet
        usleep(50_000)
        let http = server.server
        let stopper = try WorkerPool(configuration: .init(threads: 1, name: "stopper"))
        try stopper.submit { http.shutdown(timeout: .seconds(5)) }
        usleep(100_000)
        try late.send("\r\n")
        let rejected = try late.readResponse(timeout: .seconds(5))
        #expect(rejected.status == 503)
        #expect(rejected.header("connection") == "close")
        #expect(rejected.text == #"{"status": 503, "error": "Shutting down"}"#)
        #expect(try busy.readResponse(timeout: .seconds(5)).status == 200)
        stopper.shutdown()
    }

    @Test func shutdownTimeoutClosesWhatDidNotFinish() throws {
        let server = try TestServer()
        let client = try server.client()
        try client.send("GET /gone HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(waitUntil { server.context.goneRegistered.load(ordering: .sequentiallyConsistent) == 1 })
        let start = ContinuousClock.now
        server.stop(timeout: .milliseconds(200))
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(server.context.goneCount.load(ordering: .sequentiallyConsistent) == 1)
        #expect(try client.readUntilClosed(timeout: .seconds(5)).isEmpty)
    }

    // MARK: Addresses and configuration

    @Test func bindsIPv6Loopback() throws {
        var configuration = HTTPServer.Configuration()
        configuration.host = "[::1]"
        configuration.port = 0
        configuration.threads = 1
        var router = Router()
        router.add(.get, "/x") { _, responder in responder.respond(HTTPResponse(status: .noContent)) }
        let server = HTTPServer(configuration: configuration, router: router)
        do {
            try server.start()
        } catch {
            return  // no IPv6 on this machine: nothing to test
        }
        defer { server.shutdown() }
        #expect(server.localAddresses.first?.description == "[::1]:\(server.port!)")
        let client = try RawHTTPClient(host: "::1", port: server.port!)
        #expect(try client.get("/x").status == 204)
    }

    @Test func accessLogGetsPathWithoutQueryStatusAndBytes() throws {
        let server = try TestServer()
        let client = try server.client()
        _ = try client.get("/echo?sig=secret")
        _ = try client.get("/missing?sig=secret")
        #expect(waitUntil { server.logRecorder.count == 2 })
        let records = server.logRecorder.values
        #expect(records.map(\.path) == ["/echo", "/missing"])
        #expect(records.map(\.status) == [200, 404])
        #expect(records[0].bodyBytes == 10)
        #expect(records[0].method == .get)
    }

    @Test func invalidConfigurationNamesTheKey() {
        var configuration = HTTPServer.Configuration()
        configuration.threads = 0
        #expect(throws: ConfigurationError(key: "server.threads", reason: "must be 1...256")) {
            try configuration.validate()
        }
        configuration = HTTPServer.Configuration()
        configuration.host = "not an address"
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration = HTTPServer.Configuration()
        configuration.idleTimeout = .zero
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        #expect(throws: Never.self) { try HTTPServer.Configuration().validate() }
    }
}
