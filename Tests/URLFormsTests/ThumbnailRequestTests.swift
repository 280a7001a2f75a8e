// SPDX-License-Identifier: Apache-2.0
import Testing
import Thumbnailing

@testable import URLForms

/// `/thumb` query parsing as a table: every parameter with valid and invalid values, duplicates, unknown and
/// missing parameters, url forms and the length limit, dpr scaling and the 4096 bound, percent-decoding.
@Suite struct ThumbnailRequestTests {
    /// `url=http://example.com/a.jpg`, encoded as a client would.
    static let url = "url=http%3A%2F%2Fexample.com%2Fa.jpg"

    // MARK: - Valid requests

    struct Valid: Sendable, CustomTestStringConvertible {
        let query: String
        var accept: String? = nil
        var width: Int? = nil
        var height: Int? = nil
        var fit: Fit = .contain
        var gravity: Gravity = .centre
        var quality: Int? = nil
        var enlarge = false
        var format: FormatRequest = .auto(accepting: [])
        var testDescription: String { query + (accept.map { " (Accept: \($0))" } ?? "") }
    }

    static let valid: [Valid] =
        [
            // Sizes: one side, both, the bounds, leading zeros.
            Valid(query: "\(url)&w=32", width: 32),
            Valid(query: "\(url)&h=48", height: 48),
            Valid(query: "\(url)&w=32&h=48", width: 32, height: 48),
            Valid(query: "\(url)&w=1&h=1", width: 1, height: 1),
            Valid(query: "\(url)&w=4096&h=4096", width: 4096, height: 4096),
            Valid(query: "\(url)&w=0032", width: 32),
            // Order does not matter.
            Valid(query: "w=32&\(url)&h=48", width: 32, height: 48),
            // dpr multiplies both sides (rounded half away from zero), up to the 4096 bound.
            Valid(query: "\(url)&w=32&h=48&dpr=2", width: 64, height: 96),
            Valid(query: "\(url)&w=33&dpr=1.5", width: 50),
            Valid(query: "\(url)&h=4&dpr=1.25", height: 5),
            Valid(query: "\(url)&w=1024&dpr=4", width: 4096),
            Valid(query: "\(url)&w=2048&dpr=2.00", width: 4096),
            Valid(query: "\(url)&w=100&dpr=1", width: 100),
            Valid(query: "\(url)&w=100&dpr=3.99", width: 399),
            // Fits and gravities.
            Valid(query: "\(url)&w=32&fit=contain", width: 32, fit: .contain),
            Valid(query: "\(url)&w=32&h=32&fit=cover", width: 32, height: 32, fit: .cover),
            Valid(query: "\(url)&w=32&h=32&fit=fill", width: 32, height: 32, fit: .fill),
        ]
        + Gravity.allCases.map { gravity in
            Valid(
                query: "\(url)&w=32&h=32&fit=cover&gravity=\(gravity.rawValue)", width: 32, height: 32, fit: .cover,
                gravity: gravity)
        } + [
            Valid(
                query: "\(url)&w=32&h=32&fit=cover&gravity=center", width: 32, height: 32, fit: .cover, gravity: .centre
            ),
            // Quality and enlarge.
            Valid(query: "\(url)&w=32&q=1", width: 32, quality: 1),
            Valid(query: "\(url)&w=32&q=100", width: 32, quality: 100),
            Valid(query: "\(url)&w=32&enlarge=1", width: 32, enlarge: true),
            Valid(query: "\(url)&w=32&enlarge=true", width: 32, enlarge: true),
            Valid(query: "\(url)&w=32&enlarge=0", width: 32, enlarge: false),
            Valid(query: "\(url)&w=32&enlarge=false", width: 32, enlarge: false),
            // Formats, explicit and negotiated.
            Valid(query: "\(url)&w=32&format=jpeg", width: 32, format: .exactly(.jpeg)),
            Valid(query: "\(url)&w=32&format=jpg", width: 32, format: .exactly(.jpeg)),
            Valid(query: "\(url)&w=32&format=png", width: 32, format: .exactly(.png)),
            Valid(query: "\(url)&w=32&format=webp", width: 32, format: .exactly(.webp)),
            Valid(query: "\(url)&w=32&format=avif", width: 32, format: .exactly(.avif)),
            Valid(query: "\(url)&w=32&format=jxl", width: 32, format: .exactly(.jxl)),
            Valid(query: "\(url)&w=32&format=heic", width: 32, format: .exactly(.heif)),
            Valid(query: "\(url)&w=32&format=auto", width: 32, format: .auto(accepting: [])),
            Valid(
                query: "\(url)&w=32", accept: "image/avif,image/webp,*/*", width: 32,
                format: .auto(accepting: [.avif, .webp])),
            Valid(query: "\(url)&w=32&format=auto", accept: "image/webp", width: 32, format: .auto(accepting: [.webp])),
            Valid(query: "\(url)&w=32&format=png", accept: "image/webp", width: 32, format: .exactly(.png)),
            // Empty components (`&&`, a trailing `&`) are nothing, not a parameter.
            Valid(query: "\(url)&&w=32&", width: 32),
            // The signature is taken aside.
            Valid(query: "\(url)&w=32&sig=abc", width: 32),
        ]

