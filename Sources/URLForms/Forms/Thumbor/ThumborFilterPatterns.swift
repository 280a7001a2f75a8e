// SPDX-License-Identifier: Apache-2.0

/// thumbor 7.8's rule for which filters run: a filter whose name is not one of its builtin filters
/// (`BUILTIN_FILTERS`), or whose text does not match the pattern thumbor builds from the filter's declared
/// arguments, is dropped and the rest of the URL is rendered (docs/compatibility.md, "Skipped filters").
///
/// The pattern is built as thumbor builds it: `name\(`, then for each argument `(?:,\s*(ARG)\s*)` (no comma before
/// the first; a `?` after it when the Python method gives that argument a default other than None), then `\)`,
/// matched at the start only (Python's `re.match`). The captured arguments are what the filter then reads: omitted
/// optional ones are left out, and a String argument's `'quotes'` are taken off.
package enum ThumborFilterPatterns {
    /// One declared argument: its expression and whether it may be left out.
    struct Argument {
        let expression: String
        let isOptional: Bool
        /// A String argument: `'quotes'` around the whole value are taken off (thumbor's `STRIP_QUOTE`).
        let isString: Bool

        init(_ expression: String, optional: Bool = false, string: Bool = false) {
            self.expression = expression
            self.isOptional = optional
            self.isString = string
        }
    }

    // thumbor's `BaseFilter` argument types.
    static let positiveNumber = #"[\d]+"#
    static let positiveNonZeroNumber = #"[\d]*[1-9][\d]*"#
    static let number = #"[-]?[\d]+"#
    static let decimalNumber = #"[-]?(?:(?:[\d]+\.?[\d]*)|(?:[\d]*\.?[\d]+))"#
    static let boolean = #"[Tt]rue|[Ff]alse|1|0"#
    static let string = #"(?:'.+?')|(?:[^,]+?)"#

    /// thumbor 7.8's builtin filters and their declared arguments (each filter module's `@filter_method`).
    static let declarations: [String: [Argument]] = {
        let positive = Argument(positiveNumber)
        let integer = Argument(number)
        let decimal = Argument(decimalNumber)
        let text = Argument(string, string: true)
        let curve = Argument(#"\[(?:\(\d+,\d+\),?)*\]"#)
        let position = Argument(#"(?:-?\d+p?)|center|repeat"#)
        let ratio = Argument(#"(?:-?\d+)|none"#, optional: true)
        return [
            "brightness": [integer],
            "colorize": [positive, positive, positive, text],
            "contrast": [integer],
            "rgb": [integer, integer, integer],
            "round_corner": [
                Argument(#"[\d]+(?:\|[\d]+)?"#), positive, positive, positive, Argument(boolean, optional: true),
            ],
            "quality": [positive],
            "noise": [positive, Argument(positiveNumber, optional: true)],
            "watermark": [text, position, position, positive, ratio, ratio],
            "equalize": [],
            "fill": [Argument(#"[\w]+"#), Argument(boolean, optional: true)],
            "sharpen": [decimal, decimal, Argument(boolean)],
            "strip_exif": [],
            "strip_icc": [],
            "frame": [text],
            "grayscale": [],
            "rotate": [integer],
            "format": [text],
            "max_bytes": [positive],
            "convolution": [
                Argument(#"-?\d+(?:\.\d*)?(?:;-?\d+(?:\.\d*)?)*"#), Argument(positiveNonZeroNumber),
                Argument(boolean, optional: true),
            ],
            "blur": [Argument(positiveNonZeroNumber), Argument(decimalNumber, optional: true)],
            "extract_focal": [],
            "focal": [text],
            "no_upscale": [],
            "saturation": [decimal],
            "max_age": [positive],
            "curve": [curve, curve, curve, curve],
            "background_color": [Argument(#"[\w]+"#)],
            "upscale": [],
            "proportion": [decimal],
            "stretch": [],
        ]
    }()

    /// A compiled pattern shared by every thread. `@unchecked Sendable`: immutable once made, and the lazily lowered
    /// program inside `Regex` is made here, by a first match, before any other thread can see it (the standard
    /// library's lowering is itself published atomically).
    final class Pattern: @unchecked Sendable {
        let regex: Regex<AnyRegexOutput>
        let arguments: [Argument]

        init(_ text: String, arguments: [Argument] = []) {
            // The expressions are constants: a failure here is a programming error, caught by the first test.
            guard let regex = try? Regex(text) else { preconditionFailure("thumbor filter pattern \(text)") }
            _ = try? regex.prefixMatch(in: "")
            self.regex = regex
            self.arguments = arguments
        }
    }

    /// Each builtin filter's pattern, compiled once.
    static let patterns: [String: Pattern] = {
        var patterns: [String: Pattern] = [:]
        for (name, arguments) in declarations {
            var text = name + #"\("#
            for (index, argument) in arguments.enumerated() {
                text += "(?:" + (index > 0 ? "," : "") + #"\s*("# + argument.expression + #")\s*)"#
                text += argument.isOptional ? "?" : ""
            }
            text += #"\)"#
            patterns[name] = Pattern(text, arguments: arguments)
        }
        return patterns
    }()

    /// What thumbor makes of one filter: nil when it skips it, else the arguments the filter reads.
    /// - Parameters:
    ///   - name: the text before the first `(`.
    ///   - arguments: the text between the parentheses, as written.
    package static func arguments(of name: String, _ arguments: String) -> [String]? {
        guard let pattern = patterns[name] else { return nil }
        let text = name + "(" + arguments + ")"
        guard let match = try? pattern.regex.prefixMatch(in: text) else { return nil }
        var values: [String] = []
        for (index, argument) in pattern.arguments.enumerated() where index + 1 < match.output.count {
            // thumbor drops the groups that did not take part (`if param`), which are the trailing optional ones.
            guard let captured = match.output[index + 1].substring, !captured.isEmpty else { continue }
            var value = String(captured)
            if argument.isString, value.utf8.count >= 3, value.hasPrefix("'"), value.hasSuffix("'") {
                value = String(value.dropFirst().dropLast())
            }
            values.append(value)
        }
        // `focal`'s own check: a value that is not `LxT:RxB` (at its start), or an empty rectangle, does nothing.
        if name == "focal" {
            guard let corners = try? focalCorners.regex.prefixMatch(in: values[0]) else { return nil }
            let numbers = (1...4).compactMap { corners.output[$0].substring.flatMap { Int($0) } }
            guard numbers.count == 4, numbers[2] != numbers[0], numbers[3] != numbers[1] else { return nil }
            values[0] = String(corners.output[0].substring ?? "")
        }
        return values
    }

    /// `focal.py`'s `(\d+)x(\d+):(\d+)x(\d+)`.
    private static let focalCorners = Pattern(#"(\d+)x(\d+):(\d+)x(\d+)"#)
}
