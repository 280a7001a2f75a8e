// SPDX-License-Identifier: Apache-2.0
internal import CLinuxShims

#if canImport(Glibc)
    import Glibc
#endif

/// A connection's output queue: response heads serialised into one reusable buffer, bodies kept
/// by reference (arrays shared, files as regions), and sent with one `writev` for everything in
/// memory (pipelined responses included) or `sendfile` for file regions.
///
/// Owned and used by one ``Connection`` on its loop.
struct ResponseWriter: ~Copyable {
    enum Chunk {
        case head(start: Int, end: Int)
        case bytes([UInt8])
        case file(FileRegion)

        var count: Int {
            switch self {
            case .head(let start, let end): end - start
            case .bytes(let bytes): bytes.count
            case .file(let region): Int(region.length)
            }
        }

        var isFile: Bool {
            if case .file = self { return true }
            return false
        }
    }

    /// Result of ``write(to:)``.
    enum WriteResult: Equatable {
        /// Everything queued was written.
        case drained
        /// The socket is full; wait for writability. `progressed` if some bytes went out.
        case blocked(progressed: Bool)
        /// The connection is broken (`errno`).
        case failed(Int32)
    }

    /// Whether the head of the next response says `Connection: close`, `keep-alive` or nothing.
    enum ConnectionField {
        case none, keepAlive, close
    }

    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    private var used = 0
    private var chunks: [Chunk] = []
    private var sendIndex = 0
    private var sendOffset = 0
    /// Bytes queued and not yet written.
    private(set) var pendingBytes = 0

    /// Bodies up to this size are copied next to their head, so small responses are one iovec.
    static let inlineBodyLimit = 1024
    private static let maxIovecs = 32

    init(initialCapacity: Int = 1024) {
        capacity = initialCapacity
        buffer = .allocate(byteCount: initialCapacity, alignment: 16)
        chunks.reserveCapacity(8)
    }

    deinit {
        buffer.deallocate()
    }

    var isEmpty: Bool { sendIndex == chunks.count }

    /// Drops everything queued (closing file regions), e.g. when the connection closes.
    mutating func discardAll() {
        chunks.removeAll(keepingCapacity: true)
        sendIndex = 0
        sendOffset = 0
        used = 0
        pendingBytes = 0
    }

    // MARK: Serialising

    /// Queues the interim `100 Continue` response.
    mutating func appendContinue() {
        let start = used
        appendStatic("HTTP/1.1 100 Continue\r\n\r\n")
        appendHead(start)
    }

    /// Serialises `response`'s head (and queues its body unless `isHeadRequest`).
    /// - Returns: the number of body bytes that will be sent.
    mutating func append(
        _ response: consuming HTTPResponse, isHeadRequest: Bool, connection: ConnectionField,
        dateLine: UnsafeRawBufferPointer
    ) -> Int64 {
        let start = used
        let status = response.status
        if status.code == 200 && status.staticReason != nil {
            appendStatic("HTTP/1.1 200 OK\r\n")  // most answers: one copy instead of five pieces
        } else {
            appendStatic("HTTP/1.1 ")
            appendDecimal(status.code)
            appendByte(0x20)
            if let reason = status.staticReason {
                appendStatic(reason)
            } else {
                appendReason(status.reasonPhrase)
            }
            appendStatic("\r\n")
        }
        response.preparedFields?.bytes.withUnsafeBytes { appendRaw($0) }
        // Borrowed through the buffer: a `for field in` loop copies (retains) both strings per field.
        response.headers.withUnsafeBufferPointer { fields in
            guard let first = fields.baseAddress else { return }
            for index in fields.indices { appendField(first + index) }
        }
        if let age = response.age, age >= 0 {
            appendStatic("Age: ")
            appendDecimal(age)
            appendStatic("\r\n")
        }
        appendRaw(dateLine)
        let bodyCount = status.allowsBody ? response.body.count : 0
        if status.allowsBody {
            appendStatic("Content-Length: ")
            appendDecimal(Int(bodyCount))
            appendStatic("\r\n")
        }
        switch connection {
        case .none: break
        case .keepAlive: appendStatic("Connection: keep-alive\r\n")
        case .close: appendStatic("Connection: close\r\n")
        }
        appendStatic("\r\n")
        guard !isHeadRequest, bodyCount > 0 else {
            appendHead(start)
            return 0
        }
        switch response.body {
        case .empty:
            appendHead(start)
        case .bytes(let bytes):
            if bytes.count <= Self.inlineBodyLimit {
                bytes.withUnsafeBytes { appendRaw($0) }
                appendHead(start)
            } else {
                appendHead(start)
                chunks.append(.bytes(bytes))
                pendingBytes += bytes.count
            }
        case .file(let region):
            appendHead(start)
            chunks.append(.file(region))
            pendingBytes += Int(region.length)
        }
        return bodyCount
    }

