// SPDX-License-Identifier: Apache-2.0
internal import CLinuxShims
import EventLoops
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What every loop of one server shares: settings, routes, the access-log hook and the global
/// connection count that enforces `maxConnections` across loops.
final class ServerShared: Sendable {
    /// The settings in force: read once per new connection (which keeps them for its life), replaced by
    /// ``update(_:)`` on a config reload.
    var configuration: HTTPServer.Configuration { current.withLock { $0 } }
    private let current: Mutex<HTTPServer.Configuration>
    /// `configuration.maxConnections`, apart so that every accept reads it without the lock.
    private let maxConnections: Atomic<Int>
    let router: Router
    let accessLog: (@Sendable (AccessLogRecord) -> Void)?
    /// Whether `accessLog` is called (``HTTPServer/isAccessLogEnabled``): while false, connections keep no
    /// request for it and build no record.
    let isAccessLogEnabled = Atomic<Bool>(true)
    /// Open (or reserved) connections, all loops together.
    let connectionCount = Atomic<Int>(0)
    private let pausedCount = Atomic<Int>(0)
    private let pausedLoops = Mutex<[ServerLoop]>([])

    init(configuration: HTTPServer.Configuration, router: Router, accessLog: (@Sendable (AccessLogRecord) -> Void)?) {
        current = Mutex(configuration)
        maxConnections = Atomic(configuration.maxConnections)
        self.router = router
        self.accessLog = accessLog
    }

    /// Replaces the settings (already validated); a higher connection limit wakes loops paused at the old one.
    func update(_ configuration: HTTPServer.Configuration) {
        current.withLock { $0 = configuration }
        maxConnections.store(configuration.maxConnections, ordering: .sequentiallyConsistent)
        if pausedCount.load(ordering: .sequentiallyConsistent) > 0,
            connectionCount.load(ordering: .sequentiallyConsistent) < configuration.maxConnections
        {
            resumePausedLoops()
        }
    }

    /// Takes one connection slot if the limit allows.
    func reserveConnection() -> Bool {
        var current = connectionCount.load(ordering: .sequentiallyConsistent)
        while current < maxConnections.load(ordering: .relaxed) {
            let (exchanged, original) = connectionCount.compareExchange(
                expected: current, desired: current + 1, ordering: .sequentiallyConsistent)
            if exchanged { return true }
            current = original
        }
        return false
    }

    /// Returns a slot and wakes loops that paused accepting at the limit.
    func releaseConnection() {
        connectionCount.subtract(1, ordering: .sequentiallyConsistent)
        if pausedCount.load(ordering: .sequentiallyConsistent) > 0 { resumePausedLoops() }
    }

    /// Records that `loop` paused at the limit. Re-checks afterwards: a slot released between the
    /// failed reservation and this call would otherwise never wake it (the count and the paused
    /// list are two atomics, ordered sequentially consistent on both sides).
    func pauseAtLimit(_ loop: ServerLoop) {
        pausedLoops.withLock { $0.append(loop) }
        pausedCount.add(1, ordering: .sequentiallyConsistent)
        if connectionCount.load(ordering: .sequentiallyConsistent)
            < maxConnections.load(ordering: .sequentiallyConsistent)
        {
            resumePausedLoops()
        }
    }

    private func resumePausedLoops() {
        let loops = pausedLoops.withLock { loops -> [ServerLoop] in
            defer { loops.removeAll() }
            return loops
        }
        guard !loops.isEmpty else { return }
        pausedCount.subtract(loops.count, ordering: .sequentiallyConsistent)
        for serverLoop in loops {
            serverLoop.loop.execute { serverLoop.resumeAccepting() }
        }
    }
}

/// The part of the server that lives on one event loop: its listen socket, its connections and
/// its cached `Date` value.
final class ServerLoop: EventLoopSelectable, @unchecked Sendable {
    // Sendable: every mutable field is touched only on `loop` (checked with preconditionInLoop);
    // other threads only call `loop.execute { … }` with it.
    let loop: EventLoop
    let shared: ServerShared
    /// This loop's copies of the shared router and access-log hook (``Router/copyForLoop()``): every request
    /// retains a handler and calls the hook, and their reference counts must not be another core's too.
    let router: Router
    let accessLog: (@Sendable (AccessLogRecord) -> Void)?
    private var listenFD: Int32
    private var listenRegistration: Registration?
    private var isAcceptPaused = false
    private var isShuttingDown = false
    private(set) var connections: [Connection] = []
    /// Connections with answers to send at the end of this wake-up (see ``Connection/handleEvents(_:)``).
    @exclusivity(unchecked) var pendingFlushes: [Connection] = []
    /// The list being sent, swapped with ``pendingFlushes`` so that neither allocates in steady state.
    @exclusivity(unchecked) private var flushing: [Connection] = []
    // Touched only on the loop, per response: no dynamic exclusivity check.
    @exclusivity(unchecked) private var dateSecond = -1
    /// `Date: <IMF-fixdate>\r\n`, whole, so that a response copies it in one piece.
    private let dateLine: UnsafeMutableRawPointer = {
        let line = UnsafeMutableRawPointer.allocate(byteCount: ServerLoop.dateLineCount, alignment: 8)
        line.copyMemory(from: "Date: ", byteCount: 6)
        (line + 35).copyMemory(from: "\r\n", byteCount: 2)
        return line
    }()
    static let dateLineCount = 37

    /// Back-off after EMFILE/ENFILE: accepting resumes after this pause instead of spinning.
    static let acceptBackoff: Duration = .milliseconds(100)

