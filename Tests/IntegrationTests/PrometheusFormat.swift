// SPDX-License-Identifier: Apache-2.0
import Testing

/// A checker of the Prometheus text exposition format 0.0.4, written from its specification (not from our
/// writer), so that a scrape is graded by an independent reading: every line is a `# HELP`, a `# TYPE` or a
/// sample; names and label names are valid; each family is declared once, before its samples, which are
/// contiguous; counters end in `_total`; every histogram series has cumulative buckets ending in `le="+Inf"`
/// equal to its `_count`, and a `_sum`.
enum PrometheusFormat {
    struct Sample {
        var name: String
        var labels: [(String, String)]
        var value: Double
    }

    /// Records an issue for each way `text` breaks the format, and when it has fewer than `minimumFamilies`.
    static func check(
        _ text: String, minimumFamilies: Int = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(text.hasSuffix("\n"), sourceLocation: sourceLocation)
        var types: [String: String] = [:]
        var helps: Set<String> = []
        var finished: Set<String> = []
        var current: String?
        var series: Set<String> = []
        var samplesByFamily: [String: [Sample]] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let line = String(line)
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false).map(String.init)
                try #require(parts.count >= 3, "short comment line: \(line)", sourceLocation: sourceLocation)
                let name = parts[2]
                #expect(isMetricName(name), "bad family name in \(line)", sourceLocation: sourceLocation)
                #expect(!finished.contains(name), "family \(name) declared again", sourceLocation: sourceLocation)
                if current != name, let current { finished.insert(current) }
                current = name
                if parts[1] == "HELP" {
                    #expect(helps.insert(name).inserted, "two HELP lines for \(name)", sourceLocation: sourceLocation)
                } else {
                    try #require(parts.count == 4, "TYPE without a type: \(line)", sourceLocation: sourceLocation)
                    #expect(types[name] == nil, "two TYPE lines for \(name)", sourceLocation: sourceLocation)
                    #expect(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]),
                        "unknown type in \(line)", sourceLocation: sourceLocation)
                    types[name] = parts[3]
                }
                continue
            }
            #expect(!line.hasPrefix("#") && !line.isEmpty, "stray line: \(line)", sourceLocation: sourceLocation)
            let sample = try #require(parse(line), "not a sample line: \(line)", sourceLocation: sourceLocation)
            let owner = try #require(
                Self.family(of: sample.name, types: types), "sample before its TYPE: \(line)",
                sourceLocation: sourceLocation)
            #expect(owner == current, "samples of \(owner) not contiguous: \(line)", sourceLocation: sourceLocation)
            let key = sample.name + "{" + sample.labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
            #expect(series.insert(key).inserted, "duplicate series \(key)", sourceLocation: sourceLocation)
            samplesByFamily[owner, default: []].append(sample)
        }
        for (name, type) in types {
            #expect(name.hasPrefix("thumbd_"), "\(name) lacks the thumbd_ prefix", sourceLocation: sourceLocation)
            if type == "counter" {
                #expect(name.hasSuffix("_total"), "counter \(name) lacks _total", sourceLocation: sourceLocation)
            }
            if type == "histogram" {
                try checkHistogram(name, samplesByFamily[name] ?? [], sourceLocation: sourceLocation)
            }
        }
        #expect(types.count >= minimumFamilies, "only \(types.count) families", sourceLocation: sourceLocation)
    }

    private static func checkHistogram(
        _ name: String, _ samples: [Sample], sourceLocation: SourceLocation
    ) throws {
        var buckets: [String: [(le: Double, count: Double)]] = [:]
        var sums: [String: Double] = [:]
        var counts: [String: Double] = [:]
        for sample in samples {
            let others = sample.labels.filter { $0.0 != "le" }.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
            switch sample.name {
            case name + "_bucket":
                let le = try #require(sample.labels.first { $0.0 == "le" }?.1, sourceLocation: sourceLocation)
                let bound = try #require(value(le), "bad le \(le)", sourceLocation: sourceLocation)
                buckets[others, default: []].append((bound, sample.value))
            case name + "_sum": sums[others] = sample.value
            case name + "_count": counts[others] = sample.value
            default: Issue.record("\(sample.name) in histogram \(name)", sourceLocation: sourceLocation)
            }
        }
        #expect(!buckets.isEmpty, "histogram \(name) without series", sourceLocation: sourceLocation)
        for (labels, list) in buckets {
            #expect(list.last?.le == .infinity, "\(name){\(labels)} lacks +Inf", sourceLocation: sourceLocation)
            for (previous, next) in zip(list, list.dropFirst()) {
                #expect(previous.le < next.le, "\(name){\(labels)} bounds out of order", sourceLocation: sourceLocation)
                #expect(
                    previous.count <= next.count, "\(name){\(labels)} not cumulative", sourceLocation: sourceLocation)
            }
            #expect(counts[labels] == list.last?.count, "\(name){\(labels)} _count", sourceLocation: sourceLocation)
            #expect(sums[labels] != nil, "\(name){\(labels)} lacks _sum", sourceLocation: sourceLocation)
        }
    }

    /// The family a sample belongs to: its own name, or a histogram's with the suffix removed.
    private static func family(of name: String, types: [String: String]) -> String? {
        if types[name] != nil { return name }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            let base = String(name.dropLast(suffix.count))
            if types[base] == "histogram" { return base }
        }
        return nil
    }

    /// `name{label="value",...} value`, or nil when the line is not one.
    static func parse(_ line: String) -> Sample? {
        var rest = Substring(line)
        let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }
        guard isMetricName(String(name)) else { return nil }
        rest = rest.dropFirst(name.count)
        var labels: [(String, String)] = []
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let label = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                guard !label.isEmpty, !label.first!.isNumber else { return nil }
                rest = rest.dropFirst(label.count)
                guard rest.hasPrefix("=\"") else { return nil }
                rest = rest.dropFirst(2)
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\" {
                        guard let escaped = rest.first else { return nil }
                        rest = rest.dropFirst()
                        switch escaped {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { return nil }
                rest = rest.dropFirst()
                labels.append((String(label), value))
                if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" { return nil }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " " else { return nil }
        guard let parsed = value(String(rest.dropFirst())) else { return nil }
        return Sample(name: String(name), labels: labels, value: parsed)
    }

    static func value(_ text: String) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    static func isMetricName(_ name: String) -> Bool {
        guard let first = name.first, first.isASCII, first.isLetter || first == "_" || first == ":" else {
            return false
        }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == ":") }
    }
}
