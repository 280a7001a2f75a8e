// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Synchronization

/// One owed answer in a connection's pipeline, in request order.
struct PendingResponse {
    enum Kind {
        /// A request; its handler answers through ``HTTPResponder``.
        case request
        /// `100 Continue`, sent in order before the body is read.
        case interim
        /// An error the server itself answers (parse failure, timeout); the connection then closes.
        case error
    }

    let kind: Kind
    let method: HTTPMethod
    let version: HTTPVersion
    let keepAlive: Bool
    let startedAt: LoopInstant
    /// Kept only when an access log wants the path.
    let request: HTTPRequest?
    var response: HTTPResponse?
    var closeAfter = false
    var goneHandler: (@Sendable () -> Void)?

    /// Whether ``response`` is set. A pattern on the stored optional reads it in place; comparing it with
    /// `nil` copied and destroyed the whole response through its value witnesses (measured per request).
    var isAnswered: Bool {
        if case .some = response { true } else { false }
    }
}

extension Connection {
    // MARK: - Slots

    func appendSlot(for request: HTTPRequest) -> UInt64 {
        let keepRequest = accessLog != nil && owner.shared.isAccessLogEnabled.load(ordering: .relaxed)
        return appendSlot(
            PendingResponse(
                kind: .request, method: request.method, version: request.version, keepAlive: request.keepAlive,
                startedAt: loop.now, request: keepRequest ? request : nil))
    }

    private func appendSlot(_ slot: consuming PendingResponse) -> UInt64 {
        let sequence = nextSequence
        nextSequence += 1
        pipeline.append(slot)
        return sequence
    }

    func enqueueContinue() {
        _ = appendSlot(
            PendingResponse(
                kind: .interim, method: .get, version: .http1_1, keepAlive: true, startedAt: loop.now, request: nil,
                response: HTTPResponse(status: .continue)))
        state.outputQueued()
    }

    func enqueueError(_ status: HTTPStatus) {
        _ = appendSlot(
            PendingResponse(
                kind: .error, method: .other("-"), version: .http1_1, keepAlive: false, startedAt: loop.now,
                request: nil, response: .error(status), closeAfter: true))
        closesAfterError = true
        state.outputQueued()
    }

    func rejectSlot(sequence: UInt64, with response: HTTPResponse) {
        let index = Int(sequence - firstSequence)
        pipeline[index].response = response
        pipeline[index].closeAfter = true
        closesAfterError = true
        state.outputQueued()
    }

    // MARK: - Answers

    /// Stores a handler's answer; ignored if the connection closed, the client left, or the request
    /// was already answered. Loop thread only.
    func deliver(_ response: consuming HTTPResponse, sequence: UInt64) {
        loop.preconditionInLoop()
        guard !state.isClosed, sequence >= firstSequence, sequence < nextSequence, sequence < abandonedFrom else {
            return
        }
        let index = Int(sequence - firstSequence)
        guard pipeline[index].kind == .request, !pipeline[index].isAnswered else { return }
        pipeline[index].response = consume response
        if pipeline[index].goneHandler != nil { pipeline[index].goneHandler = nil }
        state.responseQueued(now: loop.now)
        responseArrived()
    }

    /// Moves every answered slot at the front of the pipeline into the writer, in order.
    func drainPipeline() {
        // Checked in place and then moved out, so a slot and its response are never copied.
        while !pipeline.isEmpty && pipeline[0].isAnswered {
            guard var first = pipeline.popFirst(), let response = first.response.take() else { break }
            firstSequence += 1
            if first.kind == .interim {
                writer.appendContinue()
                continue
            }
            let closing = first.closeAfter || !first.keepAlive || (pipeline.isEmpty && state.reading == .stopped)
            let field: ResponseWriter.ConnectionField =
                closing ? .close : (first.version == .http1_0 ? .keepAlive : .none)
            let status = response.status.code
            let accessLog = owner.shared.isAccessLogEnabled.load(ordering: .relaxed) ? self.accessLog : nil
            let note = accessLog == nil ? nil : response.accessLogNote
            let bodyBytes = writer.append(
                consume response, isHeadRequest: first.method == .head, connection: field,
                dateLine: owner.currentDateLine())
            if let accessLog {
                accessLog(
                    AccessLogRecord(
                        method: first.method, path: first.request?.path ?? "-", status: status,
                        bodyBytes: bodyBytes, duration: first.startedAt.duration(to: loop.now), note: note))
            }
            if closing {
                // Nothing may follow a response that announced `Connection: close`.
                abandonUnanswered(from: firstSequence)
                return
            }
        }
    }

    // MARK: - Client gone

    /// Registers a handler for "client gone before answered". Loop thread only.
    func registerGoneHandler(_ handler: @escaping @Sendable () -> Void, sequence: UInt64) {
        loop.preconditionInLoop()
        if sequence >= abandonedFrom && sequence < nextSequence {
            handler()
            return
        }
        guard !state.isClosed, sequence >= firstSequence, sequence < nextSequence else { return }
        let index = Int(sequence - firstSequence)
        guard pipeline[index].kind == .request, !pipeline[index].isAnswered else { return }
        pipeline[index].goneHandler = handler
    }

    /// The peer left: drop every slot from the first unanswered request on, notifying its handlers;
    /// what is answered before it is still sent.
    func abandonUnansweredSlots() {
        var offset = 0
        while offset < pipeline.count {
            if pipeline[offset].kind == .request && !pipeline[offset].isAnswered { break }
            offset += 1
        }
        abandonUnanswered(from: firstSequence + UInt64(offset))
    }

    /// Drops every slot with sequence ≥ `sequence` and runs the gone handlers of the unanswered
    /// ones, once each, after the pipeline is consistent (a handler may call back into us).
    func abandonUnanswered(from sequence: UInt64) {
        guard sequence < nextSequence else { return }
        abandonedFrom = min(abandonedFrom, sequence)
        let keep = Int(sequence - firstSequence)
        var handlers: [@Sendable () -> Void] = []
        while pipeline.count > keep, let slot = pipeline.popLast() {
            if slot.kind == .request && !slot.isAnswered, let handler = slot.goneHandler {
                handlers.append(handler)
            }
        }
        for handler in handlers.reversed() { handler() }
    }
}
