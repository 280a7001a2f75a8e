// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A route handler. Called on the connection's event loop; it must not block. It answers through
/// the responder, now or later, from any thread.
package typealias HTTPHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

/// A handler as the router keeps it. A class, not the closure itself: a closure kept in an array (or any
/// generic container) is stored at the most general abstraction, and taking it out as an ``HTTPHandler``
/// wrapped it in a reabstraction thunk with a heap context on every request (an allocation and ~500
/// instructions of a memory hit, measured with `bench/hit-instructions.sh`).
package final class RouteHandler: Sendable {
    /// Answers the request.
    package let call: HTTPHandler

    init(_ call: @escaping HTTPHandler) {
        self.call = call
    }
}

/// Exact-path routes per method.
///
/// Unknown path → 404; known path, other standard method → 405 with `Allow`; a method token that
/// is not a standard method → 501. `HEAD` falls back to the `GET` handler (the server drops the
/// body and keeps the `Content-Length`). Paths are compared as raw bytes, without decoding or
/// normalising.
///
/// The router is built once and then read by every loop thread for every request, so lookup
/// touches no reference-counted object until the chosen handler: all paths live in one byte
/// array and each route has a handler table indexed by method. (Iterating an array of route
/// structs retained and released their arrays per route, contended between loops.)
///
/// ```swift
/// var router = Router()
/// router.add(.get, "/health") { _, responder in responder.respond(.init(status: .ok, body: .bytes(ok))) }
/// ```
package struct Router: Sendable {
    private struct Route: Sendable {
        var handlers: [RouteHandler?]  // indexed by `methodIndex`
        var allow: String
    }

    /// What ``match(_:)`` decided.
    package enum Match: Sendable {
        /// Call this handler.
        case handler(RouteHandler)
        /// No route has this path: 404.
        case notFound
        /// The path exists for other methods: 405 with this `Allow` value.
        case methodNotAllowed(allow: String)
        /// The method is not one the server implements: 501.
        case notImplemented
    }

    private var paths: [UInt8] = []
    private var pathRanges: [Range<Int>] = []
    private var routes: [Route] = []
    /// Routes on every path under a prefix (`/prefetch/` + an id), tried only when no exact path
    /// matches, in the order added.
    private var prefixes: [(prefix: [UInt8], route: Route)] = []

    private static let methods: [HTTPMethod] = [.get, .head, .post, .put, .delete, .options, .patch, .trace, .connect]

    /// Creates an empty router.
    package init() {}

    /// Routes `method` (a standard method) on exactly `path` (raw, e.g. `"/thumb"`; the query is not
    /// part of it). Adding the same method and path again replaces the handler.
    package mutating func add(_ method: HTTPMethod, _ path: String, handler: @escaping HTTPHandler) {
        guard let methodIndex = Self.methodIndex(method) else {
            preconditionFailure("Router routes standard methods only; \(method) is answered 501")
        }
        let bytes = Array(path.utf8)
        let existing = pathRanges.firstIndex { paths[$0].elementsEqual(bytes) }
        let index: Int
        if let existing {
            index = existing
        } else {
            pathRanges.append(paths.count..<paths.count + bytes.count)
            paths += bytes
            routes.append(Route(handlers: Array(repeating: nil, count: Self.methods.count), allow: ""))
            index = routes.count - 1
        }
        routes[index].handlers[methodIndex] = RouteHandler(handler)
        var allowed = Self.methods.indices.filter { routes[index].handlers[$0] != nil }.map {
            Self.methods[$0].rawValue
        }
        if allowed.contains("GET") && !allowed.contains("HEAD") { allowed.append("HEAD") }
        routes[index].allow = allowed.sorted().joined(separator: ", ")
    }

    /// Routes `method` on every path that starts with `prefix` and is longer than it (`"/prefetch/"` routes
    /// `/prefetch/<id>`; the handler reads the rest from `request.path`). Exact routes win.
    package mutating func add(_ method: HTTPMethod, prefix: String, handler: @escaping HTTPHandler) {
        guard let methodIndex = Self.methodIndex(method) else {
            preconditionFailure("Router routes standard methods only; \(method) is answered 501")
        }
        let bytes = Array(prefix.utf8)
        var index = prefixes.firstIndex { $0.prefix == bytes }
        if index == nil {
            prefixes.append((bytes, Route(handlers: Array(repeating: nil, count: Self.methods.count), allow: "")))
            index = prefixes.count - 1
        }
        guard let index else { return }
        prefixes[index].route.handlers[methodIndex] = RouteHandler(handler)
        var allowed = Self.methods.indices.filter { prefixes[index].route.handlers[$0] != nil }.map {
            Self.methods[$0].rawValue
        }
        if allowed.contains("GET") && !allowed.contains("HEAD") { allowed.append("HEAD") }
        prefixes[index].route.allow = allowed.sorted().joined(separator: ", ")
    }

    /// Every exact path routed, in the order added.
    package var exactPaths: [String] { pathRanges.map { String(decoding: paths[$0], as: UTF8.self) } }

    /// Every path prefix routed, in the order tried.
    package var pathPrefixes: [String] { prefixes.map { String(decoding: $0.prefix, as: UTF8.self) } }

    /// Decides how to answer `request`.
    package func match(_ request: HTTPRequest) -> Match {
        guard let methodIndex = Self.methodIndex(request.method) else { return .notImplemented }
        let found = request.withPathBytes { path -> Int? in
            paths.withUnsafeBytes { all -> Int? in
                for (index, range) in pathRanges.enumerated() where range.count == path.count {
                    if range.isEmpty || memcmp(all.baseAddress! + range.lowerBound, path.baseAddress!, range.count) == 0
                    {
                        return index
                    }
                }
                return nil
            }
        }
        if let found {
            // Read in place: copying the route would retain its handler table and `Allow` text.
            if let handler = routes[found].handlers[methodIndex] { return .handler(handler) }
            if methodIndex == 1, let get = routes[found].handlers[0] { return .handler(get) }  // HEAD → GET
            return .methodNotAllowed(allow: routes[found].allow)
        }
        guard !prefixes.isEmpty, let route = prefixRoute(request) else { return .notFound }
        if let handler = route.handlers[methodIndex] { return .handler(handler) }
        if methodIndex == 1, let get = route.handlers[0] { return .handler(get) }  // HEAD → GET
        return .methodNotAllowed(allow: route.allow)
    }

    /// The same routes in storage of its own, each handler wrapped in a closure of its own, for one event
    /// loop: a request retains its handler (and, copying, the tables), and when every loop shares one
    /// closure and one table those reference counts bounce between the cores on every request (HOT
    /// profile, BENCHMARKS.md "Hot set").
    package func copyForLoop() -> Router {
        var copy = Router()
        copy.paths = paths.withUnsafeBufferPointer { Array($0) }
        copy.pathRanges = pathRanges.withUnsafeBufferPointer { Array($0) }
        copy.routes = routes.map(Self.copy)
        for (prefix, route) in prefixes {
            copy.prefixes.append((prefix.withUnsafeBufferPointer { Array($0) }, Self.copy(route)))
        }
        return copy
    }

    private static func copy(_ route: Route) -> Route {
        var handlers: [RouteHandler?] = []
        for handler in route.handlers {
            if let shared = handler?.call {
                handlers.append(RouteHandler { request, responder in shared(request, responder) })
            } else {
                handlers.append(nil)
            }
        }
        return Route(handlers: handlers, allow: String(decoding: Array(route.allow.utf8), as: UTF8.self))
    }

    private func prefixRoute(_ request: HTTPRequest) -> Route? {
        request.withPathBytes { path -> Route? in
            prefixes.first { path.count > $0.prefix.count && path.starts(with: $0.prefix) }?.route
        }
    }

    private static func methodIndex(_ method: HTTPMethod) -> Int? {
        switch method {
        case .get: 0
        case .head: 1
        case .post: 2
        case .put: 3
        case .delete: 4
        case .options: 5
        case .patch: 6
        case .trace: 7
        case .connect: 8
        case .other: nil
        }
    }
}
