// SPDX-License-Identifier: Apache-2.0
import Glibc
package import Logging
package import ThumbdSettings

extension ThumbdService {
    /// Runs thumbd until SIGTERM or SIGINT, then stops gracefully and returns (exit status 0).
    ///
    /// The signals are blocked in every thread (the mask is set before any thread starts, and threads
    /// inherit it) and taken synchronously by `sigtimedwait` on the main thread, so no code runs in signal
    /// context. SIGPIPE is ignored: a client that resets mid-response is an EPIPE, not a crash. SIGHUP, and a
    /// change of the config file (looked at every 2 s between signals), reload `configFile` on this thread
    /// (ConfigReloader.swift).
    ///
    /// - Parameters:
    ///   - configFile: the sources the settings came from, read again on reload; nil turns reloading off.
    ///   - levelControl: the process-wide log level, which a reload sets.
    /// - Throws: when a component cannot start (binding the listener, libvips, ...).
    package static func run(
        settings: Settings, logger: Logger, configFile: ConfigFile? = nil,
        levelControl: LoggingSetup.LevelControl? = nil
    ) throws {
        signal(SIGPIPE, SIG_IGN)
        var signals = sigset_t()
        sigemptyset(&signals)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, signal) }
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        var watcher = ConfigFileWatcher(path: configFile?.path)  // before the start: a change meanwhile counts
        let service = try ThumbdService(settings: settings, logger: logger, levelControl: levelControl)
        try service.start()
        while true {
            guard let received = waitForSignal(&signals, timeout: ConfigFileWatcher.pollInterval) else {
                if let configFile, watcher.hasChanged() { service.reloader.reload(from: configFile, trigger: "file") }
                continue
            }
            if received == SIGHUP {
                _ = watcher.hasChanged()  // read now: the next poll need not read it again
                if let configFile { service.reloader.reload(from: configFile, trigger: "SIGHUP") }
                continue
            }
            logger.info("signal received", metadata: ["signal": "\(received == SIGTERM ? "SIGTERM" : "SIGINT")"])
            break
        }
        service.shutdown()
    }

    /// Waits up to `timeout` for one of `signals` (blocked in every thread); nil on timeout or interruption.
    private static func waitForSignal(_ signals: inout sigset_t, timeout: Duration) -> Int32? {
        let (seconds, attoseconds) = timeout.components
        var limit = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        let received = sigtimedwait(&signals, nil, &limit)
        return received > 0 ? received : nil
    }
}
