// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// What the pixels and metadata look like: orientation, colour management, bit depth, grey, animation, strip.
@Suite struct PictureTests {
    @Test(arguments: 1...8)
    func exifOrientationIsApplied(_ orientation: Int) throws {
        // Given the quadrant picture stored transformed, with EXIF orientation N
        let spec = try TestThumbnailer.spec(64, 64)
        // When rendered
        let (thumbnail, image) = try TestThumbnailer.render("orientation-\(orientation).jpg", spec)
        // Then it comes out upright: landscape, red top-left, green top-right, blue bottom-left
        #expect(thumbnail.width == 64 && thumbnail.height == 48)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48)) == nil)
        // And no orientation tag survives to rotate it a second time in a viewer
        #expect(!image.hasOrientationTag)
        #expect(!image.hasEXIF)
    }

    @Test(arguments: [ImageFormat.jpeg, .png, .webp, .avif])
    func metadataIsStripped(_ format: ImageFormat) throws {
        let canSaveAVIF = try TestThumbnailer.make().vips.canSaveAVIF
        try #require(format != .avif || canSaveAVIF, "this libvips cannot write AVIF")
        // Given a JPEG with EXIF (camera, GPS), XMP and an ICC profile
        let source = try DecodedImage(decoding: Fixtures.bytes("metadata.jpg"))
        #expect(source.hasEXIF && source.hasXMP && source.hasICCProfile)
        // When rendered
        let (_, image) = try TestThumbnailer.render(
            "metadata.jpg",
            TestThumbnailer.spec(32, 32, format: .exactly(format))
        )
        // Then none of it is in the output
        #expect(!image.hasEXIF)
        #expect(!image.hasXMP)
        #expect(!image.hasICCProfile)
        #expect(!image.hasOrientationTag)
    }

    @Test func cmykJPEGComesOutAsSRGB() throws {
        // Given a CMYK JPEG (no embedded profile: libvips's CMYK fallback applies)
        let (thumbnail, image) = try TestThumbnailer.render(
            "cmyk.jpg",
            TestThumbnailer.spec(64, 64, format: .exactly(.png))
        )
        // Then the output is 3-band sRGB with the source's colours (a CMYK file read as RGB, or with its
        // channels inverted, would be off by far more than the tolerance)
        #expect(thumbnail.width == 64 && thumbnail.height == 48)
        #expect(image.bands == 3)
        let probes = zip(Fixtures.quadrantProbes(width: 64, height: 48), Fixtures.cmykQuadrants).map {
            (x: $0.x, y: $0.y, colour: $1)
        }
        #expect(image.mismatch(in: probes, tolerance: 16) == nil)
    }

    @Test func iccProfileIsConvertedToSRGB() throws {
        // Given a PNG whose numbers are Display P3 (tagged with the P3 profile): red is stored as ~(211, 55, 44)
        let (_, image) = try TestThumbnailer.render(
            "display-p3.png",
            TestThumbnailer.spec(64, 64, format: .exactly(.png))
        )
        // Then the output numbers are sRGB again, and carry no profile
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 6) == nil)
        #expect(!image.hasICCProfile)
    }

    @Test(arguments: [ImageFormat.png, .jpeg])
    func sixteenBitBecomesEightBit(_ format: ImageFormat) throws {
        // Given a 16-bit RGB PNG
        let (_, image) = try TestThumbnailer.render("rgb16.png", TestThumbnailer.spec(64, 64, format: .exactly(format)))
        // Then the output holds the same colours in 8 bits (the test decoder would show 16-bit as wrong values)
        #expect(image.bands == 3)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 8) == nil)
    }

    @Test func sixteenBitPNGStaysEightBitInPNG() throws {
        // Given a 16-bit PNG rendered as PNG, whose encoder could keep 16 bits
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes("rgb16.png"),
            spec: TestThumbnailer.spec(64, 64)
        )
        // Then the PNG header's bit depth (byte 24) is 8
        #expect(thumbnail.bytes[24] == 8)
    }

    @Test func greyStaysGrey() throws {
        let (_, image) = try TestThumbnailer.render("grey.png", TestThumbnailer.spec(32, 32, format: .exactly(.jpeg)))
        #expect(image.bands == 1)
        #expect(
            image.colour(x: 4, y: 12).isClose(
                to: RGB(Fixtures.greyDark, Fixtures.greyDark, Fixtures.greyDark),
                tolerance: 6
            )
        )
        #expect(
            image.colour(x: 28, y: 12).isClose(
                to: RGB(Fixtures.greyLight, Fixtures.greyLight, Fixtures.greyLight),
                tolerance: 6
            )
        )
    }

    @Test func greyAlphaBecomesPNGWithAlphaUnderAuto() throws {
        // Given grey + alpha with a transparent right half
        let (thumbnail, image) = try TestThumbnailer.render(
            "grey-alpha.png",
            TestThumbnailer.spec(32, 32, format: .auto(accepting: []))
        )
        // Then auto picks PNG, and grey and alpha are both kept
        #expect(thumbnail.format == .png)
        #expect(image.bands == 2)
        #expect(
            image.colour(x: 4, y: 12).isClose(
                to: RGB(Fixtures.greyDark, Fixtures.greyDark, Fixtures.greyDark),
                tolerance: 6
            )
        )
        #expect(image.alpha(x: 28, y: 12) == 0)
    }

    @Test(arguments: ["animated.gif", "animated.webp"])
    func animatedSourcesGiveTheirFirstFrameWhenAnimationIsOff(_ fixture: String) throws {
        // Given a three-frame animation (red, green, blue), 48x32 per frame
        let source = try DecodedImage(decoding: Fixtures.bytes(fixture))
        #expect(source.pageCount == 3)
        // When rendered to a format that could hold an animation, with animated=0 (AnimationTests: the default)
        let (thumbnail, image) = try TestThumbnailer.render(
            fixture,
            TestThumbnailer.spec(48, 48, format: .exactly(.webp), animated: false)
        )
        // Then the output is one frame, the first one, at the size of one frame
        #expect(thumbnail.width == 48 && thumbnail.height == 32)
        #expect(image.pageCount == 1)
        #expect(image.colour(x: 24, y: 16).isClose(to: Fixtures.red))
    }

    @Test(arguments: ["quadrants.webp", "quadrants.tiff", "quadrants.avif", "progressive.jpg"])
    func otherSourceFormatsRender(_ fixture: String) throws {
        let (_, image) = try TestThumbnailer.render(fixture, TestThumbnailer.spec(32, 32))
        #expect(image.width == 32 && image.height == 24)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24), tolerance: 30) == nil)
    }

    @Test func probeReadsTheHeaderOnly() throws {
        let thumbnailer = try TestThumbnailer.make()
        // Given a rotated JPEG, an animation and a header-only bomb
        let rotated = try thumbnailer.probe(Fixtures.orientation(6))
        let animated = try thumbnailer.probe(Fixtures.bytes("animated.gif"))
        let bomb = try thumbnailer.probe(Fixtures.bytes("bomb.png"))
        // Then the upright size, page count and alpha come from the header
        #expect(rotated.format == .jpeg && rotated.width == 64 && rotated.height == 48 && rotated.orientation == 6)
        #expect(animated.format == .gif && animated.pageCount == 3 && animated.hasAlpha)
        #expect(bomb.width == 30000 && bomb.pixelCount == 900_000_000)
    }
}
