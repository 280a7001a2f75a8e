import Testing

// SPDX-License-Identifier: Apache-2.0
@testable import HTTP1

@Suite struct RequestParserTests {
    // MARK: Valid requests

    static let valid: [(String, String, [Parsed])] = [
        ("simple GET", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", [.get("/")]),
        (
            "path and query", "GET /thumb?url=http%3A%2F%2Fx&w=256 HTTP/1.1\r\nHost: a\r\n\r\n",
            [.get("/thumb", query: "url=http%3A%2F%2Fx&w=256")]
        ),
        ("empty query", "GET /a? HTTP/1.1\r\nHost: a\r\n\r\n", [.get("/a", query: "")]),
        ("HTTP/1.0 closes by default", "GET / HTTP/1.0\r\n\r\n", [.get("/", version: "HTTP/1.0", keepAlive: false)]),
        (
            "HTTP/1.0 keep-alive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
            [.get("/", version: "HTTP/1.0", keepAlive: true)]
        ),
        (
            "HTTP/1.1 close", "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, close\r\n\r\n",
            [.get("/", keepAlive: false)]
        ),
        (
            "absolute-form", "GET http://example.com:8080/health?x=1 HTTP/1.1\r\nHost: a\r\n\r\n",
            [.get("/health", query: "x=1")]
        ),
        ("absolute-form https, no path", "GET HTTPS://example.com HTTP/1.1\r\nHost: a\r\n\r\n", [.get("/")]),
        ("absolute-form, query only", "GET http://example.com?q HTTP/1.1\r\nHost: a\r\n\r\n", [.get("/", query: "q")]),
        ("leading empty line ignored", "\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", [.get("/")]),
        ("OWS around value", "GET / HTTP/1.1\r\nHost:   a \t\r\n\r\n", [.get("/")]),
        ("obs-text in value", "GET / HTTP/1.1\r\nHost: a\r\nX: caf\u{e9}\r\n\r\n", [.get("/")]),
        (
            "unknown method parses", "BREW /pot HTTP/1.1\r\nHost: a\r\n\r\n",
            [.request(method: "BREW", path: "/pot", query: nil, version: "HTTP/1.1", keepAlive: true, body: "")]
        ),
        (
            "OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
            [.request(method: "OPTIONS", path: "*", query: nil, version: "HTTP/1.1", keepAlive: true, body: "")]
        ),
        (
            "content-length body", "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
            [.request(method: "POST", path: "/p", query: nil, version: "HTTP/1.1", keepAlive: true, body: "hello")]
        ),
        (
            "content-length zero", "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
            [.request(method: "POST", path: "/p", query: nil, version: "HTTP/1.1", keepAlive: true, body: "")]
        ),
        (
            "chunked body with extension and trailer",
            "POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n5;name=v\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n",
            [
                .request(
                    method: "POST", path: "/p", query: nil, version: "HTTP/1.1", keepAlive: true, body: "hello world")
            ]
        ),
        (
            "two pipelined requests", "GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n",
            [.get("/a"), .get("/b")]
        ),
    ]

    @Test(arguments: valid)
    func validRequestsParse(_ name: String, _ input: String, _ expected: [Parsed]) {
        // Whole input at once, and one byte at a time, must agree.
        #expect(parse(input) == expected, "\(name)")
        #expect(parse(input, chunk: 1) == expected, "\(name) byte by byte")
        #expect(parse(input, chunk: 7) == expected, "\(name) in 7-byte pieces")
    }

    // MARK: Invalid requests

    static let invalid: [(String, String, RequestParseError)] = [
        ("HTTP/0.9", "GET /\r\n\r\n", .missingVersion),
        ("bare LF in request line", "GET / HTTP/1.1\nHost: a\r\n\r\n", .bareLineFeed),
        ("bare LF in header", "GET / HTTP/1.1\r\nHost: a\n\r\n", .bareLineFeed),
        ("lower-case version", "GET / http/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", .unsupportedVersion),
        ("HTTP/1.2", "GET / HTTP/1.2\r\nHost: a\r\n\r\n", .unsupportedVersion),
        ("HTTP/1.10", "GET / HTTP/1.10\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("double space", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("trailing space", "GET / HTTP/1.1 \r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("method with bad char", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("target with control", "GET /a\u{1}b HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("target with fragment", "GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("target with non-ASCII", "GET /caf\u{e9} HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("relative target", "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("authority-form", "CONNECT example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("asterisk without OPTIONS", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("ftp scheme", "GET ftp://x/ HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("absolute-form without host", "GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n", .invalidRequestLine),
        ("obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  2\r\n\r\n", .obsoleteLineFolding),
        ("space before first field", "GET / HTTP/1.1\r\n Host: a\r\n\r\n", .obsoleteLineFolding),
        ("space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", .invalidFieldName),
        ("no colon", "GET / HTTP/1.1\r\nHost a\r\n\r\n", .invalidFieldName),
        ("empty name", "GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", .invalidFieldName),
        ("NUL in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", .invalidFieldValue),
        ("CR in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", .invalidFieldValue),
        ("DEL in value", "GET / HTTP/1.1\r\nHost: a\r\nX: a\u{7f}\r\n\r\n", .invalidFieldValue),
        ("missing Host in 1.1", "GET / HTTP/1.1\r\n\r\n", .invalidHost),
        ("two Hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .invalidHost),
        ("unknown expectation", "GET / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n", .unsupportedExpectation),
        // Smuggling vectors: every ambiguity is refused, never guessed.
        (
            "CL and TE",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            .conflictingFraming
        ),
        (
            "TE and CL", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
            .conflictingFraming
        ),
        (
            "duplicate CL, same value",
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
            .invalidContentLength
        ),
        ("CL list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc", .invalidContentLength),
        ("CL with sign", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +3\r\n\r\nabc", .invalidContentLength),
        ("CL hex", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x3\r\n\r\nabc", .invalidContentLength),
        ("CL empty", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", .invalidContentLength),
        (
            "CL huge", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n",
            .invalidContentLength
        ),
        ("TE gzip", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", .unsupportedTransferEncoding),
        (
            "TE gzip, chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            .unsupportedTransferEncoding
        ),
        (
            "TE twice",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            .unsupportedTransferEncoding
        ),
        (
            "TE with junk", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: xchunked\r\n\r\n",
            .unsupportedTransferEncoding
        ),
        (
            "TE in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            .unsupportedTransferEncoding
        ),
        ("TE name with space", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n", .invalidFieldName),
        (
            "chunk size not hex", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            .invalidChunkedEncoding
        ),
        (
            "chunk size negative", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
            .invalidChunkedEncoding
        ),
        (
            "chunk size overflow",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000000\r\n",
            .invalidChunkedEncoding
        ),
        (
            "chunk data too long",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
            .invalidChunkedEncoding
        ),
        (
            "chunk bare LF", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
            .bareLineFeed
        ),
        (
            "chunk ext with control",
            "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;a\u{1}\r\nabc\r\n",
            .invalidChunkedEncoding
        ),
        (
            "trailer without colon", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nbad\r\n\r\n",
            .invalidFieldName
        ),
        ("TLS ClientHello", "\u{16}\u{3}\u{1}\u{2}\u{0}\u{1}\u{0}\u{1}\u{fc}\u{3}\u{3}", .invalidRequestLine),
    ]

    @Test(arguments: invalid)
    func invalidRequestsFail(_ name: String, _ input: String, _ error: RequestParseError) {
        #expect(parse(input).last == .failure(error), "\(name)")
        #expect(parse(input, chunk: 1).last == .failure(error), "\(name) byte by byte")
    }

    /// Long targets are scanned a word (8 bytes) at a time: a refused byte must be found at every position of a
    /// word, and in the bytes after the last whole word.
    @Test func everyRefusedTargetByteIsFoundAtEveryOffset() {
        let plain = Array("/thumb?url=http%3A%2F%2Forigin.example%2Fphoto.jpg&w=256".utf8)
        #expect(
            parse(Array("GET ".utf8) + plain + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8)).results
                == [.get("/thumb", query: "url=http%3A%2F%2Forigin.example%2Fphoto.jpg&w=256")])
        let refused: [UInt8] = [0x00, 0x01, 0x09, 0x1F, 0x23, 0x7F, 0x80, 0xC3, 0xFF]
        for byte in refused {
            for offset in 1..<plain.count {
                var target = plain
                target[offset] = byte
                let input = Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
                #expect(
                    parse(input).results.last == .failure(.invalidRequestLine),
                    "byte \(byte) at offset \(offset)")
            }
        }
        // A space inside the target ends it early: what follows is not a version.
        for offset in 1..<plain.count {
            var target = plain
            target[offset] = 0x20
            let input = Array("GET ".utf8) + target + Array(" HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
            #expect(parse(input).results.last == .failure(.invalidRequestLine), "space at offset \(offset)")
        }
    }

    @Test func tlsClientHelloFailsOnTheFirstByte() {
        // A real ClientHello starts 0x16 0x03 0x01; no CRLF ever comes, so failing early matters.
        let hello: [UInt8] =
            [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + Array(repeating: 0x41, count: 32)
        #expect(parse(Array(hello.prefix(1))).results == [.failure(.invalidRequestLine)])
        #expect(parse(hello).results == [.failure(.invalidRequestLine)])
    }

    @Test func nothingAfterAFailureIsParsed() {
        // A smuggled second request behind a bad one must never surface.
        let input =
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /admin HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(parse(input) == [.failure(.conflictingFraming)])
    }

    // MARK: Limits

    @Test func requestLineLimit() {
        var limits = RequestParser.Limits()
        limits.maxRequestLineBytes = 100
        let atLimit = "GET /" + String(repeating: "a", count: 100 - 14) + " HTTP/1.1"
        #expect(atLimit.utf8.count == 100)
        #expect(
            parse(atLimit + "\r\nHost: a\r\n\r\n", limits: limits) == [.get("/" + String(repeating: "a", count: 86))])
        let over = "GET /" + String(repeating: "a", count: 87) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(parse(over, limits: limits) == [.failure(.requestLineTooLong)])
        // Without any line end, the limit still applies as soon as it is passed.
        let endless = "GET /" + String(repeating: "a", count: 200)
        #expect(parse(endless, limits: limits, chunk: 10) == [.failure(.requestLineTooLong)])
    }

    @Test func defaultRequestLineLimitIs8KiB() {
        let path = "/" + String(repeating: "a", count: 8 * 1024)
        #expect(parse("GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n") == [.failure(.requestLineTooLong)])
    }

    @Test func headerBlockLimit() {
        var limits = RequestParser.Limits()
        limits.maxHeaderBlockBytes = 64
        // "Host: a\r\n" (9) + "X: " + 50 + "\r\n" (55) = 64 with the final CRLF = 66 > 64
        let over = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 50) + "\r\n\r\n"
        #expect(parse(over, limits: limits) == [.failure(.headerBlockTooLarge)])
        let under = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 40) + "\r\n\r\n"
        #expect(parse(under, limits: limits) == [.get("/")])
        let endless = "GET / HTTP/1.1\r\nX: " + String(repeating: "v", count: 100)
        #expect(parse(endless, limits: limits, chunk: 8) == [.failure(.headerBlockTooLarge)])
    }

    @Test func defaultHeaderBlockLimitIs32KiB() {
        let big = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "v", count: 32 * 1024) + "\r\n\r\n"
        #expect(parse(big) == [.failure(.headerBlockTooLarge)])
    }

    @Test func fieldCountLimit() {
        let fields = (0..<99).map { "X-\($0): v\r\n" }.joined()
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n" + fields + "\r\n") == [.get("/")])
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\nY: 1\r\n" + fields + "\r\n") == [.failure(.tooManyHeaderFields)])
    }

    @Test func bodyLimitByContentLengthAndByChunks() {
        var limits = RequestParser.Limits()
        limits.maxBodyBytes = 10
        #expect(
            parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", limits: limits) == [
                .failure(.bodyTooLarge)
            ])
        #expect(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789", limits: limits).count == 1)
        let chunked = "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n5\r\n"
        #expect(parse(chunked, limits: limits) == [.failure(.bodyTooLarge)])
    }

    @Test func leadingEmptyLinesAreBounded() {
        #expect(
            parse(String(repeating: "\r\n", count: 9) + "GET / HTTP/1.1\r\nHost: a\r\n\r\n") == [
                .failure(.invalidRequestLine)
            ])
    }

    // MARK: Request accessors

    @Test func headersAreCaseInsensitiveAndKeepOrderAndDuplicates() throws {
        let input = "GET /x HTTP/1.1\r\nHost: h\r\nAccept: image/webp\r\nX-Tag: one\r\nx-tag: two\r\n\r\n"
        let request = try #require(parse(Array(input.utf8)).requests.first)
        #expect(request.headers["ACCEPT"] == "image/webp")
        #expect(request.headers["x-tag"] == "one")
        #expect(request.headers.values(for: "X-TAG") == ["one", "two"])
        #expect(request.headers["missing"] == nil)
        #expect(request.headers.count == 4)
        #expect(request.headers[1].name == "Accept")
        #expect(request.method == .get)
        #expect(request.withPathBytes { Array($0) } == Array("/x".utf8))
    }

    @Test func theTargetIsThePathAndQueryAsSentWhateverTheRequestForm() throws {
        // Given requests in origin form (with and without a query, and with an encoded `?`) and absolute form
        let cases: [(line: String, target: String)] = [
            ("GET /thumb?url=a%3Fb&w=1 HTTP/1.1", "/thumb?url=a%3Fb&w=1"),
            ("GET /x HTTP/1.1", "/x"),
            ("GET /x? HTTP/1.1", "/x?"),
            ("GET http://thumbd.test/thumb?w=1 HTTP/1.1", "/thumb?w=1"),
            ("GET http://thumbd.test?w=1 HTTP/1.1", "?w=1"),
        ]
        for (line, expected) in cases {
            let input = line + "\r\nHost: thumbd.test\r\nAccept: image/webp\r\n\r\n"
            let request = try #require(parse(Array(input.utf8)).requests.first)
            // Then the target is the bytes from the path on, and the raw-bytes reader gives the same with Accept
            #expect(request.target == expected, "\(line)")
            var seen: (target: String, accept: String?)?
            let read = request.withRawTarget(andOnlyValueOf: "accept") { target, accept in
                seen = (String(decoding: target, as: UTF8.self), accept.map { String(decoding: $0, as: UTF8.self) })
            }
            #expect(read)
            #expect(seen?.target == expected)
            #expect(seen?.accept == "image/webp")
        }
    }

    @Test func theRawTargetReaderRefusesAFieldSentOnSeveralLines() throws {
        let input = "GET /x?a=1 HTTP/1.1\r\nHost: h\r\nAccept: image/webp\r\nAccept: image/avif\r\n\r\n"
        let request = try #require(parse(Array(input.utf8)).requests.first)
        var seen: (target: String, value: [UInt8]?)?
        #expect(!request.withRawTarget(andOnlyValueOf: "accept") { _, _ in seen = ("", nil) })
        #expect(seen == nil)
        #expect(
            request.withRawTarget(andOnlyValueOf: "x-missing") { target, value in
                seen = (String(decoding: target, as: UTF8.self), value.map { Array($0) })
            })
        #expect(seen?.target == "/x?a=1")
        #expect(seen != nil && seen?.value == nil)
    }

    @Test func expectContinueIsReportedFor11Only() {
        let input = "POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\nok"
        #expect(parse(Array(input.utf8)).sawContinue)
        let old = "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok"
        #expect(!parse(Array(old.utf8)).sawContinue)
    }

    @Test func incompleteInputWaits() {
        #expect(parse("GET / HTTP/1.1\r\nHost: a\r\n") == [.incomplete])
        #expect(parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nabc") == [.incomplete])
    }
}
