// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Logging
import Synchronization
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

/// The loopback address origins listen on: the only internal address the test configuration allows
/// (`fetch.allowed_networks: [127.0.0.2/32]`), so the SSRF guard stays on for everything else, 127.0.0.1 included.
let originHost = "127.0.0.2"

/// A whole thumbd (`ThumbdService`, built from a YAML file in a temporary directory, as `thumbd --config` does)
/// listening on 127.0.0.1:0, and a scripted origin on 127.0.0.2 for it to fetch from.
///
/// Every test that needs its own configuration (timeouts, limits, pool sizes) makes its own; the rest share
/// ``shared``. The service stops when the harness is released.
final class Harness: Sendable {
    let directory: TempDirectory
    let service: ThumbdService
    let origin: LoopbackOrigin
    /// The port thumbd listens on.
    let port: Int

    /// The settings every harness starts from; `overrides` replaces or adds keys (YAML values as text).
    static let baseConfiguration: [String: String] = [
        "server.listen": "127.0.0.1:0",
        "server.threads": "2",
        "fetch.allowed_networks": "[\(originHost)/32]",
        "image.render_threads": "2",
        // No decoder sandbox helper kept idle: one starts (about 150 ms of CPU) only when a test's source needs it,
        // not twice for each of the suite's services.
        "image.sandbox_helpers": "0",
        "log.access": "false",
        "log.level": "error",
    ]

    /// Whether this harness made `origin` (and so stops it when released).
    private let ownsOrigin: Bool

    /// Starts a service configured with `overrides`.
    /// - Parameters:
    ///   - directory: a directory to reuse (config file and `cache/`) instead of a new one: a restart on the
    ///     same cache. The service that used it before must be shut down *and released* first: each disk
    ///     cache holds a `flock` on its directory until it is deallocated.
    ///   - origin: an origin to reuse instead of a new one, so that source URLs (and the cache keys made from
    ///     them) stay the same across a restart. The caller keeps it running.
    ///   - logs: where the service's log records go; `nil` discards them.
    init(
        _ overrides: [String: String] = [:], directory: TempDirectory? = nil, origin: LoopbackOrigin? = nil,
        logs: LogRecorder? = nil
    ) throws {
        self.directory = try directory ?? TempDirectory(prefix: "thumbd-integration")
        var values = Self.baseConfiguration.merging(overrides) { _, new in new }
        values["cache.disk.path"] = self.directory.appending("cache")
        let path = self.directory.appending("thumbd.yaml")
        try Data(Self.yaml(values).utf8).write(to: URL(fileURLWithPath: path))
        let settings = try ConfigFile(path: path, environment: [:]).load()
        let logger = Logger(label: "thumbd-integration") { _ -> any LogHandler in
            if let logs { return RecordingLogHandler(recorder: logs) }
            return SwiftLogNoOpLogHandler()
        }
        service = try ThumbdService(settings: settings, logger: logger)
        ownsOrigin = origin == nil
        self.origin = try origin ?? LoopbackOrigin(host: originHost)
        try service.start()
        port = try #require(service.localAddresses.first?.port)
    }

    deinit {
        service.shutdown()
        if ownsOrigin { origin.stop() }
    }

    /// `<directory>/cache/<tier>`: the thumbnail disk cache (`thumbnails`) or the originals (`sources`).
    func cacheDirectory(_ tier: String = "thumbnails") -> String {
        directory.appending("cache/\(tier)")
    }

    /// One service with the base configuration for the tests that need nothing special. Never stopped: it
    /// lives as long as the test process.
    static let sharedResult = Result { try Harness() }

    /// The shared harness (see ``sharedResult``).
    static func shared() throws -> Harness { try sharedResult.get() }

    // MARK: - Requests

    /// `/thumb?url=<origin URL of path, percent-encoded>&<parameters>`.
    func thumbTarget(_ path: String, _ parameters: String = "w=32") -> String {
        Self.thumbTarget(url: origin.url(path), parameters)
    }

