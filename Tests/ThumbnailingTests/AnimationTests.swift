// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Animated GIF and WebP in, animated out: frames, their order, delays and loop count kept; each frame through the
/// plan's steps; the limits checked before anything is decoded. animated.gif / animated.webp: three 48x32 frames,
/// red, green, blue. animated-delays.gif: the same frames shown 50, 120 and 200 ms. frame-bomb.gif: 5,000
/// one-pixel frames on a 2000x2000 screen.
@Suite struct AnimationTests {
    static func spec(
        _ width: Int, _ height: Int, format: FormatRequest,
        _ configure: (inout ThumbnailSpec.Operations) -> Void = { _ in }
    ) throws -> ThumbnailSpec {
        var operations = ThumbnailSpec.Operations()
        configure(&operations)
        return try ThumbnailSpec(width: width, height: height, format: format, operations: operations)
    }

    @Test(arguments: [
        ("animated.gif", FormatRequest.auto(accepting: []), ImageFormat.gif),
        ("animated.gif", .auto(accepting: [.webp, .avif]), .webp),
        ("animated.webp", .exactly(.gif), .gif),
        ("animated.webp", .exactly(.webp), .webp),
    ])
    func animationInIsAnimationOut(_ fixture: String, _ format: FormatRequest, _ expected: ImageFormat) throws {
        // When an animation is rendered into a 24x24 box
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes(fixture), spec: try Self.spec(24, 24, format: format))
        // Then every frame is there, resized, in order
        #expect(thumbnail.format == expected)
        let image = try DecodedImage(decoding: thumbnail.bytes, allFrames: true)
        #expect(image.frameCount == 3)
        #expect(image.width == 24 && image.pageHeight == 16)
        #expect(thumbnail.width == 24 && thumbnail.height == 16)
        for (frame, colour) in Fixtures.animationFrames.enumerated() {
            #expect(image.colour(frame: frame, x: 12, y: 8).isClose(to: colour), "frame \(frame)")
        }
    }

    @Test(arguments: [ImageFormat.gif, .webp])
    func delaysAndLoopCountAreKept(_ format: ImageFormat) throws {
        let source = try DecodedImage(decoding: Fixtures.bytes("animated-delays.gif"), allFrames: true)
        #expect(source.delays == [50, 120, 200])
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes("animated-delays.gif"), spec: try Self.spec(24, 24, format: .exactly(format)))
        let image = try DecodedImage(decoding: thumbnail.bytes, allFrames: true)
        #expect(image.frameCount == 3)
        #expect(image.delays == [50, 120, 200])
        #expect(image.loop == source.loop)
    }

    @Test func eachFrameGoesThroughThePlan() throws {
        // Given a 90° turn, a crop of the top half of the turned frame, and a 2 px magenta padding
        let spec = try Self.spec(32, 32, format: .exactly(.gif)) {
            $0.orientation = ThumbnailSpec.Orientation(degrees: 90)!
            $0.crop = .pixels(left: 0, top: 0, width: 32, height: 24)
            $0.padding = .init(top: 2, right: 2, bottom: 2, left: 2)
            $0.background = RGBAColour(hex: "ff00ff")
        }
        let thumbnail = try TestThumbnailer.make().render(Fixtures.bytes("animated.gif"), spec: spec)
        let image = try DecodedImage(decoding: thumbnail.bytes, allFrames: true)
        // Then each frame is the 32x24 region (a turned 48x32 frame is 32x48) plus padding, in its own colour
        #expect(image.frameCount == 3)
        #expect(image.width == 36 && image.pageHeight == 28)
        for (frame, colour) in Fixtures.animationFrames.enumerated() {
            #expect(image.colour(frame: frame, x: 18, y: 14).isClose(to: colour), "frame \(frame)")
            #expect(image.colour(frame: frame, x: 0, y: 0).isClose(to: RGB(255, 0, 255)), "frame \(frame)")
        }
    }

    @Test func animatedOffAndStillFormatsGiveTheFirstFrame() throws {
        let thumbnailer = try TestThumbnailer.make()
        let still = try thumbnailer.render(
            Fixtures.bytes("animated.gif"), spec: try Self.spec(24, 24, format: .exactly(.gif)) { $0.animated = false })
        #expect(try DecodedImage(decoding: still.bytes, allFrames: true).frameCount == 1)
        let jpeg = try thumbnailer.render(
            Fixtures.bytes("animated.gif"), spec: try Self.spec(24, 24, format: .exactly(.jpeg)))
        let image = try DecodedImage(decoding: jpeg.bytes)
        #expect(image.pageCount == 1 && image.colour(x: 12, y: 8).isClose(to: Fixtures.red))
    }

    @Test func theFrameBombIsRefusedQuicklyWithoutDecoding() throws {
        // Given 5,000 frames on a 2000x2000 screen (libvips counts 4,097: it stops reading there)
        let thumbnailer = try TestThumbnailer.make()
        let bomb = Fixtures.bytes("frame-bomb.gif")
        let before = ResidentMemory.bytes()
        let started = ContinuousClock.now
        // When it is asked animated, then as above the frame limit but under the pixel limit
        #expect(throws: ThumbnailError.tooManyFrames) {
            try thumbnailer.render(bomb, spec: try Self.spec(200, 200, format: .auto(accepting: [.webp])))
        }
        let generous = try TestThumbnailer.make { $0.maxFrames = 10_000 }
        #expect(throws: ThumbnailError.tooManyPixels(width: 2000, height: 2000)) {
            try generous.render(bomb, spec: try Self.spec(200, 200, format: .exactly(.gif)))
        }
        // Then both refusals come in well under 5 s, and nothing like 4,097 frames was decoded
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(ResidentMemory.bytes() - before < 64 << 20)
    }

    @Test func framesTimesPixelsCountAgainstThePixelLimit() throws {
        // Three 48x32 frames are 4,608 pixels; a limit of two frames' worth refuses the animation, not the still
        let thumbnailer = try TestThumbnailer.make { $0.maxSourcePixels = 48 * 32 * 2 }
        #expect(throws: ThumbnailError.tooManyPixels(width: 48, height: 32)) {
            try thumbnailer.render(Fixtures.bytes("animated.gif"), spec: try Self.spec(24, 24, format: .exactly(.gif)))
        }
        let still = try thumbnailer.render(
            Fixtures.bytes("animated.gif"), spec: try Self.spec(24, 24, format: .exactly(.gif)) { $0.animated = false })
        #expect(still.width == 24)
    }

    @Test func trimOfAnAnimationWithNothingToTrimKeepsEveryFrame() throws {
        // Each frame one colour: the first frame is all background, so nothing is trimmed
        let spec = try Self.spec(24, 24, format: .exactly(.gif)) { $0.trim = .init(threshold: 10, colour: nil) }
        let animation = try TestThumbnailer.make().render(Fixtures.bytes("animated.gif"), spec: spec)
        let frames = try DecodedImage(decoding: animation.bytes, allFrames: true)
        #expect(frames.frameCount == 3 && frames.width == 24 && frames.pageHeight == 16)
    }
}

/// The process's resident set, from /proc/self/statm.
enum ResidentMemory {
    static func bytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * 4096 : 0
    }
}
