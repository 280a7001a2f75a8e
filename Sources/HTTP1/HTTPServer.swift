// SPDX-License-Identifier: Apache-2.0
package import EventLoops
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The HTTP/1.1 server: one event loop per thread, one `SO_REUSEPORT` listen socket per loop.
///
/// ```swift
/// var router = Router()
/// router.add(.get, "/health") { _, responder in responder.respond(.init(status: .ok, body: .bytes(ok))) }
/// let server = HTTPServer(configuration: .init(), router: router, accessLog: nil)
/// try server.start()
/// // … on SIGTERM, from an ordinary thread:
/// server.shutdown()
/// ```
package final class HTTPServer: Sendable {
    /// The settings in force (those it was created with, then the reloadable ones of ``update(configuration:)``).
    package var configuration: Configuration { shared.configuration }
    private let shared: ServerShared

    private struct Running: Sendable {
        let group: EventLoopGroup
        let loops: [ServerLoop]
        let addresses: [SocketAddress]
    }

    private enum Phase: Sendable {
        case idle, starting, running(Running), stopping, stopped
    }

    private let phase = Mutex(Phase.idle)
    private final class StopSignal: @unchecked Sendable {  // Sendable: `isStopped` is guarded by `lock`.
        let lock = ConditionLock()
        var isStopped = false
    }
    private let stopSignal = StopSignal()

    /// Creates a server; nothing is bound until ``start()``.
    /// - Parameters:
    ///   - accessLog: called on the connection's loop for every response queued; keep it cheap.
    package init(
        configuration: Configuration,
        router: Router,
        accessLog: (@Sendable (AccessLogRecord) -> Void)? = nil
    ) {
        shared = ServerShared(configuration: configuration, router: router, accessLog: accessLog)
    }

    /// Whether the `accessLog` hook is called (default true). While false, nothing is built for it per request,
    /// so a server whose access log can be turned on by a reload pays nothing while it is off. Any thread.
    package var isAccessLogEnabled: Bool {
        get { shared.isAccessLogEnabled.load(ordering: .relaxed) }
        set { shared.isAccessLogEnabled.store(newValue, ordering: .relaxed) }
    }

    /// Applies the reloadable settings of `configuration` (config hot reload): connection limit, body limit,
    /// timeouts, shutdown timeout. The listener (host, port, threads, backlog) keeps its values. Connections
    /// already open keep the limits and timeouts they started with; new connections get the new ones. Nothing
    /// is closed. Any thread.
    /// - Throws: ``ConfigurationError`` when a value is out of range; nothing changes then.
    package func update(configuration: Configuration) throws(ConfigurationError) {
        let running = shared.configuration
        var next = configuration
        next.host = running.host
        next.port = running.port
        next.threads = running.threads
        next.backlog = running.backlog
        try next.validate()
        shared.update(next)
    }

    /// Validates the configuration, starts the loops and binds the listen sockets.
    /// - Throws: ``ConfigurationError``, ``HTTPServerError``.
    package func start() throws {
        let configuration = self.configuration
        try configuration.validate()
        let address = try SocketAddress.listenAddress(host: configuration.host, port: configuration.port)
        try phase.withLock { phase throws(HTTPServerError) in
            guard case .idle = phase else { throw .alreadyStarted }
            phase = .starting
        }
        // writev/sendfile take no MSG_NOSIGNAL: a write to a reset connection must return EPIPE,
        // not kill the process.
        signal(SIGPIPE, SIG_IGN)
        var fds: [Int32] = []
        var group: EventLoopGroup?
        do {
            var bound = address
            for index in 0..<configuration.threads {
                let fd = try Self.makeListenSocket(bound, backlog: configuration.backlog)
                fds.append(fd)
                if index == 0, let local = SocketAddress.local(of: fd) { bound = local }
            }
            let started = try EventLoopGroup(threads: configuration.threads, name: "http")
            group = started
            let loops = zip(started.loops, fds).map { ServerLoop(loop: $0, shared: shared, listenFD: $1) }
            fds.removeAll()  // owned by the ServerLoops now
            for serverLoop in loops {
                try serverLoop.loop.runAndWait { try serverLoop.startAccepting() }
            }
            phase.withLock { $0 = .running(Running(group: started, loops: loops, addresses: [bound])) }
        } catch {
            for fd in fds { closeDescriptor(fd) }
            group?.shutdown()
            phase.withLock { $0 = .idle }
            if let error = error as? HTTPServerError { throw error }
            throw HTTPServerError.startFailed("\(error)")
        }
    }

    private static func makeListenSocket(_ address: SocketAddress, backlog: Int) throws(SystemError) -> Int32 {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = try syscall("socket") {
            socket(
                family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            var one: Int32 = 1
            let size = socklen_t(MemoryLayout<Int32>.size)
            _ = try syscall("setsockopt(SO_REUSEADDR)") { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size) }
            _ = try syscall("setsockopt(SO_REUSEPORT)") { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, size) }
            if address.isIPv6 {
                _ = try syscall("setsockopt(IPV6_V6ONLY)") {
                    setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, size)
                }
            }
            _ = try syscall("bind") { address.withSockAddr { bind(fd, $0, $1) } }
            _ = try syscall("listen") { listen(fd, Int32(backlog)) }
            return fd
        } catch {
            closeDescriptor(fd)
            throw error
        }
    }

    /// The bound addresses (with the real port when configured with port 0); empty unless running.
    package var localAddresses: [SocketAddress] {
        phase.withLock { phase in
            if case .running(let running) = phase { return running.addresses }
            return []
        }
    }

    /// The bound port, or `nil` unless running.
    package var port: Int? { localAddresses.first?.port }

    /// The server's event loops (empty unless running), e.g. to schedule work next to connections.
    package var eventLoops: [EventLoop] {
        phase.withLock { phase in
            if case .running(let running) = phase { return running.group.loops }
            return []
        }
    }

    /// Open connections, all loops together (for metrics and tests).
    package var connectionCount: Int { shared.connectionCount.load(ordering: .relaxed) }

    /// Graceful shutdown: stop accepting, let in-flight requests finish (requests that arrive now
    /// get 503), close idle connections, and after `timeout` (default `shutdownTimeout`) close the
    /// rest. Blocks until the loops have stopped. Call from an ordinary thread, never from a loop.
    /// A second call waits for the first to finish.
    package func shutdown(timeout: Duration? = nil) {
        let running = phase.withLock { phase -> Running? in
            if case .running(let running) = phase {
                phase = .stopping
                return running
            }
            if case .idle = phase { phase = .stopped }
            return nil
        }
        guard let running else {
            if case .stopped = phase.withLock({ $0 }) { markStopped() }
            waitUntilStopped()
            return
        }
        for serverLoop in running.loops {
            serverLoop.loop.execute { serverLoop.beginShutdown() }
        }
        let deadline = LoopInstant.now().advanced(by: timeout ?? configuration.shutdownTimeout)
        while shared.connectionCount.load(ordering: .relaxed) > 0 && LoopInstant.now() < deadline {
            usleep(5_000)
        }
        for serverLoop in running.loops {
            _ = try? serverLoop.loop.runAndWait { serverLoop.forceCloseAll() }
        }
        running.group.shutdown()
        phase.withLock { $0 = .stopped }
        markStopped()
    }

    private func markStopped() {
        stopSignal.lock.withLock { stopSignal.isStopped = true }
        stopSignal.lock.broadcast()
    }

    /// Blocks until ``shutdown(timeout:)`` has finished.
    package func waitUntilStopped() {
        stopSignal.lock.lock()
        while !stopSignal.isStopped { stopSignal.lock.wait() }
        stopSignal.lock.unlock()
    }
}
