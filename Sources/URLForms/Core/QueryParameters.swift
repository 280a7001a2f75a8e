// SPDX-License-Identifier: Apache-2.0

/// The decoded `name=value` pairs of a request's query string, in order.
///
/// Decoding follows RFC 3986: `%XX` escapes are decoded, and `+` stays a plus sign (thumbd's
/// `url` parameter carries URLs, where `+` is a literal character; clients encode spaces as `%20`).
/// A malformed escape or a value that is not UTF-8 is an error naming the parameter.
package struct QueryParameters: Sendable, Equatable {
    /// The pairs in request order. Names are case-sensitive, as in imgproxy and nginx's `$arg_`.
    package private(set) var pairs: [(name: String, value: String)]

    package static func == (lhs: QueryParameters, rhs: QueryParameters) -> Bool {
        lhs.pairs.elementsEqual(rhs.pairs) { $0.name == $1.name && $0.value == $1.value }
    }

    /// Parses a raw (undecoded) query string, without the leading `?`.
    /// - Throws: `RequestError.malformedQuery` naming the parameter whose escape is broken.
    package init(parsing rawQuery: some StringProtocol) throws(RequestError) {
        pairs = []
        for component in rawQuery.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = component.firstIndex(of: UInt8(ascii: "="))
            let rawName = equals.map { component[component.startIndex..<$0] } ?? component[...]
            let rawValue = equals.map { component[component.index(after: $0)...] } ?? component[component.endIndex...]
            guard let name = Self.percentDecode(rawName) else {
                throw .malformedQuery(parameter: String(decoding: rawName, as: UTF8.self))
            }
            guard let value = Self.percentDecode(rawValue) else { throw .malformedQuery(parameter: name) }
            pairs.append((name, value))
        }
    }

    /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not valid UTF-8.
    package static func percentDecode(_ bytes: some Collection<UInt8>) -> String? {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(validating: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            decoded.append(high << 4 | low)
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// `text`'s UTF-8 bytes with RFC 3986's unreserved set kept and every other byte as `%XX` (upper case).
    package static func percentEncoded(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return bytes
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// The value of one hexadecimal digit (either case), or nil.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
