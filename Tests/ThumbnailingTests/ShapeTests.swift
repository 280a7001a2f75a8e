// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Sources of extreme shapes (a one-pixel strip, a source at the pixel limit) through every render path: a side
/// that scales below one pixel is one pixel, and nothing is a `renderFailed`. The sources are flat colours encoded
/// by libvips at test time (`FlatImage`): a few hundred bytes each.
@Suite struct ShapeTests {
    /// How a strip is stored: its encoding, and an alpha band (alpha takes libvips's resize, not thumbd's own).
    enum Kind: String, CaseIterable, Sendable {
        case png, jpeg, pngAlpha

        func strip(width: Int, height: Int) throws -> [UInt8] {
            switch self {
            case .png: try FlatImage.make(width: width, height: height, as: .png)
            case .jpeg: try FlatImage.make(width: width, height: height, as: .jpeg)
            case .pngAlpha: try FlatImage.make(width: width, height: height, as: .png, alpha: true)
            }
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let tall: Bool
        let kind: Kind
        let fit: Fit
        let enlarge: Bool
        /// The square box: 200 renders through the 512 px intermediate, 1000 directly.
        let box: Int
        var testDescription: String {
            "\(tall ? "1x\(ShapeTests.length)" : "\(ShapeTests.length)x1") \(kind) \(fit) \(box)\(enlarge ? " enlarge" : "")"
        }
    }

    /// The strip's long side.
    static let length = 10_000

    static let cases: [Case] = [true, false].flatMap { tall in
        Kind.allCases.flatMap { kind in
            Fit.allCases.flatMap { fit in
                [false, true].flatMap { enlarge in
                    [200, 1000].map { Case(tall: tall, kind: kind, fit: fit, enlarge: enlarge, box: $0) }
                }
            }
        }
    }

    /// The output of a strip one pixel wide and `length` long in a `box` x `box` box, as (across, along) the strip;
    /// `nil` when the output is refused as too large (outside, enlarged: `box` x `box` times `length`).
    static func expected(
        _ fit: Fit, enlarge: Bool, box: Int, tall: Bool, length: Int = ShapeTests.length
    ) -> (across: Int, along: Int)? {
        switch fit {
        // A strip is narrower than one pixel at the box's scale: it keeps one.
        case .contain: (1, box)
        case .pad: (box, box)
        // Without enlarge nothing is enlarged: the one-pixel side stays one pixel, the long side is cropped.
        case .cover: enlarge ? (box, box) : (1, box)
        // The box is first made as small as the source allows on its short side: one pixel.
        case .fill: enlarge ? (box, box) : (1, 1)
        case .outside: enlarge ? nil : (1, length)
        // A tall strip against a square box is contain; a wide one is cover (both "landscape or square").
        case .auto: expected(tall ? .contain : .cover, enlarge: enlarge, box: box, tall: tall, length: length)
        // Without enlarge the box shrinks, keeping its (square) aspect, to fit inside the strip: one pixel.
        case .coverDown: enlarge ? (box, box) : (1, 1)
        }
    }

    @Test(arguments: cases)
    func stripsRenderInEveryFit(_ c: Case) throws {
        // Given a one-pixel strip 10,000 pixels long
        let source = try c.kind.strip(width: c.tall ? 1 : Self.length, height: c.tall ? Self.length : 1)
        let spec = try TestThumbnailer.spec(c.box, c.box, fit: c.fit, enlarge: c.enlarge)
        let expected = Self.expected(c.fit, enlarge: c.enlarge, box: c.box, tall: c.tall)
        // When it is rendered into a square box
        let thumbnailer = try TestThumbnailer.make()
        let result = Result { () throws(ThumbnailError) in try thumbnailer.render(source, spec: spec) }
        // Then it has the fit's size, each side at least one pixel; only an enlarged outside fit is refused
        guard let expected else {
            #expect(throws: ThumbnailError.canvasTooLarge) { try result.get() }
            return
        }
        let thumbnail = try result.get()
        let image = try DecodedImage(decoding: thumbnail.bytes)
        let size = c.tall ? (image.width, image.height) : (image.height, image.width)
        #expect(size == (expected.across, expected.along))
        #expect(thumbnail.width == image.width && thumbnail.height == image.height)
    }

    @Test func aCropOfAStripIsPaddedAndEnlarged() throws {
        // Given a 1 x 10000 strip, 2,000 pixels of it cropped, 5 px of padding
        let source = try FlatImage.make(width: 1, height: Self.length, as: .png)
        var operations = ThumbnailSpec.Operations()
        operations.crop = .pixels(left: 0, top: 4000, width: 1, height: 2000)
        operations.padding = .init(top: 5, right: 5, bottom: 5, left: 5)
        let thumbnailer = try TestThumbnailer.make()
        // When it is contained, then covered with enlarge, in 200 x 200
        let contained = try thumbnailer.render(
            source, spec: ThumbnailSpec(width: 200, height: 200, format: .exactly(.png), operations: operations))
        let covered = try thumbnailer.render(
            source,
            spec: ThumbnailSpec(
                width: 200, height: 200, fit: .cover, enlarge: true, format: .exactly(.png), operations: operations))
        // Then the region keeps its one pixel (contain), or fills the box (cover), inside the padding
        #expect((contained.width, contained.height) == (11, 210))
        #expect((covered.width, covered.height) == (210, 210))
    }

