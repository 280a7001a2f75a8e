// SPDX-License-Identifier: Apache-2.0

/// A response status: the three-digit code and its reason phrase.
package struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The status code, 100...999 (the server writes exactly three digits).
    package let code: Int
    /// A reason phrase other than the standard one, if any. Standard statuses store none, so copying
    /// a status (several times per response) touches no reference count.
    private let customReason: String?

    /// The reason phrase written on the status line.
    package var reasonPhrase: String { customReason ?? Self.standardReason(code) }

    /// A status with its standard reason phrase (`Status <code>` for a code without one).
    package init(code: Int) {
        precondition((100...999).contains(code), "status code must have three digits")
        self.code = code
        customReason = nil
    }

    /// Creates a status. The reason phrase must not contain CR or LF (it is checked when written).
    package init(code: Int, reasonPhrase: String) {
        precondition((100...999).contains(code), "status code must have three digits")
        self.code = code
        customReason = reasonPhrase == Self.standardReason(code) ? nil : reasonPhrase
    }

    /// The reason phrase as a static string, when it is the standard one (no allocation, no retain).
    var staticReason: StaticString? { customReason == nil ? Self.standardStaticReason(code) : nil }

    private static func standardReason(_ code: Int) -> String {
        standardStaticReason(code).map { "\($0)" } ?? "Status \(code)"
    }

    private static func standardStaticReason(_ code: Int) -> StaticString? {
        switch code {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 417: "Expectation Failed"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: nil
        }
    }

    package var description: String { "\(code) \(reasonPhrase)" }

    /// Whether a response with this status may carry a body (not 1xx, 204 or 304).
    package var allowsBody: Bool { code >= 200 && code != 204 && code != 304 }

    /// 100 Continue
    package static let `continue` = HTTPStatus(code: 100, reasonPhrase: "Continue")
    /// 200 OK
    package static let ok = HTTPStatus(code: 200, reasonPhrase: "OK")
    /// 204 No Content
    package static let noContent = HTTPStatus(code: 204, reasonPhrase: "No Content")
    /// 304 Not Modified
    package static let notModified = HTTPStatus(code: 304, reasonPhrase: "Not Modified")
    /// 400 Bad Request
    package static let badRequest = HTTPStatus(code: 400, reasonPhrase: "Bad Request")
    /// 403 Forbidden
    package static let forbidden = HTTPStatus(code: 403, reasonPhrase: "Forbidden")
    /// 404 Not Found
    package static let notFound = HTTPStatus(code: 404, reasonPhrase: "Not Found")
    /// 405 Method Not Allowed
    package static let methodNotAllowed = HTTPStatus(code: 405, reasonPhrase: "Method Not Allowed")
    /// 408 Request Timeout
    package static let requestTimeout = HTTPStatus(code: 408, reasonPhrase: "Request Timeout")
    /// 413 Content Too Large
    package static let contentTooLarge = HTTPStatus(code: 413, reasonPhrase: "Content Too Large")
    /// 414 URI Too Long
    package static let uriTooLong = HTTPStatus(code: 414, reasonPhrase: "URI Too Long")
    /// 417 Expectation Failed
    package static let expectationFailed = HTTPStatus(code: 417, reasonPhrase: "Expectation Failed")
    /// 422 Unprocessable Content
    package static let unprocessableContent = HTTPStatus(code: 422, reasonPhrase: "Unprocessable Content")
    /// 431 Request Header Fields Too Large
    package static let requestHeaderFieldsTooLarge = HTTPStatus(
        code: 431, reasonPhrase: "Request Header Fields Too Large")
    /// 500 Internal Server Error
    package static let internalServerError = HTTPStatus(code: 500, reasonPhrase: "Internal Server Error")
    /// 501 Not Implemented
    package static let notImplemented = HTTPStatus(code: 501, reasonPhrase: "Not Implemented")
    /// 502 Bad Gateway
    package static let badGateway = HTTPStatus(code: 502, reasonPhrase: "Bad Gateway")
    /// 503 Service Unavailable
    package static let serviceUnavailable = HTTPStatus(code: 503, reasonPhrase: "Service Unavailable")
    /// 504 Gateway Timeout
    package static let gatewayTimeout = HTTPStatus(code: 504, reasonPhrase: "Gateway Timeout")
    /// 505 HTTP Version Not Supported
    package static let httpVersionNotSupported = HTTPStatus(code: 505, reasonPhrase: "HTTP Version Not Supported")
}
