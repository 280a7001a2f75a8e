// SPDX-License-Identifier: Apache-2.0

import EventLoops
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

@Suite struct ThumbdCommandTests {
    @Test func checkConfigPrintsEveryKeyAndParsesBackToTheSameSettings() throws {
        // Given a file, an environment variable and a flag, when --check-config runs, then it exits 0 and
        // its YAML, read as a config file, gives the same settings (secrets aside), with sources noted.
        let files = try ConfigTestFiles()
        let path = try files.write(
            """
            fetch:
              allowed_hosts: ["*.example.com", example.org]
              user_agent: "true"
            cache:
              memory:
                max_bytes: 300MiB
            """
        )
        let command = try ThumbdCommand.parse(["--check-config", "--config", path, "--port", "9999"])
        let environment = ["THUMBD_LOG_FORMAT": "json", "THUMBD_ADMIN_TOKEN": "s3cr3t-t0ken-value"]
        let report = command.checkConfigReport(environment: environment)
        #expect(report.status == 0)
        let expected = try command.configFile(environment: environment).load()

        for key in Settings.keys {
            #expect(
                report.output.contains("  \(key.components.last!): ") || report.output.contains("\n\(key.name): "),
                "missing \(key.name)"
            )
        }
        #expect(!report.output.contains("s3cr3t-t0ken-value"))
        #expect(report.output.contains("listen: 127.0.0.1:9999  # --port"))
        #expect(report.output.contains("format: json  # THUMBD_LOG_FORMAT"))
        #expect(report.output.contains("max_bytes: 300MiB  # \(path):6"))

        let printed = try files.write(report.output, named: "printed.yaml")
        var reread = try ConfigFile(path: printed, environment: ["THUMBD_ADMIN_TOKEN": "s3cr3t-t0ken-value"]).load()
        reread.admin.token = expected.admin.token
        #expect(reread == expected)
    }

    @Test func checkConfigFailsNamingTheKey() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("image:\n  default_quality: 0\n")
        let report = try ThumbdCommand.parse(["--check-config", "--config", path]).checkConfigReport(environment: [:])
        #expect(report.status == ThumbdCommand.configurationErrorStatus)
        #expect(report.output.contains("image.default_quality (\(path):2): must be from 1 to 100, got 0"))
    }

    @Test func checkConfigReadsTheObjectStoresCredentialsWithoutPrintingThem() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("s3:\n  endpoint: http://127.0.0.1:9000\n")
        let command = try ThumbdCommand.parse(["--check-config", "--config", path])
        // Without credentials: a configuration error naming the endpoint
        let missing = command.checkConfigReport(environment: [:])
        #expect(missing.status == ThumbdCommand.configurationErrorStatus)
        #expect(missing.output.contains("s3.endpoint"))
        // With them (the standard variables): valid, and the secret is not printed
        let present = command.checkConfigReport(
            environment: ["AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "never-printed-secret"])
        #expect(present.status == 0)
        #expect(!present.output.contains("never-printed-secret"))
    }

    @Test func checkConfigUsesTheConfigVariableWithoutAFlag() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("server:\n  threads: 7\n")
        let report = try ThumbdCommand.parse(["--check-config"]).checkConfigReport(environment: ["THUMBD_CONFIG": path])
        #expect(report.status == 0)
        #expect(report.output.contains("threads: 7  # \(path):2"))
    }

    @Test func checkConfigSaysWhereTheCPUCountCameFromAndTheThreadsMadeFromIt() throws {
        // Given a container limited to 2 CPUs by cgroup v2 on a 64-CPU node, and both thread counts left at 0
        let cpus = try FakeCGroupTree.unified(cpuMax: "200000 100000\n").allowance(affinity: 64)
        let command = try ThumbdCommand.parse(["--check-config"])

        // When --check-config runs
        let report = command.checkConfigReport(environment: [:], cpus: cpus)

        // Then it names the quota, the affinity count it lowered, and the threads made for 2 CPUs
        #expect(report.status == 0)
        #expect(
            report.output.contains("\n# cpus: 2 (cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup; affinity 64)\n"))
        #expect(
            report.output.contains(
                "\n# threads: 2 event loops (server.threads: 0, one per CPU), "
                    + "3 render threads (image.render_threads: 0, one per CPU plus a quarter)\n"))
    }

    @Test func checkConfigSaysTheAffinityWithoutAQuotaAndNamesConfiguredCounts() throws {
        // Given no quota (8 CPUs in the mask) and server.threads set in a file
        let files = try ConfigTestFiles()
        let path = try files.write("server:\n  threads: 5\n")
        let command = try ThumbdCommand.parse(["--check-config", "--config", path])

        // When --check-config runs
        let report = command.checkConfigReport(environment: [:], cpus: CPUAllowance(affinity: 8))

        // Then the CPUs come from the affinity, the configured count stands and the default follows the 8 CPUs
        #expect(report.output.contains("\n# cpus: 8 (affinity)\n"))
        #expect(
            report.output.contains(
                "# threads: 5 event loops (server.threads), 10 render threads (image.render_threads: 0, "))
        // And the printed YAML still reads back (the lines are comments)
        let printed = try files.write(report.output, named: "printed.yaml")
        #expect(try ConfigFile(path: printed, environment: [:]).load().server.threads == 5)
    }

    @Test func checkConfigOfThisMachineShowsItsOwnCPUs() throws {
        let report = try ThumbdCommand.parse(["--check-config"]).checkConfigReport(environment: [:])
        #expect(report.output.contains("# cpus: \(CPUAllowance.current)\n"))
    }

    @Test func listenAndPortTogetherAreRefused() {
        #expect(throws: (any Error).self) { try ThumbdCommand.parse(["--listen", "127.0.0.1:1", "--port", "2"]) }
    }

    @Test func flagsMapToTheirKeys() throws {
        let command = try ThumbdCommand.parse(["--listen", "[::1]:81", "--cache-dir", "/tmp/c", "--log-level", "trace"])
        let settings = try command.configFile(environment: [:]).load()
        #expect(settings.server.listen == .init(host: "::1", port: 81))
        #expect(settings.cache.disk.path == "/tmp/c")
        #expect(settings.log.level == .trace)
    }
}
