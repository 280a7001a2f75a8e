// SPDX-License-Identifier: Apache-2.0

/// Builds a scrape in the Prometheus text exposition format 0.0.4
/// (<https://prometheus.io/docs/instrumenting/exposition_formats/>): per metric family one `# HELP` and one
/// `# TYPE` line, then its samples, `name{label="value",...} value`.
///
/// ```swift
/// var text = PrometheusText()
/// text.family(MetricNames.renderQueueDepth, .gauge, "Render jobs waiting.")
/// text.sample(MetricNames.renderQueueDepth, [("priority", "interactive")], 3)
/// let body = text.bytes
/// ```
package struct PrometheusText: Sendable {
    /// The `Content-Type` of a scrape in this format.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// A metric family's type, as the `# TYPE` line names it.
    package enum Kind: String, Sendable {
        /// Only goes up (resets at restart); its name ends in `_total`.
        case counter
        /// Goes up and down.
        case gauge
        /// Cumulative buckets with `_bucket{le=...}`, `_sum` and `_count`.
        case histogram
    }

    /// The text so far, UTF-8.
    package private(set) var bytes: [UInt8] = []

    /// An empty scrape.
    package init() {
        bytes.reserveCapacity(16 * 1024)
    }

    /// Starts the family `name`: its `# HELP` and `# TYPE` lines. Each family must be started once, before its
    /// samples, and all its samples must follow together.
    package mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        append("# HELP ")
        append(name)
        append(" ")
        for byte in help.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            default: bytes.append(byte)
            }
        }
        append("\n# TYPE ")
        append(name)
        append(" ")
        append(kind.rawValue)
        append("\n")
    }

    /// One sample without labels, integer value.
    package mutating func sample(_ name: String, _ value: Int) {
        sample(name, [], value)
    }

    /// One sample without labels, floating-point value.
    package mutating func sample(_ name: String, _ value: Double) {
        sample(name, [], value)
    }

    /// One sample with an integer value.
    package mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Int) {
        head(name, labels)
        append(String(value))
        append("\n")
    }

    /// One sample with a floating-point value (`NaN`, `+Inf` and `-Inf` as the format spells them).
    package mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
        head(name, labels)
        append(Self.format(value))
        append("\n")
    }

    /// A whole histogram series of durations, in seconds: its `_bucket` lines (cumulative, ending with
    /// `le="+Inf"`), `_sum` and `_count`. The family must have been started with ``Kind/histogram``.
    package mutating func histogram(
        _ name: String, _ labels: [(String, String)] = [], boundsNanoseconds: [Int64],
        _ snapshot: DurationHistogram.Snapshot
    ) {
        let bucketName = name + "_bucket"
        for (bound, count) in zip(boundsNanoseconds, snapshot.cumulativeCounts) {
            sample(bucketName, labels + [("le", Self.format(Double(bound) / 1e9))], count)
        }
        sample(bucketName, labels + [("le", "+Inf")], snapshot.count)
        sample(name + "_sum", labels, Double(snapshot.sumNanoseconds) / 1e9)
        sample(name + "_count", labels, snapshot.count)
    }

    /// A float as the format spells it (Go's `ParseFloat` reads Swift's shortest round-trip form).
    package static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return value.description
    }

    private mutating func head(_ name: String, _ labels: [(String, String)]) {
        append(name)
        guard !labels.isEmpty else {
            append(" ")
            return
        }
        append("{")
        for (index, (label, value)) in labels.enumerated() {
            if index > 0 { append(",") }
            append(label)
            append("=\"")
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): append("\\\\")
                case UInt8(ascii: "\""): append("\\\"")
                case UInt8(ascii: "\n"): append("\\n")
                default: bytes.append(byte)
                }
            }
            append("\"")
        }
        append("} ")
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}
