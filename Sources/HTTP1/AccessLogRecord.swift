// SPDX-License-Identifier: Apache-2.0

/// One finished request, handed to the access-log hook on the connection's loop after the
/// response has been queued for sending. Never contains the query (signatures live there).
package struct AccessLogRecord: Sendable {
    /// The request method.
    package var method: HTTPMethod
    /// The raw request path, without the query.
    package var path: String
    /// The status sent.
    package var status: Int
    /// Body bytes sent (0 for HEAD).
    package var bodyBytes: Int64
    /// From the complete request head to the response being queued.
    package var duration: Duration
    /// The handler's ``HTTPResponse/accessLogNote`` (e.g. the cache outcome).
    package var note: String?
}
