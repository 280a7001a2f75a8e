// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// An incremental, strict HTTP/1.1 request parser (RFC 9112) that reads a caller-owned buffer
/// by index and never allocates until a request is complete.
///
/// The caller passes every unconsumed byte it holds, each time more arrive, and drops the
/// `consumed` prefix that each call reports. While a head is incomplete nothing is consumed: the
/// parser remembers how far it scanned, so each byte is examined once (no quadratic rescans for
/// a client that sends one byte at a time). A completed head costs one allocation (head bytes
/// and a field-offset table in one array). After a ``Event/failure(_:)`` the parser stays failed:
/// the connection answers and closes, never guessing at framing (no request smuggling).
///
/// ```swift
/// var parser = RequestParser(limits: .init())
/// let (event, consumed) = buffer.withUnsafeBytes { parser.parse($0) }
/// ```
package struct RequestParser {
    /// Size limits; exceeding one fails with the matching ``RequestParseError``.
    package struct Limits: Sendable, Hashable {
        /// Longest request line, without CRLF (414 beyond).
        package var maxRequestLineBytes = 8 * 1024
        /// Largest header block (field lines with their CRLFs, and the final CRLF) (431 beyond).
        package var maxHeaderBlockBytes = 32 * 1024
        /// Most header fields (431 beyond); trailers of chunked bodies count separately.
        package var maxHeaderFields = 100
        /// Largest body, declared or received (413 beyond).
        package var maxBodyBytes = 1024 * 1024
        /// Longest chunk-size line including extensions (400 beyond).
        package var maxChunkLineBytes = 1024

        /// Creates the default limits.
        package init() {}
    }

    /// What a call to ``parse(_:)`` found.
    package enum Event {
        /// Nothing complete yet; call again with more bytes.
        case needMoreData
        /// A head announcing a body is complete. When `expectsContinue`, the client waits for
        /// `100 Continue` before it sends the body.
        case headReceived(expectsContinue: Bool)
        /// A complete request.
        case request(HTTPRequest)
        /// The request is invalid; answer `error.status` and close.
        case failure(RequestParseError)
    }

    /// The limits in force.
    package let limits: Limits

    enum Phase {
        case head
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case failed(RequestParseError)
    }

    var phase = Phase.head

    // Head scanning state; offsets are relative to the start of the unconsumed input.
    private var scanned = 0
    private var lineStart = 0
    private var leadingEmptyLines = 0
    private var requestLineStart = -1
    private var headersStart = -1
    private var fieldOffsets: [Int] = []
    private var methodEnd = 0
    private var targetStart = 0
    private var pathStart = 0
    private var pathEnd = 0
    private var queryStart = -1
    private var queryEnd = -1
    private var version = HTTPVersion.http1_1
    private var contentLength = -1
    private var isChunked = false
    private var hostCount = 0
    private var connectionClose = false
    private var connectionKeepAlive = false
    private var expectsContinue = false

    // Body state (used by RequestParser+Body.swift).
    var pending: HTTPRequest?
    var bodyBytes = 0
    var trailerBytes = 0
    var trailerFields = 0

    /// Creates a parser.
    package init(limits: Limits) {
        self.limits = limits
        fieldOffsets.reserveCapacity(64)
    }

    /// `true` when no byte of a next request has been examined (between requests).
    package var isAtRequestBoundary: Bool {
        if case .head = phase { return scanned == 0 }
        return false
    }

    /// `true` while a body is being read.
    package var isReadingBody: Bool {
        switch phase {
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers: true
        case .head, .failed: false
        }
    }

    /// Parses as much of `input` (all unconsumed bytes) as possible.
    /// - Returns: what was found and how many leading bytes of `input` are consumed.
    package mutating func parse(_ input: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        switch phase {
        case .failed(let error):
            return (.failure(error), 0)
        case .head:
            return parseHead(input)
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            return parseBody(input)
        }
    }

    // MARK: - Head

    private mutating func fail(_ error: RequestParseError) -> (event: Event, consumed: Int) {
        phase = .failed(error)
        pending = nil
        return (.failure(error), 0)
    }

    private mutating func parseHead(_ input: UnsafeRawBufferPointer) -> (event: Event, consumed: Int) {
        let end = input.count
        guard let base = input.baseAddress, end > 0 else { return (.needMoreData, 0) }
        while true {
            let searchFrom = scanned
            guard let found = memchr(base + searchFrom, 0x0A, end - searchFrom) else {
                return incompleteLine(input, checkedFrom: searchFrom)
            }
            let lineFeed = base.distance(to: UnsafeRawPointer(found))
            scanned = lineFeed + 1
            if lineFeed == lineStart || input[lineFeed - 1] != 0x0D { return fail(.bareLineFeed) }
            let contentEnd = lineFeed - 1
            if headersStart < 0 {
                if contentEnd == lineStart {
                    // RFC 9112 §2.2: ignore empty lines before the request line (a few only).
                    leadingEmptyLines += 1
                    if leadingEmptyLines > 8 { return fail(.invalidRequestLine) }
                    lineStart = scanned
                    continue
                }
                if contentEnd - lineStart > limits.maxRequestLineBytes { return fail(.requestLineTooLong) }
                requestLineStart = lineStart
                if let error = parseRequestLine(input, lineStart, contentEnd) { return fail(error) }
                headersStart = scanned
            } else {
                if scanned - headersStart > limits.maxHeaderBlockBytes { return fail(.headerBlockTooLarge) }
                if contentEnd == lineStart { return finishHead(input, headEnd: scanned) }
                if fieldOffsets.count / 4 >= limits.maxHeaderFields { return fail(.tooManyHeaderFields) }
                if let error = parseField(input, lineStart, contentEnd, record: true) { return fail(error) }
            }
            lineStart = scanned
        }
    }

    /// No LF after `checkedFrom`: enforce the limits on what has arrived, and fail fast on bytes
    /// that can never start an HTTP request (a TLS ClientHello, binary noise).
    private mutating func incompleteLine(
        _ input: UnsafeRawBufferPointer, checkedFrom: Int
    ) -> (event: Event, consumed: Int) {
        let end = input.count
        scanned = end
        if headersStart < 0 {
            if end - lineStart > limits.maxRequestLineBytes + 1 { return fail(.requestLineTooLong) }
            for i in checkedFrom..<end {
                let byte = input[i]
                if !(byte == 0x20 || byte == 0x0D || (byte > 0x20 && byte < 0x7F)) {
                    return fail(.invalidRequestLine)
                }
            }
        } else if end - headersStart > limits.maxHeaderBlockBytes {
            return fail(.headerBlockTooLarge)
        }
        return (.needMoreData, 0)
    }

    private mutating func parseRequestLine(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> RequestParseError?
    {
        var i = start
        while i < end && isTokenByte(p[i]) { i += 1 }
        guard i > start, i < end, p[i] == 0x20 else { return .invalidRequestLine }
        methodEnd = i
        i += 1
        targetStart = i
        i = Self.skipPlainTargetBytes(p, from: i, to: end)
        while i < end && p[i] != 0x20 {
            let byte = p[i]
            // Visible ASCII only; '#' never belongs in a request target (RFC 9112 §3.2).
            guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "#") else { return .invalidRequestLine }
            i += 1
        }
        let targetEnd = i
        guard targetEnd > targetStart else { return .invalidRequestLine }
        guard i < end else { return .missingVersion }
        i += 1
        guard end - i == 8, p[i] == 0x48, p[i + 1] == 0x54, p[i + 2] == 0x54, p[i + 3] == 0x50, p[i + 4] == 0x2F,
            p[i + 6] == 0x2E, isDigit(p[i + 5]), isDigit(p[i + 7])
        else { return .invalidRequestLine }
        let major = Int(p[i + 5] - 0x30)
        let minor = Int(p[i + 7] - 0x30)
        guard major == 1, minor <= 1 else { return .unsupportedVersion }
        version = minor == 1 ? .http1_1 : .http1_0
        return parseTarget(p, targetStart, targetEnd)
    }

    /// Skips whole 8-byte words of the target that hold only visible ASCII other than `#`, the common case,
    /// and returns where the byte-wise loop must go on (a space, a byte to refuse, or fewer than 8 bytes left).
    /// A URL-bearing target is ~100 bytes: a word at a time costs a fifth of a byte at a time.
    @inline(__always)
    static func skipPlainTargetBytes(_ p: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        guard let base = p.baseAddress else { return start }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var i = start
        while end - i >= 8 {
            let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            // A byte >= 0x80; a byte <= 0x20 (controls, space); a byte == 0x7F; a byte == '#'. Each test is exact
            // for bytes below 0x80, and the first catches the rest.
            let high = word & highs
            let low = (word &- ones &* 0x21) & ~word & highs
            let del = word ^ (ones &* 0x7F)
            let hash = word ^ (ones &* 0x23)
            let special = high | low | ((del &- ones) & ~del & highs) | ((hash &- ones) & ~hash & highs)
            if special != 0 { break }
            i += 8
        }
        return i
    }

    private mutating func parseTarget(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> RequestParseError? {
        var pathFrom: Int
        if p[start] == UInt8(ascii: "/") {
            pathFrom = start
        } else if end - start == 1 && p[start] == UInt8(ascii: "*") {
            // asterisk-form exists only for OPTIONS (RFC 9112 §3.2.4).
            guard methodEnd - requestLineStart == 7, p[requestLineStart] == UInt8(ascii: "O") else {
                return .invalidRequestLine
            }
            pathStart = start
            pathEnd = end
            queryStart = -1
            queryEnd = -1
            return nil
        } else {
            // absolute-form: accepted for our own routes; the authority is ignored (the path decides).
            let schemeLength: Int
            if hasPrefixIgnoringCase(p, start, end, "http://") {
                schemeLength = 7
            } else if hasPrefixIgnoringCase(p, start, end, "https://") {
                schemeLength = 8
            } else {
                return .invalidRequestLine
            }
            pathFrom = start + schemeLength
            let authorityStart = pathFrom
            while pathFrom < end && p[pathFrom] != UInt8(ascii: "/") && p[pathFrom] != UInt8(ascii: "?") {
                pathFrom += 1
            }
            guard pathFrom > authorityStart else { return .invalidRequestLine }
        }
        pathStart = pathFrom
        var i = pathFrom
        while i < end && p[i] != UInt8(ascii: "?") { i += 1 }
        pathEnd = i
        if i < end {
            queryStart = i + 1
            queryEnd = end
        } else {
            queryStart = -1
            queryEnd = -1
        }
        return nil
    }

    /// Validates one field line `[start, end)` (CRLF excluded) and, for header fields, records its
    /// offsets and interprets the fields that govern framing and the connection.
    private mutating func parseField(
        _ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int, record: Bool
    ) -> RequestParseError? {
        let first = p[start]
        if first == 0x20 || first == 0x09 { return .obsoleteLineFolding }
        var i = start
        while i < end && isTokenByte(p[i]) { i += 1 }
        guard i > start, i < end, p[i] == UInt8(ascii: ":") else { return .invalidFieldName }
        let nameEnd = i
        i += 1
        while i < end && (p[i] == 0x20 || p[i] == 0x09) { i += 1 }
        let valueStart = i
        var valueEnd = end
        while valueEnd > valueStart && (p[valueEnd - 1] == 0x20 || p[valueEnd - 1] == 0x09) { valueEnd -= 1 }
        for j in valueStart..<valueEnd {
            let byte = p[j]
            guard byte == 0x09 || (byte >= 0x20 && byte != 0x7F) else { return .invalidFieldValue }
        }
        guard record else { return nil }
        fieldOffsets.append(start)
        fieldOffsets.append(nameEnd)
        fieldOffsets.append(valueStart)
        fieldOffsets.append(valueEnd)
        return interpretField(p, name: start, nameEnd, value: valueStart, valueEnd)
    }

    private mutating func interpretField(
        _ p: UnsafeRawBufferPointer, name: Int, _ nameEnd: Int, value: Int, _ valueEnd: Int
    ) -> RequestParseError? {
        switch nameEnd - name {
        case 4 where equalsIgnoringCase(p, name, nameEnd, "host"):
            hostCount += 1
        case 6 where equalsIgnoringCase(p, name, nameEnd, "expect"):
            guard equalsIgnoringCase(p, value, valueEnd, "100-continue") else { return .unsupportedExpectation }
            expectsContinue = true
        case 10 where equalsIgnoringCase(p, name, nameEnd, "connection"):
            var tokenStart = value
            while tokenStart < valueEnd {
                var tokenEnd = tokenStart
                while tokenEnd < valueEnd && p[tokenEnd] != UInt8(ascii: ",") { tokenEnd += 1 }
                var a = tokenStart
                var b = tokenEnd
                while a < b && (p[a] == 0x20 || p[a] == 0x09) { a += 1 }
                while b > a && (p[b - 1] == 0x20 || p[b - 1] == 0x09) { b -= 1 }
                if equalsIgnoringCase(p, a, b, "close") { connectionClose = true }
                if equalsIgnoringCase(p, a, b, "keep-alive") { connectionKeepAlive = true }
                tokenStart = tokenEnd + 1
            }
        case 14 where equalsIgnoringCase(p, name, nameEnd, "content-length"):
            // One plain decimal only: "5, 5", "+5", " 5x" and repeats are refused (RFC 9112 §6.3).
            guard contentLength < 0, value < valueEnd, valueEnd - value <= 18 else { return .invalidContentLength }
            var length = 0
            for j in value..<valueEnd {
                guard isDigit(p[j]) else { return .invalidContentLength }
                length = length * 10 + Int(p[j] - 0x30)
            }
            contentLength = length
        case 17 where equalsIgnoringCase(p, name, nameEnd, "transfer-encoding"):
            guard !isChunked, equalsIgnoringCase(p, value, valueEnd, "chunked") else {
                return .unsupportedTransferEncoding
            }
            isChunked = true
        default:
            break
        }
        return nil
    }

    private mutating func finishHead(_ input: UnsafeRawBufferPointer, headEnd: Int) -> (event: Event, consumed: Int) {
        if isChunked && contentLength >= 0 { return fail(.conflictingFraming) }
        if isChunked && version == .http1_0 { return fail(.unsupportedTransferEncoding) }
        if hostCount > 1 || (version == .http1_1 && hostCount == 0) { return fail(.invalidHost) }
        if contentLength > limits.maxBodyBytes { return fail(.bodyTooLarge) }

        let origin = requestLineStart
        let headLength = headEnd - origin
        let fieldCount = fieldOffsets.count / 4
        let offsets = fieldOffsets
        let storage = RequestHeadBytes(count: headLength + fieldCount * 8) { raw in
            raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: input[origin..<headEnd]))
            var at = headLength
            for offset in offsets {
                raw.storeBytes(of: UInt16(truncatingIfNeeded: offset - origin), toByteOffset: at, as: UInt16.self)
                at += 2
            }
        }
        let method = HTTPMethod(bytes: UnsafeRawBufferPointer(rebasing: input[origin..<methodEnd]))
        let keepAlive = version == .http1_1 ? !connectionClose : (connectionKeepAlive && !connectionClose)
        var request = HTTPRequest(
            method: method, version: version, keepAlive: keepAlive, storage: storage, headLength: headLength,
            fieldCount: fieldCount, pathStart: pathStart - origin, pathEnd: pathEnd - origin,
            queryStart: queryStart < 0 ? -1 : queryStart - origin, queryEnd: queryEnd < 0 ? -1 : queryEnd - origin)
        // RFC 9110 §10.1.1: a server ignores 100-continue from an HTTP/1.0 client.
        let wantsContinue = expectsContinue && version == .http1_1
        let length = contentLength
        let chunked = isChunked
        resetHead()
        if chunked {
            pending = request
            bodyBytes = 0
            trailerBytes = 0
            trailerFields = 0
            phase = .chunkSize
            return (.headReceived(expectsContinue: wantsContinue), headEnd)
        }
        if length > 0 {
            request.body.reserveCapacity(length)
            pending = request
            phase = .body(remaining: length)
            return (.headReceived(expectsContinue: wantsContinue), headEnd)
        }
        return (.request(request), headEnd)
    }

    private mutating func resetHead() {
        phase = .head
        scanned = 0
        lineStart = 0
        leadingEmptyLines = 0
        requestLineStart = -1
        headersStart = -1
        fieldOffsets.removeAll(keepingCapacity: true)
        contentLength = -1
        isChunked = false
        hostCount = 0
        connectionClose = false
        connectionKeepAlive = false
        expectsContinue = false
    }
}

// MARK: - Byte classes

/// RFC 9110 `tchar`, as two 64-bit masks (no table lookups, no bounds checks).
@inline(__always)
func isTokenByte(_ byte: UInt8) -> Bool {
    if byte < 64 { return (0x03ff_6cfa_0000_0000 as UInt64) >> UInt64(byte) & 1 == 1 }
    if byte < 128 { return (0x57ff_ffff_c7ff_fffe as UInt64) >> UInt64(byte - 64) & 1 == 1 }
    return false
}

@inline(__always)
func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }

/// Compares `p[start..<end]` with a lowercase ASCII literal, ignoring the case of letters.
@inline(__always)
func equalsIgnoringCase(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ literal: StaticString) -> Bool {
    guard end - start == literal.utf8CodeUnitCount else { return false }
    let lit = literal.utf8Start
    for i in 0..<(end - start) where asciiLower(p[start + i]) != lit[i] { return false }
    return true
}

@inline(__always)
func hasPrefixIgnoringCase(_ p: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    guard end - start >= count else { return false }
    return equalsIgnoringCase(p, start, start + count, literal)
}
