// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import URLForms

/// Splitting and percent-decoding of raw query strings (RFC 3986: `+` is not a space).
@Suite struct QueryParametersTests {
    static let decodings: [(raw: String, pairs: [String])] = [
        ("", []),
        ("a=1", ["a=1"]),
        ("a=1&b=2", ["a=1", "b=2"]),
        ("b=2&a=1", ["b=2", "a=1"]),  // order kept
        ("a", ["a="]),  // no `=`: empty value
        ("a=", ["a="]),
        ("=1", ["=1"]),
        ("a=b=c", ["a=b=c"]),  // the first `=` splits
        ("&&a=1&", ["a=1"]),  // empty components are skipped
        ("a=1+2", ["a=1+2"]),  // plus stays a plus
        ("a=1%2B2", ["a=1+2"]),
        ("a=%20", ["a= "]),
        ("a=%26b%3D2", ["a=&b=2"]),  // encoded separators are data
        ("a%62=1", ["ab=1"]),  // names are decoded too
        ("a=%41%4a%4A%6a", ["a=AJJj"]),  // hex digits in either case
        ("a=%C3%A9", ["a=é"]),
        ("a=é", ["a=é"]),
        ("a=%2541", ["a=%41"]),  // decoded once
        ("a=%00", ["a=\u{0}"]),
    ]

    @Test(arguments: decodings)
    func decodesPairsInOrder(_ raw: String, pairs: [String]) throws {
        let parameters = try QueryParameters(parsing: raw)
        #expect(parameters.pairs.map { "\($0.name)=\($0.value)" } == pairs)
    }

    static let malformed: [(raw: String, parameter: String)] = [
        ("a=%", "a"), ("a=%4", "a"), ("a=%4g", "a"), ("a=%%41", "a"), ("a=%-1", "a"), ("a=% 1", "a"),
        ("a=%C3", "a"), ("a=%C3%28", "a"), ("a=%FF%FE", "a"), ("a=%C0%AF", "a"),  // overlong `/`
        ("b=1&a=%E2%82", "a"), ("%=1", "%"), ("%zz=1", "%zz"),
    ]

    @Test(arguments: malformed)
    func malformedEscapeNamesItsParameter(_ raw: String, parameter: String) {
        #expect(throws: RequestError.malformedQuery(parameter: parameter)) { try QueryParameters(parsing: raw) }
    }
}
