// SPDX-License-Identifier: Apache-2.0

extension HTTPRequest {
    /// Builds a request without a socket, e.g. to unit-test a handler's request handling, by
    /// serialising the parts and running them through ``RequestParser`` (so the result is exactly
    /// what the server would have produced).
    ///
    /// ```swift
    /// let request = try #require(HTTPRequest(method: .get, target: "/thumb?url=x&w=256",
    ///                                        headers: [("Accept", "image/webp")]))
    /// ```
    /// - Parameters:
    ///   - target: request target as sent (origin-form or absolute-form), query included.
    ///   - headers: fields in order; `Host` is added when missing (HTTP/1.1 requires it), and
    ///     `Content-Length` when `body` is not empty.
    /// - Returns: `nil` if the parts do not make a valid request (the parser's rules apply).
    package init?(
        method: HTTPMethod,
        target: String,
        version: HTTPVersion = .http1_1,
        headers: [(name: String, value: String)] = [],
        body: [UInt8] = []
    ) {
        var head = "\(method.rawValue) \(target) \(version)\r\n"
        if version == .http1_1 && !headers.contains(where: { $0.name.lowercased() == "host" }) {
            head += "Host: localhost\r\n"
        }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty && !headers.contains(where: { $0.name.lowercased() == "content-length" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        var limits = RequestParser.Limits()
        limits.maxBodyBytes = max(limits.maxBodyBytes, body.count)
        var parser = RequestParser(limits: limits)
        let bytes = Array(head.utf8) + body
        var offset = 0
        while true {
            let (event, consumed) = bytes.withUnsafeBytes {
                parser.parse(UnsafeRawBufferPointer(rebasing: $0[offset...]))
            }
            offset += consumed
            switch event {
            case .request(let request):
                self = request
                return
            case .headReceived:
                continue
            case .needMoreData, .failure:
                return nil
            }
        }
    }
}
