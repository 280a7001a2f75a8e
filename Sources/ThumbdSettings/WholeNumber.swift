// SPDX-License-Identifier: Apache-2.0

/// Non-negative decimal integers with optional `_` digit grouping, shared by sizes, durations and counts.
enum WholeNumber {
    /// Parses `123` or `100_000`; nil for anything else (signs, fractions, empty, overflow, stray `_`).
    static func parse(_ text: Substring) -> Int? {
        guard let first = text.first, first.isASCII, first.isNumber, text.last != "_" else { return nil }
        guard !text.contains("__") else { return nil }
        var value = 0
        for character in text where character != "_" {
            guard character.isASCII, let digit = character.wholeNumberValue else { return nil }
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }
}

/// The text without leading and trailing ASCII spaces and tabs (no Foundation, so no locale rules).
func trimmingASCIISpaces(_ text: Substring) -> Substring {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
    let end = text.lastIndex { !isSpace($0) }.map(text.index(after:)) ?? start
    return text[start..<end]
}
