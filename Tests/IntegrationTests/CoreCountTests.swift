// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Foundation
import Testing
import ThumbdTestSupport

extension Integration {
    /// `server.threads: 0` means one per CPU that the process may use, `image.render_threads: 0` one per such CPU
    /// plus a quarter (at least one): a thumbd confined by `taskset` (or a container's cpuset) to one CPU starts one
    /// loop and two render threads, not counts made from every core of the machine. A cgroup CPU quota lowers the
    /// count further (CPUAllowanceTests reads fake cgroup trees); the child shares this process's cgroup, so the
    /// expected counts heed the quota this machine has, if any.
    @Suite(.timeLimit(.minutes(1))) struct CoreCountTests {
        @Test func threadCountsFollowTheCPUAffinityMask() throws {
            let allowed = try #require(Self.allowedCPUs(), "Cpus_allowed_list in /proc/self/status")
            func expected(affinity: Int) -> ThreadCounts {
                let cpus = CPUAllowance(affinity: affinity, quota: CPUAllowance.current.quota).count
                return ThreadCounts(http: cpus, render: cpus + (cpus + 3) / 4)
            }
            // Unconfined, it counts every CPU it may use; under `taskset -c <one of them>`, exactly one.
            #expect(try Self.threadCounts(cpus: nil) == expected(affinity: allowed.count))
            #expect(try Self.threadCounts(cpus: "\(allowed[0])") == .init(http: 1, render: 2))
            if allowed.count >= 2 {
                let two = "\(allowed[0]),\(allowed[1])"
                #expect(try Self.threadCounts(cpus: two) == expected(affinity: 2))
            }
        }

        struct ThreadCounts: Equatable { let http: Int?, render: Int? }

        /// Starts thumbd with both thread counts at 0 (under `taskset -c cpus` when given), reads the counts it
        /// logs at start, and stops it.
        private static func threadCounts(cpus: String?) throws -> ThreadCounts {
            let directory = try TempDirectory(prefix: "thumbd-cores")
            let configuration = directory.appending("thumbd.yaml")
            let yaml = """
                server:
                  listen: 127.0.0.1:0
                  threads: 0
                image:
                  render_threads: 0
                log:
                  access: false
                  level: info

                """
            try Data(yaml.utf8).write(to: URL(fileURLWithPath: configuration))
            let thumbd = try ChildProcess.builtExecutable(named: "thumbd")
            let arguments = ["--config", configuration, "--cache-dir", directory.appending("cache"), "--port", "0"]
            let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("THUMBD_") }
            let process =
                if let cpus {
                    try ChildProcess(
                        executable: "/usr/bin/taskset", arguments: ["-c", cpus, thumbd] + arguments,
                        environment: environment, inheritsEnvironment: false)
                } else {
                    try ChildProcess(
                        executable: thumbd, arguments: arguments, environment: environment, inheritsEnvironment: false)
                }
            defer {
                _ = process.kill(SIGTERM)
                _ = process.wait(timeout: .seconds(30))
            }
            let listening = try #require(process.waitForStandardError(containing: "listening", timeout: .seconds(30)))
            let log = process.standardError
            return ThreadCounts(
                http: value(of: "http_threads", in: listening),
                render: log.split(separator: "\n").lazy.compactMap { value(of: "render_threads", in: String($0)) }.first
            )
        }

        /// `name=3` (the value may be quoted) in a log line → 3.
        private static func value(of name: String, in line: String) -> Int? {
            guard let range = line.range(of: "\(name)=") else { return nil }
            return Int(line[range.upperBound...].prefix { $0 != " " }.filter { $0 != "\"" })
        }

        /// The CPUs this test process may run on (`Cpus_allowed_list: 0-3,6`), which a child inherits.
        private static func allowedCPUs() -> [Int]? {
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
            else { return nil }
            let list = line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
            var cpus: [Int] = []
            for part in list.split(separator: ",") {
                let bounds = part.split(separator: "-").compactMap { Int($0) }
                guard let low = bounds.first, let high = bounds.last else { return nil }
                cpus += Array(low...high)
            }
            return cpus.isEmpty ? nil : cpus
        }
    }
}
