// SPDX-License-Identifier: Apache-2.0

/// Why a fetch failed. The app maps each case to an HTTP status in `ErrorResponses.swift`;
/// this module never names HTTP statuses of its own.
///
/// Associated `detail` strings carry libcurl's error-buffer text and similar diagnostics for
/// logs only: they may contain addresses and must never be shown to clients.
package enum FetchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The origin answered 404 or 410.
    case originNotFound(status: Int)
    /// The origin answered another 4xx.
    case originClientError(status: Int)
    /// The origin answered 5xx.
    case originServerError(status: Int)
    /// The origin answered a status the fetcher cannot use: 1xx, a 3xx without a usable
    /// `Location`, 304 to an unconditional request, or anything outside 100...599.
    case unexpectedStatus(status: Int)
    /// No connection could be made (typically the origin refused it).
    case connectionRefused(detail: String)
    /// The host name did not resolve.
    case dnsFailure(detail: String)
    /// The TLS handshake or certificate verification failed.
    case tlsFailure(detail: String)
    /// The connection failed after it was made: reset, truncated body, malformed response.
    case connectionFailed(detail: String)
    /// A redirect led back to a URL already visited in this chain.
    case redirectLoop(url: String)
    /// More than `maxRedirects` redirects.
    case tooManyRedirects(limit: Int)
    /// `connectTimeout` or the total `timeout` elapsed (a trickling origin included).
    case timedOut(detail: String)
    /// The SSRF guard refused the resolved address (``AddressPolicy``).
    case addressForbidden(address: String, range: SpecialRange)
    /// The URL or a redirect target uses a scheme other than http or https.
    case schemeForbidden(scheme: String)
    /// The URL's or a redirect target's host is not in `allowedHosts`.
    case hostForbidden(host: String)
    /// The URL could not be parsed, or it carries credentials (never forwarded).
    case invalidURL(detail: String)
    /// The body exceeded `maxSourceBytes` (announced by Content-Length or while streaming).
    case tooLarge(limit: Int)
    /// The fetcher was shut down before the fetch finished. (A waiter that cancels its own
    /// ticket is never called at all; see ``OriginFetcher/cancel(_:)``.)
    case cancelled
    /// libcurl failed in a way none of the cases above describes (out of memory, bad option).
    case internalFailure(detail: String)

    /// The error's class, for counters and log fields.
    package var kind: Kind {
        switch self {
        case .originNotFound: .originNotFound
        case .originClientError: .originClientError
        case .originServerError: .originServerError
        case .unexpectedStatus: .unexpectedStatus
        case .connectionRefused: .connectionRefused
        case .dnsFailure: .dnsFailure
        case .tlsFailure: .tlsFailure
        case .connectionFailed: .connectionFailed
        case .redirectLoop: .redirectLoop
        case .tooManyRedirects: .tooManyRedirects
        case .timedOut: .timedOut
        case .addressForbidden: .addressForbidden
        case .schemeForbidden: .schemeForbidden
        case .hostForbidden: .hostForbidden
        case .invalidURL: .invalidURL
        case .tooLarge: .tooLarge
        case .cancelled: .cancelled
        case .internalFailure: .internalFailure
        }
    }

    /// The classes of ``FetchError``, one per case, without payloads.
    package enum Kind: String, CaseIterable, Hashable, Sendable {
        case originNotFound, originClientError, originServerError, unexpectedStatus
        case connectionRefused, dnsFailure, tlsFailure, connectionFailed
        case redirectLoop, tooManyRedirects, timedOut
        case addressForbidden, schemeForbidden, hostForbidden, invalidURL
        case tooLarge, cancelled, internalFailure
    }

    /// A log line with every detail (not for clients).
    package var description: String {
        switch self {
        case .originNotFound(let status), .originClientError(let status), .originServerError(let status),
            .unexpectedStatus(let status):
            "\(kind.rawValue): origin answered \(status)"
        case .connectionRefused(let detail), .dnsFailure(let detail), .tlsFailure(let detail),
            .connectionFailed(let detail), .timedOut(let detail), .invalidURL(let detail),
            .internalFailure(let detail):
            "\(kind.rawValue): \(detail)"
        case .redirectLoop(let url): "redirectLoop: back to \(url)"
        case .tooManyRedirects(let limit): "tooManyRedirects: more than \(limit)"
        case .addressForbidden(let address, let range): "addressForbidden: \(address) is \(range)"
        case .schemeForbidden(let scheme): "schemeForbidden: \(scheme)"
        case .hostForbidden(let host): "hostForbidden: \(host)"
        case .tooLarge(let limit): "tooLarge: more than \(limit) bytes"
        case .cancelled: "cancelled"
        }
    }
}

/// A configuration value is out of range; thrown by ``OriginFetcher/Configuration/validate()``.
package struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration key, as named in docs/configuration.md (e.g. `fetch.max_per_host`).
    package let key: String
    /// What is wrong with it.
    package let reason: String

    /// An error for `key`.
    package init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    /// `key: reason`.
    package var description: String { "\(key): \(reason)" }
}
