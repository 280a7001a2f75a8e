// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A deliberately simple HTTP/1.1 test client on a blocking loopback socket.
///
/// It sends exactly the bytes a test gives it (pipelined requests, broken framing, a TLS
/// ClientHello) and parses responses with its own small reader, independent of the server's
/// parser. Every wait is bounded by a deadline; nothing here can hang a test.
package final class RawHTTPClient {
    /// A response as the client read it.
    package struct Response: Sendable {
        /// Status code.
        package var status: Int
        /// Reason phrase.
        package var reason: String
        /// Header fields in order.
        package var headers: [(name: String, value: String)]
        /// Body bytes.
        package var body: [UInt8]

        /// First value of the header `name` (any case).
        package func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body as UTF-8 text.
        package var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Errors of the test client.
    package enum ClientError: Error, Equatable {
        /// A socket call failed with `errno`.
        case system(String, Int32)
        /// The deadline passed before the expected bytes arrived.
        case timedOut
        /// The server closed the connection before a complete response.
        case closed(received: Int)
        /// The response could not be read as HTTP.
        case malformed(String)
    }

    private let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var isClosed = false

    /// Connects to `host:port` (numeric IPv4 or IPv6).
    /// - Parameter receiveBufferBytes: shrinks `SO_RCVBUF` (set before connect) to provoke partial writes.
    package init(host: String = "127.0.0.1", port: Int, receiveBufferBytes: Int? = nil) throws {
        var v4 = in_addr()
        var v6 = in6_addr()
        let isV6 = inet_pton(AF_INET, host, &v4) != 1
        if isV6 && inet_pton(AF_INET6, host, &v6) != 1 { throw ClientError.malformed("bad host \(host)") }
        fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ClientError.system("socket", errno) }
        if var size = receiveBufferBytes.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(4))
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(4))
        let rc: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            address.sin6_addr = v6
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            address.sin_addr = v4
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard rc == 0 else {
            let error = errno
            // A class whose stored properties are all set runs `deinit` when its init throws: closing here
            // without marking it would close the descriptor a second time, by then maybe another thread's socket.
            close()
            throw ClientError.system("connect", error)
        }
    }

    deinit {
        if !isClosed { Glibc.close(fd) }
    }

    /// Sends all of `bytes`.
    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send_(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ClientError.system("send", errno)
            }
            offset += n
        }
    }

    /// Sends the UTF-8 bytes of `text`.
    package func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Half-closes: the server sees end of input, the client can still read.
    package func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Closes the socket. With `reset`, sends RST instead of FIN (SO_LINGER 0).
    package func close(reset: Bool = false) {
        guard !isClosed else { return }
        if reset {
            var option = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        }
        Glibc.close(fd)
        isClosed = true
    }

    /// Reads one response. `forHead` for a response to HEAD (no body despite Content-Length).
    package func readResponse(forHead: Bool = false, timeout: Duration = .seconds(10)) throws -> Response {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = findHeadEnd()
            if headEnd == nil { try fill(until: deadline) }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw ClientError.malformed("status line: \(statusLine)")
        }
        var headers: [(String, String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw ClientError.malformed("field: \(line)") }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.append((String(line[..<colon]), String(value)))
        }
        buffer.removeFirst(headEnd! + 4)
        var response = Response(
            status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: [])
        if status < 200 || status == 204 || status == 304 || forHead { return response }
        if let lengthText = response.header("content-length") {
            guard let length = Int(lengthText) else { throw ClientError.malformed("content-length \(lengthText)") }
            while buffer.count < length { try fill(until: deadline) }
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            while true {
                do { try fill(until: deadline) } catch ClientError.closed { break }
            }
            response.body = buffer
            buffer.removeAll()
        }
        return response
    }

    /// Waits until the server closes the connection (EOF or reset); returns any bytes that came first.
    package func readUntilClosed(timeout: Duration = .seconds(10)) throws -> [UInt8] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            do { try fill(until: deadline) } catch ClientError.closed { break }
        }
        defer { buffer.removeAll() }
        return buffer
    }

    /// Reads whatever arrives within `timeout` without requiring anything.
    package func readAvailable(timeout: Duration) throws -> [UInt8] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            do { try fill(until: deadline) } catch ClientError.timedOut { break } catch ClientError.closed { break }
        }
        defer { buffer.removeAll() }
        return buffer
    }

    /// Reads exactly `count` raw bytes (for slow-reader tests), at most `chunk` per `recv`.
    package func readRaw(count: Int, chunk: Int, timeout: Duration = .seconds(30)) throws -> [UInt8] {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while buffer.count < count { try fill(until: deadline, maxBytes: min(chunk, count - buffer.count)) }
        let result = Array(buffer[..<count])
        buffer.removeFirst(count)
        return result
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func fill(until deadline: ContinuousClock.Instant, maxBytes: Int = 65_536) throws {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { throw ClientError.timedOut }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let millis = Int32(
            clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1
        )
        let ready = poll(&poller, 1, millis)
        if ready == 0 { throw ClientError.timedOut }
        if ready < 0 {
            if errno == EINTR { return }
            throw ClientError.system("poll", errno)
        }
        var chunk = [UInt8](repeating: 0, count: maxBytes)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[..<n])
            return
        }
        if n == 0 { throw ClientError.closed(received: buffer.count) }
        if errno == EINTR || errno == EAGAIN { return }
        if errno == ECONNRESET { throw ClientError.closed(received: buffer.count) }
        throw ClientError.system("recv", errno)
    }
}

@inline(__always)
private func send_(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
}
