// SPDX-License-Identifier: Apache-2.0

/// The text form of durations in thumbd's configuration: `500ms`, `10s`, `1m`, `1h`, `1d`, or a sum
/// such as `1m30s` (largest unit first, as Go's `time.ParseDuration` and nginx write them).
///
/// Units are lower-case and required (a bare `10` could mean seconds or milliseconds depending on
/// which other tool the operator last configured); only `0` may stand alone. The finest unit is a
/// millisecond, so every configured duration round-trips through `format(_:)`.
package enum DurationParsing {
    /// The accepted units, largest first, in milliseconds.
    static let units: [(suffix: String, milliseconds: Int64)] = [
        ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1),
    ]

    /// Parses `500ms`, `10s`, `1m30s`, `1d` or `0`.
    ///
    /// - Throws: `InvalidValue` naming what is wrong (missing unit, unknown unit, units out of order).
    package static func parse(_ text: String) throws(InvalidValue) -> Duration {
        let trimmed = trimmingASCIISpaces(text[...])
        let example = "such as 500ms, 10s, 1m, 1h, 1d or 1m30s"
        guard !trimmed.isEmpty else { throw InvalidValue("expected a duration \(example), got \"\(text)\"") }
        if trimmed == "0" { return .zero }

        var total: Int64 = 0
        var rest = trimmed
        var previousRank = -1
        while !rest.isEmpty {
            let digitsEnd = rest.firstIndex { !($0.isASCII && ($0.isNumber || $0 == "_")) } ?? rest.endIndex
            guard let count = WholeNumber.parse(rest[..<digitsEnd]) else {
                throw InvalidValue("expected a whole number and a unit \(example), got \"\(text)\"")
            }
            let unitEnd = rest[digitsEnd...].firstIndex { !($0.isASCII && $0.isLetter) } ?? rest.endIndex
            let unit = rest[digitsEnd..<unitEnd]
            guard !unit.isEmpty else {
                throw InvalidValue("\"\(text)\" needs a unit, \(example)")
            }
            guard let rank = units.firstIndex(where: { $0.suffix == unit }) else {
                throw InvalidValue("unknown duration unit \"\(unit)\" in \"\(text)\" (use ms, s, m, h or d)")
            }
            guard rank > previousRank else {
                throw InvalidValue("units in \"\(text)\" must go from largest to smallest, each once (e.g. 1h30m)")
            }
            previousRank = rank
            let (part, overflow1) = Int64(count).multipliedReportingOverflow(by: units[rank].milliseconds)
            let (sum, overflow2) = total.addingReportingOverflow(part)
            guard !overflow1, !overflow2 else { throw InvalidValue("\"\(text)\" is too long") }
            total = sum
            rest = rest[unitEnd...]
        }
        return .milliseconds(total)
    }

    /// Formats a duration in the largest exact units: `10s`, `1m30s`, `365d`, `1500ms` becomes `1s500ms`.
    /// Anything finer than a millisecond is dropped (configured values never have it).
    package static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        var milliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return "0" }
        var text = ""
        for (suffix, size) in units where milliseconds >= size {
            text += "\(milliseconds / size)\(suffix)"
            milliseconds %= size
        }
        return text
    }
}
