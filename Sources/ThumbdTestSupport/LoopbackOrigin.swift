// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A real HTTP/1.1 origin on a loopback address for tests: scripted paths, hit counters, a
/// request log, concurrency high-water marks, and a record of clients that hung up mid-response.
///
/// Deliberately simple and independent of the project's own server: an accept thread plus one
/// blocking OS thread per connection, keep-alive supported. Listens on `127.0.0.x:0` only, and
/// stops (closing every connection) when this handle is released or ``stop()`` is called.
///
/// ```swift
/// let origin = try LoopbackOrigin(host: "127.0.0.2")
/// origin.route("/a.jpg", .ok(bytes))
/// origin.route("/slow", .delay(.seconds(1), then: .ok(bytes)))
/// // fetch origin.url("/a.jpg") ... then:
/// #expect(origin.hits("/a.jpg") == 1)
/// ```
package final class LoopbackOrigin: Sendable {
    private let server: LoopbackServer

    /// Starts listening on `host:0` (a 127/8 address).
    /// - Throws: ``LoopbackSocketError`` when the socket cannot be set up.
    package init(host: String = "127.0.0.1") throws(LoopbackSocketError) {
        server = try LoopbackServer(host: host)
    }

    deinit { server.stop() }

    /// The address it listens on, e.g. `127.0.0.2`.
    package var host: String { server.host }

    /// The ephemeral port it got.
    package var port: Int { server.port }

    /// `http://host:port` + `path`.
    package func url(_ path: String) -> String { server.url(path) }

    /// Sets (or replaces) the script for `path` (matched without the query string).
    package func route(_ path: String, _ script: Script) { server.route(path, script) }

    /// Opens a gate: every request waiting in `.gate(name, ...)` proceeds, and later ones pass at once.
    package func openGate(_ name: String) { server.openGate(name) }

    /// Requests received for `path`.
    package func hits(_ path: String) -> Int { server.hits(path) }

    /// Every request received, in arrival order.
    package var requests: [ReceivedRequest] { server.requests }

    /// How often a client hung up while `path` was being answered (delay, gate, hang, trickle,
    /// endless body): how a test sees that a transfer was cancelled.
    package func clientCloses(_ path: String) -> Int { server.clientCloses(path) }

    /// The most requests being answered at the same time so far.
    package var maxConcurrentRequests: Int { server.maxConcurrentRequests }

    /// Requests being answered now.
    package var currentRequests: Int { server.currentRequests }

    /// The most connections open at the same time so far.
    package var maxConcurrentConnections: Int { server.maxConcurrentConnections }

    /// Connections accepted so far.
    package var connectionsAccepted: Int { server.connectionsAccepted }

    /// Stops accepting, closes every connection (ending every script) and joins the accept
    /// thread. Idempotent; also done when the handle is released.
    package func stop() { server.stop() }
}
