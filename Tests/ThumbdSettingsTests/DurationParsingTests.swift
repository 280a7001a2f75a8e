// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import ThumbdSettings

@Suite struct DurationParsingTests {
    static let valid: [(String, Duration)] = [
        ("0", .zero),
        ("500ms", .milliseconds(500)),
        ("10s", .seconds(10)),
        ("1m", .seconds(60)),
        ("1h", .seconds(3_600)),
        ("1d", .seconds(86_400)),
        ("365d", .seconds(365 * 86_400)),
        ("1m30s", .seconds(90)),
        ("1h15m", .seconds(4_500)),
        ("1s500ms", .milliseconds(1_500)),
        ("2d3h4m5s6ms", .milliseconds(183_845_006)),
        (" 10s ", .seconds(10)),
    ]

    @Test(arguments: valid)
    func parsesDurations(text: String, duration: Duration) throws {
        // Given a duration with units, when parsed, then the value is exact.
        #expect(try DurationParsing.parse(text) == duration)
    }

    @Test(arguments: [
        "", "10", "s", "10 s", "1.5s", "-1s", "10S", "10sec", "1w", "30s1m", "1s1s", "10s5", "99999999999999999d",
    ])
    func refusesMalformedDurations(text: String) {
        // Given text without a unit, with an unknown unit or units out of order, when parsed, then it is refused.
        #expect(throws: InvalidValue.self) { try DurationParsing.parse(text) }
    }

    static let formatted: [(Duration, String)] = [
        (.zero, "0"), (.milliseconds(500), "500ms"), (.seconds(10), "10s"), (.seconds(60), "1m"),
        (.seconds(90), "1m30s"), (.seconds(86_400), "1d"), (.seconds(31_536_000), "365d"),
        (.milliseconds(1_500), "1s500ms"),
    ]

    @Test(arguments: formatted)
    func formatsInTheLargestUnits(duration: Duration, text: String) throws {
        // Given a duration, when formatted, then it uses the largest exact units and parses back.
        #expect(DurationParsing.format(duration) == text)
        #expect(try DurationParsing.parse(text) == duration)
    }

    @Test func reasonMentionsTheMissingUnit() {
        // Given a bare number, when parsed, then the reason says a unit is needed.
        do {
            _ = try DurationParsing.parse("10")
            Issue.record("a bare number was accepted")
        } catch {
            #expect(error.reason.contains("needs a unit"))
        }
    }
}
