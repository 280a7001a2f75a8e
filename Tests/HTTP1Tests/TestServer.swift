// SPDX-License-Identifier: Apache-2.0
import EventLoops
import HTTP1
import Synchronization
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A real server on 127.0.0.1:0 with the routes the tests use, stopped by `stop()` or deinit.
final class TestServer {
    let server: HTTPServer
    let port: Int
    /// Work that answers "later, from another thread".
    let workers: WorkerPool
    private var stopped = false

    init(
        configure: (inout HTTPServer.Configuration) -> Void = { _ in },
        routes extraRoutes: (inout Router, TestServer.Context) -> Void = { _, _ in }
    ) throws {
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threads = 2
        configure(&configuration)
        let workers = try WorkerPool(
            configuration: .init(threads: 4, interactiveQueueCapacity: 1000, name: "test-work"))
        let context = Context(workers: workers)
        var router = Router()
        Self.addStandardRoutes(&router, context)
        extraRoutes(&router, context)
        let log = Recorder<AccessLogRecord>()
        server = HTTPServer(configuration: configuration, router: router, accessLog: { log.append($0) })
        try server.start()
        port = server.port!
        self.workers = workers
        self.context = context
        self.logRecorder = log
    }

    let context: Context
    let logRecorder: Recorder<AccessLogRecord>

    /// Shared state the route handlers update.
    final class Context: Sendable {
        let workers: WorkerPool
        let goneCount = Atomic<Int>(0)
        let goneRegistered = Atomic<Int>(0)
        let handlerCalls = Atomic<Int>(0)
        init(workers: WorkerPool) { self.workers = workers }
    }

    func client(receiveBufferBytes: Int? = nil) throws -> RawHTTPClient {
        try RawHTTPClient(port: port, receiveBufferBytes: receiveBufferBytes)
    }

    func stop(timeout: Duration = .seconds(5)) {
        guard !stopped else { return }
        stopped = true
        server.shutdown(timeout: timeout)
        workers.shutdown()
    }

    deinit { stop() }

    static let text = [HTTPField(name: "Content-Type", value: "text/plain")]

    static func queryValue(_ request: HTTPRequest, _ key: String) -> String? {
        for pair in (request.query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.first.map(String.init) == key { return parts.count > 1 ? String(parts[1]) : "" }
        }
        return nil
    }

    private static func addStandardRoutes(_ router: inout Router, _ context: Context) {
        router.add(.get, "/echo") { request, responder in
            context.handlerCalls.add(1, ordering: .relaxed)
            responder.respond(HTTPResponse(status: .ok, headers: text, body: .bytes(Array((request.query ?? "").utf8))))
        }
        router.add(.get, "/big") { request, responder in
            let count = Int(queryValue(request, "n") ?? "0") ?? 0
            responder.respond(HTTPResponse(status: .ok, body: .bytes(pattern(count))))
        }
        router.add(.post, "/upload") { request, responder in
            responder.respond(HTTPResponse(status: .ok, headers: text, body: .bytes(request.body)))
        }
        router.add(.get, "/later") { request, responder in
            // Answered from a worker thread after `ms`, echoing the query.
            let millis = Int(queryValue(request, "ms") ?? "0") ?? 0
            let body = Array((request.query ?? "").utf8)
            _ = try? context.workers.submit {
                usleep(UInt32(millis * 1000))
                precondition(!responder.loop.inEventLoop)
                responder.respond(HTTPResponse(status: .ok, headers: text, body: .bytes(body)))
            }
        }
        router.add(.get, "/gone") { _, responder in
            // Never answers; counts gone notifications.
            responder.onClientGone {
                precondition(responder.loop.inEventLoop)
                context.goneCount.add(1, ordering: .sequentiallyConsistent)
            }
            context.goneRegistered.add(1, ordering: .sequentiallyConsistent)
        }
    }

    /// Deterministic bytes for body checks.
    static func pattern(_ count: Int) -> [UInt8] {
        // A plain loop over raw memory: `map` over a range is slow in debug builds at megabytes.
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            let base = buffer.baseAddress!
            var i = 0
            while i < count {
                base[i] = UInt8(truncatingIfNeeded: i &* 31 &+ i >> 8)
                i += 1
            }
            initialized = count
        }
    }
}

extension RawHTTPClient {
    /// Sends a GET with Host and reads its response.
    func get(_ target: String, headers: String = "") throws -> Response {
        try send("GET \(target) HTTP/1.1\r\nHost: t\r\n\(headers)\r\n")
        return try readResponse()
    }
}
