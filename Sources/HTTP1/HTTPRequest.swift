// SPDX-License-Identifier: Apache-2.0

/// A parsed request. Cheap to copy: the head (request line and fields) lives in one shared byte
/// buffer (``RequestHeadBytes``), followed by a table of field offsets, so parsing costs one
/// allocation and strings are made only when asked for.
package struct HTTPRequest: Sendable {
    /// The method.
    package let method: HTTPMethod
    /// The protocol version (1.0 or 1.1).
    package let version: HTTPVersion
    /// Whether the connection may stay open after this request (1.1 unless `Connection: close`,
    /// 1.0 only with `Connection: keep-alive`).
    package let keepAlive: Bool
    /// The body (empty when the request has none); at most `maxBodyBytes`.
    package internal(set) var body: [UInt8]

    /// Head bytes from the method to the final CRLF, then `fieldCount` entries of four UInt16
    /// offsets (name start, name end, value start, value end), native endian.
    let storage: RequestHeadBytes
    let headLength: Int
    let fieldCount: Int
    let pathStart: Int
    let pathEnd: Int
    /// Start of the query after `?`, or -1 when the target has no `?`.
    let queryStart: Int
    let queryEnd: Int

    init(
        method: HTTPMethod, version: HTTPVersion, keepAlive: Bool, storage: RequestHeadBytes, headLength: Int,
        fieldCount: Int, pathStart: Int, pathEnd: Int, queryStart: Int, queryEnd: Int
    ) {
        self.method = method
        self.version = version
        self.keepAlive = keepAlive
        self.body = []
        self.storage = storage
        self.headLength = headLength
        self.fieldCount = fieldCount
        self.pathStart = pathStart
        self.pathEnd = pathEnd
        self.queryStart = queryStart
        self.queryEnd = queryEnd
    }

    /// The raw path, without the query and not percent-decoded. For an absolute-form target
    /// (`GET http://host/x`) it is the path part (`/x`, or `/` when empty).
    package var path: String {
        if pathStart == pathEnd { return "/" }
        return storage.withUnsafeBytes { String(decoding: $0[pathStart..<pathEnd], as: UTF8.self) }
    }

    /// The raw query after `?`, not decoded; `nil` when the target has no `?`.
    package var query: String? {
        guard queryStart >= 0 else { return nil }
        return storage.withUnsafeBytes { String(decoding: $0[queryStart..<queryEnd], as: UTF8.self) }
    }

    /// Calls `body` with the raw path bytes (no allocation).
    package func withPathBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        if pathStart == pathEnd {
            return try Self.rootPath.withUnsafeBytes(body)
        }
        return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[pathStart..<pathEnd])) }
    }

    private static let rootPath: [UInt8] = [UInt8(ascii: "/")]

    /// The header fields, with case-insensitive lookup.
    package var headers: HTTPRequestHeaders { HTTPRequestHeaders(request: self) }

    /// Every value of the fields named `name` (ASCII case-insensitive), joined with `", "` as a list-valued
    /// field sent on several lines reads (RFC 9110 §5.3); `nil` when there is none. For the hit path: it reads
    /// the stored bytes in place, where ``headers`` copies the request and makes an array.
    package func listValue(of name: StaticString) -> String? {
        storage.withUnsafeBytes { raw -> String? in
            var joined: String?
            for i in 0..<fieldCount {
                let (nameStart, nameEnd, valueStart, valueEnd) = Self.fieldOffsets(raw, headLength, i)
                guard Self.nameMatches(raw, nameStart, nameEnd, name) else { continue }
                let value = String(decoding: raw[valueStart..<valueEnd], as: UTF8.self)
                joined = joined.map { $0 + ", " + value } ?? value
            }
            return joined
        }
    }

    /// The raw request target from its path on: the path and, after `?`, the query, as sent and not decoded. For an
    /// absolute-form target (`GET http://host/x?y`) it starts at the path (`/x?y`; empty path: `?y`, or empty).
    /// What identifies a request to a table of answers keyed by what was asked, whatever the URL form.
    package var target: String {
        storage.withUnsafeBytes { String(decoding: $0[pathStart..<targetEnd], as: UTF8.self) }
    }

    /// Where ``target`` ends: after the query, or after the path without `?`.
    private var targetEnd: Int { queryStart < 0 ? pathEnd : queryEnd }

    /// Calls `body` with the raw target bytes (``target``) and the raw value of the one field named `name` (`nil`
    /// when none was sent), in place, and returns `true`; returns `false` without calling it when `name` was sent
    /// on more than one line (its value is then the lines joined: ``listValue(of:)``). For a lookup keyed by the
    /// request's own bytes, with no `String` made. (Not generic: a generic `package` method is called
    /// unspecialised from other modules, with a metadata lookup per call.)
    package func withRawTarget(
        andOnlyValueOf name: StaticString,
        _ body: (_ target: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer?) -> Void
    ) -> Bool {
        storage.withUnsafeBytes { raw -> Bool in
            var value: UnsafeRawBufferPointer?
            for i in 0..<fieldCount {
                let (nameStart, nameEnd, valueStart, valueEnd) = Self.fieldOffsets(raw, headLength, i)
                guard Self.nameMatches(raw, nameStart, nameEnd, name) else { continue }
                guard value == nil else { return false }
                value = UnsafeRawBufferPointer(rebasing: raw[valueStart..<valueEnd])
            }
            body(UnsafeRawBufferPointer(rebasing: raw[pathStart..<targetEnd]), value)
            return true
        }
    }

    /// Whether a field named `name` (ASCII case-insensitive) was sent.
    package func hasField(_ name: StaticString) -> Bool {
        storage.withUnsafeBytes { raw in
            for i in 0..<fieldCount {
                let (nameStart, nameEnd, _, _) = Self.fieldOffsets(raw, headLength, i)
                if Self.nameMatches(raw, nameStart, nameEnd, name) { return true }
            }
            return false
        }
    }

    /// Name and value ranges of field `i` in the table after the head (four `UInt16`s per field).
    @inline(__always)
    static func fieldOffsets(_ raw: UnsafeRawBufferPointer, _ headLength: Int, _ i: Int) -> (Int, Int, Int, Int) {
        let base = headLength + i * 8
        return (
            Int(raw.loadUnaligned(fromByteOffset: base, as: UInt16.self)),
            Int(raw.loadUnaligned(fromByteOffset: base + 2, as: UInt16.self)),
            Int(raw.loadUnaligned(fromByteOffset: base + 4, as: UInt16.self)),
            Int(raw.loadUnaligned(fromByteOffset: base + 6, as: UInt16.self))
        )
    }

    /// Whether the bytes `start..<end` spell `name`, ignoring ASCII case (`name` is lower case).
    @inline(__always)
    static func nameMatches(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ name: StaticString) -> Bool {
        guard end - start == name.utf8CodeUnitCount else { return false }
        let wanted = name.utf8Start
        for j in 0..<name.utf8CodeUnitCount where asciiLower(raw[start + j]) != wanted[j] { return false }
        return true
    }
}

