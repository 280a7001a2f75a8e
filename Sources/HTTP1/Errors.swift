// SPDX-License-Identifier: Apache-2.0

/// Why a request was rejected while parsing. Every case maps to one status (``status``); the
/// connection is closed after the error response, so nothing after a bad request is ever answered
/// (no request smuggling through a lenient framing guess).
package enum RequestParseError: Error, Hashable, Sendable {
    /// Request line longer than the limit (8 KiB): 414.
    case requestLineTooLong
    /// Header block larger than the limit (32 KiB): 431.
    case headerBlockTooLarge
    /// More header fields than the limit (100): 431.
    case tooManyHeaderFields
    /// Malformed request line (method, spacing, target): 400.
    case invalidRequestLine
    /// A request line without a version (HTTP/0.9 style): 400.
    case missingVersion
    /// A well-formed version other than 1.0 or 1.1: 505.
    case unsupportedVersion
    /// A line ended by LF without CR: 400.
    case bareLineFeed
    /// A field line starting with whitespace (obs-fold), or whitespace before the first field: 400.
    case obsoleteLineFolding
    /// A field name that is empty, not a token, or followed by whitespace before the colon: 400.
    case invalidFieldName
    /// A field value with NUL, CR, LF or another control character: 400.
    case invalidFieldValue
    /// HTTP/1.1 without exactly one Host field: 400.
    case invalidHost
    /// Both Content-Length and Transfer-Encoding: 400.
    case conflictingFraming
    /// A Content-Length that is not a plain decimal number, or a repeated one: 400.
    case invalidContentLength
    /// A Transfer-Encoding other than one `chunked`, or any in HTTP/1.0: 400.
    case unsupportedTransferEncoding
    /// A malformed chunk size, extension, data terminator or trailer: 400.
    case invalidChunkedEncoding
    /// A declared or received body beyond `maxBodyBytes`: 413.
    case bodyTooLarge
    /// An `Expect` other than `100-continue`: 417.
    case unsupportedExpectation

    /// The status the server answers with.
    package var status: HTTPStatus {
        switch self {
        case .requestLineTooLong: .uriTooLong
        case .headerBlockTooLarge, .tooManyHeaderFields: .requestHeaderFieldsTooLarge
        case .unsupportedVersion: .httpVersionNotSupported
        case .bodyTooLarge: .contentTooLarge
        case .unsupportedExpectation: .expectationFailed
        case .invalidRequestLine, .missingVersion, .bareLineFeed, .obsoleteLineFolding, .invalidFieldName,
            .invalidFieldValue, .invalidHost, .conflictingFraming, .invalidContentLength,
            .unsupportedTransferEncoding, .invalidChunkedEncoding:
            .badRequest
        }
    }
}

/// A configuration value out of range, found by `validate()` before anything starts.
package struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The configuration key, e.g. `"server.threads"`.
    package let key: String
    /// Why the value is refused.
    package let reason: String

    /// Creates an error for `key`.
    package init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    package var description: String { "\(key): \(reason)" }
}

/// Failures of ``HTTPServer`` itself.
package enum HTTPServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The listen host is neither a numeric IPv4/IPv6 address nor a resolvable name.
    case invalidListenAddress(String)
    /// ``HTTPServer/start()`` was called twice, or after shutdown.
    case alreadyStarted
    /// A socket call failed while starting (bind, listen, …).
    case startFailed(String)

    package var description: String {
        switch self {
        case .invalidListenAddress(let host): "invalid listen address \(host)"
        case .alreadyStarted: "server already started"
        case .startFailed(let detail): "server failed to start: \(detail)"
        }
    }
}
