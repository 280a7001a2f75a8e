// SPDX-License-Identifier: Apache-2.0
import CLinuxShims
import Glibc

/// A socket call failed while setting up a test listener.
package struct LoopbackSocketError: Error, CustomStringConvertible {
    /// The failing call.
    package let call: String
    /// errno after it.
    package let errno: Int32

    /// `call: strerror(errno)`.
    package var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// Blocking socket helpers for the test origin (plain Glibc calls; tests only).
package enum LoopbackSocket {
    /// A listening TCP socket on `host:0`; returns the fd and the port it got.
    package static func listen(host: String, backlog: Int32) throws(LoopbackSocketError) -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoopbackSocketError(call: "socket", errno: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            close(fd)
            throw LoopbackSocketError(call: "inet_pton(\(host))", errno: EINVAL)
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let error = LoopbackSocketError(call: "bind(\(host))", errno: errno)
            close(fd)
            throw error
        }
        guard Glibc.listen(fd, backlog) == 0 else {
            let error = LoopbackSocketError(call: "listen", errno: errno)
            close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port on `host` where nothing listens (connecting to it is refused), and which no bind to port 0 is
    /// given for a minute: for a child process that is told its port by number (moto, HAProxy, nginx, Varnish).
    ///
    /// A port merely bound and closed is free again at once, and any bind to port 0 on the machine (a service
    /// of another test, another test run) could take it before the child binds it, seconds later for moto: the
    /// child then fails to start, or the test's readiness probe reaches the other server. So the port is left
    /// with a socket in TIME_WAIT: a connection to it is accepted and closed by the accepting side first. Linux
    /// never gives a port with a TIME_WAIT socket to a bind to port 0 (`inet_csk_find_open_port`), but lets a
    /// bind to it by number with SO_REUSEADDR through, and moto (werkzeug), HAProxy, nginx and varnishd all set
    /// SO_REUSEADDR on their listeners.
    package static func unusedPort(host: String = "127.0.0.1") throws(LoopbackSocketError) -> Int {
        let (listener, port) = try listen(host: host, backlog: 1)
        defer { close(listener) }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard client >= 0 else { throw LoopbackSocketError(call: "socket", errno: errno) }
        defer { close(client) }  // after `accepted`: this side then only answers the FIN, and is not left waiting
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        _ = inet_pton(AF_INET, host, &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw LoopbackSocketError(call: "connect(\(host):\(port))", errno: errno) }
        let accepted = accept(listener, nil, nil)
        guard accepted >= 0 else { throw LoopbackSocketError(call: "accept", errno: errno) }
        close(accepted)  // the active close: this end, bound to `port`, goes to TIME_WAIT
        return port
    }

    /// Sends all of `bytes` (MSG_NOSIGNAL: a closed peer is an error, not SIGPIPE).
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Waits up to `waitingMilliseconds` for the peer; true when it has closed (or reset) the
    /// connection. Unread request bytes are left in place.
    static func peerHasClosed(_ fd: Int32, waitingMilliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, waitingMilliseconds)
        guard ready > 0 else { return false }
        var byte: UInt8 = 0
        let peeked = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if peeked == 0 { return true }
        if peeked < 0 { return errno != EAGAIN && errno != EINTR }
        usleep(UInt32(waitingMilliseconds) * 1000)  // a pipelined request is waiting: not a close
        return false
    }

    /// Reads one request: its head, and its body when it has a `Content-Length` (at most 1 MiB; a chunked body is
    /// not read). Returns nil at EOF, on error, or when the bytes are not HTTP (then `buffer` is left non-empty).
    static func readRequest(_ fd: Int32, buffer: inout [UInt8]) -> LoopbackOrigin.ReceivedRequest? {
        let terminator: [UInt8] = [13, 10, 13, 10]
        var chunk = [UInt8](repeating: 0, count: 4096)
        var request: LoopbackOrigin.ReceivedRequest?
        var bodyLength = 0
        while true {
            if request == nil, let end = firstRange(of: terminator, in: buffer) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 4)
                guard let parsed = parse(head) else {
                    buffer = [0]
                    return nil
                }
                request = parsed
                bodyLength = parsed.headers["content-length"].flatMap { Int($0) } ?? 0
                guard (0...(1 << 20)).contains(bodyLength) else { return nil }
            }
            if var complete = request, buffer.count >= bodyLength {
                complete.body = Array(buffer[..<bodyLength])
                buffer.removeFirst(bodyLength)
                return complete
            }
            if request == nil && buffer.count > 64 * 1024 { return nil }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                buffer = []
                return nil
            }
            buffer += chunk[..<count]
            // Not a method: TLS or junk.
            if request == nil && buffer.first.map({ !(65...90).contains($0) }) == true { return nil }
        }
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }

    private static func parse(_ head: String) -> LoopbackOrigin.ReceivedRequest? {
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        let target = String(parts[1])
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        return LoopbackOrigin.ReceivedRequest(method: String(parts[0]), path: path, target: target, headers: headers)
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}
