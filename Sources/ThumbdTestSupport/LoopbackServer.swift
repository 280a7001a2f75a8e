// SPDX-License-Identifier: Apache-2.0
import CLinuxShims
import EventLoops
import Glibc
import Synchronization

/// The running server behind a ``LoopbackOrigin``. Its threads keep it alive; the
/// `LoopbackOrigin` handle stops it from its `deinit`, so dropping the handle in a test
/// really closes the listener and every connection.
final class LoopbackServer: Sendable {
    typealias Script = LoopbackOrigin.Script
    typealias Header = LoopbackOrigin.Header
    typealias ReceivedRequest = LoopbackOrigin.ReceivedRequest

    /// The address it listens on, e.g. `127.0.0.2`.
    let host: String
    /// The ephemeral port it got.
    let port: Int
    private let listener: Int32
    private let state = Mutex(State())
    private let acceptThread: Mutex<OSThread?>

    private struct State {
        var routes: [String: Script] = [:]
        var hits: [String: Int] = [:]
        var log: [ReceivedRequest] = []
        var clientCloses: [String: Int] = [:]
        var openGates: Set<String> = []
        var currentRequests = 0
        var maxConcurrentRequests = 0
        var openConnections: Set<Int32> = []
        var maxConcurrentConnections = 0
        var connectionsAccepted = 0
        var isStopped = false
    }

    /// Starts listening on `host:0` (a 127/8 address).
    /// - Throws: ``LoopbackSocketError`` when the socket cannot be set up.
    init(host: String = "127.0.0.1") throws(LoopbackSocketError) {
        precondition(host.hasPrefix("127."), "tests bind loopback addresses only")
        let (fd, port) = try LoopbackSocket.listen(host: host, backlog: 512)
        self.host = host
        self.port = port
        self.listener = fd
        self.acceptThread = Mutex(nil)
        let thread = try? OSThread.spawn(name: "origin-accept") { [self] in acceptLoop() }
        acceptThread.withLock { $0 = thread }
    }

    /// `http://host:port` + `path`.
    func url(_ path: String) -> String { "http://\(host):\(port)\(path)" }

    /// Sets (or replaces) the script for `path` (matched without the query string).
    func route(_ path: String, _ script: Script) {
        state.withLock { $0.routes[path] = script }
    }

    /// Opens a gate: every request waiting in `.gate(name, ...)` proceeds, and later ones pass at once.
    func openGate(_ name: String) {
        state.withLock { _ = $0.openGates.insert(name) }
    }

    /// Requests received for `path`.
    func hits(_ path: String) -> Int { state.withLock { $0.hits[path] ?? 0 } }

    /// Every request received, in arrival order.
    var requests: [ReceivedRequest] { state.withLock { $0.log } }

    /// How often a client hung up while `path` was being answered (delay, gate, hang, trickle,
    /// endless body): how a test sees that a transfer was cancelled.
    func clientCloses(_ path: String) -> Int { state.withLock { $0.clientCloses[path] ?? 0 } }

    /// The most requests being answered at the same time so far.
    var maxConcurrentRequests: Int { state.withLock { $0.maxConcurrentRequests } }

    /// Requests being answered now.
    var currentRequests: Int { state.withLock { $0.currentRequests } }

    /// The most connections open at the same time so far.
    var maxConcurrentConnections: Int { state.withLock { $0.maxConcurrentConnections } }

    /// Connections accepted so far.
    var connectionsAccepted: Int { state.withLock { $0.connectionsAccepted } }

