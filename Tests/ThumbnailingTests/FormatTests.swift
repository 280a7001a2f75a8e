// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Output formats, `auto` negotiation and quality.
@Suite struct FormatTests {
    @Test(arguments: [ImageFormat.jpeg, .png, .webp, .avif])
    func everyOutputFormatDecodesToThePicture(_ format: ImageFormat) throws {
        let thumbnailer = try TestThumbnailer.make()
        try #require(format != .avif || thumbnailer.vips.canSaveAVIF, "this libvips cannot write AVIF")
        // Given the quadrant picture and an explicit output format
        let spec = try TestThumbnailer.spec(32, 32, format: .exactly(format))
        // When rendered
        let (thumbnail, image) = try TestThumbnailer.render("quadrants.png", spec, with: thumbnailer)
        // Then the bytes are that format, at the right size, with the right colours
        #expect(thumbnail.format == format)
        #expect(ImageFormat(detecting: thumbnail.bytes) == format)
        #expect(image.width == 32 && image.height == 24)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24), tolerance: 30) == nil)
    }

    @Test func autoWithoutOptionalFormatsGivesJPEGForOpaqueSources() throws {
        let (thumbnail, _) = try TestThumbnailer.render(
            "quadrants.png",
            TestThumbnailer.spec(32, 32, format: .auto(accepting: []))
        )
        #expect(thumbnail.format == .jpeg)
    }

    @Test(arguments: ["rgba.png", "grey-alpha.png"])
    func autoGivesPNGForTransparentThumbnails(_ fixture: String) throws {
        // Given a source with transparent pixels and a client that accepts neither WebP nor AVIF
        let spec = try TestThumbnailer.spec(32, 32, format: .auto(accepting: []))
        // When rendered
        let (thumbnail, image) = try TestThumbnailer.render(fixture, spec)
        // Then the output is a PNG that keeps the alpha
        #expect(thumbnail.format == .png)
        #expect(image.hasAlpha)
        #expect(image.alpha(x: 4, y: 4) == 255)
        #expect(image.alpha(x: 28, y: 20) == 0)
    }

    @Test func autoGivesJPEGForAnAlphaChannelThatIsFullyOpaque() throws {
        // Given an animated GIF (libvips always loads GIF as RGBA) whose first frame is opaque, as a still
        let (thumbnail, _) = try TestThumbnailer.render(
            "animated.gif",
            TestThumbnailer.spec(32, 32, format: .auto(accepting: []), animated: false)
        )
        // Then alpha that hides nothing does not force PNG
        #expect(thumbnail.format == .jpeg)
    }

    @Test func autoPrefersWebPWhenAccepted() throws {
        let thumbnailer = try TestThumbnailer.make()
        for fixture in ["quadrants.png", "rgba.png"] {
            let (thumbnail, image) = try TestThumbnailer.render(
                fixture,
                TestThumbnailer.spec(32, 32, format: .auto(accepting: [.webp])),
                with: thumbnailer
            )
            #expect(thumbnail.format == .webp, "\(fixture)")
            #expect(image.hasAlpha == (fixture == "rgba.png"), "\(fixture)")
        }
    }

    @Test func autoPrefersAVIFWhenAcceptedAndWritable() throws {
        let thumbnailer = try TestThumbnailer.make()
        let spec = try TestThumbnailer.spec(32, 32, format: .auto(accepting: [.webp, .avif]))
        let (thumbnail, _) = try TestThumbnailer.render("quadrants.png", spec, with: thumbnailer)
        #expect(thumbnail.format == (thumbnailer.vips.canSaveAVIF ? .avif : .webp))
    }

    @Test func autoFollowsTheConfiguredOrderAndKeysOnlyWhatItChose() throws {
        // Given the default order (AVIF, JPEG XL, WebP) and one that prefers JPEG XL and leaves WebP out
        let standard = try TestThumbnailer.make()
        try #require(standard.vips.canSaveAVIF && standard.vips.canSaveJXL, "this libvips cannot write AVIF and JXL")
        let jxlFirst = try TestThumbnailer.make { $0.autoFormats = [.jxl, .avif] }
        let all: AcceptedFormats = [.avif, .jxl, .webp]
        // Then a client that accepts all three gets AVIF, then JPEG XL; without AVIF, JPEG XL
        #expect(try standard.outputFormats(for: .auto(accepting: all)).opaque == .avif)
        #expect(try jxlFirst.outputFormats(for: .auto(accepting: all)).opaque == .jxl)
        #expect(try standard.outputFormats(for: .auto(accepting: [.jxl, .webp])).opaque == .jxl)
        #expect(try jxlFirst.outputFormats(for: .auto(accepting: [.webp])).opaque == .jpeg)
        // And the normalised spec keeps the chosen still format, and WebP for animations only when listed
        let spec = try TestThumbnailer.spec(32, 32, format: .auto(accepting: all))
        #expect(standard.normalized(spec).format == .auto(accepting: [.avif, .webp]))
        #expect(jxlFirst.normalized(spec).format == .auto(accepting: [.jxl]))
        #expect(jxlFirst.animatedFormat(for: .auto(accepting: all)) == .gif)
        #expect(standard.animatedFormat(for: .auto(accepting: all)) == .webp)
    }