    /// Writes one handler field in a single pass over its bytes. Fields the server writes itself
    /// are dropped, and so is any field that could split the head (CR, LF or NUL in the value; a
    /// name with controls, space or colon): the bytes already copied are rolled back.
    private mutating func appendField(_ field: UnsafePointer<HTTPField>) {
        let mark = used
        let nameAccepted = withUTF8(field.pointee.name) { bytes -> Bool in
            let raw = UnsafeRawBufferPointer(bytes)
            switch raw.count {
            case 0: return false
            case 4: if equalsIgnoringCase(raw, 0, 4, "date") { return false }
            case 10: if equalsIgnoringCase(raw, 0, 10, "connection") { return false }
            case 14: if equalsIgnoringCase(raw, 0, 14, "content-length") { return false }
            case 17: if equalsIgnoringCase(raw, 0, 17, "transfer-encoding") { return false }
            default: break
            }
            for byte in bytes where byte <= 0x20 || byte == 0x3A || byte == 0x7F { return false }
            appendRaw(raw)
            return true
        }
        guard nameAccepted else { return }
        appendStatic(": ")
        let valueAccepted = withUTF8(field.pointee.value) { bytes -> Bool in
            for byte in bytes where byte == 0x0D || byte == 0x0A || byte == 0 { return false }
            appendRaw(UnsafeRawBufferPointer(bytes))
            return true
        }
        guard valueAccepted else {
            used = mark
            return
        }
        appendStatic("\r\n")
    }

    /// `fields` as ``append(_:isHeadRequest:connection:dateLine:)`` would write them, for ``PreparedFields``.
    static func serialize(_ fields: [HTTPField]) -> [UInt8] {
        var writer = ResponseWriter(initialCapacity: 256)
        fields.withUnsafeBufferPointer { fields in
            guard let first = fields.baseAddress else { return }
            for index in fields.indices { writer.appendField(first + index) }
        }
        return Array(UnsafeRawBufferPointer(start: writer.buffer, count: writer.used))
    }

    private mutating func appendHead(_ start: Int) {
        pendingBytes += used - start
        // Consecutive heads (pipelined bodiless responses) share one iovec.
        if let last = chunks.last, chunks.count > sendIndex, case .head(let s, let e) = last, e == start {
            chunks[chunks.count - 1] = .head(start: s, end: used)
        } else {
            chunks.append(.head(start: start, end: used))
        }
    }

    private mutating func reserve(_ extra: Int) {
        guard used + extra > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < used + extra { newCapacity *= 2 }
        let bigger = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
        bigger.copyMemory(from: buffer, byteCount: used)
        buffer.deallocate()
        buffer = bigger
        capacity = newCapacity
    }

    private mutating func appendByte(_ byte: UInt8) {
        reserve(1)
        buffer.storeBytes(of: byte, toByteOffset: used, as: UInt8.self)
        used += 1
    }

