// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import URLForms

/// What a request asks of its answer's headers: `/thumb`'s `expires`, `max_age`, `filename` and `attachment`, read and
/// checked, none of them in the variant key; `Content-Disposition` written safely whatever the name.
@Suite struct AnswerOptionsTests {
    static let source = "url=https%3A%2F%2Fexample.com%2Fdir%2Fmy%2520cat.photo.jpg%3Fv%3D2&w=200"

    @Test func theParametersAreReadAndLeaveTheKey() throws {
        let plain = try ThumbnailRequest(rawQuery: Self.source, accept: nil)
        let asked = try ThumbnailRequest(
            rawQuery: Self.source + "&expires=1900000000&max_age=0&filename=a&attachment=0", accept: nil)
        #expect(plain.answer.isEmpty && !asked.answer.isEmpty)
        #expect(asked.answer.expiresAt == 1_900_000_000 && asked.answer.maxAge == 0)
        #expect(asked.answer.filename == "a" && asked.answer.attachment == false)
        #expect(
            VariantKeyText.description(source: asked.source, spec: asked.spec)
                == VariantKeyText.description(source: plain.source, spec: plain.spec))
    }

    @Test(arguments: [
        ("expires=0", RequestError.invalidValue("expires", reason: "must be a unix time in seconds")),
        ("expires=1e9", .invalidValue("expires", reason: "must be a unix time in seconds")),
        ("max_age=31536001", .invalidValue("max_age", reason: "must be a whole number of seconds 0...31536000")),
        ("filename=", .invalidValue("filename", reason: "must be 1...255 bytes")),
        ("attachment=yes", .invalidValue("attachment", reason: "must be 0, 1, true or false")),
    ])
    func aBadValueIsRefusedNamingIt(query: String, expected: RequestError) {
        #expect(throws: expected) { try ThumbnailRequest(rawQuery: Self.source + "&" + query, accept: nil) }
    }

    @Test func contentDispositionIsSafeWhateverTheName() {
        var answer = AnswerOptions()
        answer.attachment = true
        answer.sourceStem = AnswerOptions.stem(ofURL: "https://example.com/dir/my%20cat.photo.jpg?v=2")
        // The source's name, decoded, without its extension
        #expect(answer.contentDisposition(fileExtension: "webp") == "attachment; filename=\"my cat.photo.webp\"")
        // What could end the parameter, climb a directory or split the header is removed
        answer.filename = "../\"evil\"\r\nSet-Cookie: x\\"
        #expect(
            answer.contentDisposition(fileExtension: "png") == "attachment; filename=\"evilSet-Cookie: x.png\"")
        // A name with nothing left falls back on the source's, then on `image`
        answer.filename = "/.."
        #expect(answer.contentDisposition(fileExtension: "png") == "attachment; filename=\"my cat.photo.png\"")
        answer.sourceStem = nil
        #expect(answer.contentDisposition(fileExtension: "png") == "attachment; filename=\"image.png\"")
        #expect(AnswerOptions.stem(ofURL: "https://example.com") == "")
    }
}

/// `/thumb`'s `fq`: quality by output format, kept in the spec until the format is negotiated, written back by the
/// canonical query; `q` wins over it.
@Suite struct FormatQualityTests {
    static let source = "url=https%3A%2F%2Fexample.com%2Fa.jpg&w=200"

    @Test func fqIsReadCheckedAndWrittenBack() throws {
        let request = try ThumbnailRequest(rawQuery: Self.source + "&fq=webp:70,jpg:85", accept: "image/webp")
        #expect(request.spec.formatQuality == [.webp: 70, .jpeg: 85])
        let canonical = ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec)
        #expect(canonical.hasSuffix("&fq=jpeg:85,webp:70"))
        let again = try ThumbnailRequest(rawQuery: canonical, accept: "image/webp")
        #expect(again.spec == request.spec)
        let withQ = try ThumbnailRequest(rawQuery: Self.source + "&fq=webp:70&q=50", accept: nil)
        #expect(withQ.spec.formatQuality.isEmpty && withQ.spec.quality == 50)
    }

    @Test(arguments: ["webp", "webp:70,webp:60", "bmp:50", "webp:0", "webp:101", "auto:50", "webp:70,"])
    func aBadListIsRefused(text: String) {
        #expect(throws: RequestError.self) { try ThumbnailRequest(rawQuery: Self.source + "&fq=" + text, accept: nil) }
    }
}