    /// `/thumb?url=<url, percent-encoded>&<parameters>`.
    static func thumbTarget(url: String, _ parameters: String = "w=32") -> String {
        "/thumb?url=\(percentEncoded(url))" + (parameters.isEmpty ? "" : "&\(parameters)")
    }

    /// A new connection to thumbd.
    func client() throws -> RawHTTPClient { try RawHTTPClient(host: "127.0.0.1", port: port) }

    /// Sends one request on a new connection and reads the response (on a thread of its own: see ``blocking(_:)``).
    func request(
        _ target: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil,
        timeout: Duration = .seconds(30)
    ) async throws -> RawHTTPClient.Response {
        try await blocking { [self] in
            let client = try client()
            try client.send(Self.requestText(target, method: method, headers: headers, body: body))
            return try client.readResponse(forHead: method == "HEAD", timeout: timeout)
        }
    }

    /// Stops the service (blocking work, done on a thread of its own). Also done when the harness is released.
    func stop() async throws {
        try await blocking { [self] in service.shutdown() }
    }

    /// The bytes of a keep-alive request; a `body` gets its `Content-Length`.
    static func requestText(
        _ target: String, method: String = "GET", headers: [(String, String)] = [], body: String? = nil
    ) -> String {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: thumbd.test\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        return text + "\r\n" + (body ?? "")
    }

    /// Every byte outside RFC 3986's unreserved set as `%XX`, so the value survives as one query parameter.
    static func percentEncoded(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    // MARK: - Configuration file

    /// Nested YAML for dotted keys (`fetch.timeout: 1s` → `fetch:\n  timeout: 1s`).
    static func yaml(_ values: [String: String]) -> String {
        final class Node {
            var value: String?
            var children: [String: Node] = [:]
        }
        let root = Node()
        for (key, value) in values {
            var node = root
            for component in key.split(separator: ".").map(String.init) {
                if node.children[component] == nil { node.children[component] = Node() }
                node = node.children[component]!
            }
            node.value = value
        }
        func emit(_ node: Node, indent: String) -> String {
            node.children.keys.sorted().map { name in
                let child = node.children[name]!
                if let value = child.value { return "\(indent)\(name): \(value)\n" }
                return "\(indent)\(name):\n" + emit(child, indent: indent + "  ")
            }.joined()
        }
        return emit(root, indent: "")
    }
}

// MARK: - Assertions and waiting

extension RawHTTPClient.Response {
    /// The JSON error body `{"status": N, "error": "..."}`, or nil when the body is not that.
    var jsonError: (status: Int, error: String)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
            let status = object["status"] as? Int, let error = object["error"] as? String, object.count == 2
        else { return nil }
        return (status, error)
    }

    /// The body decoded by libvips.
    func image() throws -> DecodedImage { try DecodedImage(decoding: body) }
}

/// Checks that `response` is the JSON error thumbd sends for `status`, and that its reason mentions `mention`.
func expectJSONError(
    _ response: RawHTTPClient.Response, status: Int, mentioning mention: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(response.status == status, "body: \(response.text)", sourceLocation: sourceLocation)
    #expect(response.header("content-type") == "application/json", sourceLocation: sourceLocation)
    guard let json = response.jsonError else {
        Issue.record("not a JSON error body: \(response.text)", sourceLocation: sourceLocation)
        return
    }
    #expect(json.status == status, sourceLocation: sourceLocation)
    if let mention {
        #expect(json.error.contains(mention), "error was \"\(json.error)\"", sourceLocation: sourceLocation)
    }
}

/// Runs blocking work (socket reads, a service shutdown) on a thread of its own and suspends the calling test
/// until it is done.
///
/// Swift Testing runs tests on Swift's cooperative pool, which has two threads on the CI machine. A test that
/// blocks in `read` for seconds holds one of them, and the async tests of other targets (OriginFetchTests)
/// then miss their deadlines under load. So the integration tests are `async`, and everything that can wait
/// goes through here; their assertions stay in the test's task, where Swift Testing attributes them.
///
/// `body` (and whatever it captures, e.g. a harness) is released before the caller resumes: a test that drops
/// its last reference to a service right after `await` must really release it then (the disk caches close
/// their SQLite connections and locks in `deinit`), not a moment later on this thread.
func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    let handOff = BodyHandOff(body)
    return try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            let result: Result<T, any Error>
            do {
                let body = handOff.take()
                result = Result { try body() }
            }
            continuation.resume(with: result)
        }
        thread.start()
    }
}

