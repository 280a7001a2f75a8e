// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

/// The output bytes of every operation, pinned by SHA-256, through each render path: a box large enough to render
/// from the source directly, a small box rendered from an intermediate that was kept from an earlier render, and an
/// animation. A restructuring of the pipeline must leave every hash in RenderGoldens.swift as it is: cached entries
/// are keyed by the plan, not by the code that rendered them, so changed bytes under an unchanged key would mix two
/// renderings of one thumbnail across a fleet. The hashes hold for this machine's Debian 12 libvips 8.14, libjpeg-turbo,
/// libspng, libwebp, cgif and libaom; `THUMBD_PRINT_GOLDENS=1` prints the table again after a deliberate change.
@Suite struct RenderGoldenTests {
    /// One plan's case: the fixture, the output format and the operations.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let fixture: String
        let format: ImageFormat
        let watermark: String?
        var frame: String?
        /// Faces for a plan that needs them, in the fixture's pixels (scaled to animated.gif's for the animation).
        var faces: [DetectedRegions.Box]?
        let configure: @Sendable (inout ThumbnailSpec.Operations) -> Void
        var testDescription: String { name }

        init(
            _ name: String, _ fixture: String = "progressive.jpg", _ format: ImageFormat = .png,
            watermark: String? = nil, _ configure: @escaping @Sendable (inout ThumbnailSpec.Operations) -> Void
        ) {
            self.name = name
            self.fixture = fixture
            self.format = format
            self.watermark = watermark
            self.configure = configure
        }
    }

    static func decimal(_ text: String) -> FixedDecimal { FixedDecimal(parsing: text)! }

    /// A case with a face on the corner where progressive.jpg's quadrants meet.
    static func redacting(_ name: String, _ configure: @escaping @Sendable (inout ThumbnailSpec.Operations) -> Void)
        -> Case
    {
        var testCase = Case(name, "progressive.jpg", .png, configure)
        testCase.faces = [.init(x: 120, y: 80, width: 80, height: 80)]
        return testCase
    }

    /// The case's faces over a source of width x height, scaled from progressive.jpg's 320x240.
    static func regions(_ testCase: Case, _ width: Int = 320, _ height: Int = 240) -> DetectedRegions? {
        guard let faces = testCase.faces else { return nil }
        let scaled = faces.map {
            DetectedRegions.Box(
                x: $0.x * width / 320, y: $0.y * height / 240, width: $0.width * width / 320,
                height: $0.height * height / 240)
        }
        return DetectedRegions(sourceWidth: width, sourceHeight: height, faces: scaled, features: [])
    }

    /// Every operation set to a value that changes the picture, one per case, plus a plain resize in each format.
    static let cases: [Case] = [
        Case("plain") { _ in },
        Case("plain-jpeg", "progressive.jpg", .jpeg) { _ in },
        Case("plain-webp", "progressive.jpg", .webp) { _ in },
        Case("plain-gif", "progressive.jpg", .gif) { _ in },
        Case("plain-avif", "progressive.jpg", .avif) { _ in },
        Case("rotate-mirror") { $0.orientation = ThumbnailSpec.Orientation(degrees: 90, mirrored: true)! },
        Case("auto-orient", "orientation-6.jpg") { _ in },
        Case("auto-orient-off", "orientation-6.jpg") { $0.autoOrient = false },
        Case("trim", "interest.png") { $0.trim = ThumbnailSpec.Trim(threshold: 10, colour: nil) },
        Case("trim-colour-corner", "rgba.png") {
            $0.trim = ThumbnailSpec.Trim(threshold: 30, colour: RGBAColour(hex: "ffffff"), corner: .bottomRight)
        },
        Case("crop-pixels") { $0.crop = .pixels(left: 40, top: 30, width: 200, height: 150) },
        Case("crop-fractions") {
            $0.crop = .fractions(
                left: decimal("0.1"), top: decimal("0.2"), width: decimal("0.5"), height: decimal("0.6"))
        },
        Case("adaptive") { $0.adaptive = true },
        Case("original-height") {
            $0.crop = .pixels(left: 40, top: 30, width: 200, height: 24)
            $0.originalSides = .height
        },
        Case("rounding-thumbor-full-fit-in") { $0.rounding = .thumborFullFitIn },
        Case("crop-placed") {
            $0.crop = .placed(
                width: .pixels(120), height: .fraction(decimal("0.5")),
                gravity: .compass(.southEast, x: .pixels(10), y: .fraction(decimal("0.1"))))
        },
        Case("brightness") { $0.brightness = -40 },
        Case("contrast") { $0.contrast = decimal("1.5") },
        Case("saturation") { $0.saturation = decimal("0.3") },
        Case("greyscale") { $0.greyscale = true },
        Case("greyscale-alpha", "rgba.png") { $0.greyscale = true },
        Case("greyscale-rec601") { $0.greyscale = .rec601 },
        Case("saturation-hsp") {
            $0.saturation = decimal("-0.5")
            $0.saturationModel = .hsp
        },
        Case("blur") { $0.blur = decimal("2.5") },
        Case("sharpen") { $0.sharpen = decimal("1.5") },
        Case("pixelate") { $0.pixelate = 6 },
        Case("rgb") { $0.channelShift = ThumbnailSpec.ChannelShift(red: 40, green: -60, blue: 10) },
        Case("rgb-grey", "grey.png") { $0.channelShift = ThumbnailSpec.ChannelShift(red: 40, green: 0, blue: 0) },
        Case("colorize") {
            $0.colorize = ThumbnailSpec.Colorize(red: 50, green: 0, blue: 120, colour: RGBAColour(hex: "0000ff")!)
        },
        Case("curve") {
            typealias Point = ThumbnailSpec.Curve.Point
            $0.curve = ThumbnailSpec.Curve(
                all: [Point(0, 0), Point(64, 90), Point(255, 255)], red: [Point(0, 255), Point(255, 0)],
                green: [Point(0, 0), Point(255, 255)], blue: [Point(0, 40), Point(200, 180), Point(255, 255)])
        },
        Case("equalize") { $0.equalize = true },
        Case("equalize-alpha", "rgba.png") { $0.equalize = true },
        Case("convolution") {
            $0.convolution = ThumbnailSpec.Convolution(
                values: [-1, -1, -1, -1, 9, -1, -1, -1, -1].map { FixedDecimal(units: $0 * FixedDecimal.unitsPerOne) },
                columns: 3)
        },
        Case("convolution-alpha", "rgba.png") {
            $0.convolution = ThumbnailSpec.Convolution(
                values: [1, 2, 1, 2, 4, 2, 1, 2, 1].map { FixedDecimal(units: $0 * FixedDecimal.unitsPerOne) },
                columns: 3)
        },
        Case("noise") { $0.noise = ThumbnailSpec.Noise(amount: 30, seed: 7) },
        Case("round-corner") {
            $0.roundCorner = ThumbnailSpec.RoundCorner(horizontal: 30, vertical: 20, colour: RGBAColour(hex: "ff00ff")!)
        },
        Case("round-corner-transparent", "rgba.png") {
            $0.roundCorner = ThumbnailSpec.RoundCorner(
                horizontal: 16, vertical: 16, colour: RGBAColour(hex: "00000000")!)
        },
        Case("round-corner-jpeg", "progressive.jpg", .jpeg) {
            $0.roundCorner = ThumbnailSpec.RoundCorner(
                horizontal: 16, vertical: 16, colour: RGBAColour(hex: "00ff0000")!)
        },
        Case("padding") { $0.padding = .init(top: 3, right: 5, bottom: 7, left: 9) },
        Case("padding-background") {
            $0.padding = .init(top: 4, right: 4, bottom: 4, left: 4)
            $0.background = RGBAColour(hex: "ff00ff")
        },
        Case("background-flatten", "rgba.png") { $0.background = RGBAColour(hex: "2040a0") },
        Case("crop-attention", "interest.png") {
            $0.crop = .placed(
                width: .pixels(100), height: .pixels(100), gravity: .compass(.attention, x: .zero, y: .zero))
        },
        Case("minimum-sides") {
            $0.minimumWidth = 260
            $0.minimumHeight = 100
        },
        Case("extend-box") {
            $0.extend = .box(width: true, height: true)
            $0.backgroundFill = .blur
        },
        Case("extend-aspect") { $0.extend = .aspect },
        Case("background-auto", "rgba.png") {
            $0.padding = .init(top: 3, right: 3, bottom: 3, left: 3)
            $0.backgroundFill = .auto
        },
        Case("background-translucent", "rgba.png") {
            $0.padding = .init(top: 2, right: 2, bottom: 2, left: 2)
            $0.background = RGBAColour(hex: "ff000080")
        },
        Case("watermark-corner", watermark: "quadrants.png") {
            var mark = ThumbnailSpec.Watermark(image: .named("quadrants", digest: 1))
            mark.offsetX = 5
            mark.offsetY = 3
            mark.opacity = decimal("0.6")
            $0.watermarks = [mark]
        },
        Case("watermark-tile-scaled", watermark: "rgba.png") {
            var mark = ThumbnailSpec.Watermark(image: .named("rgba", digest: 2))
            mark.position = .tile
            mark.scale = decimal("0.25")
            $0.watermarks = [mark]
        },
        {
            var framed = Case("frame") { $0.frame = ThumbnailSpec.Frame(image: .url("https://a.test/nine-patch.png")) }
            framed.frame = "nine-patch.png"
            return framed
        }(),
        Case("progressive", "progressive.jpg", .jpeg) { $0.progressive = true },
        Case("baseline", "progressive.jpg", .jpeg) { $0.progressive = false },
        Case("chroma-444", "progressive.jpg", .jpeg) { $0.chroma = .full },
        Case("lossless-webp", "progressive.jpg", .webp) { $0.lossless = true },
        Case("avif-effort", "progressive.jpg", .avif) { $0.avifEffort = 2 },
        Case("max-bytes", "progressive.jpg", .jpeg) { $0.maxBytes = 2048 },
        Case("keep-copyright", "copyright.jpg", .jpeg) { $0.keepCopyright = true },
        Case("keep-icc", "display-p3.png") { $0.keepColourProfile = true },
        Case("convert-icc", "display-p3.png") { _ in },
        // The source's own bytes: progressive.jpg's and animated.gif's SHA-256, on every path
        Case("raw") { $0.raw = true },
        // Listed and asked by name: the JPEG's bytes; the GIF path renders (JPEG is not the format it asks)
        Case("skip-jpeg", "progressive.jpg", .jpeg) { $0.skipProcessing = [.jpeg, .png] },
        // Not listed: rendered as `plain` is; the animation (into GIF) passes through
        Case("skip-gif") { $0.skipProcessing = [.gif] },
        Self.redacting("redact-blur") { $0.redact = .init() },
        Self.redacting("redact-pixelate") { $0.redact = .init(mode: .pixelate, strength: decimal("6")) },
        Self.redacting("redact-box") { $0.redact = .init(mode: .box, margin: .zero) },
        Case("everything") {
            $0.orientation = ThumbnailSpec.Orientation(degrees: 270)!
            $0.crop = .pixels(left: 10, top: 10, width: 200, height: 280)
            $0.brightness = 10
            $0.contrast = decimal("1.2")
            $0.saturation = decimal("0.8")
            $0.blur = decimal("0.8")
            $0.sharpen = decimal("0.6")
            $0.pixelate = 2
            $0.padding = .init(top: 1, right: 2, bottom: 3, left: 4)
            $0.background = RGBAColour(hex: "336699")
        },
    ]

    /// The render paths, each with its box.
    enum Path: String, CaseIterable, Sendable {
        /// 200x200 on a 320x240 source: more than half of it, so no intermediate (unless the plan needs one).
        case direct
        /// 48x48: through the 512 band's intermediate, rendered a second time from the kept one.
        case kept
        /// animated.gif (three 48x32 frames) into 32x32, every frame through the plan.
        case animated
    }

    static func spec(_ testCase: Case, _ path: Path) throws -> ThumbnailSpec {
        var operations = ThumbnailSpec.Operations()
        testCase.configure(&operations)
        switch path {
        case .direct:
            return try ThumbnailSpec(width: 200, height: 200, format: .exactly(testCase.format), operations: operations)
        case .kept:
            return try ThumbnailSpec(width: 48, height: 48, format: .exactly(testCase.format), operations: operations)
        case .animated:
            let format: ImageFormat = testCase.format == .webp ? .webp : .gif
            return try ThumbnailSpec(width: 32, height: 32, format: .exactly(format), operations: operations)
        }
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// Renders one case through one path and returns the output's hash (nil when the case does not apply there).
    static func hash(_ testCase: Case, _ path: Path) throws -> String? {
        let thumbnailer = try TestThumbnailer.make()
        let watermarks = testCase.watermark.map { [Fixtures.bytes($0)] } ?? []
        let frame = testCase.frame.map { Fixtures.bytes($0) }
        let spec = try spec(testCase, path)
        switch path {
        case .direct:
            return sha256(
                try thumbnailer.render(
                    Fixtures.bytes(testCase.fixture), spec: spec, watermarks: watermarks, frame: frame,
                    regions: regions(testCase)
                )
                .bytes)
        case .kept:
            let source = Fixtures.bytes(testCase.fixture)
            let kept = Mutex<IntermediateImage?>(nil)
            let made = Mutex(0)
            func render() throws -> RenderedThumbnail {
                try thumbnailer.render(
                    source, spec: spec, watermarks: watermarks, frame: frame, regions: regions(testCase)
                ) {
                    (band, make) throws(ThumbnailError) -> IntermediateImage in
                    if let image = kept.withLock({ $0 }), image.band == band { return image }
                    let image = try make()
                    made.withLock { $0 += 1 }
                    kept.withLock { $0 = image }
                    return image
                }
            }
            let fresh = try render()
            let again = try render()
            // The second render used the kept intermediate and gave the same bytes as the first
            #expect(made.withLock { $0 } <= 1)
            #expect(fresh.bytes == again.bytes, "\(testCase.name): kept and fresh intermediates differ")
            return sha256(again.bytes)
        case .animated:
            guard testCase.fixture == "progressive.jpg", [.png, .webp, .gif].contains(testCase.format) else {
                return nil
            }
            let rendered = try thumbnailer.render(
                Fixtures.bytes("animated.gif"), spec: spec, watermarks: watermarks, frame: frame,
                regions: regions(testCase, 48, 32))
            #expect(try DecodedImage(decoding: rendered.bytes, allFrames: true).frameCount == 3)
            return sha256(rendered.bytes)
        }
    }

    @Test(arguments: cases)
    func everyOperationRendersTheSameBytes(_ testCase: Case) throws {
        var lines: [String] = []
        for path in Path.allCases {
            guard let hash = try Self.hash(testCase, path) else { continue }
            let name = "\(testCase.name)/\(path.rawValue)"
            lines.append("        \"\(name)\": \"\(hash)\",")
            #expect(RenderGoldens.sha256[name] == hash, "\(name) renders other bytes than its golden")
        }
        if ProcessInfo.processInfo.environment["THUMBD_PRINT_GOLDENS"] == "1" {
            print(lines.joined(separator: "\n"))
        }
    }

    @Test func everyGoldenHasACase() {
        let names = Set(Self.cases.map(\.name))
        for name in RenderGoldens.sha256.keys {
            #expect(names.contains(String(name.split(separator: "/")[0])), "\(name) has no case")
        }
    }
}
