// SPDX-License-Identifier: Apache-2.0
import URLForms

/// The body of `POST /prefetch`: `{"items": [{"url": "...", "w": 256, ...}, ...]}`. Values are strings, numbers
/// or booleans, and mean what the same `/thumb` query parameter means.
struct PrefetchBody: Decodable {
    let items: [[String: Scalar]]

    /// One parameter value as JSON gave it.
    enum Scalar: Decodable {
        case text(String)
        case integer(Int)
        case number(Double)
        case boolean(Bool)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .text(text)
            } else if let integer = try? container.decode(Int.self) {
                self = .integer(integer)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else if let boolean = try? container.decode(Bool.self) {
                self = .boolean(boolean)
            } else {
                throw DecodingError.typeMismatch(
                    Scalar.self,
                    .init(codingPath: decoder.codingPath, debugDescription: "expected a string, number or boolean"))
            }
        }

        /// The value as it would appear in a `/thumb` query (decoded).
        var queryValue: String {
            switch self {
            case .text(let text): text
            case .integer(let integer): String(integer)
            case .number(let number): String(number)
            case .boolean(let boolean): boolean ? "true" : "false"
            }
        }
    }

    /// The equivalent `/thumb` query of one item, percent-encoded, so that it goes through the very parser
    /// /thumb uses (same names, ranges, refusals of unknown parameters).
    static func query(of item: [String: Scalar]) -> String {
        item.sorted { $0.key < $1.key }.map { encoded($0.key) + "=" + encoded($0.value.queryValue) }
            .joined(separator: "&")
    }

    /// Every byte outside RFC 3986's unreserved set as `%XX`, as the canonical query of a signature spells it.
    private static func encoded(_ text: String) -> String {
        String(decoding: QueryParameters.percentEncoded(text), as: UTF8.self)
    }
}
