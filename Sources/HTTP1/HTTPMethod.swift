// SPDX-License-Identifier: Apache-2.0

/// A request method. The common ones are cases so matching them costs no string; anything else
/// that is a valid token arrives as ``other(_:)`` and is answered 501 by the ``Router``.
package enum HTTPMethod: Hashable, Sendable, CustomStringConvertible {
    /// The methods of RFC 9110 §9.3 (and PATCH, RFC 5789).
    case get, head, post, put, delete, options, patch, trace, connect
    /// A syntactically valid method we do not know.
    case other(String)

    /// The method's token as sent on the wire, e.g. `"GET"`.
    package var rawValue: String {
        switch self {
        case .get: "GET"
        case .head: "HEAD"
        case .post: "POST"
        case .put: "PUT"
        case .delete: "DELETE"
        case .options: "OPTIONS"
        case .patch: "PATCH"
        case .trace: "TRACE"
        case .connect: "CONNECT"
        case .other(let token): token
        }
    }

    package var description: String { rawValue }

    /// Creates a method from its token (case-sensitive, as RFC 9110 §9.1 requires).
    package init(_ token: String) {
        var token = token
        self = token.withUTF8 { HTTPMethod(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Matches the token bytes without allocating for the known methods.
    init(bytes: UnsafeRawBufferPointer) {
        @inline(__always) func equals(_ literal: StaticString) -> Bool {
            literal.utf8CodeUnitCount == bytes.count
                && memcmpBytes(literal.utf8Start, bytes.baseAddress!, bytes.count)
        }
        switch bytes.count {
        case 3:
            if equals("GET") { self = .get; return }
            if equals("PUT") { self = .put; return }
        case 4:
            if equals("HEAD") { self = .head; return }
            if equals("POST") { self = .post; return }
        case 5:
            if equals("PATCH") { self = .patch; return }
            if equals("TRACE") { self = .trace; return }
        case 6:
            if equals("DELETE") { self = .delete; return }
        case 7:
            if equals("OPTIONS") { self = .options; return }
            if equals("CONNECT") { self = .connect; return }
        default:
            break
        }
        self = .other(String(decoding: bytes, as: UTF8.self))
    }

    /// `true` for the methods of RFC 9110 that this server knows; others get 501.
    package var isStandard: Bool {
        if case .other = self { return false }
        return true
    }
}

@inline(__always)
func memcmpBytes(_ a: UnsafePointer<UInt8>, _ b: UnsafeRawPointer, _ count: Int) -> Bool {
    var i = 0
    while i < count {
        if a[i] != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i += 1
    }
    return true
}

/// The protocol version of a request: only 1.0 and 1.1 are accepted (others get 505).
package struct HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    /// Major version digit.
    package var major: Int
    /// Minor version digit.
    package var minor: Int

    /// Creates a version.
    package init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// HTTP/1.0
    package static let http1_0 = HTTPVersion(major: 1, minor: 0)
    /// HTTP/1.1
    package static let http1_1 = HTTPVersion(major: 1, minor: 1)

    package var description: String { "HTTP/\(major).\(minor)" }
}
