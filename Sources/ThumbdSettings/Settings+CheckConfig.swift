// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// Every key with its effective value as YAML, the text `thumbd --check-config` prints.
    ///
    /// The output parses back to the same settings, except that secrets (`admin.token`,
    /// `security.signing_keys`) are shown as `"<redacted>"`, never in clear. A key whose value did not come
    /// from the built-in default carries a comment naming its source.
    ///
    /// - Parameter origins: where each key's value came from, by dotted key name (`ConfigFile` fills it).
    package func checkConfigText(origins: [String: String] = [:]) -> String {
        var lines: [String] = []
        var openSections: [String] = []
        for key in Settings.keys {
            let components = key.components
            let sections = Array(components.dropLast())
            let shared = zip(openSections, sections).prefix { $0 == $1 }.count
            for depth in shared..<sections.count {
                lines.append(String(repeating: "  ", count: depth) + sections[depth] + ":")
            }
            openSections = sections
            var line = String(repeating: "  ", count: sections.count) + components.last! + ": "
            line += key.displayValue(in: self)
            if let origin = origins[key.name] { line += "  # \(origin)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Minimal YAML scalar quoting for printed values.
enum YAMLText {
    /// Words YAML 1.1 would read as a boolean or null if left unquoted.
    private static let reservedWords: Set<String> = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ]

    /// `text` as a YAML scalar: plain if it cannot be misread, else double-quoted with escapes.
    ///
    /// - Parameter isFreeText: quote words such as `true` or `null` that YAML would read as another type
    ///   (free-text keys); for booleans and numbers the plain form is the intended one.
    static func scalar(_ text: String, isFreeText: Bool) -> String {
        let safe = text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || "._/:@+-".utf8.contains(byte)
        }
        let startsSafely = text.first.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "/" } ?? false
        let misreadable = isFreeText && reservedWords.contains(text.lowercased())
        if safe && startsSafely && !misreadable && !text.hasSuffix(":") {
            return text
        }
        var quoted = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\x" + String(repeating: "0", count: 2 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
