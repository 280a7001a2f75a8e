// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Synchronization
import ThumbdTestSupport

/// Varnish (Debian's `varnish` package, 7.1, which `make test` installs) as a child process, running the shipped
/// `deploy/cluster/varnish.vcl` with the test's loopback addresses put in:
/// `varnishd -F -n <dir>/work -a 127.0.0.1:<port> -T 127.0.0.1:0 -s malloc,64m -f <dir>/boot.vcl`.
///
/// The VCL is the shipped file with only these lines changed (``configuration(servers:probeInterval:)``): the
/// `backend thumbd_N { … }` blocks and the directors' `add_backend(thumbd_N …)` lines, made from the shipped
/// `thumbd_1` ones with the test's address and id (the shipped nodes must all be alike, so the test cannot
/// quietly drop a setting), and the probe's `.interval = 2s;`. Every other line (key, ring, retries, what is
/// cached, headers) is the file's own.
///
/// Started as root, varnishd reads the VCL as Debian's `varnish` user and runs its worker as `vcache` (the default
/// `unix` jail, as a packaged varnishd runs; no `-j none`), so the temporary directory is made readable by others
/// (0755); as another user it runs as that user. `varnishadm` and `varnishstat` find the management port and
/// secret through the work directory. Stopping the manager (by pid) stops its worker: the worker exits when the
/// manager's pipe closes, even after a SIGKILL. A missing binary is a failure with the fix in the message, never a
/// skip.
final class VarnishChild: ClusterHealthChecks {
    let process: ChildProcess
    /// The client port on 127.0.0.1.
    let port: Int
    /// Holds the generated VCL files and varnishd's work directory.
    let directory: TempDirectory
    /// The name of the VCL in use (`boot` from the start, then the name given to ``reload(servers:name:)``).
    private let activeVCL = Mutex("boot")
    /// The probe interval every VCL of this child is made with.
    private let probeInterval: String

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// varnishd's work directory (`-n`): its shared-memory log and counters, the management secret, compiled VCL.
    var workDirectory: String { directory.appending("work") }

    /// Starts varnishd in the foreground on `servers`, on `port` (an unused loopback port when nil: a test whose
    /// nodes must name Varnish's address before it starts picks one first), and waits (up to `timeout`) until it
    /// accepts connections. Blocks the thread.
    init(
        servers: [HAProxyChild.Server], port chosen: Int? = nil, probeInterval: String = "200ms",
        timeout: Duration = .seconds(15)
    ) throws {
        port = try chosen ?? LoopbackSocket.unusedPort()
        directory = try TempDirectory(prefix: "thumbd-varnish")
        // Started as root, varnishd's manager reads the VCL as the `varnish` user: mkdtemp's 0700 would refuse it.
        chmod(directory.path, 0o755)
        self.probeInterval = probeInterval
        let path = directory.appending("boot.vcl")
        let text = try Self.configuration(servers: servers, probeInterval: probeInterval)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        process = try ChildProcess(
            executable: try Self.executable(),
            arguments: [
                "-F", "-n", directory.appending("work"), "-a", "127.0.0.1:\(port)", "-T", "127.0.0.1:0",
                "-s", "malloc,64m", "-f", path,
            ])
        guard process.waitUntilAccepting(port: port, timeout: timeout) else {
            throw Failure(
                description: "varnishd did not start (\(process.exitStatus.map { "\($0)" } ?? "no connection")); "
                    + "stderr:\n\(process.standardError)\(process.standardOutput)\nVCL:\n\(text)")
        }
    }

    deinit { stop() }

    /// Graceful stop (SIGTERM to the manager, which stops its worker), then waits up to `timeout`.
    @discardableResult
    func stop(timeout: Duration = .seconds(10)) -> ChildProcess.Termination? {
        process.kill(SIGTERM)
        return process.wait(timeout: timeout)
    }

    // MARK: - Management

