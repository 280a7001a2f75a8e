// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import ThumbdApp

/// `If-None-Match` evaluation (weak comparison, lists, `*`) and the ETags thumbd makes.
@Suite struct EntityTagTests {
    static let etag = "\"0123456789abcdef\""

    static let cases: [(ifNoneMatch: String, matches: Bool)] = [
        (etag, true),
        ("W/\(etag)", true),  // weak comparison: W/ is ignored
        ("\"aaaaaaaaaaaaaaaa\", \(etag)", true),
        ("\"aaaaaaaaaaaaaaaa\",\(etag),\"bbbbbbbbbbbbbbbb\"", true),
        ("  \(etag)\t", true),
        ("\t\"aaaaaaaaaaaaaaaa\" ,  W/\(etag) ", true),
        ("*", true),
        (" * ", true),
        ("\"aaaaaaaaaaaaaaaa\"", false),
        ("0123456789abcdef", false),  // unquoted is not the tag
        ("\"0123456789ABCDEF\"", false),  // opaque tags compare byte for byte
        ("\"0123456789abcde\"", false),
        ("\"0123456789abcdef", false),
        ("", false),
        (",", false),
        ("W/", false),
        ("w/\(etag)", false),  // the weak marker is case-sensitive
        ("\"\"", false),
    ]

    @Test(arguments: cases)
    func ifNoneMatch(_ ifNoneMatch: String, matches: Bool) {
        #expect(EntityTag.matches(ifNoneMatch, etag: Self.etag) == matches)
    }

    @Test func etagIsAQuotedHashOfTheBytes() {
        let a = RenderedVariant.etag(for: [1, 2, 3])
        #expect(a.count == 18 && a.hasPrefix("\"") && a.hasSuffix("\""))
        #expect(a.dropFirst().dropLast().allSatisfy { "0123456789abcdef".contains($0) })
        #expect(RenderedVariant.etag(for: [1, 2, 3]) == a)
        #expect(RenderedVariant.etag(for: [1, 2, 4]) != a)
        #expect(RenderedVariant.etag(for: []).count == 18)  // zero-padded to 16 digits
        #expect(EntityTag.matches(a, etag: a))
    }

    /// The facts a variant's answers carry ride in its ETag, so a variant read back from any tier answers the same.
    @Test func aSkippedFrameAndMaxBytesQualityRideTogether() {
        let plain = RenderedVariant.etag(for: [1, 2, 3])
        let both = RenderedVariant.etag(for: [1, 2, 3], quality: 70, isFrameSkipped: true)
        #expect(both == plain.dropLast() + "-noframe-q70\"")
        #expect(RenderedVariant.isFrameSkipped(etag: both) && RenderedVariant.quality(inETag: both) == 70)
        let frameOnly = RenderedVariant.etag(for: [1, 2, 3], isFrameSkipped: true)
        #expect(RenderedVariant.isFrameSkipped(etag: frameOnly) && RenderedVariant.quality(inETag: frameOnly) == nil)
        #expect(!RenderedVariant.isFrameSkipped(etag: plain) && !RenderedVariant.isSourceBytes(etag: frameOnly))
        #expect(!RenderedVariant.isFrameSkipped(etag: RenderedVariant.etag(for: [1], quality: 70)))
        // The fields prepared once per variant say each
        let fields = RenderedVariant.preparedFields(format: .jpeg, etag: both)
        #expect(fields.value(named: "X-Thumbd-Skipped-Filters") == "frame")
        #expect(fields.value(named: "X-Thumbd-Quality") == "70")
        let plainFields = RenderedVariant.preparedFields(format: .jpeg, etag: plain)
        #expect(plainFields.value(named: "X-Thumbd-Skipped-Filters") == nil)
    }
}
