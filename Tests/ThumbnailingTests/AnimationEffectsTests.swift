// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Every operation on an animation, frame by frame: each frame of the animated output must be what the same plan
/// makes of that frame as a still picture. animated-halves.gif has three 48x32 frames, the left half red, green
/// or blue and the right half yellow (an edge for blur, sharpen and pixelate to show on); halves-frameN.gif is frame
/// N alone. The animation is written as lossless WebP so that no palette stands between the two renders.
@Suite struct AnimationEffectsTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let width: Int
        let height: Int
        let fit: Fit
        let gravity: Gravity
        let watermark: String?
        /// Faces for a plan that needs them, in the 48x32 frames' pixels.
        var faces: [DetectedRegions.Box]?
        let configure: @Sendable (inout ThumbnailSpec.Operations) -> Void
        var testDescription: String { name }

        init(
            _ name: String, box: (Int, Int) = (48, 48), fit: Fit = .contain, gravity: Gravity = .centre,
            watermark: String? = nil, _ configure: @escaping @Sendable (inout ThumbnailSpec.Operations) -> Void
        ) {
            self.name = name
            (width, height) = box
            self.fit = fit
            self.gravity = gravity
            self.watermark = watermark
            self.configure = configure
        }
    }

    static func decimal(_ text: String) -> FixedDecimal { FixedDecimal(parsing: text)! }

    /// A case with a face on the line between the halves.
    static func redacting(
        _ name: String, box: (Int, Int) = (48, 48), fit: Fit = .contain,
        _ configure: @escaping @Sendable (inout ThumbnailSpec.Operations) -> Void
    ) -> Case {
        var testCase = Case(name, box: box, fit: fit, gravity: .centre, watermark: nil, configure)
        testCase.faces = [.init(x: 16, y: 8, width: 16, height: 16)]
        return testCase
    }

    /// The case's faces in the frames (48x32), or nil.
    static func regions(_ testCase: Case) -> DetectedRegions? {
        testCase.faces.map { DetectedRegions(sourceWidth: 48, sourceHeight: 32, faces: $0, features: []) }
    }

    /// Every step that can run on an animation (trim cannot: see `trimIsRefusedOnAnAnimation`).
    static let cases: [Case] = [
        Case("resize", box: (24, 24)) { _ in },
        Case("auto-orient-off") { $0.autoOrient = false },
        Case("rotate") { $0.orientation = ThumbnailSpec.Orientation(degrees: 90)! },
        Case("rotate-mirror") { $0.orientation = ThumbnailSpec.Orientation(degrees: 90, mirrored: true)! },
        Case("crop-pixels") { $0.crop = .pixels(left: 10, top: 4, width: 30, height: 20) },
        Case("crop-fractions") {
            $0.crop = .fractions(left: decimal("0.25"), top: decimal("0"), width: decimal("0.5"), height: decimal("1"))
        },
        Case("crop-placed") {
            $0.crop = .placed(
                width: .pixels(30), height: .fraction(decimal("0.5")), gravity: .compass(.east, x: .pixels(2), y: .zero)
            )
        },
        Case("cover-west", box: (30, 32), fit: .cover, gravity: .west) { _ in },
        Case("cover-west-offset", box: (30, 32), fit: .cover, gravity: .west) {
            $0.gravityOffset = ThumbnailSpec.CropOffset(x: .pixels(6), y: .zero)
        },
        Case("adaptive", box: (20, 40), fit: .cover) { $0.adaptive = true },
        Case("fill", box: (40, 40), fit: .fill) { _ in },
        Case("pad", box: (48, 48), fit: .pad) { $0.background = RGBAColour(hex: "00ffff") },
        Case("pad-auto", box: (48, 48), fit: .pad) { $0.backgroundFill = .auto },
        Case("pad-blur", box: (48, 48), fit: .pad) { $0.backgroundFill = .blur },
        Case("minimum-width", box: (24, 24)) { $0.minimumWidth = 40 },
        Case("extend-aspect", box: (48, 96)) {
            $0.extend = .aspect
            $0.background = RGBAColour(hex: "ff00ff")
        },
        Case("brightness") { $0.brightness = -50 },
        Case("contrast") { $0.contrast = decimal("1.8") },
        Case("saturation") { $0.saturation = decimal("0.2") },
        Case("greyscale") { $0.greyscale = true },
        Case("blur") { $0.blur = decimal("3") },
        Case("sharpen") { $0.sharpen = decimal("2") },
        Case("pixelate") { $0.pixelate = 5 },
        Self.redacting("redact-blur") { $0.redact = .init() },
        Self.redacting("redact-pixelate") { $0.redact = .init(mode: .pixelate, strength: decimal("5")) },
        Self.redacting("redact-box") { $0.redact = .init(mode: .box, margin: .zero) },
        Self.redacting("redact-cover", box: (24, 24), fit: .cover) { $0.redact = .init(mode: .pixelate) },
        Case("rgb") { $0.channelShift = ThumbnailSpec.ChannelShift(red: 40, green: -60, blue: 10) },
        Case("colorize") {
            $0.colorize = ThumbnailSpec.Colorize(red: 50, green: 0, blue: 100, colour: RGBAColour(hex: "0000ff")!)
        },
        Case("curve") {
            typealias Point = ThumbnailSpec.Curve.Point
            $0.curve = ThumbnailSpec.Curve(
                all: [Point(0, 0), Point(64, 90), Point(255, 255)], red: [Point(0, 255), Point(255, 0)],
                green: [Point(0, 0), Point(255, 255)], blue: [Point(0, 40), Point(200, 180), Point(255, 255)])
        },
        Case("equalize") { $0.equalize = true },
        Case("convolution") {
            $0.convolution = ThumbnailSpec.Convolution(
                values: [1, 2, 1, 2, 4, 2, 1, 2, 1].map { FixedDecimal(units: $0 * FixedDecimal.unitsPerOne) },
                columns: 3)
        },
        Case("noise") { $0.noise = ThumbnailSpec.Noise(amount: 30, seed: 7) },
        Case("round-corner") {
            $0.roundCorner = ThumbnailSpec.RoundCorner(horizontal: 10, vertical: 6, colour: RGBAColour(hex: "00ffff")!)
        },
        Case("padding") {
            $0.padding = .init(top: 2, right: 4, bottom: 6, left: 8)
            $0.background = RGBAColour(hex: "ff00ff")
        },
        Case("background") { $0.background = RGBAColour(hex: "102030") },
        Case("watermark", watermark: "quadrants.png") {
            var mark = ThumbnailSpec.Watermark(image: .named("quadrants", digest: 1))
            mark.position = .gravity(.northWest)
            mark.scale = decimal("0.5")
            mark.opacity = decimal("0.7")
            $0.watermarks = [mark]
        },
        Case("watermark-tile", watermark: "quadrants.png") {
            var mark = ThumbnailSpec.Watermark(image: .named("quadrants", digest: 1))
            mark.position = .tile
            mark.scale = decimal("0.25")
            mark.opacity = decimal("0.5")
            $0.watermarks = [mark]
        },
        Case("metadata") {
            $0.keepCopyright = true
            $0.keepColourProfile = true
        },
    ]

    static func spec(_ testCase: Case, format: ImageFormat) throws -> ThumbnailSpec {
        var operations = ThumbnailSpec.Operations()
        testCase.configure(&operations)
        operations.lossless = true
        return try ThumbnailSpec(
            width: testCase.width, height: testCase.height, fit: testCase.fit, gravity: testCase.gravity,
            format: .exactly(format), operations: operations)
    }

    @Test(arguments: cases)
    func eachFrameIsWhatTheStillPlanMakesOfIt(_ testCase: Case) throws {
        let thumbnailer = try TestThumbnailer.make()
        let watermarks = testCase.watermark.map { [Fixtures.bytes($0)] } ?? []
        // When the animation goes through the plan
        let animation = try thumbnailer.render(
            Fixtures.bytes("animated-halves.gif"), spec: Self.spec(testCase, format: .webp), watermarks: watermarks,
            regions: Self.regions(testCase))
        let frames = try DecodedImage(decoding: animation.bytes, allFrames: true)
        try #require(frames.frameCount == 3)
        for frame in 0..<3 {
            // Then each frame equals the still render of that frame alone, pixel for pixel (within rounding)
            let still = try DecodedImage(
                decoding: thumbnailer.render(
                    Fixtures.bytes("halves-frame\(frame).gif"), spec: Self.spec(testCase, format: .png),
                    watermarks: watermarks, regions: Self.regions(testCase)
                ).bytes)
            #expect(frames.width == still.width && frames.pageHeight == still.height, "frame \(frame)")
            guard frames.width == still.width && frames.pageHeight == still.height else { continue }
            var worst = (difference: 0, x: 0, y: 0)
            for y in 0..<still.height {
                for x in 0..<still.width {
                    let a = frames.colour(frame: frame, x: x, y: y)
                    let b = still.colour(x: x, y: y)
                    let difference = max(
                        abs(Int(a.red) - Int(b.red)), abs(Int(a.green) - Int(b.green)), abs(Int(a.blue) - Int(b.blue)))
                    if difference > worst.difference { worst = (difference, x, y) }
                }
            }
            // A resize goes through libvips's thumbnail on the animation and through the intermediate on a still
            // (two resamplers): a few levels apart on the edge. Without a resize, the steps alone must agree.
            let tolerance = ["resize", "minimum-width", "redact-cover"].contains(testCase.name) ? 12 : 3
            #expect(
                worst.difference <= tolerance,
                "frame \(frame) differs by \(worst.difference) at (\(worst.x), \(worst.y))")
        }
    }

    /// The operations change the frames: a render with the step is not the plain one (so the comparison above
    /// compares something), checked on the second and third frames.
    @Test(arguments: cases.filter { !["resize", "auto-orient-off", "metadata", "background"].contains($0.name) })
    func theStepChangesEveryFrame(_ testCase: Case) throws {
        let thumbnailer = try TestThumbnailer.make()
        let watermarks = testCase.watermark.map { [Fixtures.bytes($0)] } ?? []
        let source = Fixtures.bytes("animated-halves.gif")
        let plain = Case(testCase.name, box: (48, 48)) { _ in }
        let with = try DecodedImage(
            decoding: thumbnailer.render(
                source, spec: Self.spec(testCase, format: .webp), watermarks: watermarks,
                regions: Self.regions(testCase)
            ).bytes,
            allFrames: true)
        let without = try DecodedImage(
            decoding: thumbnailer.render(source, spec: Self.spec(plain, format: .webp)).bytes, allFrames: true)
        for frame in 1..<3 {
            var changed = with.width != without.width || with.pageHeight != without.pageHeight
            if !changed {
                for y in 0..<with.pageHeight where !changed {
                    for x in 0..<with.width
                    where with.colour(frame: frame, x: x, y: y)
                        != without.colour(
                            frame: frame, x: x, y: y)
                    {
                        changed = true
                        break
                    }
                }
            }
            #expect(changed, "frame \(frame) is unchanged by \(testCase.name)")
        }
    }

    @Test func trimIsFoundOnTheFirstFrameAndCutsEveryFrame() throws {
        // Given frames whose left half changes colour (red, green, blue) beside a yellow right half, trimmed
        // against the top-right corner's yellow
        var operations = ThumbnailSpec.Operations()
        operations.trim = ThumbnailSpec.Trim(threshold: 10, colour: nil, corner: .topRight)
        let spec = try ThumbnailSpec(width: 48, height: 48, format: .exactly(.webp), operations: operations)

        // When it is rendered
        let animation = try TestThumbnailer.make().render(Fixtures.bytes("animated-halves.gif"), spec: spec)

        // Then the first frame's box (the left half, 24x32) is cut from all three frames, as thumbor trims
        let frames = try DecodedImage(decoding: animation.bytes, allFrames: true)
        try #require(frames.frameCount == 3)
        #expect(frames.width == 24 && frames.pageHeight == 32)
        let colours = [RGB(230, 30, 30), RGB(30, 200, 60), RGB(40, 60, 220)]
        for frame in 0..<3 {
            let colour = frames.colour(frame: frame, x: 12, y: 16)
            #expect(colour.isClose(to: colours[frame], tolerance: 16), "frame \(frame): \(colour)")
            #expect(frames.colour(frame: frame, x: 22, y: 2).isClose(to: colours[frame], tolerance: 16))
        }
    }
}