    @Test(arguments: valid)
    func validQueryGivesTheSpec(_ valid: Valid) throws {
        // When the query is parsed
        let request = try ThumbnailRequest(rawQuery: valid.query, accept: valid.accept)
        // Then every field is as asked, and the source is the canonical URL
        let expected = try ThumbnailSpec(
            width: valid.width, height: valid.height, fit: valid.fit, gravity: valid.gravity, quality: valid.quality,
            enlarge: valid.enlarge, format: valid.format)
        #expect(request.spec == expected)
        #expect(request.source.string == "http://example.com/a.jpg")
        // And the answer varies on Accept exactly when the format is negotiated
        var isNegotiated = false
        if case .auto = valid.format { isNegotiated = true }
        #expect(request.variesOnAccept == isNegotiated)
    }

    @Test func signatureIsKeptAndNotAParameter() throws {
        #expect(try ThumbnailRequest(rawQuery: "\(Self.url)&w=32&sig=abc%2Bdef", accept: nil).signature == "abc+def")
        #expect(try ThumbnailRequest(rawQuery: "\(Self.url)&w=32", accept: nil).signature == nil)
    }

    // MARK: - url forms

    /// A `url` value as sent (already percent-encoded where needed) and the canonical source it must give.
    static let urlForms: [(raw: String, canonical: String)] = [
        ("http%3A%2F%2Fexample.com%2Fa.jpg", "http://example.com/a.jpg"),
        ("http://example.com/a.jpg", "http://example.com/a.jpg"),  // unencoded works when it has no & or #
        ("HTTP%3A%2F%2FExample.COM%3A80%2Fa.jpg", "http://example.com/a.jpg"),
        ("https%3A%2F%2Fexample.com%3A443%2Fa.jpg", "https://example.com/a.jpg"),
        ("https%3A%2F%2Fexample.com%3A8443%2Fa.jpg", "https://example.com:8443/a.jpg"),
        ("http%3A%2F%2Fexample.com", "http://example.com/"),
        ("http%3A%2F%2Fexample.com%2Fa.jpg%23fragment", "http://example.com/a.jpg"),
        ("http%3A%2F%2Fexample.com%2Fx%2F..%2Fa.jpg", "http://example.com/a.jpg"),
        ("http%3A%2F%2Fexample.com%2Fa.jpg%3Fv%3D1%26s%3D2", "http://example.com/a.jpg?v=1&s=2"),
        ("http%3A%2F%2Fexample.com%2Fa%2520b.jpg", "http://example.com/a%20b.jpg"),  // decoded once only
        ("http://example.com/a+b.jpg", "http://example.com/a+b.jpg"),  // + is not a space
        ("http%3A%2F%2Fexample.com%2Fa%2Bb.jpg", "http://example.com/a+b.jpg"),
        ("http%3A%2F%2F%5B2001%3Adb8%3A%3A1%5D%3A8080%2Fa.jpg", "http://[2001:db8::1]:8080/a.jpg"),
        // libcurl's leniency (one to three slashes); the canonical form shows what will be fetched.
        ("http%3A%2F%2F%2Fa.jpg", "http://a.jpg/"),
    ]

