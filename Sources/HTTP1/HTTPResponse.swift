package import EventLoops

// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// One response header field, in the order the handler gave it.
package struct HTTPField: Hashable, Sendable {
    /// Field name, e.g. `"Content-Type"`.
    package var name: String
    /// Field value. Fields whose name or value contains CR, LF or NUL are dropped when written.
    package var value: String

    /// Creates a field.
    package init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A response produced by a handler. Immutable once handed to ``HTTPResponder/respond(_:)``, and
/// `Sendable`, so it may be built on any thread.
///
/// The server owns framing: it writes `Content-Length`, `Connection` and `Date` itself and drops
/// those fields (and `Transfer-Encoding`) if a handler sets them.
///
/// ```swift
/// responder.respond(HTTPResponse(status: .ok, headers: [.init(name: "Content-Type", value: "text/plain")],
///                                body: .bytes(Array("ok".utf8))))
/// ```
package struct HTTPResponse: Sendable {
    /// A response body.
    package enum Body: Sendable {
        /// No body (`Content-Length: 0` where a body is allowed).
        case empty
        /// Bytes in memory; the array is shared, not copied, until the socket has taken it.
        case bytes([UInt8])
        /// A region of an open file, sent with `sendfile`; its descriptor closes once sent or dropped.
        case file(FileRegion)

        /// The number of body bytes (also what HEAD reports as `Content-Length`).
        package var count: Int64 {
            switch self {
            case .empty: 0
            case .bytes(let bytes): Int64(bytes.count)
            case .file(let region): region.length
            }
        }
    }

    /// Status line.
    package var status: HTTPStatus
    /// Fields serialised ahead of time, written first (before ``headers``).
    package var preparedFields: PreparedFields?
    /// Header fields, in order.
    package var headers: [HTTPField]
    /// An `Age` field written after ``headers``: the one field of a cached answer that changes every second,
    /// without an array and two strings per answer (a hot memory hit sends prepared fields and this only).
    package var age: Int?
    /// The body.
    package var body: Body
    /// Passed to the access-log hook with this response (e.g. the cache outcome); never sent.
    package var accessLogNote: String?

    /// Creates a response.
    package init(
        status: HTTPStatus, preparedFields: PreparedFields? = nil, headers: [HTTPField] = [], age: Int? = nil,
        body: Body = .empty, accessLogNote: String? = nil
    ) {
        self.status = status
        self.preparedFields = preparedFields
        self.headers = headers
        self.age = age
        self.body = body
        self.accessLogNote = accessLogNote
    }

    /// The JSON error body every server-made error uses: `{"status": 404, "error": "Not Found"}`,
    /// with `Content-Type: application/json` and `Cache-Control: no-store`.
    /// - Parameter message: short public reason; quotes and backslashes are escaped, controls dropped.
    package static func error(_ status: HTTPStatus, message: String? = nil) -> HTTPResponse {
        let text = message ?? status.reasonPhrase
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: continue
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        let json = "{\"status\": \(status.code), \"error\": \"\(escaped)\"}"
        return HTTPResponse(status: status, headers: jsonHeaders, body: .bytes(Array(json.utf8)))
    }

    /// An error is never kept by a browser, a CDN or Varnish: a fixed origin or a freed queue must show at once.
    private static let jsonHeaders = [
        HTTPField(name: "Content-Type", value: "application/json"), HTTPField(name: "Cache-Control", value: "no-store"),
    ]
}

/// Header fields serialised (and checked) once, for an answer sent many times: a cached thumbnail's
/// `Content-Type` and `ETag` are the same on every hit, and copying their bytes costs less than building,
/// checking and serialising the fields again (and, shared by the event loops, retaining their strings).
///
/// The same rules as ``HTTPResponse/headers`` apply: fields the server writes itself, and fields that could
/// split the head, are dropped here.
package final class PreparedFields: Sendable {
    /// `Name: value\r\n` lines.
    package let bytes: [UInt8]

    /// Serialises `fields` in order.
    package init(_ fields: [HTTPField]) {
        bytes = ResponseWriter.serialize(fields)
    }

    /// The value of the first line named `name` (as it was written: names are compared exactly), if any. Reads the
    /// lines; for the few answers that rebuild their fields, never for a hit.
    package func value(named name: String) -> String? {
        let prefix = Array((name + ": ").utf8)
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0D) ?? bytes.count
            if end - start > prefix.count, bytes[start..<start + prefix.count].elementsEqual(prefix) {
                return String(decoding: bytes[(start + prefix.count)..<end], as: UTF8.self)
            }
            start = end + 2  // past "\r\n"
        }
        return nil
    }

    /// `prefix`'s lines, then `fields` serialised, in a buffer of its own (not shared with `prefix`).
    package init(_ prefix: PreparedFields, then fields: [HTTPField]) {
        bytes = prefix.bytes + ResponseWriter.serialize(fields)
    }
}

/// A byte range of an open file, released with the region (after the server has sent it, or when the
/// response is dropped because the client left): either the region owns the descriptor and closes it, or
/// it keeps the descriptor's owner alive (a disk-cache hit object that closes it itself).
package final class FileRegion: Sendable {
    /// The open descriptor.
    package let fileDescriptor: Int32
    /// Offset of the first byte to send.
    package let offset: Int64
    /// Number of bytes to send.
    package let length: Int64
    /// What closes the descriptor when the region goes: `nil` when the region does.
    private let owner: (any AnyObject & Sendable)?

    /// Takes ownership of `fileDescriptor`; it is closed in `deinit`.
    package init(takingOwnershipOf fileDescriptor: Int32, offset: Int64, length: Int64) {
        precondition(offset >= 0 && length >= 0, "FileRegion offset and length must not be negative")
        self.fileDescriptor = fileDescriptor
        self.offset = offset
        self.length = length
        owner = nil
    }

    /// Borrows `fileDescriptor`, keeping `owner` (which closes it when released) alive until the region
    /// is released: no `dup` for a descriptor that already has an owner.
    package init(borrowing fileDescriptor: Int32, offset: Int64, length: Int64, owner: any AnyObject & Sendable) {
        precondition(offset >= 0 && length >= 0, "FileRegion offset and length must not be negative")
        self.fileDescriptor = fileDescriptor
        self.offset = offset
        self.length = length
        self.owner = owner
    }

    /// Opens `path` read-only and covers the whole file. Blocking file I/O: never call on an
    /// HTTP event loop.
    /// - Throws: ``SystemError`` from `open` or `fstat`.
    package static func open(path: String) throws(SystemError) -> FileRegion {
        let fd = try syscall("open") { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
        var info = stat()
        do {
            _ = try syscall("fstat") { fstat(fd, &info) }
        } catch {
            closeDescriptor(fd)
            throw error
        }
        return FileRegion(takingOwnershipOf: fd, offset: 0, length: Int64(info.st_size))
    }

    deinit {
        if owner == nil { closeDescriptor(fileDescriptor) }
    }
}
