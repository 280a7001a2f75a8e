// SPDX-License-Identifier: Apache-2.0

/// A configuration problem found before anything starts: which key, where its value came from, and why it
/// was refused. Its description is what `thumbd --check-config` and a failed start print:
///
///     fetch.connect_timeout (THUMBD_FETCH_CONNECT_TIMEOUT): must not exceed fetch.timeout (10s), got 30s
package struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The dotted key (`server.listen`), or for problems outside any key the environment variable
    /// (`THUMBD_SERVR_LISTEN`) or the file path.
    package var key: String
    /// Where the bad value came from when known: `config/thumbd.yaml:12`, `THUMBD_SERVER_LISTEN`, `--listen`.
    package var source: String?
    /// Why it was refused, phrased for an operator.
    package var reason: String

    /// Creates an error for `key`.
    package init(key: String, source: String? = nil, reason: String) {
        self.key = key
        self.source = source
        self.reason = reason
    }

    /// `key (source): reason`.
    package var description: String {
        if let source, source != key {
            return "\(key) (\(source)): \(reason)"
        }
        return "\(key): \(reason)"
    }
}
