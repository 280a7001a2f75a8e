// SPDX-License-Identifier: Apache-2.0

import EventLoops
import Synchronization
package import ThumbdSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The access log: one line per request, recorded on HTTP event-loop threads and written by one
/// background thread.
///
/// `record(...)` formats the line straight into a per-thread buffer (a shard chosen by the calling
/// thread, so its lock is uncontended) and returns: no syscall, no allocation once the buffers exist. The
/// `access-log` thread swaps full or aged buffers out and does the `write(2)` calls. Memory is bounded:
/// if the writer falls behind (a slow disk or a blocked pipe), lines that do not fit are dropped and
/// counted in `droppedLines`, and the event loop never waits.
///
/// A text line is logfmt after the timestamp; a JSON line is one object (each shown here on two lines):
///
///     2026-11-22T10:00:00.123Z method=GET path=/thumb?url=x&sig=REDACTED status=200 bytes=5120
///         duration_ms=3.217 note=HIT-MEMORY
///     {"time":"2026-11-22T10:00:00.123Z","method":"GET","path":"/thumb?url=x&sig=REDACTED","status":200,
///         "bytes":5120,"duration_ms":3.217,"note":"HIT-MEMORY"}
///
/// The value of a `sig` query parameter is always redacted, and bytes of the path that are not printable
/// ASCII (or are `"` or `\`) are percent-encoded, so a client cannot break or forge a line.
///
/// ```swift
/// let accessLog = AccessLog(settings: settings.log)      // stdout
/// accessLog.record(method: "GET", path: "/health", status: 200, bytes: 2, duration: .microseconds(40), note: "")
/// accessLog.shutdown()                                    // flushes; at exit
/// ```
package final class AccessLog: Sendable {
    /// Buffers and counters, shared with the writer thread.
    private let core: Core
    /// Whether lines are recorded; `log.access` (reloadable).
    private let enabled: Atomic<Bool>

    /// Creates the access log and starts its writer thread.
    ///
    /// - Parameters:
    ///   - format: text or JSON lines.
    ///   - isEnabled: false records nothing until `isEnabled` is set (`log.access: false`).
    ///   - fileDescriptor: where lines go; stdout by default. Not closed by the access log.
    ///   - shardCount: number of per-thread buffers; 0 picks twice the CPU count (a power of two, 4...64).
    ///   - bufferBytes: size of each buffer; the memory bound is `2 × shardCount × bufferBytes`.
    ///   - flushInterval: longest time a line waits in a buffer when traffic is low.
    package init(
        format: Settings.Log.Format,
        isEnabled: Bool = true,
        fileDescriptor: Int32 = STDOUT_FILENO,
        shardCount: Int = 0,
        bufferBytes: Int = 256 * 1024,
        flushInterval: Duration = .milliseconds(200)
    ) {
        let shards = shardCount > 0 ? shardCount : Self.defaultShardCount()
        core = Core(
            format: format,
            fileDescriptor: fileDescriptor,
            shardCount: shards,
            bufferBytes: max(bufferBytes, 4096),
            flushInterval: flushInterval
        )
        enabled = Atomic(isEnabled)
        core.startWriter()
    }

    /// Creates the access log configured by the `log` section, writing to stdout.
    package convenience init(settings: Settings.Log) {
        self.init(format: settings.format, isEnabled: settings.isAccessLogEnabled)
    }

    deinit {
        core.stopWriter()
    }

    /// Whether `record` writes lines. A reload sets it from `log.access`.
    package var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// Lines dropped because the writer fell behind (or its descriptor failed), since start.
    package var droppedLines: Int { core.dropped.load(ordering: .relaxed) }

    /// Lines written, since start.
    package var writtenLines: Int { core.written.load(ordering: .relaxed) }

    /// Records one request. Never blocks on I/O; safe on any thread.
    ///
    /// - Parameters:
    ///   - method: the request method (`GET`).
    ///   - path: what the server records of the request target (its path; a query given here has its `sig`
    ///     values redacted).
    ///   - status: the response status code.
    ///   - bytes: body bytes sent.
    ///   - duration: from the first byte of the request to the last byte of the response.
    ///   - note: free-form detail, such as the cache outcome (`HIT-MEMORY`); empty for none.
    package func record(method: String, path: String, status: Int, bytes: Int, duration: Duration, note: String) {
        guard enabled.load(ordering: .relaxed) else { return }
        core.record(method: method, path: path, status: status, bytes: bytes, duration: duration, note: note)
    }

    /// Writes every line recorded before the call, on the calling thread. For tests and shutdown only: it
    /// does blocking I/O.
    package func flush() {
        core.drain()
    }

    /// Flushes and stops the writer thread; later lines are dropped. Called at exit (also by `deinit`).
    package func shutdown() {
        enabled.store(false, ordering: .relaxed)
        core.stopWriter()
    }

    private static func defaultShardCount() -> Int {
        let cores = EventLoopGroup.coreCount  // the threads that log: one loop and one render thread per CPU
        var count = 4
        while count < cores * 2 && count < 64 { count *= 2 }
        return count
    }
}