    private mutating func appendStatic(_ text: StaticString) {
        appendRaw(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    private mutating func appendRaw(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        reserve(bytes.count)
        (buffer + used).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        used += bytes.count
    }

    /// Appends a custom reason phrase, dropping CR, LF and NUL so it cannot split the head.
    private mutating func appendReason(_ text: String) {
        for byte in text.utf8 where byte != 0x0D && byte != 0x0A && byte != 0 { appendByte(byte) }
    }

    private mutating func appendDecimal(_ value: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of scratch on the stack
        withUnsafeMutableBytes(of: &digits) { scratch in
            var n = value.magnitude
            var at = scratch.count
            repeat {
                at -= 1
                scratch[at] = UInt8(truncatingIfNeeded: 0x30 + n % 10)
                n /= 10
            } while n > 0
            appendRaw(UnsafeRawBufferPointer(rebasing: scratch[at...]))
        }
    }

    // MARK: Writing

    /// Writes as much as the socket takes: one `writev` per run of in-memory chunks, `sendfile`
    /// for file regions, until drained or `EAGAIN`.
    mutating func write(to fd: Int32) -> WriteResult {
        var progressed = false
        while sendIndex < chunks.count {
            let result: Int
            if case .file(let region) = chunks[sendIndex] {
                var offset = region.offset + Int64(sendOffset)
                let remaining = Int(region.length) - sendOffset
                result = thumbd_sendfile(fd, region.fileDescriptor, &offset, remaining)
                if result == 0 {
                    // The file is shorter than the region: the head promised more, so the only
                    // honest end is to drop the connection.
                    return .failed(EIO)
                }
            } else {
                result = writeMemoryChunks(fd)
            }
            if result < 0 {
                let error = errno
                if error == EINTR { continue }
                if error == EAGAIN || error == EWOULDBLOCK { return .blocked(progressed: progressed) }
                return .failed(error)
            }
            progressed = true
            advance(by: result)
        }
        discardAll()
        return .drained
    }

    private mutating func advance(by written: Int) {
        pendingBytes -= written
        var left = written
        while left > 0 {
            let remaining = chunks[sendIndex].count - sendOffset
            if left >= remaining {
                left -= remaining
                chunks[sendIndex] = .head(start: 0, end: 0)  // release the body now
                sendIndex += 1
                sendOffset = 0
            } else {
                sendOffset += left
                left = 0
            }
        }
        // Skip empty chunks so the next write starts at real data.
        while sendIndex < chunks.count && chunks[sendIndex].count == sendOffset {
            sendIndex += 1
            sendOffset = 0
        }
    }

    private func writeMemoryChunks(_ fd: Int32) -> Int {
        var end = sendIndex
        while end < chunks.count && end - sendIndex < Self.maxIovecs {
            if case .file = chunks[end] { break }
            end += 1
        }
        // A head followed by a file body goes out with MSG_MORE, so that the kernel holds it for the
        // `sendfile` that follows and sends both in one segment (nginx's `tcp_nopush`): measured, the head
        // and the body in two pushes cost two rounds of loopback softirq work per disk hit.
        let moreFollows = end < chunks.count && chunks[end].isFile
        return withUnsafeTemporaryAllocation(of: iovec.self, capacity: Self.maxIovecs) { iovecs in
            pin(sendIndex, end, iovecs, 0) { count in
                guard moreFollows else { return Glibc.writev(fd, iovecs.baseAddress!, Int32(count)) }
                var message = msghdr()
                message.msg_iov = iovecs.baseAddress
                message.msg_iovlen = count
                return Glibc.sendmsg(fd, &message, Int32(MSG_MORE))
            }
        }
    }

    /// Fills iovecs for chunks `[index, end)` while keeping each body array's storage pinned for the
    /// duration of `body` (nested `withUnsafeBytes`, so no pointer outlives its array).
    private func pin(
        _ index: Int, _ end: Int, _ iovecs: UnsafeMutableBufferPointer<iovec>, _ filled: Int,
        _ body: (Int) -> Int
    ) -> Int {
        guard index < end else { return body(filled) }
        let skip = index == sendIndex ? sendOffset : 0
        switch chunks[index] {
        case .head(let start, let stop):
            iovecs[filled] = iovec(iov_base: buffer + start + skip, iov_len: stop - start - skip)
            return pin(index + 1, end, iovecs, filled + 1, body)
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { raw in
                iovecs[filled] = iovec(
                    iov_base: UnsafeMutableRawPointer(mutating: raw.baseAddress! + skip), iov_len: raw.count - skip)
                return pin(index + 1, end, iovecs, filled + 1, body)
            }
        case .file:
            preconditionFailure("file chunks are sent with sendfile")
        }
    }
}

/// Calls `body` with the UTF-8 bytes of `text` without copying the string (`String.withUTF8` needs
/// a `var`, and the copy costs a retain per field per response). Native strings are contiguous;
/// others are copied once.
@inline(__always)
func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
    if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
    return Array(text.utf8).withUnsafeBufferPointer(body)
}
