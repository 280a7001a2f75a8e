// SPDX-License-Identifier: Apache-2.0
package import EventLoops

#if canImport(Glibc)
    import Glibc
#endif

/// One accepted TCP connection, confined to its event loop.
///
/// Reads into a reusable ``ReadBuffer``, parses with ``RequestParser``, dispatches each request to
/// its handler, keeps a pipeline of owed responses in request order, and writes them through a
/// ``ResponseWriter`` (one `writev` per flush). Decisions about timeouts and closing come from
/// ``StateMachine``; this class only performs the I/O.
///
/// The socket is registered edge-triggered for input, output and peer hang-up, so a connection
/// costs no `epoll_ctl` after accept. With edge triggering a short read means the socket was
/// drained; when reading stops early (back-pressure), `hasUnreadInput` remembers to come back.
package final class Connection: EventLoopSelectable {
    // Stored state is touched only on `loop`, and re-entrant paths (a handler answering
    // synchronously, gone handlers, the access log) run only between accesses, never inside one:
    // handlers are called after the parser/pipeline mutation that produced their request has
    // ended. So the hot fields opt out of dynamic exclusivity checks, which cost ~3 % of the
    // server's CPU in profiles (thread-local access sets on every field access).
    let fd: Int32
    let loop: EventLoop
    let owner: ServerLoop
    /// Copied from the server at accept: `let` fields of self are read without retaining, while a
    /// path through the shared server object costs contended reference counting on every request.
    let router: Router
    let accessLog: (@Sendable (AccessLogRecord) -> Void)?
    @exclusivity(unchecked) var registration: Registration?
    @exclusivity(unchecked) var state: StateMachine<LoopInstant>
    @exclusivity(unchecked) var parser: RequestParser
    @exclusivity(unchecked) var input: ReadBuffer
    @exclusivity(unchecked) var writer = ResponseWriter()
    @exclusivity(unchecked) var pipeline = RingBuffer<PendingResponse>(initialCapacity: 4)
    /// Sequence number of `pipeline[0]`; every slot takes one number.
    @exclusivity(unchecked) var firstSequence: UInt64 = 0
    @exclusivity(unchecked) var nextSequence: UInt64 = 0
    /// Slots from this sequence on were dropped because the client left.
    @exclusivity(unchecked) var abandonedFrom: UInt64 = .max
    /// Index in `owner.connections`, for O(1) removal.
    @exclusivity(unchecked) var tableIndex = 0

    @exclusivity(unchecked) private var isDriving = false
    /// Inside ``handleEvents(_:)``: writes wait for the end of the loop's wake-up.
    @exclusivity(unchecked) private var isHandlingEvents = false
    /// In ``ServerLoop/pendingFlushes``.
    @exclusivity(unchecked) private var isFlushPending = false
    /// Inside `processInput`: answers arriving now are drained right after it, no extra pass needed.
    @exclusivity(unchecked) private var isParsing = false
    @exclusivity(unchecked) private var needsAnotherPass = false
    @exclusivity(unchecked) private var readRequested = false
    @exclusivity(unchecked) var isReadPaused = false
    @exclusivity(unchecked) private var hasUnreadInput = false
    @exclusivity(unchecked) private var peerHungUp = false
    @exclusivity(unchecked) private var timer: TimerID?
    @exclusivity(unchecked) private var timerDeadline: LoopInstant?
    @exclusivity(unchecked) private var lingerDeadline: LoopInstant?
    /// The last response answers a request that was not (fully) read: close with a linger.
    @exclusivity(unchecked) var closesAfterError = false

    /// Pipelined requests waiting for answers before reading pauses.
    static let maxPipelinedRequests = 32
    /// Queued output bytes before reading pauses.
    static let maxQueuedOutputBytes = 512 * 1024
    /// How long a closing connection keeps draining input so its last response is not reset away.
    static let lingerTimeout: Duration = .seconds(2)

    init(fd: Int32, owner: ServerLoop) {
        self.fd = fd
        self.owner = owner
        self.loop = owner.loop
        router = owner.router
        accessLog = owner.accessLog
        let configuration = owner.shared.configuration
        state = StateMachine(now: owner.loop.now, timeouts: configuration.timeouts)
        parser = RequestParser(limits: configuration.parserLimits)
        input = ReadBuffer(
            initialCapacity: 4096,
            maxCapacity: configuration.maxRequestLineBytes + configuration.maxHeaderBytes + 4096)
    }

    // MARK: - Events

    /// Called by the loop with the socket's ready events.
    package func handleEvents(_ events: IOEvents) {
        if lingerDeadline != nil {
            drainWhileLingering()
            return
        }
        if events.containsAny(.anyHangup) { peerHungUp = true }
        isHandlingEvents = true
        drive(read: events.containsAny(.anyInput))
        isHandlingEvents = false
    }

    /// Sends what was answered while the loop handled this wake-up's events (``ServerLoop/flushPending()``).
    func flushPending() {
        isFlushPending = false
        if !state.isClosed { drive(read: false) }
    }

    /// The single place that reads, parses, drains the pipeline and writes. Re-entrant calls (a
    /// handler answering synchronously) only ask for another pass, so the stack never grows with
    /// pipelined requests and everything answered in one pass leaves in one `writev`.
    func drive(read: Bool) {
        if isDriving {
            needsAnotherPass = true
            if read { readRequested = true }
            return
        }
        isDriving = true
        var shouldRead = read
        repeat {
            needsAnotherPass = false
            if shouldRead { readInput() } else { processInput() }
            shouldRead = false
            if state.isClosed { break }
            drainPipeline()
            if isHandlingEvents && !writer.isEmpty {
                // Answered while the loop goes through the ready sockets: sent with every other answer of this
                // wake-up once all are read, in one burst. A client then finds more answers per wake-up, and
                // fewer of its threads are woken per answer (HOT: +5 % requests/s, p99 halved; BENCHMARKS.md).
                if !isFlushPending {
                    isFlushPending = true
                    owner.pendingFlushes.append(self)
                }
            } else {
                flush()
            }
            if state.isClosed { break }
            if isReadPaused && pipeline.count < Self.maxPipelinedRequests / 2
                && writer.pendingBytes < Self.maxQueuedOutputBytes / 2
            {
                isReadPaused = false
                shouldRead = hasUnreadInput
                needsAnotherPass = true
            }
            if readRequested {
                readRequested = false
                shouldRead = true
                needsAnotherPass = true
            }
        } while needsAnotherPass
        isDriving = false
        if !state.isClosed { updateTimer() }
    }

    /// A response was stored in the pipeline: write it now, or let the running pass pick it up.
    func responseArrived() {
        if isDriving {
            if !isParsing { needsAnotherPass = true }
            return
        }
        drive(read: false)
    }

    private var canRead: Bool {
        !state.isClosed && state.reading != .stopped && !isReadPaused
    }

    private func readInput() {
        processInput()
        while canRead {
            let space = input.prepareForRead(minimum: 2048)
            if space.count == 0 { break }  // unreachable: the parser's limits fail first
            let n = Glibc.read(fd, space.baseAddress!, space.count)
            if n > 0 {
                input.didRead(n)
                processInput()
                if n < space.count && !peerHungUp {
                    hasUnreadInput = false
                    return
                }
                continue
            }
            if n == 0 {
                hasUnreadInput = false
                handle(state.peerClosed())
                return
            }
            let error = errno
            if error == EINTR { continue }
            if error == EAGAIN || error == EWOULDBLOCK {
                hasUnreadInput = false
                if peerHungUp { handle(state.peerClosed()) }
                return
            }
            handle(state.writeFailed())  // ECONNRESET and friends: the peer is gone
            return
        }
        if !state.isClosed {
            hasUnreadInput = true
            // Not reading any more (paused or stopped) but the peer hung up: it is gone.
            if peerHungUp { handle(state.peerClosed()) }
        }
    }

    /// Parses buffered input until it runs out, reading stops, or back-pressure pauses it.
    private func processInput() {
        isParsing = true
        defer { isParsing = false }
        while canRead && input.count > 0 {
            let (event, consumed) = input.withUnreadBytes { parser.parse($0) }
            input.consume(consumed)
            switch consume event {
            case .needMoreData:
                if consumed > 0 || input.count > 0 { state.bytesReceived(now: loop.now) }
                return
            case .headReceived(let expectsContinue):
                state.headReceived(now: loop.now)
                if expectsContinue && input.count == 0 { enqueueContinue() }
            case .request(let request):
                handleRequest(request)
            case .failure(let error):
                handle(state.parseFailed(error.status))
                return
            }
            if pipeline.count >= Self.maxPipelinedRequests || writer.pendingBytes >= Self.maxQueuedOutputBytes {
                isReadPaused = true
            }
        }
    }

    private func handleRequest(_ request: HTTPRequest) {
        let action = state.requestReceived(now: loop.now, keepAlive: request.keepAlive)
        switch action {
        case .dispatch:
            let sequence = appendSlot(for: request)
            switch router.match(request) {
            case .handler(let handler):
                handler.call(request, HTTPResponder(loop: loop, connection: self, sequence: sequence))
            case .notFound:
                deliver(.error(.notFound), sequence: sequence)
            case .methodNotAllowed(let allow):
                var response = HTTPResponse.error(.methodNotAllowed)
                response.headers.append(HTTPField(name: "Allow", value: allow))
                deliver(response, sequence: sequence)
            case .notImplemented:
                deliver(.error(.notImplemented), sequence: sequence)
            }
        case .reject(let status):
            let sequence = appendSlot(for: request)
            rejectSlot(sequence: sequence, with: .error(status, message: "Shutting down"))
        default:
            break  // not reading requests any more: nothing to answer
        }
    }

    // MARK: - Actions

    func handle(_ action: StateMachine<LoopInstant>.Action) {
        switch action {
        case .none, .dispatch, .reject:
            break
        case .respondAndClose(let status):
            enqueueError(status)
        case .close:
            if state.isPeerGone {
                close(linger: false)
            } else {
                close(linger: closesAfterError || !inputIsDrained())
            }
        case .abort:
            abandonUnanswered(from: firstSequence)
            close(linger: false)
        case .abandonUnanswered:
            abandonUnansweredSlots()
            if !state.isClosed && !state.hasPendingOutput && pipeline.isEmpty { close(linger: false) }
        }
    }

    // MARK: - Writing

    private func flush() {
        let result = writer.isEmpty ? .drained : writer.write(to: fd)
        switch result {
        case .drained:
            handle(state.writeAttempted(now: loop.now, drained: true, progressed: true))
        case .blocked(let progressed):
            handle(state.writeAttempted(now: loop.now, drained: false, progressed: progressed))
        case .failed:
            handle(state.writeFailed())
        }
    }

    // MARK: - Timers and closing

    private func updateTimer() {
        guard let deadline = lingerDeadline ?? state.deadline else { return }
        // Lazy re-arming: a deadline that moved later is found when the armed timer fires, so
        // keep-alive traffic does not touch the timer heap on every request.
        if let armed = timerDeadline, armed <= deadline { return }
        if let timer { loop.cancelTimer(timer) }
        timerDeadline = deadline
        timer = loop.scheduleTimer(at: deadline) { [self] in timerFired() }
    }

    private func timerFired() {
        timer = nil
        timerDeadline = nil
        if let lingerDeadline {
            if lingerDeadline <= loop.now { finalClose() } else { updateTimer() }
            return
        }
        handle(state.timerFired(now: loop.now))
        if state.isClosed { return }
        drive(read: false)
    }

    /// Begins a graceful shutdown of this connection (server shutting down).
    func beginShutdown() {
        guard !state.isClosed else { return }
        handle(state.shutdownBegan())
        if !state.isClosed { drive(read: false) }
    }

    /// Closes at once, telling handlers of unanswered requests that the client is gone.
    func forceClose() {
        if lingerDeadline != nil {
            finalClose()
            return
        }
        guard !state.isClosed else { return }
        handle(.abort)
    }

    private func close(linger: Bool) {
        guard !state.isClosed else { return }
        state.closed()
        if linger {
            // Half-close and keep reading briefly: closing with unread input would send RST, and
            // an RST can destroy the response (e.g. a 413) before the client has read it.
            shutdown(fd, Int32(SHUT_WR))
            lingerDeadline = loop.now.advanced(
                by: min(Self.lingerTimeout, owner.shared.configuration.headerReadTimeout))
            drainWhileLingering()
            if lingerDeadline != nil { updateTimer() }
        } else {
            finalClose()
        }
    }

    /// Reads and discards what the client already sent (a few KiB at most) so a plain close sends
    /// FIN, not RST. Returns `false` if input is still arriving, which calls for a linger instead.
    private func inputIsDrained() -> Bool {
        var budget = 4
        while budget > 0 {
            let space = input.prepareForRead(minimum: 4096)
            input.consume(input.count)
            let n = Glibc.read(fd, space.baseAddress!, space.count)
            if n == 0 { return true }
            if n < 0 { return errno == EAGAIN || errno == EWOULDBLOCK }
            budget -= 1
        }
        return false
    }

    private func drainWhileLingering() {
        while true {
            let space = input.prepareForRead(minimum: 4096)
            input.consume(input.count)
            let n = Glibc.read(fd, space.baseAddress!, space.count)
            if n > 0 { continue }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return }
            finalClose()
            return
        }
    }

    private func finalClose() {
        lingerDeadline = nil
        if let timer { loop.cancelTimer(timer) }
        timer = nil
        timerDeadline = nil
        state.closed()
        if let registration { loop.deregister(registration, fd: fd) }
        registration = nil
        closeDescriptor(fd)
        abandonUnanswered(from: firstSequence)
        writer.discardAll()
        owner.connectionClosed(self)
    }
}