// MARK: - Formatting

extension AccessLog.Core {
    /// Upper bound of the bytes `append` writes for these fields, checked before writing so that a buffer
    /// never grows (growth would allocate on the event loop).
    static func lineBound(method: String, path: String, note: String) -> Int {
        200 + 3 * method.utf8.count + 3 * path.utf8.count + 6 * note.utf8.count
    }

    /// Appends one line, newline included.
    static func append(
        format: Settings.Log.Format,
        method: String,
        path: String,
        status: Int,
        bytes: Int,
        duration: Duration,
        note: String,
        to line: inout [UInt8]
    ) {
        switch format {
        case .text:
            LoggingText.appendTimestamp(to: &line)
            line.append(contentsOf: " method=".utf8)
            appendURLSafe(method, to: &line)
            line.append(contentsOf: " path=".utf8)
            appendRedactedTarget(path, to: &line)
            line.append(contentsOf: " status=".utf8)
            LoggingText.appendDecimal(status, to: &line)
            line.append(contentsOf: " bytes=".utf8)
            LoggingText.appendDecimal(max(0, bytes), to: &line)
            line.append(contentsOf: " duration_ms=".utf8)
            LoggingText.appendMilliseconds(duration, to: &line)
            if !note.isEmpty {
                line.append(contentsOf: " note=".utf8)
                LoggingText.appendLogfmtValue(note, to: &line)
            }
        case .json:
            line.append(contentsOf: #"{"time":""#.utf8)
            LoggingText.appendTimestamp(to: &line)
            line.append(contentsOf: #"","method":""#.utf8)
            appendURLSafe(method, to: &line)
            line.append(contentsOf: #"","path":""#.utf8)
            appendRedactedTarget(path, to: &line)
            line.append(contentsOf: #"","status":"#.utf8)
            LoggingText.appendDecimal(status, to: &line)
            line.append(contentsOf: #","bytes":"#.utf8)
            LoggingText.appendDecimal(max(0, bytes), to: &line)
            line.append(contentsOf: #","duration_ms":"#.utf8)
            LoggingText.appendMilliseconds(duration, to: &line)
            if !note.isEmpty {
                line.append(contentsOf: #","note":""#.utf8)
                LoggingText.appendJSONEscaped(note, to: &line)
                line.append(UInt8(ascii: "\""))
            }
            line.append(UInt8(ascii: "}"))
        }
        line.append(UInt8(ascii: "\n"))
    }

    /// Appends the request target with secret query values redacted, URL-safe (see `appendURLSafe`).
    static func appendRedactedTarget(_ target: String, to line: inout [UInt8]) {
        LoggingText.withUTF8(target) { bytes in
            LoggingRedaction.appendRedactingSecrets(bytes, to: &line) { line, piece in
                appendURLSafe(piece, to: &line)
            }
        }
    }

    /// Appends `text`, percent-encoding everything that is not printable ASCII and `"`, `\` and space, so
    /// the result needs no quoting in either format (and a request target keeps its URL meaning).
    static func appendURLSafe(_ text: String, to line: inout [UInt8]) {
        LoggingText.withUTF8(text) { appendURLSafe($0[...], to: &line) }
    }

    /// Byte version of `appendURLSafe(_:to:)`.
    static func appendURLSafe(_ bytes: Slice<UnsafeBufferPointer<UInt8>>, to line: inout [UInt8]) {
        LoggingText.appendEscaping(bytes, to: &line, isPlain: isURLSafe, escape: appendPercentEncoded)
    }

    private static func isURLSafe(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    private static func appendPercentEncoded(_ byte: UInt8, _ line: inout [UInt8]) {
        let digits: StaticString = "0123456789ABCDEF"
        digits.withUTF8Buffer { digits in
            line.append(UInt8(ascii: "%"))
            line.append(digits[Int(byte >> 4)])
            line.append(digits[Int(byte & 0x0F)])
        }
    }
}