    @Test(arguments: [(1, 5000), (2, 5000), (5000, 2)])
    func aTrimOfAStripKeepsItsPixels(_ width: Int, _ height: Int) throws {
        // Given a strip narrower than the trim's 3 x 3 median, all one colour
        let source = try FlatImage.make(width: width, height: height, as: .png)
        var operations = ThumbnailSpec.Operations()
        operations.trim = .init(threshold: 10, colour: nil)
        // When it is trimmed and contained in 200 x 200
        let thumbnail = try TestThumbnailer.make().render(
            source, spec: ThumbnailSpec(width: 200, height: 200, format: .exactly(.png), operations: operations))
        // Then nothing is trimmed (all background keeps the picture) and the short side keeps one pixel
        let expected = width < height ? (1, 200) : (200, 1)
        #expect((thumbnail.width, thumbnail.height) == expected)
    }

    @Test func stripsAtThePixelLimitRender() throws {
        // Given a pixel limit of 100,000 and strips exactly that large
        let thumbnailer = try TestThumbnailer.make { $0.maxSourcePixels = 100_000 }
        for (width, height) in [(1, 100_000), (100_000, 1)] {
            let source = try FlatImage.make(width: width, height: height, as: .png)
            // When they are contained, covered with enlarge and filled
            let contained = try thumbnailer.render(source, spec: TestThumbnailer.spec(200, 200))
            let covered = try thumbnailer.render(
                source, spec: TestThumbnailer.spec(200, 200, fit: .cover, enlarge: true))
            let filled = try thumbnailer.render(source, spec: TestThumbnailer.spec(200, 200, fit: .fill))
            // Then each has the fit's size
            #expect((contained.width, contained.height) == (width == 1 ? (1, 200) : (200, 1)))
            #expect((covered.width, covered.height) == (200, 200))
            #expect((filled.width, filled.height) == (1, 1))
        }
        // And one pixel more is refused before anything is decoded
        let over = try FlatImage.make(width: 1, height: 100_001, as: .png)
        #expect(throws: ThumbnailError.tooManyPixels(width: 1, height: 100_001)) {
            try thumbnailer.render(over, spec: TestThumbnailer.spec(200, 200))
        }
    }

    @Test func theLongestJPEGRenders() throws {
        // Given a JPEG as long as JPEG allows (65,500 pixels), one pixel wide
        let source = try FlatImage.make(width: 1, height: 65_500, as: .jpeg)
        // When it is contained in 200 x 200, through the intermediate and directly
        let thumbnailer = try TestThumbnailer.make()
        let small = try thumbnailer.render(source, spec: TestThumbnailer.spec(200, 200, format: .exactly(.jpeg)))
        let large = try thumbnailer.render(source, spec: TestThumbnailer.spec(4096, 4096, format: .exactly(.jpeg)))
        // Then both keep the one pixel
        #expect((small.width, small.height) == (1, 200))
        #expect((large.width, large.height) == (1, 4096))
    }

    @Test(arguments: Fit.allCases)
    func animatedStripsKeepTheirFrames(_ fit: Fit) throws {
        // Given an animated GIF of three 1 x 1000 frames
        let source = try FlatImage.make(width: 1, height: 1000, as: .gif, frames: 3)
        // When it is rendered animated into 200 x 200
        let thumbnail = try TestThumbnailer.make().render(
            source, spec: TestThumbnailer.spec(200, 200, fit: fit, format: .exactly(.gif)))
        // Then every frame is there, at the fit's size
        let image = try DecodedImage(decoding: thumbnail.bytes, allFrames: true)
        let expected = try #require(Self.expected(fit, enlarge: false, box: 200, tall: true, length: 1000))
        let size = (expected.across, expected.along)
        #expect(image.frameCount == 3)
        #expect((image.width, image.pageHeight) == size)
        #expect((thumbnail.width, thumbnail.height) == size)
    }

    @Test func anEnlargedAnimatedStripFitsOrIsRefused() throws {
        // Given the same animation, enlarged: cover resizes whole frames first, up to 200 x 200,000
        let source = try FlatImage.make(width: 1, height: 1000, as: .gif, frames: 3)
        let thumbnailer = try TestThumbnailer.make()
        for fit in Fit.allCases {
            let spec = try TestThumbnailer.spec(200, 200, fit: fit, enlarge: true, format: .exactly(.gif))
            // When it is rendered, then it fits the box or is refused as too large (a 422), never a failure
            do {
                let thumbnail = try thumbnailer.render(source, spec: spec)
                #expect(thumbnail.width >= 1 && thumbnail.width <= 200, "\(fit)")
                #expect(thumbnail.height >= 1 && thumbnail.height <= 200, "\(fit)")
            } catch {
                #expect(error == .canvasTooLarge, "\(fit)")
            }
        }
    }

    @Test func anOutputLongerThanItsFormatHoldsIsRefused() throws {
        // Given a 1 x 20000 strip, which fit=outside keeps whole in any smaller box
        let source = try FlatImage.make(width: 1, height: 20_000, as: .png)
        let thumbnailer = try TestThumbnailer.make()
        // When it is asked for as PNG, and as WebP (whose sides stop at 16,383)
        let png = try thumbnailer.render(source, spec: TestThumbnailer.spec(100, 100, fit: .outside))
        let webpSpec = try TestThumbnailer.spec(100, 100, fit: .outside, format: .exactly(.webp))
        // Then the PNG is the whole strip, and the WebP is refused like a canvas above the limit (not a failure)
        #expect((png.width, png.height) == (1, 20_000))
        #expect(throws: ThumbnailError.canvasTooLarge) { try thumbnailer.render(source, spec: webpSpec) }
    }
}
