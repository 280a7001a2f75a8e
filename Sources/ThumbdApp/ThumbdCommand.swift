// SPDX-License-Identifier: Apache-2.0

package import ArgumentParser
package import EventLoops
import Foundation
import Logging
package import ThumbdSettings
import Thumbnailing

/// The `thumbd` command line: `thumbd [--config FILE] [--listen HOST:PORT] [--port N] [--cache-dir DIR]
/// [--log-level LEVEL] [--check-config]`, `thumbd sign ...` (``SignCommand``) and `thumbd tag ...` (``TagCommand``).
///
/// It loads the settings (`ConfigFile`: defaults < file < `THUMBD_*` environment < these flags), then either
/// prints them (`--check-config`) or bootstraps logging and runs `ThumbdService`. A configuration error exits
/// with status 78 (`EX_CONFIG`) and one line naming the key and why. Subcommands (`sign`) attach to
/// `configuration.subcommands`; running `thumbd` without one serves, with the same flags as before.
package struct ThumbdCommand: ParsableCommand {
    /// Command name, help text and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: "thumbd",
        abstract: "A caching HTTP image proxy: GET /thumb?url=<image URL>&w=256&h=256.",
        discussion: """
            Settings come from built-in defaults, then the YAML file (--config, else $THUMBD_CONFIG, else none), \
            then THUMBD_* environment variables (THUMBD_SERVER_LISTEN, THUMBD_CACHE_MEMORY_MAX_BYTES, ...), \
            then these flags. See docs/configuration.md for every key.
            """,
        subcommands: [SignCommand.self, TagCommand.self]
    )

    /// Exit status for an invalid configuration (`EX_CONFIG` from sysexits.h).
    package static let configurationErrorStatus: Int32 = 78

    @OptionGroup var configFile: ConfigFileOption

    /// `--config FILE`.
    var config: String? { configFile.path }

    @Option(name: .long, help: ArgumentHelp("Address to listen on, overriding server.listen.", valueName: "host:port"))
    var listen: String?

    @Option(name: .long, help: ArgumentHelp("Port to listen on, keeping the configured host.", valueName: "n"))
    var port: Int?

    @Option(
        name: .customLong("cache-dir"),
        help: ArgumentHelp("Disk cache directory (cache.disk.path).", valueName: "dir")
    )
    var cacheDirectory: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("trace, debug, info, notice, warning, error or critical (log.level).", valueName: "level")
    )
    var logLevel: String?

    @Flag(name: .customLong("check-config"), help: "Print the effective configuration and exit (non-zero if invalid).")
    var checkConfig = false

    /// Creates an unparsed command (argument parser requirement).
    package init() {}

    /// Rejects flag combinations that have no single meaning.
    package func validate() throws {
        if listen != nil && port != nil {
            throw ValidationError("give either --listen HOST:PORT or --port N, not both")
        }
    }

    /// Loads the settings, then checks or serves.
    package func run() throws {
        let environment = ProcessInfo.processInfo.environment
        if checkConfig {
            let report = checkConfigReport(environment: environment)
            // The effective values go to stdout (to be piped or diffed); an error goes to stderr.
            let output = report.status == 0 ? FileHandle.standardOutput : FileHandle.standardError
            output.write(Data(report.output.utf8))
            if report.status != 0 { throw ExitCode(report.status) }
            return
        }
        let resolution: ConfigFile.Resolution
        let file = configFile(environment: environment)
        do {
            resolution = try file.resolve()
        } catch {
            FileHandle.standardError.write(Data("thumbd: configuration error: \(error)\n".utf8))
            throw ExitCode(Self.configurationErrorStatus)
        }
        let settings = resolution.settings
        let levelControl = LoggingSetup.bootstrap(settings.log)
        let logger = Logger(label: "thumbd")
        for warning in resolution.warnings { logger.warning("configuration: \(warning)") }
        do {
            try ThumbdService.run(settings: settings, logger: logger, configFile: file, levelControl: levelControl)
        } catch let error as SettingsError {
            // A preset or the fallback image, refused by the service's own checks as it starts.
            var located = error
            if located.source == nil {
                located.source = ConfigFile.Resolution.origin(of: error.key, in: resolution.origins)
            }
            FileHandle.standardError.write(Data("thumbd: configuration error: \(located)\n".utf8))
            throw ExitCode(Self.configurationErrorStatus)
        }
    }

    /// The text `--check-config` prints and its exit status: the effective values of every key (0), or the
    /// configuration error (78).
    ///
    /// - Parameters:
    ///   - environment: the variables to read `THUMBD_*` from.
    ///   - cpus: the CPUs thumbd may use, which the thread counts that are 0 are made from (tests give one read
    ///     from a fake cgroup tree).
    package func checkConfigReport(
        environment: [String: String], cpus: CPUAllowance = .current
    ) -> (output: String, status: Int32) {
        let file = configFile(environment: environment)
        do {
            let resolution = try file.resolve()
            let thumbnailer = try Thumbnailer(
                configuration: resolution.settings.thumbnailerConfiguration, vips: Vips.initialize())
            do throws(SettingsError) {
                // What only the service can check: each preset with /thumb's parser, the fallback image rendered,
                // the object store's buckets and credentials.
                _ = try resolution.settings.thumbQueryRules()
                _ = try resolution.settings.fallbackImage(thumbnailer: thumbnailer)
                _ = try resolution.settings.objectStorage(environment: environment)
            } catch {
                var located = error
                located.source = ConfigFile.Resolution.origin(of: error.key, in: resolution.origins)
                throw located
            }
            let header = """
                # thumbd effective configuration. Sources, lowest precedence first: built-in defaults, \
                \(file.path ?? "no config file"), THUMBD_* environment, command-line flags.
                # Values not from the defaults name their source. Secrets are never printed.
                """
            let warnings = resolution.warnings.map { "# warning: \($0)\n" }.joined()
            let threads = Self.threadCountsText(resolution.settings, cpus: cpus)
            return (
                header + "\n" + threads + warnings + "\n"
                    + resolution.settings.checkConfigText(origins: resolution.origins), 0
            )
        } catch {
            return ("thumbd: configuration error: \(error)\n", Self.configurationErrorStatus)
        }
    }

    /// `--check-config`'s comment lines on threads: the CPUs thumbd may use and where that number came from (the
    /// affinity mask, or a cgroup CPU quota), and the thread counts `settings` gives on them.
    ///
    /// ```
    /// # cpus: 2 (cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup; affinity 64)
    /// # threads: 2 event loops (server.threads: 0, one per CPU), 3 render threads (image.render_threads: 0, …)
    /// ```
    static func threadCountsText(_ settings: Settings, cpus: CPUAllowance) -> String {
        let loops = settings.server.threads == 0 ? "server.threads: 0, one per CPU" : "server.threads"
        let renders =
            settings.image.renderThreads == 0
            ? "image.render_threads: 0, one per CPU plus a quarter" : "image.render_threads"
        return """
            # cpus: \(cpus)
            # threads: \(settings.httpThreads(cpus: cpus.count)) event loops (\(loops)), \
            \(settings.renderThreads(cpus: cpus.count)) render threads (\(renders))

            """
    }

    /// The configuration sources these flags select.
    package func configFile(environment: [String: String]) -> ConfigFile {
        ConfigFile(
            path: config,
            environment: environment,
            overrides: ConfigFile.Overrides(
                listen: listen,
                port: port,
                cacheDirectory: cacheDirectory,
                logLevel: logLevel
            )
        )
    }
}

/// `--config FILE`, shared by `thumbd` and its subcommands.
///
/// The root command parses every argument it knows, those after a subcommand's name too, so a subcommand that
/// declared its own `--config` would never see it; one that includes this group gets the value the root parsed
/// (swift-argument-parser hands an option group of the same type down to the subcommand).
struct ConfigFileOption: ParsableArguments {
    @Option(name: .customLong("config"), help: ArgumentHelp("YAML configuration file.", valueName: "file"))
    var path: String?
}
