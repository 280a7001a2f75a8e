// SPDX-License-Identifier: Apache-2.0

extension LoopbackOrigin {
    /// One response header.
    package struct Header: Sendable, Hashable {
        /// The header name as sent.
        package var name: String
        /// The header value as sent.
        package var value: String

        /// `name: value`.
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// What the origin does for a path. Every script ends when the client goes away or the
    /// origin stops, so no test can leave a thread behind for long.
    package indirect enum Script: Sendable {
        /// A complete response with an honest Content-Length.
        case respond(status: Int, headers: [Header], body: [UInt8])
        /// Waits, then runs the next script (the client closing during the wait is recorded).
        case delay(Duration, then: Script)
        /// Waits until ``LoopbackOrigin/openGate(_:)`` opens the named gate, then runs the next script.
        case gate(String, then: Script)
        /// Reads the request and never answers.
        case hang
        /// Sends the headers (honest Content-Length), then one byte of `body` per `interval`.
        case trickle(body: [UInt8], interval: Duration, contentType: String)
        /// A close-delimited body (no Content-Length) that never ends.
        case endless(contentType: String)
        /// Announces `declared` bytes in Content-Length but sends `body` (then closes).
        case lyingLength(declared: Int, body: [UInt8], contentType: String)
        /// Answers 304 (with `headers`) when If-None-Match matches `etag` or If-Modified-Since
        /// equals `lastModified`; otherwise 200 with `body`, the validators and `headers`.
        case conditional(etag: String?, lastModified: String?, headers: [Header], body: [UInt8], contentType: String)

        /// 200 with `body` and a Content-Type.
        package static func ok(_ body: [UInt8], contentType: String = "image/jpeg", headers: [Header] = []) -> Script {
            .respond(status: 200, headers: [Header("Content-Type", contentType)] + headers, body: body)
        }

        /// A bodyless status (404, 410, 500...) with a short text body.
        package static func status(_ status: Int) -> Script {
            .respond(
                status: status, headers: [Header("Content-Type", "text/plain")], body: Array("status \(status)\n".utf8))
        }

        /// A redirect to `location` (absolute or relative, sent verbatim).
        package static func redirect(to location: String, status: Int = 302) -> Script {
            .respond(status: status, headers: [Header("Location", location)], body: [])
        }
    }

    /// A request as the origin saw it.
    package struct ReceivedRequest: Sendable {
        /// The method (`GET`).
        package var method: String
        /// The path without the query.
        package var path: String
        /// The full request target, query included.
        package var target: String
        /// Header values by lower-cased name (repeated names joined with ", ").
        package var headers: [String: String]
        /// The body (a `Content-Length` one; empty for none).
        package var body: [UInt8] = []
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 410: "Gone"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
