// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import ThumbdTestSupport

/// nginx (Debian's `nginx` package, 1.22, which `make test` installs) as a child process, running the shipped
/// `deploy/cluster/nginx.conf` with the test's loopback addresses put in, under a prefix of its own
/// (`nginx -p <dir> -c <dir>/nginx.conf -e stderr -g 'daemon off;'`).
///
/// The configuration is the shipped file with only these lines changed (``configuration(servers:port:)``):
/// `listen 8080;` and the `server` lines of the upstream (each keeps the shipped line's parameters). Every other
/// line (hash key, passive checks, retries, keep-alive, timeouts, log format) is the file's own. A missing binary
/// is a failure with the fix in the message, never a skip.
final class NginxChild: ClusterBalancer {
    let process: ChildProcess
    /// The `listen` port on 127.0.0.1.
    let port: Int
    /// The prefix: the generated configuration, `logs/` (access and error logs, pid file) and `temp/`.
    let directory: TempDirectory
    /// Which node id each upstream address (`127.0.0.1:port`) is.
    private let idsByAddress: [String: Int]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts nginx in the foreground on `servers`, on an unused loopback port, and waits (up to `timeout`) until
    /// it accepts connections. Blocks the thread.
    init(servers: [HAProxyChild.Server], timeout: Duration = .seconds(10)) throws {
        port = try LoopbackSocket.unusedPort()
        directory = try TempDirectory(prefix: "thumbd-nginx")
        for name in ["logs", "temp"] {
            try FileManager.default.createDirectory(
                atPath: directory.appending(name), withIntermediateDirectories: true)
        }
        let path = directory.appending("nginx.conf")
        let text = try Self.configuration(servers: servers, port: port)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        idsByAddress = Dictionary(uniqueKeysWithValues: servers.map { ("127.0.0.1:\($0.port)", $0.id) })
        process = try ChildProcess(
            executable: try Self.executable(),
            arguments: ["-p", directory.path, "-c", path, "-e", "stderr", "-g", "daemon off;"])
        guard process.waitUntilAccepting(port: port, timeout: timeout) else {
            let errors = (try? String(contentsOfFile: directory.appending("logs/error.log"), encoding: .utf8)) ?? ""
            throw Failure(
                description: "nginx did not start (\(process.exitStatus.map { "\($0)" } ?? "no connection")); "
                    + "stderr:\n\(process.standardError)\(errors)\nconfiguration:\n\(text)")
        }
    }

    deinit { stop() }

    /// Every image request (``HAProxyChild/LoggedRequest/imageTarget(in:)``) nginx has logged so far
    /// (`logs/access.log`, the shipped `thumbd` format), in order: `127.0.0.1 [25/Nov/2026:04:07:41 +0000] "GET
    /// /thumb?url=http%3A%2F%2F…&w=16 HTTP/1.1" 200 391 upstream=127.0.0.1:41234 upstream_status=200 …`. The node
    /// that answered is the last address of `upstream=` (the ones before it were tried and failed); a request no
    /// node answered is left out.
    func imageRequests() -> [HAProxyChild.LoggedRequest] {
        let log = (try? String(contentsOfFile: directory.appending("logs/access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let target = HAProxyChild.LoggedRequest.imageTarget(in: line),
                let upstream = line.range(of: " upstream="),
                let end = line.range(of: " upstream_status=", range: upstream.upperBound..<line.endIndex),
                let last = line[upstream.upperBound..<end.lowerBound].split(separator: ", ").last,
                let id = idsByAddress[String(last)]
            else { return nil }
            return HAProxyChild.LoggedRequest(server: id, target: target)
        }
    }

    /// How many `/thumb` requests nginx has logged so far that tried more than one node (`upstream=a, b`): a
    /// node failed (refused the connection, timed out, answered 503) and the next one on the ring answered.
    func retriedRequests() -> Int {
        let log = (try? String(contentsOfFile: directory.appending("logs/access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").count { line in
            line.contains("\"GET /thumb?url=") && line.contains(", ") && line.contains(" upstream=")
        }
    }

    /// Fast stop (SIGTERM to the master, which stops its workers), then waits up to `timeout`.
    @discardableResult
    func stop(timeout: Duration = .seconds(10)) -> ChildProcess.Termination? {
        process.kill(SIGTERM)
        return process.wait(timeout: timeout)
    }

    // MARK: - Configuration

    /// The shipped file, in the source tree.
    static var shippedConfigurationPath: String {
        ConfigTestFiles.repositoryRoot.appendingPathComponent("deploy/cluster/nginx.conf").path
    }

    /// `deploy/cluster/nginx.conf` listening on `127.0.0.1:port`, with its `server` lines replaced by `servers`
    /// on 127.0.0.1, each with the parameters of the shipped lines (`max_fails=… fail_timeout=…`).
    /// - Throws: ``Failure`` when a line the test rewrites is not in the file as expected: the test must not
    ///   quietly run a configuration other than the one shipped.
    static func configuration(servers: [HAProxyChild.Server], port: Int) throws -> String {
        let shipped = try String(contentsOfFile: shippedConfigurationPath, encoding: .utf8)
        var lines = shipped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let listens = lines.indices.filter { lines[$0] == "        listen 8080;" }
        guard listens.count == 1 else {
            throw Failure(description: "\(shippedConfigurationPath): expected the line `listen 8080;` once")
        }
        lines[listens[0]] = "        listen 127.0.0.1:\(port);"
        let shippedServers = lines.indices.filter { lines[$0].hasPrefix("        server 10.0.0.") }
        let parameters = Set(shippedServers.map { lines[$0].split(separator: " ", maxSplits: 2).dropFirst(2).first })
        guard let first = shippedServers.first, parameters.count == 1, let shared = parameters.first ?? nil else {
            throw Failure(
                description: "\(shippedConfigurationPath): expected `server 10.0.0.N:8080 <parameters>;` lines, "
                    + "all with the same parameters")
        }
        var rewritten: [String] = []
        for (index, line) in lines.enumerated() where !shippedServers.contains(index) || index == first {
            if index == first {
                rewritten += servers.map { "        server 127.0.0.1:\($0.port) \(shared)" }
            } else {
                rewritten.append(line)
            }
        }
        return rewritten.joined(separator: "\n")
    }

    /// nginx: `$THUMBD_NGINX`, else `nginx` on the usual paths (Debian installs it in /usr/sbin, which a user's
    /// PATH may not hold).
    static func executable() throws -> String {
        if let override = ProcessInfo.processInfo.environment["THUMBD_NGINX"] {
            guard access(override, X_OK) == 0 else {
                throw Failure(description: "THUMBD_NGINX=\(override) is not executable")
            }
            return override
        }
        for candidate in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw Failure(
            description: "nginx 1.22 is needed for the nginx cluster tests and was not found: run `make test` (it "
                + "installs Debian's nginx package), or `apt-get install nginx`, or set THUMBD_NGINX to a binary")
    }
}
