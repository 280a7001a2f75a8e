// SPDX-License-Identifier: Apache-2.0
import Caching

extension FreshnessPolicy {
    /// Parses an HTTP-date (`Date`, `Expires`) in the three forms RFC 9110 §5.6.7 obliges recipients to accept:
    ///
    /// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT` (what servers send)
    /// - obsolete RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
    /// - ANSI C asctime: `Sun Nov  6 08:49:37 1994` (also with a zero-padded day)
    ///
    /// Arithmetic is done here (days from the civil date) rather than with `timegm` or a Foundation
    /// formatter: no locale, no global state, and out-of-range fields are rejected instead of normalised
    /// (`31 Feb` is garbage, not `3 Mar`).
    ///
    /// Leniency: surrounding whitespace is ignored and day and month names and `GMT` match in any case.
    /// The day name is not checked against the date (RFC 9110 lets recipients skip that check).
    /// A second of 60 (leap second) is accepted and counts as the next second.
    enum HTTPDate {
        /// The instant `text` denotes, or `nil` when it is not an HTTP-date.
        ///
        /// - Parameter now: resolves the two-digit year of the RFC 850 form: a year that would lie more than
        ///   50 years after `now` is taken from the previous century (RFC 9110 §5.6.7).
        static func parse(_ text: String, now: Timestamp) -> Timestamp? {
            var scanner = Scanner(trimming: Array(text.utf8))
            guard let dayName = scanner.letters() else { return nil }
            let fields: Fields?
            if scanner.skip(UInt8(ascii: ",")) {
                // IMF-fixdate has a 3-letter day name, RFC 850 a full one; the date part tells them apart.
                guard scanner.skip(space) else { return nil }
                fields = dayName.count == 3 ? scanner.imfFixdate() : scanner.rfc850(now: now)
            } else {
                guard dayName.count == 3, scanner.skip(space) else { return nil }
                fields = scanner.asctime()
            }
            guard let fields, scanner.isAtEnd, fields.isValid else { return nil }
            return fields.timestamp
        }

        private static let space = UInt8(ascii: " ")

        private static let months = [
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ]

        /// A date and time of day, in UTC, before range checks.
        private struct Fields {
            var year: Int64
            var month: Int64
            var day: Int64
            var hour: Int64
            var minute: Int64
            var second: Int64

            var isValid: Bool {
                (1...12).contains(month) && (1...daysInMonth).contains(day) && (0...23).contains(hour)
                    && (0...59).contains(minute) && (0...60).contains(second)
            }

            private var daysInMonth: Int64 {
                switch month {
                case 2: isLeapYear ? 29 : 28
                case 4, 6, 9, 11: 30
                default: 31
                }
            }

            private var isLeapYear: Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

            var timestamp: Timestamp {
                let days = HTTPDate.daysSinceEpoch(year: year, month: month, day: day)
                let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second
                return Timestamp(millisecondsSinceEpoch: seconds * 1_000)
            }
        }

        /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
        static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
            let year = month <= 2 ? year - 1 : year
            let era = (year >= 0 ? year : year - 399) / 400
            let yearOfEra = year - era * 400
            let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
            let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
            return era * 146_097 + dayOfEra - 719_468
        }

        /// The Gregorian year of an instant (Hinnant's `civil_from_days`, year only).
        static func year(of timestamp: Timestamp) -> Int64 {
            let millisecondsPerDay: Int64 = 86_400_000
            var days = timestamp.millisecondsSinceEpoch / millisecondsPerDay
            if timestamp.millisecondsSinceEpoch % millisecondsPerDay < 0 { days -= 1 }
            days += 719_468
            let era = (days >= 0 ? days : days - 146_096) / 146_097
            let dayOfEra = days - era * 146_097
            let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
            let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
            let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0 = March ... 11 = February
            return yearOfEra + era * 400 + (shiftedMonth >= 10 ? 1 : 0)
        }

