// SPDX-License-Identifier: Apache-2.0
package import EventLoops

/// How a handler answers one request: now, or later from any thread.
///
/// Cheap to copy (the loop, the connection and the request's sequence number on it). On the
/// connection's loop, ``respond(_:)`` queues the response synchronously, without a hop; from any
/// other thread it hops through the loop's task queue. A response for a connection that has
/// closed, or for a request already answered, is dropped: a connection object is never reused
/// for another client, so a late answer can never reach the wrong one. Responses leave in request
/// order even when pipelined requests are answered out of order.
package struct HTTPResponder: Sendable {
    /// The loop of the connection; the handler was called on it.
    package let loop: EventLoop
    let connection: ConnectionReference
    let sequence: UInt64

    init(loop: EventLoop, connection: Connection, sequence: UInt64) {
        self.loop = loop
        self.connection = ConnectionReference(connection)
        self.sequence = sequence
    }

    /// Sends `response` for this request. Callable from any thread; only the first call counts.
    package func respond(_ response: consuming HTTPResponse) {
        if loop.inEventLoop {
            connection.connection.deliver(response, sequence: sequence)
        } else {
            let connection = self.connection
            let sequence = self.sequence
            let response = copy response
            loop.execute { connection.connection.deliver(response, sequence: sequence) }
        }
    }

    /// Registers `handler` to run once, on the loop, if the client goes away (closes or resets)
    /// before this request is answered, so the work started for it can be cancelled. Runs at once
    /// if the client is already gone; never runs once the response has been queued.
    package func onClientGone(_ handler: @escaping @Sendable () -> Void) {
        if loop.inEventLoop {
            connection.connection.registerGoneHandler(handler, sequence: sequence)
        } else {
            let connection = self.connection
            let sequence = self.sequence
            loop.execute { connection.connection.registerGoneHandler(handler, sequence: sequence) }
        }
    }
}

/// Carries a ``Connection`` through `@Sendable` closures to its own loop.
struct ConnectionReference: @unchecked Sendable {
    // Sendable: the connection is only touched on its loop; HTTPResponder hops there first
    // (checked by `preconditionInLoop` in Connection's entry points).
    let connection: Connection

    init(_ connection: Connection) {
        self.connection = connection
    }
}