    @Test(arguments: urlForms)
    func urlIsDecodedOnceAndCanonicalised(_ raw: String, canonical: String) throws {
        let request = try ThumbnailRequest(rawQuery: "url=\(raw)&w=32", accept: nil)
        #expect(request.source.string == canonical)
    }

    static let badURLs: [String] = [
        "a.jpg", "%2Fa.jpg", "%2F%2Fexample.com%2Fa.jpg",  // relative
        "ftp%3A%2F%2Fexample.com%2Fa.jpg", "file%3A%2F%2F%2Fetc%2Fpasswd", "javascript%3Aalert(1)",
        "gopher%3A%2F%2Fexample.com%2F", "data%3Aimage%2Fpng%3Bbase64%2CAAAA",
        "http%3A%2F%2F", "http%3A", "example.com%2Fa.jpg",
        "http%3A%2F%2Fuser%3Apassword%40example.com%2Fa.jpg", "http%3A%2F%2Fuser%40example.com%2Fa.jpg",
        "http%3A%2F%2Fexa%20mple.com%2Fa.jpg", "http%3A%2F%2Fexample.com%2Fa%20b.jpg",
        "http%3A%2F%2Fexample.com%2Fa.jpg%00http%3A%2F%2Fother.example%2F",  // NUL would cut the URL short
        "http%3A%2F%2Fexample.com%2Fa%0D%0AX-Injected%3A%201",  // CR LF
        "http%3A%2F%2Fexample.com%2Fa%09b", "http%3A%2F%2Fexample.com%2Fa%7Fb",
        "http%3A%2F%2F%5Bfe80%3A%3A1%25eth0%5D%2Fa.jpg",  // IPv6 zone id
    ]

    @Test(arguments: badURLs)
    func badURLIs400NamingURL(_ raw: String) {
        #expect(throws: RequestError.self) { try ThumbnailRequest(rawQuery: "url=\(raw)&w=32", accept: nil) }
        do {
            _ = try ThumbnailRequest(rawQuery: "url=\(raw)&w=32", accept: nil)
        } catch {
            #expect(error.parameter == "url")
        }
    }

