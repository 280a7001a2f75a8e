// SPDX-License-Identifier: Apache-2.0
package import EventLoops

extension Connection {
    /// The life of one connection as a value type: what is being read, how many requests await an
    /// answer, whether output is stalled, and when to close. The owner (``Connection``) performs
    /// the I/O and asks for the ``Action``. Generic over the instant type so that tests drive it
    /// with a manual clock (Hummingbird's `HTTPConnectionStateHandler`).
    package struct StateMachine<Instant: NanosecondInstant>: Sendable {
        /// The three connection timeouts.
        package struct Timeouts: Sendable, Hashable {
            /// From the first byte of a request (or from accept) to its complete head, and the most
            /// time between two reads of a body.
            package var headerRead: Duration
            /// Keep-alive: from the last response to the first byte of the next request.
            package var idle: Duration
            /// The most time output may wait on a client that does not read.
            package var writeStall: Duration

            /// Creates timeouts.
            package init(headerRead: Duration, idle: Duration, writeStall: Duration) {
                self.headerRead = headerRead
                self.idle = idle
                self.writeStall = writeStall
            }
        }

        /// What the connection is reading.
        package enum Reading: Sendable, Equatable {
            /// Waiting for the first byte of a request; `isFirst` for the one right after accept.
            case awaitingRequest(since: Instant, isFirst: Bool)
            /// Part of a head has arrived.
            case receivingHead(since: Instant)
            /// Reading a body; the timeout counts from the last progress.
            case receivingBody(lastProgress: Instant)
            /// No further request will be read (close requested, error, peer gone, shutdown).
            case stopped
        }

        /// What the owner must do.
        package enum Action: Sendable, Equatable {
            /// Nothing.
            case none
            /// Hand the request to its handler.
            case dispatch
            /// Answer with this status instead of dispatching, then close (503 while shutting down).
            case reject(HTTPStatus)
            /// Queue this error response after the ones owed, then close once it is sent.
            case respondAndClose(HTTPStatus)
            /// Close now; everything owed has been sent.
            case close
            /// Close now and tell handlers of unanswered requests that their client is gone.
            case abort
            /// The client left: tell handlers of unanswered requests, drop them, send what is
            /// already answered, then close.
            case abandonUnanswered
        }

        /// The timeouts in force.
        package let timeouts: Timeouts
        /// `timeouts` in nanoseconds, converted once: ``deadline`` is asked after every request.
        private let limits: (headerRead: Int64, idle: Int64, writeStall: Int64)
        /// What is being read.
        package private(set) var reading: Reading
        /// Requests handed to handlers and not yet answered.
        package private(set) var unanswered = 0
        /// Whether queued output waits to be written.
        package private(set) var hasPendingOutput = false
        /// Last time output made progress while it was blocked, or `nil` when not blocked.
        package private(set) var writeBlockedSince: Instant?
        /// Whether the server is shutting down.
        package private(set) var isShuttingDown = false
        /// Whether the peer has closed or reset.
        package private(set) var isPeerGone = false
        /// Whether the connection is closed.
        package private(set) var isClosed = false

        /// A fresh connection accepted at `now`.
        package init(now: Instant, timeouts: Timeouts) {
            self.timeouts = timeouts
            limits = (timeouts.headerRead.nanoseconds, timeouts.idle.nanoseconds, timeouts.writeStall.nanoseconds)
            reading = .awaitingRequest(since: now, isFirst: true)
        }

        /// Bytes of a not yet complete request arrived.
        package mutating func bytesReceived(now: Instant) {
            switch reading {
            case .awaitingRequest(let since, let isFirst):
                // The first request's head must be complete within the timeout from accept (as in
                // nginx), so a connection cannot reset its clock by sending one byte late.
                reading = .receivingHead(since: isFirst ? since : now)
            case .receivingBody: reading = .receivingBody(lastProgress: now)
            case .receivingHead, .stopped: break
            }
        }

        /// A head announcing a body is complete.
        package mutating func headReceived(now: Instant) {
            guard reading != .stopped else { return }
            reading = .receivingBody(lastProgress: now)
        }

        /// A complete request was parsed. Returns ``Action/dispatch`` or ``Action/reject(_:)``.
        package mutating func requestReceived(now: Instant, keepAlive: Bool) -> Action {
            guard reading != .stopped, !isClosed else { return .none }
            if isShuttingDown {
                reading = .stopped
                return .reject(.serviceUnavailable)
            }
            unanswered += 1
            reading = keepAlive ? .awaitingRequest(since: now, isFirst: false) : .stopped
            return .dispatch
        }

        /// A handler answered (or a rejection/error response was queued for an owed request).
        package mutating func responseQueued(now: Instant) {
            unanswered = max(0, unanswered - 1)
            hasPendingOutput = true
            refreshIdle(now: now)
        }

        /// Output was queued that answers no request (an error response or `100 Continue`).
        package mutating func outputQueued() {
            hasPendingOutput = true
        }

        /// The request could not be parsed: answer `status` and close.
        package mutating func parseFailed(_ status: HTTPStatus) -> Action {
            guard !isClosed else { return .none }
            reading = .stopped
            return .respondAndClose(status)
        }

        /// A write attempt ended. `drained` when nothing is left; `progressed` when bytes moved.
        package mutating func writeAttempted(now: Instant, drained: Bool, progressed: Bool) -> Action {
            guard !isClosed else { return .none }
            if drained {
                hasPendingOutput = false
                writeBlockedSince = nil
                refreshIdle(now: now)
                return closeIfFinished()
            }
            if progressed || writeBlockedSince == nil { writeBlockedSince = now }
            return .none
        }

        /// The peer closed its side or reset: stop reading; close now unless output still owed to an
        /// answered request can be flushed (a client that half-closes still reads).
        package mutating func peerClosed() -> Action {
            guard !isClosed, !isPeerGone else { return .none }
            isPeerGone = true
            reading = .stopped
            if unanswered > 0 {
                unanswered = 0
                return .abandonUnanswered
            }
            return hasPendingOutput ? .none : .close
        }

        /// Writing failed for good (EPIPE, ECONNRESET).
        package mutating func writeFailed() -> Action {
            guard !isClosed else { return .none }
            isPeerGone = true
            reading = .stopped
            return .abort
        }

        /// The server began a graceful shutdown: idle connections close now, others finish.
        package mutating func shutdownBegan() -> Action {
            guard !isClosed else { return .none }
            isShuttingDown = true
            if case .awaitingRequest = reading {
                reading = .stopped
            }
            return closeIfFinished()
        }

        /// The owner closed the socket.
        package mutating func closed() {
            isClosed = true
            reading = .stopped
        }

        /// The earliest instant at which ``timerFired(now:)`` has something to do, or `nil`.
        package var deadline: Instant? {
            guard !isClosed else { return nil }
            var earliest: Instant?
            if let blocked = writeBlockedSince { earliest = blocked.advanced(byNanoseconds: limits.writeStall) }
            let readDeadline: Instant?
            switch reading {
            case .awaitingRequest(let since, let isFirst):
                // Idle only counts while nothing is owed; a slow handler is not an idle client.
                readDeadline =
                    unanswered == 0 && !hasPendingOutput
                    ? since.advanced(byNanoseconds: isFirst ? limits.headerRead : limits.idle) : nil
            case .receivingHead(let since): readDeadline = since.advanced(byNanoseconds: limits.headerRead)
            case .receivingBody(let last): readDeadline = last.advanced(byNanoseconds: limits.headerRead)
            case .stopped: readDeadline = nil
            }
            if let readDeadline, earliest.map({ readDeadline < $0 }) ?? true { earliest = readDeadline }
            return earliest
        }

        /// A timer fired at `now`: decides whether a timeout has expired.
        package mutating func timerFired(now: Instant) -> Action {
            guard !isClosed else { return .none }
            if let blocked = writeBlockedSince, blocked.advanced(byNanoseconds: limits.writeStall) <= now {
                reading = .stopped
                return .abort
            }
            switch reading {
            case .awaitingRequest(let since, let isFirst):
                let limit = isFirst ? limits.headerRead : limits.idle
                if unanswered == 0 && !hasPendingOutput && since.advanced(byNanoseconds: limit) <= now {
                    reading = .stopped
                    return .close
                }
            case .receivingHead(let since):
                if since.advanced(byNanoseconds: limits.headerRead) <= now {
                    reading = .stopped
                    return .respondAndClose(.requestTimeout)
                }
            case .receivingBody(let last):
                if last.advanced(byNanoseconds: limits.headerRead) <= now {
                    reading = .stopped
                    return .respondAndClose(.requestTimeout)
                }
            case .stopped:
                break
            }
            return .none
        }

        private mutating func refreshIdle(now: Instant) {
            if case .awaitingRequest(_, let isFirst) = reading, unanswered == 0 {
                reading = .awaitingRequest(since: now, isFirst: isFirst)
            }
        }

        private func closeIfFinished() -> Action {
            if reading == .stopped && unanswered == 0 && !hasPendingOutput { return .close }
            return .none
        }
    }
}
