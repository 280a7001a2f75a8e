// SPDX-License-Identifier: Apache-2.0

package import Logging
import Synchronization
package import ThumbdSettings

/// Process-wide logging set-up: installs `LoggingLineHandler` on stderr with the configured format and level.
///
/// ```swift
/// let levels = LoggingSetup.bootstrap(settings.log)
/// let logger = Logger(label: "thumbd")
/// // on reload:
/// levels.level = newSettings.log.level
/// ```
package enum LoggingSetup {
    /// Installs thumbd's handler for every `Logger` of the process. swift-log allows this once per process,
    /// so only `main` calls it (tests build handlers directly).
    ///
    /// - Parameters:
    ///   - settings: the `log` section (level and format; `access` concerns `AccessLog`).
    ///   - sink: where lines go; standard error by default.
    /// - Returns: the shared level, which a config reload changes.
    @discardableResult
    package static func bootstrap(
        _ settings: Settings.Log,
        sink: LoggingLineHandler.Sink = .standardError
    ) -> LevelControl {
        let control = LevelControl(settings.level)
        let format = settings.format
        LoggingSystem.bootstrap { label in
            LoggingLineHandler(label: label, sink: sink, format: format, levelControl: control)
        }
        return control
    }

    /// The level shared by every logger, changeable while running (a reload sets it from `log.level`).
    package final class LevelControl: Sendable {
        private let raw: Atomic<UInt8>

        /// A control starting at `level`.
        package init(_ level: Logger.Level) {
            raw = Atomic(Self.code(of: level))
        }

        /// The current level.
        package var level: Logger.Level {
            get { Logger.Level.allCases[Int(raw.load(ordering: .relaxed))] }
            set { raw.store(Self.code(of: newValue), ordering: .relaxed) }
        }

        private static func code(of level: Logger.Level) -> UInt8 {
            UInt8(Logger.Level.allCases.firstIndex(of: level) ?? 0)
        }
    }
}