    /// Stops accepting, closes every connection (ending every script) and joins the accept thread.
    func stop() {
        // The connections are shut down while the lock is held: a serving thread removes its descriptor from
        // the set (under the lock) before it closes it, so every descriptor in the set is still open here.
        // Shutting down a copy of the set after unlocking could hit a number that a connection had closed
        // meanwhile and the process had reused, e.g. for a test client's socket in a parallel test, which
        // then saw its connection end with no bytes.
        state.withLock { state in
            guard !state.isStopped else { return }
            state.isStopped = true
            for fd in state.openConnections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        guard let thread = acceptThread.withLock({ $0.take() }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        thread.join()
        close(listener)
    }

    // MARK: - Serving

    private var isStopped: Bool { state.withLock { $0.isStopped } }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return  // shut down (or broken): either way, stop accepting
            }
            let accepted = state.withLock { state -> Bool in
                guard !state.isStopped else { return false }
                state.openConnections.insert(fd)
                state.connectionsAccepted += 1
                state.maxConcurrentConnections = max(state.maxConcurrentConnections, state.openConnections.count)
                return true
            }
            guard accepted else {
                close(fd)
                return
            }
            do {
                try OSThread.spawn(name: "origin-conn") { [self] in serve(fd) }.detach()
            } catch {
                close(fd)
            }
        }
    }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        defer {
            state.withLock { _ = $0.openConnections.remove(fd) }
            close(fd)
        }
        while !isStopped {
            guard let request = LoopbackSocket.readRequest(fd, buffer: &buffer) else {
                if buffer.count > 0 { _ = LoopbackSocket.send(fd, Self.head(400, [], contentLength: 0)) }
                return
            }
            let script = state.withLock { state -> Script in
                state.hits[request.path, default: 0] += 1
                state.log.append(request)
                state.currentRequests += 1
                state.maxConcurrentRequests = max(state.maxConcurrentRequests, state.currentRequests)
                return state.routes[request.path] ?? .status(404)
            }
            let keepAlive = run(script, on: fd, for: request)
            state.withLock { $0.currentRequests -= 1 }
            if !keepAlive || request.headers["connection"]?.lowercased() == "close" { return }
        }
    }

    /// Runs a script; returns whether the connection may serve another request.
    private func run(_ script: Script, on fd: Int32, for request: ReceivedRequest) -> Bool {
        switch script {
        case .respond(let status, let headers, let body):
            return LoopbackSocket.send(fd, Self.head(status, headers, contentLength: body.count) + body)
        case .delay(let duration, let next):
            guard waitWhileConnected(fd, for: request, until: { _ in false }, timeout: duration) else { return false }
            return run(next, on: fd, for: request)
        case .gate(let name, let next):
            guard waitWhileConnected(fd, for: request, until: { $0.openGates.contains(name) }, timeout: nil) else {
                return false
            }
            return run(next, on: fd, for: request)
        case .hang:
            _ = waitWhileConnected(fd, for: request, until: { _ in false }, timeout: nil)
            return false
        case .trickle(let body, let interval, let contentType):
            let head = Self.head(200, [Header("Content-Type", contentType)], contentLength: body.count)
            guard LoopbackSocket.send(fd, head) else { return noteClose(request) }
            for byte in body {
                guard waitWhileConnected(fd, for: request, until: { _ in false }, timeout: interval) else {
                    return false
                }
                guard LoopbackSocket.send(fd, [byte]) else { return noteClose(request) }
            }
            return true
        case .endless(let contentType):
            let head = Self.head(
                200, [Header("Content-Type", contentType), Header("Connection", "close")], contentLength: nil)
            guard LoopbackSocket.send(fd, head) else { return noteClose(request) }
            let chunk = [UInt8](repeating: 0x5A, count: 16 * 1024)
            while !isStopped {
                guard LoopbackSocket.send(fd, chunk) else { return noteClose(request) }
            }
            return false
        case .lyingLength(let declared, let body, let contentType):
            let headers = [Header("Content-Type", contentType), Header("Connection", "close")]
            _ = LoopbackSocket.send(fd, Self.head(200, headers, contentLength: declared) + body)
            return false
        case .conditional(let etag, let lastModified, let headers, let body, let contentType):
            var validators: [Header] = []
            if let etag { validators.append(Header("ETag", etag)) }
            if let lastModified { validators.append(Header("Last-Modified", lastModified)) }
            let matches =
                (etag != nil && request.headers["if-none-match"] == etag)
                || (lastModified != nil && request.headers["if-none-match"] == nil
                    && request.headers["if-modified-since"] == lastModified)
            if matches {
                return LoopbackSocket.send(fd, Self.head(304, validators + headers, contentLength: nil))
            }
            let all = [Header("Content-Type", contentType)] + validators + headers
            return LoopbackSocket.send(fd, Self.head(200, all, contentLength: body.count) + body)
        }
    }

    @discardableResult
    private func noteClose(_ request: ReceivedRequest) -> Bool {
        state.withLock { $0.clientCloses[request.path, default: 0] += 1 }
        return false
    }

    /// Sleeps in 10 ms steps until `condition` holds (true), `timeout` passes (true), or the
    /// client hangs up or the origin stops (false; a hang-up is recorded).
    private func waitWhileConnected(
        _ fd: Int32, for request: ReceivedRequest, until condition: (State) -> Bool, timeout: Duration?
    ) -> Bool {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let (stopped, done) = state.withLock { ($0.isStopped, condition($0)) }
            if stopped { return false }
            if done { return true }
            if let deadline, ContinuousClock.now >= deadline { return true }
            if LoopbackSocket.peerHasClosed(fd, waitingMilliseconds: 10) { return noteClose(request) }
        }
    }

    static func head(_ status: Int, _ headers: [Header], contentLength: Int?) -> [UInt8] {
        var text = "HTTP/1.1 \(status) \(LoopbackOrigin.reason(status))\r\n"
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        if let contentLength, status != 304 { text += "Content-Length: \(contentLength)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }
}