    @Test func urlLengthLimitIs8KiBDecoded() throws {
        // Given URLs of exactly 8 KiB and one byte more (after decoding)
        let prefix = "http://example.com/"
        let fits = prefix + String(repeating: "a", count: ThumbnailRequest.maxURLBytes - prefix.utf8.count)
        let tooLong = fits + "a"
        // Then the first is accepted and the second refused, naming url
        #expect(try ThumbnailRequest(rawQuery: "url=\(fits)&w=32", accept: nil).source.string == fits)
        #expect(throws: RequestError.invalidValue("url", reason: "longer than 8192 bytes")) {
            try ThumbnailRequest(rawQuery: "url=\(tooLong)&w=32", accept: nil)
        }
        // And the limit counts decoded bytes, not the longer encoded form
        let encoded = "http%3A%2F%2Fexample.com%2F" + String(repeating: "a", count: fits.utf8.count - prefix.utf8.count)
        #expect(try ThumbnailRequest(rawQuery: "url=\(encoded)&w=32", accept: nil).source.string == fits)
    }

    @Test func urlLengthLimitHoldsForTheCanonicalFormToo() throws {
        // Given a URL of exactly 8 KiB whose canonical form gains the `/` of an empty path (the canonical query of
        // an accepted request was refused: FuzzThumbParameters' property, on an input longer than it generates)
        let prefix = "http://example.com?"
        let sent = prefix + String(repeating: "a", count: ThumbnailRequest.maxURLBytes - prefix.utf8.count)
        // Then it is refused naming url, as its canonical spelling would be
        #expect(throws: RequestError.invalidValue("url", reason: "longer than 8192 bytes")) {
            try ThumbnailRequest(rawQuery: "url=\(sent)&w=32", accept: nil)
        }
        // And one byte shorter, it is accepted and so is its canonical query
        let request = try ThumbnailRequest(rawQuery: "url=\(sent.dropLast())&w=32", accept: nil)
        #expect(request.source.string.utf8.count == ThumbnailRequest.maxURLBytes)
        let canonical = ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec)
        #expect(try ThumbnailRequest(rawQuery: canonical, accept: nil).source == request.source)
    }

    // MARK: - Invalid requests

    /// What kind of error a bad query must give, and about which parameter.
    enum Expected: Sendable, Equatable {
        case missing(String), unknown(String), duplicate(String), invalid(String), malformed(String)
        case onlyPresets(String)
        /// The signature errors come from the verifier, never from parsing.
        case signature

        init(_ error: RequestError) {
            switch error {
            case .missingParameter(let name): self = .missing(name)
            case .unknownParameter(let name): self = .unknown(name)
            case .duplicateParameter(let name): self = .duplicate(name)
            case .invalidValue(let name, _): self = .invalid(name)
            case .malformedQuery(let name): self = .malformed(name)
            case .onlyPresetsAllowed(let name): self = .onlyPresets(name)
            case .missingSignature, .invalidSignature: self = .signature
            // The foreign URL forms' errors; /thumb's query never gives them.
            case .unsupportedOption(let name): self = .invalid(name)
            case .malformedPath: self = .malformed("path")
            }
        }
    }

    static let invalid: [(query: String, expected: Expected)] =
        [
            // Missing.
            ("", .missing("url")),
            ("w=32", .missing("url")),
            ("url=&w=32", .missing("url")),
            ("url&w=32", .missing("url")),
            (url, .missing("w or h")),
            ("\(url)&dpr=2", .missing("w or h")),
            // Unknown (names are case-sensitive).
            ("\(url)&w=32&width=64", .unknown("width")),
            ("\(url)&W=32", .unknown("W")),
            ("\(url)&w=32&callback=x", .unknown("callback")),
            ("\(url)&w=32&=5", .unknown("")),
            ("\(url)&w=32&quality=80", .unknown("quality")),
            // Duplicated, even with the same value.
            ("\(url)&w=32&w=32", .duplicate("w")),
            ("\(url)&\(url)&w=32", .duplicate("url")),
            ("\(url)&w=32&h=5&h=6", .duplicate("h")),
            ("\(url)&w=32&fit=cover&fit=cover", .duplicate("fit")),
            ("\(url)&w=32&sig=a&sig=b", .duplicate("sig")),
            ("\(url)&w=32&q=5&q=5", .duplicate("q")),
            ("\(url)&w=32&dpr=2&dpr=2", .duplicate("dpr")),
            ("\(url)&w=32&enlarge=1&enlarge=1", .duplicate("enlarge")),
            ("\(url)&w=32&format=png&format=png", .duplicate("format")),
            ("\(url)&w=32&gravity=north&gravity=north", .duplicate("gravity")),
        ]
        + ["", "abc", "0", "4097", "-1", "+5", "%205", "1.5", "1e3", "0x10", "9999999999", "%D9%A3", "32px"].map {
            ("\(url)&w=\($0)", .invalid("w"))
        }
        + ["", "0", "4097", "-3", "12.0"].map { ("\(url)&h=\($0)", .invalid("h")) }
        + [
            // dpr: the form, the range, and the product with w/h.
            ("\(url)&w=2049&dpr=2", .invalid("w")),
            ("\(url)&h=4096&dpr=1.01", .invalid("h")),
            ("\(url)&w=32&h=3000&dpr=1.5", .invalid("h")),
            // thumbor's crop places its region by a compass or focal point: not by libvips's strategies.
            ("\(url)&w=32&h=32&fit=cover&gravity=attention&rounding=thumbor-crop", .invalid("rounding")),
            ("\(url)&w=32&h=32&fit=cover&gravity=entropy&rounding=thumbor-crop", .invalid("rounding")),
        ]
        + [
            "", "0", "0.5", "0.99", "5", "4.01", "abc", ".5", "1.", "1.234", "+1", "01", "-1", "1,5", "nan", "inf",
            "1e0", "%32%2E%35%35%35",
        ].map { ("\(url)&w=32&dpr=\($0)", .invalid("dpr")) }
        + ["", "Cover", "crop", "inside", "contain "].map { ("\(url)&w=32&fit=\($0)", .invalid("fit")) }
        + ["", "up", "North", "Smart", "faces", "centre%20", "north-east"].map {
            ("\(url)&w=32&h=32&fit=cover&gravity=\($0)", .invalid("gravity"))
        }
        + ["", "bmp", "JPEG", "tiff", "jxll", "svg"].map { ("\(url)&w=32&format=\($0)", .invalid("format")) }
        + ["", "0", "101", "abc", "50.5", "-1"].map { ("\(url)&w=32&q=\($0)", .invalid("q")) }
        + ["", "yes", "2", "TRUE", "on"].map { ("\(url)&w=32&enlarge=\($0)", .invalid("enlarge")) }
        + ["", "bmp", "svg", "jpeg,", "JPEG", "png;gif"].map { ("\(url)&w=32&skip=\($0)", .invalid("skip")) }
        // raw: anything that would change the picture is named; the box first, then the operations in query order
        + [
            ("\(url)&raw=1&w=32", .invalid("w")), ("\(url)&raw=1&format=auto", .invalid("format")),
            ("\(url)&raw=1&q=50", .invalid("q")), ("\(url)&raw=1&dpr=2", .invalid("dpr")),
            ("\(url)&raw=1&blur=2&rotate=90", .invalid("rotate")), ("\(url)&raw=1&skip=png", .invalid("skip")),
            ("\(url)&raw=1&animated=0", .invalid("animated")), ("\(url)&raw=1&preset=card", .invalid("preset")),
            ("\(url)&raw=yes", .invalid("raw")),
        ]
        + [
            // Malformed percent-escapes, in values and in names.
            ("\(url)&w=%", .malformed("w")),
            ("\(url)&w=3%", .malformed("w")),
            ("\(url)&w=%4", .malformed("w")),
            ("\(url)&w=%zz", .malformed("w")),
            ("\(url)&w=%G1", .malformed("w")),
            ("\(url)&w=%C3", .malformed("w")),  // half a UTF-8 sequence
            ("\(url)&w=%FF", .malformed("w")),  // not UTF-8
            ("\(url)&w=%ED%A0%80", .malformed("w")),  // a UTF-16 surrogate
            ("url=http%3A%2F%2Fexample.com%2F%E2%82&w=32", .malformed("url")),
            ("\(url)&%=1", .malformed("%")),
            ("\(url)&w%=1", .malformed("w%")),
        ]

    @Test(arguments: invalid)
    func invalidQueryNamesTheParameter(_ query: String, expected: Expected) {
        do {
            let request = try ThumbnailRequest(rawQuery: query, accept: nil)
            Issue.record("accepted: \(request.spec)")
        } catch {
            #expect(Expected(error) == expected)
            #expect(!error.parameter.isEmpty && error.publicMessage.contains(error.parameter))
        }
    }

    /// `raw=1` needs no box: the spec is the source's own bytes, the answer's options are kept, a neutral value
    /// (`blur=0`) is no change, and the canonical query is the source and `raw=1` alone.
    @Test func rawIsTheSourceAloneWithTheAnswersOptions() throws {
        let request = try ThumbnailRequest(
            rawQuery: "\(Self.url)&raw=1&filename=x&attachment=1&max_age=60&blur=0", accept: "image/webp")
        #expect(request.spec == .raw && !request.variesOnAccept)
        #expect(request.answer.filename == "x" && request.answer.attachment == true && request.answer.maxAge == 60)
        let canonical = ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec)
        #expect(canonical == "\(Self.url)&raw=1")
        #expect(try ThumbnailRequest(rawQuery: canonical, accept: nil).spec == .raw)
        // A default preset is for rendered pictures: not put under raw (its `w` would be refused)
        let rules = try ThumbQueryRules(presets: Presets(["default": "w=100"]), allowsOnlyPresets: false)
        #expect(try ThumbnailRequest(rawQuery: "\(Self.url)&raw=1", accept: nil, rules: rules).spec == .raw)
        // skip writes its formats once, in one order
        let skip = try ThumbnailRequest(rawQuery: "\(Self.url)&w=9&skip=heic,jpg,jpeg", accept: nil)
        #expect(
            ThumbnailRequest.canonicalQuery(source: skip.source, spec: skip.spec) == "\(Self.url)&w=9&skip=jpeg,heif")
    }

    @Test func firstProblemInQueryOrderIsReported() {
        // A duplicate is found while reading, before any value is looked at
        #expect(throws: RequestError.duplicateParameter("w")) {
            try ThumbnailRequest(rawQuery: "w=abc&w=1&foo=1", accept: nil)
        }
        #expect(throws: RequestError.unknownParameter("foo")) {
            try ThumbnailRequest(rawQuery: "foo=1&w=1&w=1", accept: nil)
        }
    }

    @Test func clientChosenNamesAreEchoedShortAndPrintable() {
        let long = String(repeating: "x", count: 500)
        let message = RequestError.unknownParameter(long + "\u{1}\u{7F}").publicMessage
        #expect(message == "unknown parameter: " + String(repeating: "x", count: 64))
        #expect(RequestError.unknownParameter("a\u{0}b\nc").publicMessage == "unknown parameter: abc")
        // C1 controls are control characters too (found by fuzz/FuzzThumbParameters: `%C2%85` in a name)
        #expect(RequestError.unknownParameter("a\u{85}b\u{9F}").publicMessage == "unknown parameter: ab")
        #expect(throws: RequestError.unknownParameter("a\u{85}b")) {
            try ThumbnailRequest(rawQuery: "\(Self.url)&w=32&a%C2%85b=1", accept: nil)
        }
        // The echo is cut by bytes, not scalars, so a name of 3- or 4-byte characters keeps every message short
        // (found by fuzz/FuzzThumbParameters: 64 `€` gave a 211-byte message)
        let euros = RequestError.malformedQuery(parameter: String(repeating: "€", count: 64)).publicMessage
        #expect(euros == "malformed percent-encoding in parameter: " + String(repeating: "€", count: 21))
        #expect(RequestError.unknownParameter(String(repeating: "😀", count: 64)).publicMessage.utf8.count <= 200)
        // And a name with nothing printable is named in words
        #expect(RequestError.unknownParameter("\u{1}\u{85}").publicMessage == "unknown parameter: (unprintable name)")
    }

    @Test func anEmptyNameIsNamedInWords() {
        // Given components with nothing before `=` (found by fuzz/FuzzThumbParameters: the error named no parameter)
        for query in ["\(Self.url)&w=32&=5", "=5&\(Self.url)&w=32", "\(Self.url)&w=32&=%zz"] {
            do {
                _ = try ThumbnailRequest(rawQuery: query, accept: nil)
                Issue.record("accepted: \(query)")
            } catch {
                // Then the error names "(empty name)", in its parameter and in the message
                #expect(error.parameter == "(empty name)")
                #expect(error.publicMessage.hasSuffix(": (empty name)"), "\(error.publicMessage)")
            }
        }
    }
}