    @Test func heicIsWrittenOnlyWhenAllowedAndNeverNegotiated() throws {
        let standard = try TestThumbnailer.make()
        try #require(standard.vips.canSaveHEIC, "this libvips cannot write HEIC")
        // Given the default configuration, then HEIC by name is unavailable
        #expect(throws: ThumbnailError.outputFormatUnavailable(.heif)) {
            try standard.outputFormats(for: .exactly(.heif))
        }
        // Given HEIC allowed, then a render is an HEVC HEIF of the box's size
        let heic = try TestThumbnailer.make { $0.allowedOutputFormats.insert(.heif) }
        let (thumbnail, image) = try TestThumbnailer.render(
            "quadrants.png", try TestThumbnailer.spec(64, 64, format: .exactly(.heif)), with: heic)
        #expect(thumbnail.format == .heif)
        #expect(image.width == 64 && image.height == 48)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 32) == nil)
        #expect(EncoderTests.contains(thumbnail.bytes, "ftypheic"))
    }

    @Test func autoSkipsFormatsTheConfigurationDisallows() throws {
        // Given a configuration without AVIF and WebP
        let thumbnailer = try TestThumbnailer.make { $0.allowedOutputFormats = [.jpeg, .png] }
        // When a client accepts both
        let formats = try thumbnailer.outputFormats(for: .auto(accepting: [.webp, .avif]))
        // Then negotiation falls back to JPEG / PNG
        #expect(formats.opaque == .jpeg && formats.transparent == .png)
        #expect(throws: ThumbnailError.outputFormatUnavailable(.webp)) {
            try thumbnailer.outputFormats(for: .exactly(.webp))
        }
    }

    @Test func explicitJPEGFlattensTransparencyOntoWhite() throws {
        // Given an RGBA source whose bottom half is transparent
        let (_, image) = try TestThumbnailer.render("rgba.png", TestThumbnailer.spec(64, 48, format: .exactly(.jpeg)))
        // Then the top stays coloured and the transparent half becomes white
        #expect(!image.hasAlpha)
        #expect(image.mismatch(in: [(16, 12, Fixtures.red), (16, 36, RGB(255, 255, 255))]) == nil)
    }

    @Test(arguments: [ImageFormat.jpeg, .webp, .avif])
    func qualityChangesTheSize(_ format: ImageFormat) throws {
        let thumbnailer = try TestThumbnailer.make()
        try #require(format != .avif || thumbnailer.vips.canSaveAVIF, "this libvips cannot write AVIF")
        // Given a source with fine detail (a checkerboard patch), rendered at two qualities
        let source = Fixtures.bytes("interest.png")
        let low = try thumbnailer.render(
            source,
            spec: TestThumbnailer.spec(150, 150, quality: 20, format: .exactly(format))
        )
        let high = try thumbnailer.render(
            source,
            spec: TestThumbnailer.spec(150, 150, quality: 95, format: .exactly(format))
        )
        // Then the higher quality costs more bytes
        #expect(high.bytes.count > low.bytes.count)
    }

    @Test func progressiveJPEGIsOffByDefaultAndConfigurable() throws {
        let spec = try TestThumbnailer.spec(64, 64, format: .exactly(.jpeg))
        let (_, baseline) = try TestThumbnailer.render("progressive.jpg", spec)
        let progressive = try TestThumbnailer.make { $0.jpegProgressive = true }
        let (_, interlaced) = try TestThumbnailer.render("progressive.jpg", spec, with: progressive)
        #expect(!baseline.isInterlaced)
        #expect(interlaced.isInterlaced)
    }

    @Test func sourceFormatsAreReported() throws {
        let thumbnailer = try TestThumbnailer.make()
        let expected: [String: ImageFormat] = [
            "quadrants.png": .png, "metadata.jpg": .jpeg, "quadrants.webp": .webp, "animated.gif": .gif,
            "quadrants.tiff": .tiff, "quadrants.avif": .avif,
        ]
        for (fixture, format) in expected {
            let thumbnail = try thumbnailer.render(Fixtures.bytes(fixture), spec: TestThumbnailer.spec(16, 16))
            #expect(thumbnail.sourceFormat == format, "\(fixture)")
            #expect(ImageFormat(detecting: Fixtures.bytes(fixture)) == format, "\(fixture)")
        }
    }

    @Test func mimeTypesRoundTrip() {
        for format in ImageFormat.allCases {
            #expect(ImageFormat(mimeType: format.mimeType) == format)
        }
        #expect(ImageFormat(mimeType: " IMAGE/WebP ; q=0.8") == .webp)
        #expect(ImageFormat(mimeType: "image/svg+xml") == nil)
        #expect(ImageFormat(detecting: Fixtures.bytes("page.html")) == nil)
    }
}
