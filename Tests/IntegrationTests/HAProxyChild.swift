// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import ThumbdTestSupport

/// HAProxy (Debian's `haproxy` package, 2.6, which `make test` installs) as a child process, running the
/// shipped `deploy/cluster/haproxy.cfg` with the test's loopback addresses put in.
///
/// The configuration is the shipped file with only these lines changed (``configuration(servers:port:statsPort:
/// checkInterval:)``): the two `bind` lines, the `server` lines, and the check interval in `default-server`.
/// Every other line (balance, hash type, bounded loads, checks, retries, timeouts) is the file's own, so the test
/// runs what operators run. A missing binary is a failure with the fix in the message, never a skip.
final class HAProxyChild: Sendable {
    let process: ChildProcess
    /// The frontend's port on 127.0.0.1 (clients connect here).
    let port: Int
    /// The stats listener's port on 127.0.0.1 (`/stats;csv`).
    let statsPort: Int
    /// Holds the generated configuration file.
    let directory: TempDirectory

    /// One `server` line: its fixed id (its place on the ring) and the port of the thumbd it points to.
    struct Server: Sendable {
        var id: Int
        var port: Int
        var name: String { "thumbd-\(id)" }
    }

    /// Why HAProxy could not be used, or the shipped file no longer has the shape the test rewrites.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts HAProxy in the foreground (`-db`) on `servers`, on two unused loopback ports, and waits (up to
    /// `timeout`) until its stats answer. `adjust` may change the generated configuration further (a
    /// measurement that compares settings); the tests of the shipped file leave it as it is. Blocks the thread.
    init(
        servers: [Server], checkInterval: String = "200ms", timeout: Duration = .seconds(10),
        adjust: (String) throws -> String = { $0 }
    ) throws {
        port = try LoopbackSocket.unusedPort()
        statsPort = try LoopbackSocket.unusedPort()
        directory = try TempDirectory(prefix: "thumbd-haproxy")
        let path = directory.appending("haproxy.cfg")
        let text = try adjust(
            Self.configuration(servers: servers, port: port, statsPort: statsPort, checkInterval: checkInterval))
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        process = try ChildProcess(executable: Self.executable(), arguments: ["-db", "-f", path])
        let deadline = ContinuousClock.now + timeout
        while (try? serverStates()) == nil {
            if process.exitStatus != nil || ContinuousClock.now >= deadline {
                throw Failure(
                    description: "haproxy did not start (\(process.exitStatus.map { "\($0)" } ?? "no answer")); "
                        + "stderr:\n\(process.standardError)\nconfiguration:\n\(text)")
            }
            usleep(20_000)
        }
    }

