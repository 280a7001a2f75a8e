// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// The pipeline's `/thumb` parameters: what each value becomes, the 400 for each bad one, and the variant key
/// that makes every spelling of one plan the same cache entry.
@Suite struct PipelineParameterTests {
    static let url = "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=64&h=64"

    static func spec(_ query: String) throws(RequestError) -> ThumbnailSpec {
        try ThumbnailRequest(rawQuery: "\(url)&\(query)", accept: nil).spec
    }

    static func key(_ query: String) throws -> String {
        let request = try ThumbnailRequest(rawQuery: query.isEmpty ? url : "\(url)&\(query)", accept: nil)
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        return VariantKey.description(source: request.source, spec: thumbnailer.normalized(request.spec))
    }

    static func decimal(_ text: String) -> FixedDecimal { FixedDecimal(parsing: text)! }

    @Test func eachParameterSetsItsStep() throws {
        #expect(try Self.spec("autorotate=0").operations.autoOrient == false)
        #expect(
            try Self.spec("rotate=90&flip=h").operations.orientation
                == .rotated(90, flippedHorizontally: true, vertically: false))
        #expect(try Self.spec("trim=").operations.trim == .init(threshold: 10, colour: nil))
        #expect(
            try Self.spec("trim=25,FFFFFF").operations.trim == .init(threshold: 25, colour: RGBAColour(hex: "ffffff")))
        #expect(try Self.spec("crop=10,20,30,40").operations.crop == .pixels(left: 10, top: 20, width: 30, height: 40))
        #expect(
            try Self.spec("crop=0.1,0.2,0.5,0.25").operations.crop
                == .fractions(
                    left: Self.decimal("0.1"), top: Self.decimal("0.2"), width: Self.decimal("0.5"),
                    height: Self.decimal("0.25")))
        #expect(try Self.spec("brightness=-20").operations.brightness == -20)
        #expect(try Self.spec("contrast=1.5").operations.contrast == Self.decimal("1.5"))
        #expect(try Self.spec("saturation=0").operations.saturation == .zero)
        #expect(try Self.spec("grayscale=true").operations.greyscale == .luminance)
        #expect(try Self.spec("grayscale=rec601").operations.greyscale == .rec601)
        #expect(try Self.spec("saturation=-2&saturation_model=hsp").operations.saturationModel == .hsp)
        #expect(try Self.spec("blur=2.5").operations.blur == Self.decimal("2.5"))
        #expect(try Self.spec("sharpen=1").operations.sharpen == .one)
        #expect(try Self.spec("pixelate=8").operations.pixelate == 8)
        #expect(try Self.spec("padding=1,2,3").operations.padding == .init(top: 1, right: 2, bottom: 3, left: 2))
        #expect(try Self.spec("padding=4&dpr=1.5").operations.padding == .init(top: 6, right: 6, bottom: 6, left: 6))
        #expect(
            try Self.spec("bg=FF000080").operations.background == RGBAColour(red: 255, green: 0, blue: 0, alpha: 128))
        #expect(try Self.spec("fit=pad").fit == .pad)
        #expect(
            try Self.spec("fit=cover&gravity=fp:0.25,1").focalPoint == FocalPoint(x: Self.decimal("0.25"), y: .one))
    }

    static let invalid: [(query: String, parameter: String)] = [
        ("autorotate=yes", "autorotate"), ("rotate=45", "rotate"), ("rotate=-90", "rotate"), ("flip=x", "flip"),
        ("trim=256", "trim"), ("trim=10,fff", "trim"), ("trim=a", "trim"), ("crop=1,2,3", "crop"),
        ("crop=0,0,0,10", "crop"), ("crop=0.5,0,10,10", "crop"), ("crop=0.5,0.5,1.5,0.5", "crop"),
        ("crop=0.1,0.1,0.0,0.5", "crop"), ("crop=-1,0,10,10", "crop"), ("brightness=256", "brightness"),
        ("brightness=+5", "brightness"), ("contrast=11", "contrast"), ("contrast=1e1", "contrast"),
        ("saturation=-10.01", "saturation"), ("grayscale=2", "grayscale"), ("blur=101", "blur"),
        ("blur=1.23456", "blur"),
        ("sharpen=10.01", "sharpen"), ("pixelate=257", "pixelate"), ("padding=1,2,3,4,5", "padding"),
        ("padding=1025", "padding"), ("padding=600&dpr=2", "padding"), ("padding=-1", "padding"), ("bg=red", "bg"),
        ("bg=12345", "bg"), ("fit=letterbox", "fit"), ("gravity=fp:0.5", "gravity"), ("gravity=fp:1.5,0.5", "gravity"),
        ("fit=cover&gravity=fp:0.5,0.5&gravity=north", "gravity"),
        ("wm=logo", "wm"), ("wm_pos=north", "wm_pos"), ("wm_opacity=0.5", "wm_opacity"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm=logo", "wm_url"), ("wm_url=m.png", "wm_url"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=attention", "wm_pos"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_x=1.5", "wm_x"), ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_y=.5", "wm_y"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_place=1,2&wm_x=0.5", "wm_x"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_x=5000", "wm_x"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_opacity=1.5", "wm_opacity"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_scale=2", "wm_scale"), ("animated=2", "animated"),
        ("format=png&lossless=1", "lossless"), ("format=webp&chroma=420", "chroma"), ("chroma=422", "chroma"),
        ("format=png&max_bytes=5000", "max_bytes"), ("max_bytes=100", "max_bytes"),
        ("format=webp&lossless=1&max_bytes=5000", "max_bytes"), ("format=gif&keep_copyright=1", "keep_copyright"),
        ("icc=p3", "icc"), ("avif_effort=10", "avif_effort"), ("format=jpeg&avif_effort=3", "avif_effort"),
        ("jxl_effort=2", "jxl_effort"), ("format=webp&jxl_effort=5", "jxl_effort"),
        ("progressive=2", "progressive"), ("format=webp&progressive=1", "progressive"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_place=10p", "wm_place"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_place=5000,0", "wm_place"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_place=1,x", "wm_place"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_place=1,2&wm_pos=north", "wm_pos"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_hscale=2", "wm_hscale"), ("wm_place=1,2", "wm_place"),
        ("wm2_url=http%3A%2F%2Fa.test%2Fm.png", "wm2"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm3_url=http%3A%2F%2Fa.test%2Fm.png", "wm3"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm2_x=3", "wm2_x"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm2_url=http%3A%2F%2Fa.test%2Fn.png&wm2_opacity=2", "wm2_opacity"),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm2_url=http%3A%2F%2Fa.test%2Fn.png&wm2_y=-1", "wm2_y"),
        ("gravity=fpx:1,2,n", "gravity"), ("gravity=fpx:1,2,nw,x", "gravity"), ("gravity=fpx:1,2,", "gravity"),
        ("dpr_limit=0.5", "dpr_limit"), ("dpr_limit=9", "dpr_limit"), ("dpr_limit=x", "dpr_limit"),
        ("brightness=5&order=contrast", "order"), ("brightness=5&order=brightness,brightness", "order"),
        ("brightness=5&order=frame", "order"), ("brightness=5&order=", "order"),
        ("redact=cars", "redact"), ("redact=faces,smudge", "redact"), ("redact=faces,blur,0", "redact"),
        ("redact=faces,blur,101", "redact"), ("redact=faces,pixelate,2.5", "redact"),
        ("redact=faces,pixelate,1", "redact"),
        ("redact=faces,box,0", "redact"), ("redact=faces,box,65", "redact"), ("redact=faces,blur,2,3", "redact"),
        ("redact=", "redact"), ("redact=faces&redact_margin=1.5", "redact_margin"),
        ("redact=faces&redact_margin=-0.1", "redact_margin"), ("redact=faces&skip=jpeg", "skip"),
        // frame_optional: a switch, and only beside a frame
        ("frame_optional=1", "frame_optional"),
        ("frame_url=http%3A%2F%2Fa.test%2Ff.png&frame_optional=2", "frame_optional"),
    ]

    @Test(arguments: invalid)
    func badValueIs400NamingTheParameter(_ query: String, parameter: String) {
        do {
            _ = try Self.spec(query)
            Issue.record("\(query) was accepted")
        } catch {
            #expect(error.parameter == parameter, "\(query): \(error.publicMessage)")
        }
    }

    /// Spellings that mean one plan, each group one variant key.
    static let sameKeys: [[String]] = [
        [
            "", "rotate=0", "autorotate=1", "rotate=180&flip=hv", "blur=0", "contrast=1.00", "pixelate=1", "padding=0",
            "crop=0.0,0.0,1.0,1.0", "brightness=0&saturation=1",
        ],
        ["flip=v", "rotate=180&flip=h"],
        ["rotate=90&flip=h", "rotate=270&flip=v"],
        ["blur=1.5", "blur=1.50", "blur=01.5000"],
        ["padding=5", "padding=5,5", "padding=5,5,5", "padding=5,5,5,5"],
        ["bg=FF00FF", "bg=ff00ff", "bg=ff00ffff"],
        ["fit=cover&gravity=center&sharpen=1", "sharpen=1.0&gravity=centre&fit=cover"],
        ["fit=pad&gravity=attention", "fit=pad"],
        ["fit=contain&gravity=fp:0.2,0.2", "fit=contain"],
        [
            "wm_url=http%3A%2F%2Fa.test%2Fm.png",
            "wm_url=http%3A%2F%2FA.test%2Fm.png&wm_pos=southeast&wm_x=0&wm_opacity=1.0&wm_scale=0",
        ],
        ["", "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_opacity=0"],
        ["", "animated=1"],
        ["", "progressive=0", "lossless=0&keep_copyright=0&icc=srgb", "avif_effort=2", "jxl_effort=4"],
        ["format=jpeg&chroma=444&max_bytes=20000", "max_bytes=20000&chroma=444&format=jpg"],
    ]

    @Test(arguments: sameKeys)
    func spellingsOfOnePlanShareAKey(_ spellings: [String]) throws {
        let keys = try spellings.map(Self.key)
        #expect(Set(keys).count == 1, "\(keys)")
    }

    @Test func aNamedWatermarkKeysOnItsFilesDigest() throws {
        let request = { (digest: UInt64) throws(RequestError) -> ThumbnailRequest in
            let watermarks = WatermarkSource(
                named: ["logo": .init(bytes: [1], digest: digest)], fetcher: nil, cache: nil, policy: nil)
            return try ThumbnailRequest(
                parameters: try QueryParameters(parsing: "\(Self.url)&wm=logo&wm_opacity=0.5"), accept: nil,
                watermarks: watermarks)
        }
        let first = try request(0xabc)
        let replaced = try request(0xdef)
        #expect(first.spec.operations.watermarks.first?.image == .named("logo", digest: 0xabc))
        let key = VariantKey.description(source: first.source, spec: first.spec)
        #expect(key.contains(" wm=n:logo:abc,southeast,0,0,0.5,0 "))
        #expect(key != VariantKey.description(source: replaced.source, spec: replaced.spec))
    }

    @Test func aPlainResizeKeepsItsKeyAndEachStepChangesIt() throws {
        // The key of a plain resize is what it was before the pipeline (entries on disk stay valid)
        #expect(try Self.key("") == "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto http://example.com/a.jpg")
        let steps = [
            "autorotate=0", "rotate=90", "flip=h", "trim=", "crop=1,1,10,10", "brightness=1", "contrast=1.1",
            "saturation=2", "grayscale=1", "blur=1", "sharpen=1", "pixelate=2", "padding=1", "bg=000000", "fit=pad",
            "fit=cover&gravity=fp:0.1,0.1", "animated=0", "wm_url=http%3A%2F%2Fa.test%2Fm.png",
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=tile", "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_scale=0.5",
            "progressive=1", "chroma=444", "lossless=1", "avif_effort=5", "jxl_effort=5", "max_bytes=20000",
            "keep_copyright=1",
            "icc=keep",
        ]
        let keys = try steps.map(Self.key)
        #expect(Set(keys + [try Self.key("")]).count == steps.count + 1)
        #expect(keys.allSatisfy { $0.hasSuffix(" http://example.com/a.jpg") })
    }
}
