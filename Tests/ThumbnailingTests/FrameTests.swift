// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// thumbor's `frame`, by pixels: nine-patch.png (make_fixtures.py) is a 12x12 nine-patch whose inside is a 3-px
/// ring (magenta corners, cyan edges) around a transparent centre; its stretch markers cover the middle four
/// columns and rows, its content markers leave margins of 4 (left), 3 (top), 3 (right) and 4 (bottom) px.
@Suite struct FrameTests {
    static let corner = RGB(200, 40, 200)
    static let edge = RGB(40, 200, 200)
    static let white = RGB(255, 255, 255)

    static func spec(
        width: Int, height: Int, format: ImageFormat = .png, optional: Bool = false, framed: Bool = true
    ) throws -> ThumbnailSpec {
        var operations = ThumbnailSpec.Operations()
        if framed {
            operations.frame = ThumbnailSpec.Frame(
                image: .url("https://frames.example/nine-patch.png"), isOptional: optional)
        }
        // Lossless, so that WebP's chroma subsampling does not blur the 3-px ring of the animation's frames
        operations.lossless = format == .webp
        return try ThumbnailSpec(width: width, height: height, format: .exactly(format), operations: operations)
    }

    static func render(
        _ source: String = "quadrants.png", width: Int = 64, height: Int = 48, frame: [UInt8]? = nil
    ) throws -> DecodedImage {
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes(source), spec: spec(width: width, height: height),
            frame: frame ?? Fixtures.bytes("nine-patch.png"))
        return try DecodedImage(decoding: thumbnail.bytes)
    }

    @Test func thePictureGrowsByTheMarginsAndTheRingIsDrawnAroundIt() throws {
        // Given the 64x48 quadrants framed
        let image = try Self.render()
        // Then the output is 64 + 4 + 3 wide and 48 + 3 + 4 high
        #expect(image.width == 71 && image.height == 55)
        // The ring's fixed corners keep their 3 px, its edges stretch between them; where the margin is wider than
        // the ring (left, bottom) the padding shows white; the picture sits at (4, 3)
        let probes: [(x: Int, y: Int, colour: RGB)] = [
            (1, 1, Self.corner), (69, 1, Self.corner), (1, 53, Self.corner), (69, 53, Self.corner),
            (35, 1, Self.edge), (1, 27, Self.edge), (69, 27, Self.edge), (35, 53, Self.edge),
            (3, 27, Self.white), (35, 51, Self.white),
            (20, 15, Fixtures.red), (52, 15, Fixtures.green), (20, 39, Fixtures.blue), (52, 39, Fixtures.yellow),
            (4, 3, Fixtures.red), (67, 50, Fixtures.yellow),
        ]
        #expect(image.mismatch(in: probes, tolerance: 4) == nil)
        // An opaque picture stays opaque
        #expect(!image.hasAlpha)
    }

    @Test func theStretchingEdgesFollowTheOutputsSize() throws {
        // Given a 300x300 output, the corners stay 3 px and the edges run between them
        let image = try Self.render("grid.png", width: 300, height: 300)
        #expect(image.width == 307 && image.height == 307)
        #expect(
            image.mismatch(
                in: [
                    (2, 2, Self.corner), (3, 1, Self.edge), (303, 1, Self.edge), (304, 1, Self.corner),
                    (1, 3, Self.edge), (1, 303, Self.edge), (1, 304, Self.corner), (150, 305, Self.edge),
                    (150, 150, Fixtures.grid[1][1]),
                ], tolerance: 4) == nil)
    }

    @Test func aTransparentPictureKeepsItsAlphaAndTheMarginsAreOpaqueWhite() throws {
        // rgba.png: the quadrants with a transparent bottom half
        let image = try Self.render("rgba.png")
        #expect(image.width == 71 && image.height == 55 && image.hasAlpha)
        #expect(image.alpha(x: 3, y: 27) == 255 && image.colour(x: 3, y: 27).isClose(to: Self.white, tolerance: 2))
        #expect(image.alpha(x: 20, y: 15) == 255 && image.colour(x: 20, y: 15).isClose(to: Fixtures.red, tolerance: 4))
        #expect(image.alpha(x: 20, y: 45) == 0)
        #expect(image.alpha(x: 1, y: 53) == 255 && image.colour(x: 1, y: 53).isClose(to: Self.corner, tolerance: 4))
    }

    @Test func aPictureSmallerThanTheRingIsFramedWithoutAFault() throws {
        // A 3x3 output (grid.png is square): 10x10 with the frame, the stretching edges shrunk to 4 px
        let image = try Self.render("grid.png", width: 3, height: 3)
        #expect(image.width == 10 && image.height == 10)
        #expect(image.colour(x: 0, y: 0).isClose(to: Self.corner, tolerance: 4))
    }

    @Test func everyFrameOfAnAnimationIsFramed() throws {
        // animated-halves.gif: three 48x32 frames
        let animation = try TestThumbnailer.make().render(
            Fixtures.bytes("animated-halves.gif"), spec: Self.spec(width: 48, height: 32, format: .webp),
            frame: Fixtures.bytes("nine-patch.png"))
        let frames = try DecodedImage(decoding: animation.bytes, allFrames: true)
        try #require(frames.frameCount == 3)
        #expect(frames.width == 55 && frames.pageHeight == 39)
        for frame in 0..<3 {
            #expect(frames.colour(frame: frame, x: 1, y: 1).isClose(to: Self.corner, tolerance: 8), "frame \(frame)")
            #expect(frames.colour(frame: frame, x: 27, y: 37).isClose(to: Self.edge, tolerance: 8), "frame \(frame)")
            // The right half of every frame is yellow
            #expect(frames.colour(frame: frame, x: 45, y: 18).isClose(to: Fixtures.yellow, tolerance: 24))
        }
    }

    @Test(arguments: [
        ("no markers", Fixtures.bytes("rgba.png")),
        ("not an image", Array("not an image at all".utf8)),
        ("too large", Fixtures.bytes("bomb.png")),
        ("damaged", Array(Fixtures.bytes("nine-patch.png").prefix(60))),
    ])
    func anUnusableNinePatchIsRefused(_ name: String, _ bytes: [UInt8]) throws {
        #expect(throws: ThumbnailError.frameUnusable, "\(name)") {
            try TestThumbnailer.make().render(
                Fixtures.bytes("quadrants.png"), spec: Self.spec(width: 64, height: 48), frame: bytes)
        }
    }

    /// `frame_optional`: the same unusable images leave the frame out, the render otherwise the plan without it.
    @Test(arguments: [
        ("no markers", Fixtures.bytes("rgba.png")),
        ("not an image", Array("not an image at all".utf8)),
        ("too large", Fixtures.bytes("bomb.png")),
        ("damaged", Array(Fixtures.bytes("nine-patch.png").prefix(60))),
    ])
    func anOptionalUnusableNinePatchIsLeftOut(_ name: String, _ bytes: [UInt8]) throws {
        let thumbnailer = try TestThumbnailer.make()
        let skipped = try thumbnailer.render(
            Fixtures.bytes("quadrants.png"), spec: Self.spec(width: 64, height: 48, optional: true), frame: bytes)
        let unframed = try thumbnailer.render(
            Fixtures.bytes("quadrants.png"), spec: Self.spec(width: 64, height: 48, framed: false))
        #expect(skipped.isFrameSkipped, "\(name)")
        #expect(!unframed.isFrameSkipped)
        #expect(skipped.width == 64 && skipped.height == 48, "\(name)")
        #expect(try DecodedImage(decoding: skipped.bytes).pixels == DecodedImage(decoding: unframed.bytes).pixels)
    }

    @Test func anOptionalNinePatchIsStillDrawnAndAnAnimationSkipsItOnEveryFrame() throws {
        let thumbnailer = try TestThumbnailer.make()
        // A usable nine-patch: drawn, nothing skipped
        let drawn = try thumbnailer.render(
            Fixtures.bytes("quadrants.png"), spec: Self.spec(width: 64, height: 48, optional: true),
            frame: Fixtures.bytes("nine-patch.png"))
        #expect(!drawn.isFrameSkipped && drawn.width == 71 && drawn.height == 55)
        // An animation with an unusable one: every frame unframed, the same as without the frame
        let skipped = try thumbnailer.render(
            Fixtures.bytes("animated-halves.gif"),
            spec: Self.spec(width: 48, height: 32, format: .webp, optional: true),
            frame: Fixtures.bytes("rgba.png"))
        let unframed = try thumbnailer.render(
            Fixtures.bytes("animated-halves.gif"), spec: Self.spec(width: 48, height: 32, format: .webp, framed: false))
        #expect(skipped.isFrameSkipped)
        let frames = try DecodedImage(decoding: skipped.bytes, allFrames: true)
        #expect(frames.frameCount == 3 && frames.width == 48 && frames.pageHeight == 32)
        #expect(skipped.bytes == unframed.bytes)
    }

    @Test func aPlanWithAFrameNeedsItsImage() throws {
        #expect(throws: ThumbnailError.frameUnusable) {
            try TestThumbnailer.make().render(Fixtures.bytes("quadrants.png"), spec: Self.spec(width: 64, height: 48))
        }
    }
}
