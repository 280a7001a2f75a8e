// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Synchronization
import ThumbdTestSupport

/// The built `thumbd` executable running as a child process on 127.0.0.1 (the kernel picks the port), for the
/// tests that kill it, restart it on the same files, or time its start.
///
/// It reads a YAML file written by ``writeConfiguration(to:logLevel:)`` (the harness's settings, logging at
/// `info` so the `listening` line tells the port) and gets `--cache-dir` and `--port 0` as flags. The test
/// runner's `THUMBD_*` variables are not passed on: the child runs on exactly these settings.
final class ThumbdChild: Sendable {
    let process: ChildProcess
    /// The port it listens on, read from its `listening address=127.0.0.1:N` log line.
    let port: Int
    /// From just before `posix_spawn` to the moment the `listening` line was seen (the line is written right
    /// after `/ready` turned 200, so this bounds the time to ready from above).
    let timeToListening: Duration
    /// Just before `posix_spawn`.
    let spawnedAt: ContinuousClock.Instant

    /// Spawns thumbd and waits (up to `timeout`) until it listens. Blocks the calling thread.
    /// - Throws: ``ChildProcess/SpawnError`` when the executable is not built, ``StartError`` when it does not
    ///   listen in time (with what it wrote to standard error).
    /// `environment`: variables added to the child's (test hooks such as `THUMBD_TEST_DECODER_LOOP`).
    init(
        configuration: String, cacheDirectory: String, timeout: Duration = .seconds(30),
        environment extra: [String: String] = [:]
    ) throws {
        let executable = try ChildProcess.builtExecutable(named: "thumbd")
        let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("THUMBD_") }
            .merging(extra) { _, new in new }
        let start = ContinuousClock.now
        process = try ChildProcess(
            executable: executable,
            arguments: ["--config", configuration, "--cache-dir", cacheDirectory, "--port", "0"],
            environment: environment, inheritsEnvironment: false)
        let line = process.waitForStandardError(containing: "thumbd: listening", timeout: timeout)
        timeToListening = ContinuousClock.now - start
        spawnedAt = start
        guard let line, let port = Self.port(inListeningLine: line) else {
            throw StartError(exit: process.exitStatus, standardError: process.standardError)
        }
        self.port = port
    }

    /// `listening address=127.0.0.1:41234` (the value may be quoted) → 41234.
    private static func port(inListeningLine line: String) -> Int? {
        guard let range = line.range(of: "address=") else { return nil }
        let value = line[range.upperBound...].prefix { $0 != " " }.filter { $0 != "\"" }
        return value.split(separator: ":").last.flatMap { Int($0) }
    }

    /// Sends `GET target` on a new connection and reads the answer. Blocks the calling thread.
    func get(_ target: String, timeout: Duration = .seconds(30)) throws -> RawHTTPClient.Response {
        let client = try RawHTTPClient(host: "127.0.0.1", port: port)
        try client.send(Self.requestText(target))
        return try client.readResponse(timeout: timeout)
    }

    /// The value of the sample `name` (with `labels` written as in the exposition, `kind="thumbnail",…`, or none)
    /// in its `/metrics`; nil when it has none. Blocks the calling thread.
    func metric(_ name: String, labels: String? = nil) throws -> Int? {
        let text = String(decoding: try get("/metrics").body, as: UTF8.self)
        let prefix = labels.map { "\(name){\($0)} " } ?? "\(name) "
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) else { return nil }
        return Double(line.dropFirst(prefix.count)).map { Int($0) }
    }

    /// Graceful stop: SIGTERM, then waits up to `timeout` for the exit. Blocks the calling thread.
    func stop(timeout: Duration = .seconds(30)) -> ChildProcess.Termination? {
        process.kill(SIGTERM)
        return process.wait(timeout: timeout)
    }

    /// The bytes of a keep-alive `GET`.
    static func requestText(_ target: String) -> String {
        "GET \(target) HTTP/1.1\r\nHost: thumbd.test\r\n\r\n"
    }

    /// Writes the child's configuration: the harness's base settings (origins on 127.0.0.2 allowed, two
    /// HTTP and two render threads, no access log unless `accessLog`: then one line per request on standard
    /// output) with `log.level` set so that the `listening` line shows, and `extraYAML` (top-level sections the
    /// base leaves out, such as `thumbor:` and `imgproxy:`) after it.
    static func writeConfiguration(
        to path: String, logLevel: String = "info", accessLog: Bool = false, extraYAML: String = ""
    ) throws {
        let yaml = """
            server:
              listen: 127.0.0.1:0
              threads: 2
            fetch:
              allowed_networks: [\(originHost)/32]
            image:
              render_threads: 2
            log:
              access: \(accessLog)
              level: \(logLevel)
            \(extraYAML)
            """
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// thumbd did not start listening in time.
    struct StartError: Error, CustomStringConvertible {
        let exit: ChildProcess.Termination?
        let standardError: String
        var description: String {
            "thumbd did not start listening (\(exit.map { "\($0)" } ?? "still running")); stderr:\n\(standardError)"
        }
    }
}

/// The answers of one round of requests, by the index of the request.
struct RequestRound: Sendable {
    var answers: [Int: RawHTTPClient.Response] = [:]
    var failures: [Int: String] = [:]
    /// Whether `killWhen` held when SIGKILL was sent (false if it was sent at the deadline, or not at all).
    var killConditionHeld = false
}

extension ThumbdChild {
    /// Sends every target once, `threads` at a time on OS threads (keep-alive connections), and collects
    /// the answers. With `killAfter`, another thread sends SIGKILL once that many answers are in and then
    /// `killWhen` holds (polled every 100 µs; at the latest 60 s after the start); the workers then stop at
    /// their first failed request. Blocks the calling thread.
    func requestAll(
        _ targets: [String], threads: Int = 8, killAfter: Int? = nil,
        killWhen: @escaping @Sendable () -> Bool = { true }
    ) -> RequestRound {
        let next = Atomic<Int>(0)
        let answered = Atomic<Int>(0)
        let killed = Atomic<Bool>(false)
        let killCondition = Atomic<Bool>(false)
        let answers = Recorder<(Int, RawHTTPClient.Response)>()
        let failures = Recorder<(Int, String)>()
        runOnThreads(threads + (killAfter == nil ? 0 : 1)) { [self] thread in
            if thread == threads, let killAfter {
                let deadline = ContinuousClock.now + .seconds(60)
                while answered.load(ordering: .relaxed) < killAfter, ContinuousClock.now < deadline {
                    usleep(500)
                }
                var condition = false
                while !condition, ContinuousClock.now < deadline {
                    condition = killWhen()
                    if !condition { usleep(100) }
                }
                killed.store(true, ordering: .relaxed)
                process.kill(SIGKILL)
                killCondition.store(condition, ordering: .relaxed)
                return
            }
            var client: RawHTTPClient?
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < targets.count else { return }
                do {
                    let connection = try client ?? RawHTTPClient(host: "127.0.0.1", port: port)
                    client = connection
                    try connection.send(Self.requestText(targets[index]))
                    answers.append((index, try connection.readResponse(timeout: .seconds(30))))
                    answered.add(1, ordering: .relaxed)
                } catch {
                    client = nil
                    failures.append((index, "\(error)"))
                    if killed.load(ordering: .relaxed) { return }
                }
            }
        }
        var round = RequestRound()
        for (index, response) in answers.values { round.answers[index] = response }
        for (index, failure) in failures.values { round.failures[index] = failure }
        round.killConditionHeld = killCondition.load(ordering: .relaxed)
        return round
    }
}
