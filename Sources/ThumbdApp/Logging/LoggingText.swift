// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-level building blocks shared by the diagnostic log handler and the access log: timestamps, numbers
/// and escaped text appended in place to a `[UInt8]` line.
///
/// The access log calls these on event-loop threads, so they avoid per-byte `Array.append` (each one checks
/// uniqueness and capacity): digits are formatted into a stack buffer and appended at once, and text is
/// scanned through its contiguous UTF-8 and appended in runs of bytes that need no escaping.
enum LoggingText {
    /// Calls `body` with the UTF-8 bytes of `text`, without copying a native string.
    @inline(__always)
    static func withUTF8<Result>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        return copy.withUTF8(body)
    }

    // MARK: - Timestamps

    /// Appends the current UTC time as `2026-11-22T10:00:00.123Z` (24 bytes).
    static func appendTimestamp(to line: inout [UInt8]) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        appendTimestamp(seconds: Int64(now.tv_sec), milliseconds: Int(now.tv_nsec / 1_000_000), to: &line)
    }

    /// Appends a given time since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    ///
    /// Pure arithmetic (Howard Hinnant's `civil_from_days`) rather than `gmtime_r`, which takes a lock
    /// in glibc and would be the slowest step of an access-log line.
    static func appendTimestamp(seconds: Int64, milliseconds: Int, to line: inout [UInt8]) {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        let year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))

        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { text in
            func put(_ value: Int, at offset: Int, width: Int) {
                var rest = max(0, value)
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    text[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                    rest /= 10
                }
            }
            put(year, at: 0, width: 4)
            text[4] = UInt8(ascii: "-")
            put(month, at: 5, width: 2)
            text[7] = UInt8(ascii: "-")
            put(day, at: 8, width: 2)
            text[10] = UInt8(ascii: "T")
            put(secondOfDay / 3_600, at: 11, width: 2)
            text[13] = UInt8(ascii: ":")
            put(secondOfDay / 60 % 60, at: 14, width: 2)
            text[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, at: 17, width: 2)
            text[19] = UInt8(ascii: ".")
            put(milliseconds, at: 20, width: 3)
            text[23] = UInt8(ascii: "Z")
            line.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    // MARK: - Numbers

    /// Appends a decimal integer without going through `String`.
    static func appendDecimal(_ value: Int, to line: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var rest = value.magnitude
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            if value < 0 { line.append(UInt8(ascii: "-")) }
            line.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Appends a duration in milliseconds with three decimals: `12.345`.
    static func appendMilliseconds(_ duration: Duration, to line: inout [UInt8]) {
        let (seconds, attoseconds) = duration.components
        let microseconds = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        appendDecimal(Int(microseconds / 1_000), to: &line)
        let fraction = Int(microseconds % 1_000)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4) { text in
            text[0] = UInt8(ascii: ".")
            text[1] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 100)
            text[2] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction / 10 % 10)
            text[3] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10)
            line.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    // MARK: - Text

    /// Appends `bytes`, copying runs of bytes for which `isPlain` holds at once and passing each other byte
    /// to `escape`.
    @inline(__always)
    static func appendEscaping<Bytes: Collection<UInt8>>(
        _ bytes: Bytes,
        to line: inout [UInt8],
        isPlain: (UInt8) -> Bool,
        escape: (UInt8, inout [UInt8]) -> Void
    ) where Bytes.SubSequence: Collection<UInt8> {
        var runStart = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if !isPlain(byte) {
                line.append(contentsOf: bytes[runStart..<index])
                escape(byte, &line)
                runStart = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        line.append(contentsOf: bytes[runStart..<index])
    }

    /// Appends `text` as the contents of a JSON string (without the quotes): `"`, `\` and control
    /// characters escaped, other UTF-8 as is. At most 6 bytes per input byte.
    static func appendJSONEscaped(_ text: String, to line: inout [UInt8]) {
        withUTF8(text) { appendJSONEscaped($0, to: &line) }
    }

    /// Byte version of `appendJSONEscaped(_:to:)`.
    static func appendJSONEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to line: inout [UInt8]) {
        appendEscaping(bytes, to: &line, isPlain: isPlainInQuotes, escape: escapeForJSON)
    }

    /// Appends a logfmt value: as is when it is a plain token, else double-quoted with `"`, `\` and control
    /// characters escaped (so a value can never end the line or forge another key). At most 4 bytes per
    /// input byte plus 2.
    static func appendLogfmtValue(_ text: String, to line: inout [UInt8]) {
        withUTF8(text) { bytes in
            guard !bytes.isEmpty,
                !bytes.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: "=") || !isPlainInQuotes($0) })
            else {
                line.append(UInt8(ascii: "\""))
                appendEscaping(bytes, to: &line, isPlain: isPlainInQuotes, escape: escapeForLogfmt)
                line.append(UInt8(ascii: "\""))
                return
            }
            line.append(contentsOf: bytes)
        }
    }

    /// Appends text for a human-readable line, escaping only what would break the line: `\n`, `\t` and
    /// other control characters. At most 4 bytes per input byte.
    static func appendMessage(_ text: String, to line: inout [UInt8]) {
        withUTF8(text) { bytes in
            appendEscaping(bytes, to: &line, isPlain: { $0 >= 0x20 && $0 != 0x7F }, escape: escapeForLogfmt)
        }
    }

    /// Whether a byte can stand as is inside a JSON or logfmt quoted string.
    private static func isPlainInQuotes(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != 0x7F
    }

    private static func escapeForJSON(_ byte: UInt8, _ line: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): line.append(UInt8(ascii: "\\")); line.append(byte)
        case UInt8(ascii: "\n"): line.append(contentsOf: #"\n"#.utf8)
        case UInt8(ascii: "\t"): line.append(contentsOf: #"\t"#.utf8)
        default:
            line.append(contentsOf: #"\u00"#.utf8)
            appendHex(byte, to: &line)
        }
    }

    private static func escapeForLogfmt(_ byte: UInt8, _ line: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): line.append(UInt8(ascii: "\\")); line.append(byte)
        case UInt8(ascii: "\n"): line.append(contentsOf: #"\n"#.utf8)
        case UInt8(ascii: "\t"): line.append(contentsOf: #"\t"#.utf8)
        default:
            line.append(contentsOf: #"\x"#.utf8)
            appendHex(byte, to: &line)
        }
    }

    /// Appends two lower-case hex digits.
    static func appendHex(_ byte: UInt8, to line: inout [UInt8]) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            line.append(digits[Int(byte >> 4)])
            line.append(digits[Int(byte & 0x0F)])
        }
    }

    // MARK: - Output

    /// Writes all of `bytes` to `fd`, retrying on EINTR and partial writes, and waiting for a non-blocking
    /// descriptor to drain. Returns false if the descriptor failed (closed pipe, full disk).
    @discardableResult
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 100)
            } else {
                return false
            }
        }
        return true
    }
}