    /// What an operator's reload does (`varnishreload`): the shipped VCL with `servers` is compiled and loaded
    /// beside the running one (`vcl.load`), then put in use (`vcl.use`). Varnish's cache is kept. Blocks the thread.
    func reload(servers: [HAProxyChild.Server], name: String) throws {
        let path = directory.appending("\(name).vcl")
        let text = try Self.configuration(servers: servers, probeInterval: probeInterval)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        _ = try administer(["vcl.load", name, path])
        _ = try administer(["vcl.use", name])
        activeVCL.withLock { $0 = name }
    }

    /// The health of each node in the VCL in use, by `thumbd-N` (`healthy`, `sick`), from `backend.list`:
    /// `boot.thumbd_1    probe    3/3    healthy    Wed, 25 Nov 2026 05:51:28 GMT`. Blocks the thread.
    func serverStates() throws -> [String: String] {
        let prefix = activeVCL.withLock { $0 } + ".thumbd_"
        var states: [String: String] = [:]
        for line in try administer(["backend.list"]).split(separator: "\n") where line.hasPrefix(prefix) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4 else { continue }
            states["thumbd-" + fields[0].dropFirst(prefix.count)] = String(fields[3])
        }
        return states
    }

    /// A counter of varnishd's (`MAIN.backend_req`: requests sent to the nodes; `MAIN.backend_fail`: connections
    /// to a node that failed), from `varnishstat -1`. Worker threads add their counts to these totals when they go
    /// idle, so a read right after an answer may still lack it. Blocks the thread.
    func counter(_ name: String) throws -> Int {
        let output = try run(Self.tool("varnishstat"), ["-n", workDirectory, "-1", "-f", name])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }),
            let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({
                Int($0)
            })
        else { throw Failure(description: "varnishstat -f \(name): \(output)") }
        return value
    }

    /// `varnishadm -n <work> <arguments>`, which must succeed; its output. Blocks the thread.
    @discardableResult
    func administer(_ arguments: [String]) throws -> String {
        try run(Self.tool("varnishadm"), ["-n", workDirectory] + arguments)
    }

    /// Runs one of Varnish's tools to its end (at most 10 s); its standard output when it exits 0.
    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let tool = try ChildProcess(executable: executable, arguments: arguments)
        let ended = tool.wait(timeout: .seconds(10))
        guard ended == .exited(0) else {
            tool.kill(SIGKILL)
            let how = ended.map { "\($0)" } ?? "timed out"
            throw Failure(
                description: "\(executable) \(arguments.joined(separator: " ")): \(how)\n"
                    + "\(tool.standardOutput)\(tool.standardError)")
        }
        return tool.standardOutput
    }

    // MARK: - Configuration

    /// The shipped file, in the source tree.
    static var shippedConfigurationPath: String {
        ConfigTestFiles.repositoryRoot.appendingPathComponent("deploy/cluster/varnish.vcl").path
    }

    /// `deploy/cluster/varnish.vcl` with its nodes replaced by `servers` on 127.0.0.1 (backend `thumbd_<id>`,
    /// ring ident `thumbd-<id>`) and the probe's interval by `probeInterval`.
    /// - Throws: ``Failure`` when what the test rewrites is not in the file as expected (one `.interval = 2s;`,
    ///   `backend thumbd_N` blocks and `add_backend(thumbd_N…)` lines that differ only in N and the address):
    ///   the test must not quietly run a configuration other than the one shipped.
    static func configuration(servers: [HAProxyChild.Server], probeInterval: String) throws -> String {
        let shipped = try String(contentsOfFile: shippedConfigurationPath, encoding: .utf8)
        var lines = shipped.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let intervals = lines.indices.filter { lines[$0] == "    .interval = 2s;" }
        guard intervals.count == 1 else { throw failure("expected the line `    .interval = 2s;` once") }
        lines[intervals[0]] = "    .interval = \(probeInterval);"
        // The nodes' subnet, which may send BANs: the test's nodes are on the loopback address.
        let subnets = lines.indices.filter { lines[$0] == "    \"10.0.0.0\"/24;" }
        guard subnets.count == 1 else { throw failure("expected the line `    \"10.0.0.0\"/24;` once") }
        lines[subnets[0]] = "    \"127.0.0.1\";"

        // Each node's lines: its backend block (to the closing brace), and its add_backend line in each director.
        var groups: [(lines: ClosedRange<Int>, kind: String, id: Int)] = []
        for (index, line) in lines.enumerated() {
            if line.hasPrefix("backend thumbd_"), let id = Int(line.dropFirst(15).prefix { $0.isNumber }) {
                guard let end = lines[index...].firstIndex(of: "}") else { throw failure("unclosed `\(line)`") }
                groups.append((index...end, "backend", id))
            } else if line.hasPrefix("    "), let call = line.range(of: ".add_backend(thumbd_"),
                let id = Int(line[call.upperBound...].prefix { $0.isNumber })
            {
                groups.append((index...index, String(line[..<call.lowerBound]), id))
            }
        }
        var templates: [String: [String]] = [:]
        for group in groups where group.id == 1 { templates[group.kind] = Array(lines[group.lines]) }
        guard templates["backend"] != nil, templates.count >= 2 else {
            throw failure("expected `backend thumbd_1 { … }` and `<director>.add_backend(thumbd_1 …)` lines")
        }
        for group in groups {
            guard let template = templates[group.kind],
                Self.node(template, id: group.id, host: "10.0.0.\(10 + group.id)", port: 8080)
                    == Array(lines[group.lines])
            else {
                throw failure("thumbd_\(group.id)'s `\(group.kind)` lines are not thumbd_1's with its own address")
            }
        }
        // The test's nodes where each kind's first shipped node was; the other shipped nodes' lines left out.
        let groupsByStart = Dictionary(uniqueKeysWithValues: groups.map { ($0.lines.lowerBound, $0) })
        var placed: Set<String> = []
        var rewritten: [String] = []
        var index = 0
        while index < lines.count {
            guard let group = groupsByStart[index] else {
                rewritten.append(lines[index])
                index += 1
                continue
            }
            if placed.insert(group.kind).inserted, let template = templates[group.kind] {
                for server in servers {
                    rewritten += Self.node(template, id: server.id, host: "127.0.0.1", port: server.port)
                }
            }
            index = group.lines.upperBound + 1
        }
        return rewritten.joined(separator: "\n")
    }

    /// Node 1's lines made into node `id`'s at `host:port`.
    private static func node(_ template: [String], id: Int, host: String, port: Int) -> [String] {
        template.map {
            $0.replacingOccurrences(of: "thumbd_1", with: "thumbd_\(id)")
                .replacingOccurrences(of: "\"thumbd-1\"", with: "\"thumbd-\(id)\"")
                .replacingOccurrences(of: ".host = \"10.0.0.11\";", with: ".host = \"\(host)\";")
                .replacingOccurrences(of: ".port = \"8080\";", with: ".port = \"\(port)\";")
        }
    }

    private static func failure(_ text: String) -> Failure {
        Failure(description: "\(shippedConfigurationPath): \(text)")
    }

    /// varnishd: `$THUMBD_VARNISHD`, else `/usr/sbin/varnishd` (Debian's place, which a user's PATH may not hold)
    /// or `/usr/local/sbin/varnishd`.
    static func executable() throws -> String {
        if let override = ProcessInfo.processInfo.environment["THUMBD_VARNISHD"] {
            guard access(override, X_OK) == 0 else {
                throw Failure(description: "THUMBD_VARNISHD=\(override) is not executable")
            }
            return override
        }
        for candidate in ["/usr/sbin/varnishd", "/usr/local/sbin/varnishd"] where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw missing("varnishd")
    }

    /// `varnishadm` or `varnishstat`: beside varnishd, else where Debian puts them (/usr/bin).
    static func tool(_ name: String) throws -> String {
        let beside = URL(fileURLWithPath: try executable()).deletingLastPathComponent().appendingPathComponent(name)
        for candidate in [beside.path, "/usr/bin/\(name)", "/usr/local/bin/\(name)"]
        where access(candidate, X_OK) == 0 {
            return candidate
        }
        throw missing(name)
    }

    private static func missing(_ name: String) -> Failure {
        Failure(
            description: "Varnish 7.1 (\(name)) is needed for the Varnish cluster tests and was not found: run "
                + "`make test` (it installs Debian's varnish package), or `apt-get install varnish`, or set "
                + "THUMBD_VARNISHD to a varnishd binary")
    }
}