        /// A cursor over the bytes of one header value.
        private struct Scanner {
            private let bytes: [UInt8]
            private var index: Int
            private let end: Int

            init(trimming bytes: [UInt8]) {
                let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
                self.bytes = bytes
                self.index = bytes.firstIndex { !isBlank($0) } ?? bytes.count
                self.end = (bytes.lastIndex { !isBlank($0) } ?? -1) + 1
            }

            var isAtEnd: Bool { index >= end }

            /// `Sun, ` already read; `06 Nov 1994 08:49:37 GMT` follows.
            mutating func imfFixdate() -> Fields? {
                guard let day = digits(2), skip(HTTPDate.space), let month = month(), skip(HTTPDate.space),
                    let year = digits(4), skip(HTTPDate.space), let time = time(), skip(HTTPDate.space), skipGMT()
                else { return nil }
                return Fields(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
            }

            /// `Sunday, ` already read; `06-Nov-94 08:49:37 GMT` follows.
            mutating func rfc850(now: Timestamp) -> Fields? {
                let dash = UInt8(ascii: "-")
                guard let day = digits(2), skip(dash), let month = month(), skip(dash), let shortYear = digits(2),
                    skip(HTTPDate.space), let time = time(), skip(HTTPDate.space), skipGMT()
                else { return nil }
                let currentYear = HTTPDate.year(of: now)
                var year = currentYear - currentYear % 100 + shortYear
                if year > currentYear + 50 { year -= 100 }
                return Fields(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
            }

            /// `Sun ` already read; `Nov  6 08:49:37 1994` follows (the day is space- or zero-padded).
            mutating func asctime() -> Fields? {
                guard let month = month(), skip(HTTPDate.space) else { return nil }
                _ = skip(HTTPDate.space)  // the pad of a one-digit day
                guard let day = digits(1...2), skip(HTTPDate.space), let time = time(), skip(HTTPDate.space),
                    let year = digits(4)
                else { return nil }
                return Fields(year: year, month: month, day: day, hour: time.0, minute: time.1, second: time.2)
            }

            /// `hh:mm:ss`.
            private mutating func time() -> (Int64, Int64, Int64)? {
                let colon = UInt8(ascii: ":")
                guard let hour = digits(2), skip(colon), let minute = digits(2), skip(colon), let second = digits(2)
                else { return nil }
                return (hour, minute, second)
            }

            /// A three-letter month name, as 1...12.
            private mutating func month() -> Int64? {
                guard let name = letters(), let index = HTTPDate.months.firstIndex(of: name) else { return nil }
                return Int64(index + 1)
            }

            private mutating func skipGMT() -> Bool { letters() == "gmt" }

            /// A run of ASCII letters, lowercased; `nil` when there is none.
            mutating func letters() -> String? {
                let start = index
                // `| 0x20` lowercases ASCII letters and maps no other byte into a...z.
                while index < end, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[index] | 0x20) {
                    index += 1
                }
                guard index > start else { return nil }
                return String(decoding: bytes[start..<index].map { $0 | 0x20 }, as: UTF8.self)
            }

            /// Exactly `count` decimal digits.
            private mutating func digits(_ count: Int) -> Int64? { digits(count...count) }

            /// Between `counts.lowerBound` and `counts.upperBound` decimal digits (greedy).
            private mutating func digits(_ counts: ClosedRange<Int>) -> Int64? {
                var value: Int64 = 0
                var count = 0
                while index < end, count < counts.upperBound, bytes[index] >= UInt8(ascii: "0"),
                    bytes[index] <= UInt8(ascii: "9")
                {
                    value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                    count += 1
                    index += 1
                }
                return counts.contains(count) ? value : nil
            }

            /// Consumes `byte` if it is next.
            mutating func skip(_ byte: UInt8) -> Bool {
                guard index < end, bytes[index] == byte else { return false }
                index += 1
                return true
            }
        }
    }
}