/// Holds a closure until one thread takes it, so that the thread's own block does not keep it alive.
private final class BodyHandOff<T>: @unchecked Sendable {
    // @unchecked Sendable: `body` is written in init and taken once, by the one thread that runs it.
    private var body: (@Sendable () throws -> T)?
    init(_ body: @escaping @Sendable () throws -> T) { self.body = body }
    func take() -> @Sendable () throws -> T {
        defer { body = nil }
        return body!
    }
}

/// A value handed to ``blocking(_:)`` that is not `Sendable` (a test client): the test task waits while the
/// thread uses it, so only one of them touches it at a time.
struct HandOver<Value>: @unchecked Sendable {
    let value: Value
}

extension RawHTTPClient {
    /// ``readResponse(forHead:timeout:)`` on a thread of its own (see ``blocking(_:)``).
    func response(forHead: Bool = false, timeout: Duration = .seconds(30)) async throws -> Response {
        let client = HandOver(value: self)
        return try await blocking { try client.value.readResponse(forHead: forHead, timeout: timeout) }
    }
}

/// One response from each client, in order, read on a thread of its own (see ``blocking(_:)``).
func responses(of clients: [RawHTTPClient], timeout: Duration) async throws -> [RawHTTPClient.Response] {
    let clients = HandOver(value: clients)
    return try await blocking { try clients.value.map { try $0.readResponse(timeout: timeout) } }
}

/// Runs `body` on a new thread (not Swift's cooperative pool) and returns a handle to wait for it.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) -> ThreadResult<T> {
    let result = ThreadResult<T>()
    let thread = Thread {
        result.set(Result { try body() })
    }
    thread.start()
    return result
}

/// The outcome of ``onThread(_:)``.
final class ThreadResult<T: Sendable>: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let value = Mutex<Result<T, any Error>?>(nil)

    fileprivate func set(_ result: Result<T, any Error>) {
        value.withLock { $0 = result }
        done.signal()
    }

    /// Waits (bounded) for the thread to finish and returns its value or rethrows its error.
    func value(timeout: Duration = .seconds(30)) async throws -> T {
        let done = self.done
        let seconds = Double(timeout.components.seconds)
        let finished = try await blocking { done.wait(timeout: .now() + seconds) == .success }
        guard finished else { throw ThreadTimeout() }
        done.signal()  // let later calls through too
        return try value.withLock { $0! }.get()
    }

    /// Whether the thread has finished.
    var isFinished: Bool { value.withLock { $0 != nil } }
}

struct ThreadTimeout: Error {}

/// A port on `host` that refuses connections: bound (so nobody else gets it) but not listening.
final class RefusingPort: Sendable {
    let port: Int
    private let fd: Int32

    init(host: String = originHost) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        _ = inet_pton(AF_INET, host, &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw RefusingPortError()
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

struct RefusingPortError: Error {}

// MARK: - Logs

/// The log records of one service, kept so a test can check that something "is logged".
final class LogRecorder: Sendable {
    /// One log call.
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let records = Mutex<[Record]>([])

    /// Everything logged so far, in order.
    var all: [Record] { records.withLock { $0 } }

    /// The records at `level` or above whose message contains `text`.
    func matching(_ text: String, atLeast level: Logger.Level) -> [Record] {
        all.filter { $0.level >= level && $0.message.contains(text) }
    }

    fileprivate func append(_ record: Record) {
        records.withLock { $0.append(record) }
    }
}

/// A `LogHandler` that hands every record (debug and above) to a ``LogRecorder``.
struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        recorder.append(
            LogRecorder.Record(
                level: event.level, message: event.message.description,
                metadata: merged.mapValues { $0.description }))
    }
}
