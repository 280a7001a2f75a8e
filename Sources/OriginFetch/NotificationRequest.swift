// SPDX-License-Identifier: Apache-2.0

/// One request to an endpoint the operator configured for thumbd to tell something (a purge pushed to Varnish, a
/// purge webhook): sent on the fetch thread's multi handle like the shared tier's requests, never joined with
/// another, unsigned, not followed when redirected and not checked against the address policy (the operator named
/// the endpoint, as the shared tier's). Only the answer's status is read: a 2xx is a success.
package struct NotificationRequest: Sendable {
    /// The endpoint (http or https).
    package var url: String
    /// The method: `POST`, or Varnish's `BAN` or `PURGE`.
    package var method: String
    /// Header lines, `Name: value`.
    package var headers: [String]
    /// The body (none when empty).
    package var body: [UInt8]
    /// The whole request's time limit, connection included.
    package var timeout: Duration

    /// A request.
    package init(url: String, method: String, headers: [String] = [], body: [UInt8] = [], timeout: Duration) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
