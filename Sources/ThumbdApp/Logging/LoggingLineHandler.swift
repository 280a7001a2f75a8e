// SPDX-License-Identifier: Apache-2.0

package import Logging
import Synchronization
package import ThumbdSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// thumbd's swift-log handler: one line per message on a file descriptor (stderr in production), as text
/// or as JSON.
///
/// Text: `2026-11-22T10:00:00.123Z info thumbd: message key=value key2="two words"`.
/// JSON: `{"time":"2026-11-22T10:00:00.123Z","level":"info","logger":"thumbd","message":"message","key":"value"}`.
///
/// Metadata is sorted by key so equal events give equal lines. Secrets never reach the output: values
/// of keys such as `authorization` or `token` are replaced, and `sig=` in any message or value is
/// redacted (`LoggingRedaction`). Control characters are escaped, so a message cannot forge a second line.
///
/// The level is read from a shared `LoggingSetup.LevelControl` unless a logger sets its own, so a config
/// reload can change the level of every logger at once.
package struct LoggingLineHandler: LogHandler {
    /// Where lines go; shared by every logger of the process.
    package let sink: Sink
    /// Line format.
    package let format: Settings.Log.Format
    /// The logger's label (`thumbd`, `thumbd.fetch`).
    package let label: String
    /// The process-wide level, changed on reload.
    package let levelControl: LoggingSetup.LevelControl
    /// A level set on this logger only (`logger.logLevel = .debug`), which wins over the shared one.
    private var ownLevel: Logger.Level?

    /// This logger's metadata.
    package var metadata: Logger.Metadata = [:]
    /// Contextual metadata added to each message.
    package var metadataProvider: Logger.MetadataProvider?

    /// Creates a handler writing to `sink`.
    package init(label: String, sink: Sink, format: Settings.Log.Format, levelControl: LoggingSetup.LevelControl) {
        self.label = label
        self.sink = sink
        self.format = format
        self.levelControl = levelControl
    }

    /// The effective level: this logger's own if set, else the shared one.
    package var logLevel: Logger.Level {
        get { ownLevel ?? levelControl.level }
        set { ownLevel = newValue }
    }

    /// Reads or changes one metadata value of this logger.
    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Formats the event as one line and writes it.
    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        if let error = event.error { merged["error"] = "\(error)" }
        var line: [UInt8] = []
        line.reserveCapacity(256)
        switch format {
        case .text: appendText(event, merged, to: &line)
        case .json: appendJSON(event, merged, to: &line)
        }
        line.append(UInt8(ascii: "\n"))
        sink.write(line)
    }

    private func appendText(_ event: LogEvent, _ metadata: Logger.Metadata, to line: inout [UInt8]) {
        LoggingText.appendTimestamp(to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        LoggingText.appendMessage(label, to: &line)
        line.append(contentsOf: ": ".utf8)
        LoggingText.appendMessage(LoggingRedaction.redactingSecrets(in: event.message.description), to: &line)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line.append(UInt8(ascii: " "))
            LoggingText.appendLogfmtValue(key, to: &line)
            line.append(UInt8(ascii: "="))
            LoggingText.appendLogfmtValue(Self.safeText(key: key, value: value), to: &line)
        }
    }

    private func appendJSON(_ event: LogEvent, _ metadata: Logger.Metadata, to line: inout [UInt8]) {
        line.append(contentsOf: #"{"time":""#.utf8)
        LoggingText.appendTimestamp(to: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: event.level.rawValue.utf8)
        line.append(contentsOf: #"","logger":""#.utf8)
        LoggingText.appendJSONEscaped(label, to: &line)
        line.append(contentsOf: #"","message":""#.utf8)
        LoggingText.appendJSONEscaped(LoggingRedaction.redactingSecrets(in: event.message.description), to: &line)
        line.append(UInt8(ascii: "\""))
        let reserved: Set<String> = ["time", "level", "logger", "message"]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            // Metadata is flattened into the object (log shippers index top-level fields); a key that would
            // shadow a standard field gets a trailing underscore instead.
            line.append(contentsOf: #",""#.utf8)
            LoggingText.appendJSONEscaped(reserved.contains(key) ? key + "_" : key, to: &line)
            line.append(contentsOf: #"":"#.utf8)
            Self.appendJSONValue(key: key, value, to: &line)
        }
        line.append(UInt8(ascii: "}"))
    }

    /// The value as text, redacted if its key names a secret or it contains a `sig=` parameter.
    private static func safeText(key: String, value: Logger.Metadata.Value) -> String {
        if LoggingRedaction.secretMetadataKeys.contains(key.lowercased()) { return LoggingRedaction.placeholder }
        return LoggingRedaction.redactingSecrets(in: value.description)
    }

    private static func appendJSONValue(key: String, _ value: Logger.Metadata.Value, to line: inout [UInt8]) {
        switch value {
        case .array(let items):
            line.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                appendJSONValue(key: key, item, to: &line)
            }
            line.append(UInt8(ascii: "]"))
        case .dictionary(let entries):
            line.append(UInt8(ascii: "{"))
            for (index, (nestedKey, nested)) in entries.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { line.append(UInt8(ascii: ",")) }
                line.append(UInt8(ascii: "\""))
                LoggingText.appendJSONEscaped(nestedKey, to: &line)
                line.append(contentsOf: #"":"#.utf8)
                appendJSONValue(key: nestedKey, nested, to: &line)
            }
            line.append(UInt8(ascii: "}"))
        case .string, .stringConvertible:
            line.append(UInt8(ascii: "\""))
            LoggingText.appendJSONEscaped(safeText(key: key, value: value), to: &line)
            line.append(UInt8(ascii: "\""))
        }
    }

    /// A file descriptor that log lines are written to, one `write(2)` per line under a lock so that lines
    /// from different threads never interleave.
    package final class Sink: Sendable {
        /// The descriptor; not owned (stderr, or a test's file, which the test closes).
        package let fileDescriptor: Int32
        private let lock = Mutex(())

        /// A sink writing to `fileDescriptor`, which must outlive it.
        package init(fileDescriptor: Int32) {
            self.fileDescriptor = fileDescriptor
        }

        /// Standard error, where thumbd's diagnostics go.
        package static let standardError = Sink(fileDescriptor: STDERR_FILENO)

        func write(_ line: [UInt8]) {
            lock.withLock { _ in
                line.withUnsafeBytes { _ = LoggingText.writeAll($0, to: fileDescriptor) }
            }
        }
    }
}