    /// Each server's `status` column in the stats CSV (`UP`, `DOWN`, `UP 1/2` while a check is pending, …),
    /// by server name (`thumbd-<id>`). Blocks the calling thread.
    func serverStates() throws -> [String: String] {
        let client = try RawHTTPClient(host: "127.0.0.1", port: statsPort)
        defer { client.close() }
        try client.send("GET /stats;csv HTTP/1.0\r\nHost: haproxy.test\r\n\r\n")
        let bytes = try client.readUntilClosed(timeout: .seconds(5))
        guard let headEnd = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            throw Failure(description: "stats: \(String(decoding: bytes, as: UTF8.self))")
        }
        let head = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).lowercased()
        var body = Array(bytes[headEnd.upperBound...])
        if head.contains("transfer-encoding: chunked") { body = try Self.dechunked(body) }
        let text = String(decoding: body, as: UTF8.self)
        let lines = text.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        guard let header = lines.first, header.first == "# pxname",
            let name = header.firstIndex(of: "svname"), let status = header.firstIndex(of: "status")
        else { throw Failure(description: "stats: no CSV header in \(text.prefix(500))") }
        var states: [String: String] = [:]
        for row in lines.dropFirst() where row.count > status && row[0] == "thumbd" {
            guard row[name] != "BACKEND" else { continue }
            states[String(row[name])] = String(row[status])
        }
        return states
    }

    /// The body of a chunked answer (HAProxy's stats page sends one even to an HTTP/1.0 request).
    private static func dechunked(_ bytes: [UInt8]) throws -> [UInt8] {
        var body: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstRange(of: Array("\r\n".utf8)) {
            let sizeText = String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.prefix { $0 != ";" }, radix: 16),
                lineEnd.upperBound + size <= bytes.count
            else { throw Failure(description: "stats: bad chunk size \(sizeText)") }
            if size == 0 { return body }
            body += bytes[lineEnd.upperBound..<(lineEnd.upperBound + size)]
            index = lineEnd.upperBound + size + 2
            guard index <= bytes.count else { break }
        }
        throw Failure(description: "stats: the chunked body ended early")
    }

    /// An image request in a balancer's log: the id of the server that answered it and the target as sent.
    struct LoggedRequest: Sendable {
        var server: Int
        /// `/thumb?url=…&w=16`, `/thumbor/unsafe/16x0/…`, `/imgproxy/insecure/…`, exactly as the client sent it.
        var target: String

        /// For `/thumb?url=…`, the `url` value as sent (the targets of the tests put it first); else the target.
        var key: String {
            guard target.hasPrefix(Self.thumbPrefix) else { return target }
            return String(target.dropFirst(Self.thumbPrefix.count).prefix { $0 != "&" })
        }

        private static let thumbPrefix = "/thumb?url="

        /// The target between `"GET ` and ` HTTP/` in a log line, when it is an image request: `/thumb?url=`,
        /// or a path under the default prefixes of thumbor's and imgproxy's forms.
        static func imageTarget(in line: Substring) -> String? {
            guard let start = line.range(of: "\"GET /"),
                let end = line.range(of: " HTTP/", range: start.upperBound..<line.endIndex)
            else { return nil }
            let target = "/" + line[start.upperBound..<end.lowerBound]
            let isImage = ["/thumb?url=", "/thumbor/", "/imgproxy/"].contains { target.hasPrefix($0) }
            return isImage ? target : nil
        }
    }

    /// Every image request (``LoggedRequest/imageTarget(in:)``) HAProxy has logged so far (standard output,
    /// `option httplog`), in order: `127.0.0.1:41234 [25/Nov/2026:04:07:41.254] thumbnails thumbd/thumbd-2
    /// 0/0/0/3/3 200 391 - - ---- … "GET /thumb?url=http%3A%2F%2F…&w=16 HTTP/1.1"`. A request no server answered
    /// (`<NOSRV>`) is left out.
    func imageRequests() -> [LoggedRequest] {
        process.standardOutput.split(separator: "\n").compactMap { line in
            guard let server = line.range(of: " thumbd/thumbd-"), let target = LoggedRequest.imageTarget(in: line),
                let id = Int(line[server.upperBound...].prefix { $0.isNumber })
            else { return nil }
            return LoggedRequest(server: id, target: target)
        }
    }

    /// Graceful stop (SIGUSR1: stop listening, let requests finish), then waits up to `timeout`.
    @discardableResult
    func stop(timeout: Duration = .seconds(10)) -> ChildProcess.Termination? {
        process.kill(SIGUSR1)
        return process.wait(timeout: timeout)
    }

    // MARK: - Configuration

    /// The shipped file, in the source tree.
    static var shippedConfigurationPath: String {
        ConfigTestFiles.repositoryRoot.appendingPathComponent("deploy/cluster/haproxy.cfg").path
    }

    /// `deploy/cluster/haproxy.cfg` with the frontend on `127.0.0.1:port`, the stats on `127.0.0.1:statsPort`,
    /// its `server` lines replaced by `servers` on 127.0.0.1 (each with its fixed `id`), and the check
    /// interval `inter 2s` replaced by `checkInterval`.
    /// - Throws: ``Failure`` when a line the test rewrites is not in the file exactly once: the test must not
    ///   quietly run a configuration other than the one shipped.
    static func configuration(servers: [Server], port: Int, statsPort: Int, checkInterval: String) throws -> String {
        let shipped = try String(contentsOfFile: shippedConfigurationPath, encoding: .utf8)
        var lines = shipped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func replaceOnce(_ line: String, with replacement: String) throws {
            let indexes = lines.indices.filter { lines[$0] == line }
            guard indexes.count == 1 else {
                throw Failure(description: "\(shippedConfigurationPath): expected the line `\(line)` once")
            }
            lines[indexes[0]] = replacement
        }
        try replaceOnce("    bind :8080", with: "    bind 127.0.0.1:\(port)")
        try replaceOnce("    bind 127.0.0.1:8404", with: "    bind 127.0.0.1:\(statsPort)")
        let defaults = lines.indices.filter { lines[$0].hasPrefix("    default-server ") }
        guard defaults.count == 1, lines[defaults[0]].contains(" inter 2s ") else {
            throw Failure(description: "\(shippedConfigurationPath): expected one `default-server … inter 2s …` line")
        }
        lines[defaults[0]] = lines[defaults[0]].replacingOccurrences(of: " inter 2s ", with: " inter \(checkInterval) ")
        let shippedServers = lines.indices.filter { lines[$0].hasPrefix("    server thumbd-") }
        guard !shippedServers.isEmpty, shippedServers.allSatisfy({ $0 > defaults[0] }) else {
            throw Failure(
                description: "\(shippedConfigurationPath): expected `server thumbd-N` lines after default-server")
        }
        var rewritten: [String] = []
        for (index, line) in lines.enumerated() where !shippedServers.contains(index) {
            rewritten.append(line)
            if index == defaults[0] {
                rewritten += servers.map { "    server \($0.name) 127.0.0.1:\($0.port) id \($0.id)" }
            }
        }
        return rewritten.joined(separator: "\n")
    }

    /// HAProxy: `$THUMBD_HAPROXY`, else `haproxy` on the usual paths (Debian installs it in /usr/sbin, which a
    /// user's PATH may not hold).
    static func executable() throws -> String {
        if let override = ProcessInfo.processInfo.environment["THUMBD_HAPROXY"] {
            guard access(override, X_OK) == 0 else {
                throw Failure(description: "THUMBD_HAPROXY=\(override) is not executable")
            }
            return override
        }
        for candidate in ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy", "/usr/bin/haproxy"]
        where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw Failure(
            description: "HAProxy 2.6 is needed for the cluster tests and was not found: run `make test` (it installs "
                + "Debian's haproxy package), or `apt-get install haproxy`, or set THUMBD_HAPROXY to a haproxy binary")
    }
}
