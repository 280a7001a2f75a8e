// SPDX-License-Identifier: Apache-2.0

/// The text form of byte counts in thumbd's configuration: `1048576`, `256MB`, `10GiB`.
///
/// Decimal units are powers of 1000 (`KB`, `MB`, `GB`, `TB`) and binary units powers of 1024
/// (`KiB`, `MiB`, `GiB`, `TiB`), as in IEC 80000-13; `B` or no unit means bytes. Units are matched
/// case-insensitively (`256mb` is 256 MB, never megabits) and may follow the number after one space.
/// Only whole numbers are accepted: a fraction such as `1.5GB` is refused rather than rounded, so the
/// value an operator reads is exactly the value in force. `_` may group digits (`100_000`).
package enum ByteSize {
    /// The units accepted after the number, with their multipliers.
    static let units: [(suffix: String, multiplier: Int)] = [
        ("b", 1),
        ("kb", 1_000), ("mb", 1_000_000), ("gb", 1_000_000_000), ("tb", 1_000_000_000_000),
        ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40),
    ]

    /// Parses a byte count such as `256MB`, `10GiB` or `1048576`.
    ///
    /// - Throws: `InvalidValue` with a reason an operator can act on (bad number, unknown unit, overflow).
    package static func parse(_ text: String) throws(InvalidValue) -> Int {
        let trimmed = trimmingASCIISpaces(text[...])
        let digitsEnd = trimmed.firstIndex { !($0.isASCII && ($0.isNumber || $0 == "_")) } ?? trimmed.endIndex
        let number = trimmed[..<digitsEnd]
        let unit = trimmingASCIISpaces(trimmed[digitsEnd...]).lowercased()
        guard !number.isEmpty else {
            throw InvalidValue("expected a size such as 1048576, 256MB or 10GiB, got \"\(text)\"")
        }
        guard let count = WholeNumber.parse(number) else {
            throw InvalidValue("\"\(text)\" is not a whole number of bytes (use 1500MB rather than 1.5GB)")
        }
        let multiplier: Int
        if unit.isEmpty {
            multiplier = 1
        } else if let match = units.first(where: { $0.suffix == unit }) {
            multiplier = match.multiplier
        } else {
            throw InvalidValue("unknown size unit in \"\(text)\" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)")
        }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw InvalidValue("\"\(text)\" is too large") }
        return bytes
    }

    /// Formats a byte count with the largest unit that represents it exactly, so that
    /// `format(parse(x))` reads like what an operator would write: `1MiB`, `256MB`, `1500`.
    ///
    /// When both a decimal and a binary unit are exact, the one giving the smaller number wins
    /// (`10GB`, not `9765625KiB`).
    package static func format(_ bytes: Int) -> String {
        guard bytes != 0 else { return "0" }
        var best = (number: bytes, suffix: "")
        for (suffix, multiplier) in units where multiplier > 1 && bytes % multiplier == 0 {
            let number = bytes / multiplier
            if number < best.number {
                best = (number, displaySuffix(suffix))
            }
        }
        return "\(best.number)\(best.suffix)"
    }

    /// The canonical spelling of a lower-cased unit: `kib` becomes `KiB`, `mb` becomes `MB`.
    private static func displaySuffix(_ suffix: String) -> String {
        if suffix.hasSuffix("ib") {
            return suffix.prefix(1).uppercased() + "iB"
        }
        return suffix.uppercased()
    }
}