    init(loop: EventLoop, shared: ServerShared, listenFD: Int32) {
        self.loop = loop
        self.shared = shared
        self.listenFD = listenFD
        router = shared.router.copyForLoop()
        if let hook = shared.accessLog {
            let own: @Sendable (AccessLogRecord) -> Void = { record in hook(record) }
            accessLog = own
        } else {
            accessLog = nil
        }
    }

    deinit {
        dateLine.deallocate()
        if listenFD >= 0 { closeDescriptor(listenFD) }
    }

    /// Registers the listen socket (level-triggered: pending connections left over by the accept
    /// budget wake the loop again).
    func startAccepting() throws(SystemError) {
        loop.preconditionInLoop()
        loop.setEventsHandledHandler { [weak self] in self?.flushPending() }
        listenRegistration = try loop.register(fd: listenFD, events: .readable, handler: self)
    }

    /// Sends what the connections answered during this wake-up. Called by the loop after the ready events.
    func flushPending() {
        guard !pendingFlushes.isEmpty else { return }
        swap(&pendingFlushes, &flushing)
        for connection in flushing { connection.flushPending() }
        flushing.removeAll(keepingCapacity: true)
    }

    func handleEvents(_ events: IOEvents) {
        acceptConnections()
    }

    private func acceptConnections() {
        // A budget keeps one busy listener from starving the connections already open.
        var budget = 64
        while budget > 0 && !isAcceptPaused && !isShuttingDown {
            guard shared.reserveConnection() else {
                pauseAccepting()
                shared.pauseAtLimit(self)
                return
            }
            let fd = thumbd_accept4(listenFD)
            if fd < 0 {
                let error = errno
                shared.releaseConnection()
                switch error {
                case EAGAIN, EWOULDBLOCK:
                    return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pauseAccepting()
                    loop.scheduleTimer(after: Self.acceptBackoff) { [self] in resumeAccepting() }
                    return
                default:
                    continue  // ECONNABORTED, EPROTO, EPERM, EINTR: that one connection failed
                }
            }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let connection = Connection(fd: fd, owner: self)
            do {
                connection.registration = try loop.register(
                    fd: fd, events: [.readable, .writable, .readHangup, .edgeTriggered], handler: connection)
            } catch {
                closeDescriptor(fd)
                shared.releaseConnection()
                continue
            }
            connection.tableIndex = connections.count
            connections.append(connection)
            budget -= 1
        }
    }

    private func pauseAccepting() {
        guard !isAcceptPaused, let listenRegistration else { return }
        isAcceptPaused = true
        try? loop.reregister(listenRegistration, fd: listenFD, events: [])
    }

    /// Accepts again after a pause at the limit or an EMFILE back-off.
    func resumeAccepting() {
        loop.preconditionInLoop()
        guard isAcceptPaused, !isShuttingDown, let listenRegistration else { return }
        isAcceptPaused = false
        try? loop.reregister(listenRegistration, fd: listenFD, events: .readable)
        acceptConnections()
    }

    /// Called by a connection once its socket is closed.
    func connectionClosed(_ connection: Connection) {
        let index = connection.tableIndex
        guard index < connections.count, connections[index] === connection else { return }
        let last = connections.removeLast()
        if index < connections.count {
            connections[index] = last
            last.tableIndex = index
        }
        shared.releaseConnection()
    }

    /// Stops accepting (closes the listen socket) and starts closing connections gracefully.
    func beginShutdown() {
        loop.preconditionInLoop()
        isShuttingDown = true
        if let listenRegistration { loop.deregister(listenRegistration, fd: listenFD) }
        listenRegistration = nil
        if listenFD >= 0 { closeDescriptor(listenFD) }
        listenFD = -1
        for connection in connections { connection.beginShutdown() }
    }

    /// Closes every remaining connection now (shutdown timeout reached).
    func forceCloseAll() {
        loop.preconditionInLoop()
        for connection in connections { connection.forceClose() }
    }

    /// The `Date` field line (`Date: <IMF-fixdate>\r\n`), formatted at most once per second per loop.
    func currentDateLine() -> UnsafeRawBufferPointer {
        let now = time(nil)
        if now != dateSecond {
            dateSecond = now
            formatIMFDate(now, into: dateLine + 6)
        }
        return UnsafeRawBufferPointer(start: dateLine, count: Self.dateLineCount)
    }
}

/// Writes `Sun, 06 Nov 1994 08:49:37 GMT` (29 bytes, RFC 9110 §5.6.7) for `seconds` since 1970.
func formatIMFDate(_ seconds: Int, into buffer: UnsafeMutableRawPointer) {
    var t = time_t(seconds)
    var parts = tm()
    gmtime_r(&t, &parts)
    let days = "SunMonTueWedThuFriSat"
    let months = "JanFebMarAprMayJunJulAugSepOctNovDec"
    var text = ""
    text.reserveCapacity(29)
    let day = days.utf8.dropFirst(Int(parts.tm_wday) * 3).prefix(3)
    let month = months.utf8.dropFirst(Int(parts.tm_mon) * 3).prefix(3)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    text += String(decoding: day, as: UTF8.self) + ", " + two(parts.tm_mday) + " "
    text += String(decoding: month, as: UTF8.self) + " " + String(parts.tm_year + 1900) + " "
    text += two(parts.tm_hour) + ":" + two(parts.tm_min) + ":" + two(parts.tm_sec) + " GMT"
    let bytes = Array(text.utf8.prefix(29))
    bytes.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
}