/// The header fields of an ``HTTPRequest``, in arrival order, looked up case-insensitively.
package struct HTTPRequestHeaders: Sendable, RandomAccessCollection {
    private let request: HTTPRequest

    init(request: HTTPRequest) {
        self.request = request
    }

    /// Always 0.
    package var startIndex: Int { 0 }
    /// The number of fields.
    package var endIndex: Int { request.fieldCount }

    /// The field at `position` as (name, value) strings.
    package subscript(position: Int) -> (name: String, value: String) {
        let (nameStart, nameEnd, valueStart, valueEnd) = offsets(position)
        return request.storage.withUnsafeBytes {
            (
                String(decoding: $0[nameStart..<nameEnd], as: UTF8.self),
                String(decoding: $0[valueStart..<valueEnd], as: UTF8.self)
            )
        }
    }

    /// The first value of the field named `name` (any case), or `nil`.
    package subscript(name: String) -> String? {
        guard let index = firstIndex(named: name) else { return nil }
        return self[index].value
    }

    /// Every value of the fields named `name`, in order (fields are not split on commas).
    package func values(for name: String) -> [String] {
        var result: [String] = []
        for i in 0..<request.fieldCount where matches(i, name) {
            result.append(self[i].value)
        }
        return result
    }

    /// Whether a field named `name` (any case) is present.
    package func contains(_ name: String) -> Bool {
        firstIndex(named: name) != nil
    }

    private func firstIndex(named name: String) -> Int? {
        for i in 0..<request.fieldCount where matches(i, name) { return i }
        return nil
    }

    private func offsets(_ i: Int) -> (Int, Int, Int, Int) {
        request.storage.withUnsafeBytes { raw in
            let base = request.headLength + i * 8
            return (
                Int(raw.loadUnaligned(fromByteOffset: base, as: UInt16.self)),
                Int(raw.loadUnaligned(fromByteOffset: base + 2, as: UInt16.self)),
                Int(raw.loadUnaligned(fromByteOffset: base + 4, as: UInt16.self)),
                Int(raw.loadUnaligned(fromByteOffset: base + 6, as: UInt16.self))
            )
        }
    }

    private func matches(_ i: Int, _ name: String) -> Bool {
        let (nameStart, nameEnd, _, _) = offsets(i)
        var name = name
        return name.withUTF8 { wanted in
            guard wanted.count == nameEnd - nameStart else { return false }
            return request.storage.withUnsafeBytes { raw in
                for j in 0..<wanted.count where asciiLower(raw[nameStart + j]) != asciiLower(wanted[j]) {
                    return false
                }
                return true
            }
        }
    }
}

@inline(__always)
func asciiLower(_ byte: UInt8) -> UInt8 {
    byte &- 0x41 < 26 ? byte | 0x20 : byte
}
