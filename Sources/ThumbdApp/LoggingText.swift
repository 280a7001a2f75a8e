// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Byte-level building blocks shared by the diagnostic log handler and the access log: timestamps, numbers
/// and escaped text appended in place to a `[UInt8]` line, so that a line with reserved capacity is built
/// without allocating.
enum LoggingText {
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

        appendPadded(year, width: 4, to: &line)
        line.append(UInt8(ascii: "-"))
        appendPadded(month, width: 2, to: &line)
        line.append(UInt8(ascii: "-"))
        appendPadded(day, width: 2, to: &line)
        line.append(UInt8(ascii: "T"))
        appendPadded(secondOfDay / 3_600, width: 2, to: &line)
        line.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay / 60 % 60, width: 2, to: &line)
        line.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay % 60, width: 2, to: &line)
        line.append(UInt8(ascii: "."))
        appendPadded(milliseconds, width: 3, to: &line)
        line.append(UInt8(ascii: "Z"))
    }

    // MARK: - Numbers

    /// Appends a non-negative number with leading zeros to `width` digits.
    static func appendPadded(_ value: Int, width: Int, to line: inout [UInt8]) {
        let value = max(0, value)
        var divisor = 1
        for _ in 1..<max(1, width) { divisor *= 10 }
        while divisor > value && divisor > 1 {
            line.append(UInt8(ascii: "0"))
            divisor /= 10
        }
        appendDecimal(value, to: &line)
    }

    /// Appends a decimal integer without going through `String`.
    static func appendDecimal(_ value: Int, to line: inout [UInt8]) {
        if value < 0 {
            line.append(UInt8(ascii: "-"))
            appendDecimal(UInt(value.magnitude), to: &line)
        } else {
            appendDecimal(UInt(value), to: &line)
        }
    }

    private static func appendDecimal(_ value: UInt, to line: inout [UInt8]) {
        var divisor: UInt = 1
        while value / divisor >= 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            line.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// Appends a duration in milliseconds with three decimals: `12.345`.
    static func appendMilliseconds(_ duration: Duration, to line: inout [UInt8]) {
        let (seconds, attoseconds) = duration.components
        let microseconds = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        appendDecimal(Int(microseconds / 1_000), to: &line)
        line.append(UInt8(ascii: "."))
        appendPadded(Int(microseconds % 1_000), width: 3, to: &line)
    }

    // MARK: - Text

    /// Appends `text` as the contents of a JSON string (without the quotes): `"`, `\` and control
    /// characters escaped, other UTF-8 as is. At most 6 bytes per input byte.
    static func appendJSONEscaped(_ text: some StringProtocol, to line: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): line.append(UInt8(ascii: "\\")); line.append(byte)
            case UInt8(ascii: "\\"): line.append(UInt8(ascii: "\\")); line.append(byte)
            case UInt8(ascii: "\n"): line.append(UInt8(ascii: "\\")); line.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\t"): line.append(UInt8(ascii: "\\")); line.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                line.append(contentsOf: "\\u00".utf8)
                appendHex(byte, to: &line)
            default: line.append(byte)
            }
        }
    }

    /// Appends a logfmt value: as is when it is a plain token, else double-quoted with `"`, `\` and control
    /// characters escaped (so a value can never end the line or forge another key). At most 4 bytes per
    /// input byte plus 2.
    static func appendLogfmtValue(_ text: some StringProtocol, to line: inout [UInt8]) {
        let isPlain =
            !text.utf8.isEmpty
            && text.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F && $0 != 0x22 && $0 != 0x3D && $0 != 0x5C }
        guard !isPlain else {
            line.append(contentsOf: text.utf8)
            return
        }
        line.append(UInt8(ascii: "\""))
        appendQuotedContents(text, to: &line)
        line.append(UInt8(ascii: "\""))
    }

    /// Appends text for a human-readable line, escaping only what would break the line: `\n`, `\t` and
    /// other control characters. At most 4 bytes per input byte.
    static func appendMessage(_ text: some StringProtocol, to line: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\n"): line.append(UInt8(ascii: "\\")); line.append(UInt8(ascii: "n"))
            case UInt8(ascii: "\t"): line.append(UInt8(ascii: "\\")); line.append(UInt8(ascii: "t"))
            case 0..<0x20, 0x7F:
                line.append(contentsOf: "\\x".utf8)
                appendHex(byte, to: &line)
            default: line.append(byte)
            }
        }
    }

    private static func appendQuotedContents(_ text: some StringProtocol, to line: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): line.append(UInt8(ascii: "\\")); line.append(byte)
            case UInt8(ascii: "\n"): line.append(UInt8(ascii: "\\")); line.append(UInt8(ascii: "n"))
            case 0..<0x20, 0x7F:
                line.append(contentsOf: "\\x".utf8)
                appendHex(byte, to: &line)
            default: line.append(byte)
            }
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
