// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A route handler. Called on the connection's event loop; it must not block. It answers through
/// the responder, now or later, from any thread.
package typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

/// Exact-path routes per method.
///
/// Unknown path → 404; known path, other standard method → 405 with `Allow`; a method token that
/// is not a standard method → 501. `HEAD` falls back to the `GET` handler (the server drops the
/// body and keeps the `Content-Length`). Paths are compared as raw bytes, without decoding or
/// normalising, and without allocating; a handful of routes makes a linear scan the fastest lookup.
///
/// ```swift
/// var router = Router()
/// router.add(.get, "/health") { _, responder in responder.respond(.init(status: .ok, body: .bytes(ok))) }
/// ```
package struct Router: Sendable {
    private struct Route: Sendable {
        let path: [UInt8]
        var handlers: [(method: HTTPMethod, handler: HTTPHandler)]
        var allow: String
    }

    /// What ``match(_:)`` decided.
    package enum Match: Sendable {
        /// Call this handler.
        case handler(HTTPHandler)
        /// No route has this path: 404.
        case notFound
        /// The path exists for other methods: 405 with this `Allow` value.
        case methodNotAllowed(allow: String)
        /// The method is not one the server implements: 501.
        case notImplemented
    }

    private var routes: [Route] = []

    /// Creates an empty router.
    package init() {}

    /// Routes `method` on exactly `path` (raw, e.g. `"/thumb"`; the query is not part of it).
    /// Adding the same method and path again replaces the handler.
    package mutating func add(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        let bytes = Array(path.utf8)
        if let index = routes.firstIndex(where: { $0.path == bytes }) {
            routes[index].handlers.removeAll { $0.method == method }
            routes[index].handlers.append((method, handler))
            routes[index].allow = Self.allowValue(routes[index].handlers)
        } else {
            routes.append(Route(path: bytes, handlers: [(method, handler)], allow: Self.allowValue([(method, handler)])))
        }
    }

    /// Decides how to answer `request`.
    package func match(_ request: HTTPRequest) -> Match {
        guard request.method.isStandard else { return .notImplemented }
        return request.withPathBytes { path -> Match in
            for route in routes where route.path.count == path.count {
                let equal = route.path.withUnsafeBytes { memcmp($0.baseAddress!, path.baseAddress!, path.count) == 0 }
                guard equal else { continue }
                let method = request.method
                if let found = route.handlers.first(where: { $0.method == method }) { return .handler(found.handler) }
                if method == .head, let get = route.handlers.first(where: { $0.method == .get }) {
                    return .handler(get.handler)
                }
                return .methodNotAllowed(allow: route.allow)
            }
            return .notFound
        }
    }

    private static func allowValue(_ handlers: [(method: HTTPMethod, handler: HTTPHandler)]) -> String {
        var methods = handlers.map(\.method.rawValue)
        if methods.contains("GET") && !methods.contains("HEAD") { methods.append("HEAD") }
        return methods.sorted().joined(separator: ", ")
    }
}
