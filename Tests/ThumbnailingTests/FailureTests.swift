// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Inputs that must be refused, each with the error that says why.
@Suite struct FailureTests {
    @Test func headerOnlyBombIsRefusedBeforeDecoding() throws {
        // Given a PNG whose header claims 30000x30000 (900 MP) with a few bytes of data
        let thumbnailer = try TestThumbnailer.make()
        // Then it is refused on the header, with the claimed size (timing is measured in bench/, not here)
        #expect(throws: ThumbnailError.tooManyPixels(width: 30000, height: 30000)) {
            try thumbnailer.render(Fixtures.bytes("bomb.png"), spec: TestThumbnailer.spec(256, 256))
        }
    }

    @Test func pixelLimitIsConfigurable() throws {
        // Given a limit just below the 64x48 picture
        let thumbnailer = try TestThumbnailer.make { $0.maxSourcePixels = 64 * 48 - 1 }
        #expect(throws: ThumbnailError.tooManyPixels(width: 64, height: 48)) {
            try thumbnailer.render(Fixtures.bytes("quadrants.png"), spec: TestThumbnailer.spec(32, 32))
        }
        // And exactly at the limit it renders
        let exact = try TestThumbnailer.make { $0.maxSourcePixels = 64 * 48 }
        _ = try exact.render(Fixtures.bytes("quadrants.png"), spec: TestThumbnailer.spec(32, 32))
    }

    @Test func updatedPixelLimitAppliesToEveryCopyOfTheThumbnailer() throws {
        // Given a thumbnailer that renders the 64x48 picture, and a copy of it (as each component holds one)
        let thumbnailer = try TestThumbnailer.make()
        let copy = thumbnailer
        _ = try copy.render(Fixtures.bytes("quadrants.png"), spec: TestThumbnailer.spec(32, 32))

        // When the limit drops below the picture and the default quality changes
        var configuration = thumbnailer.configuration
        configuration.maxSourcePixels = 64 * 48 - 1
        configuration.defaultQuality = 55
        try thumbnailer.update(configuration: configuration)

        // Then the copy refuses it too, and normalises specs with the new quality
        #expect(throws: ThumbnailError.tooManyPixels(width: 64, height: 48)) {
            try copy.render(Fixtures.bytes("quadrants.png"), spec: TestThumbnailer.spec(32, 32))
        }
        #expect(try copy.normalized(TestThumbnailer.spec(32, 32)).quality == 55)

        // When an invalid configuration is given, then it is refused and the one in force stays
        configuration.defaultQuality = 0
        #expect(throws: ConfigurationError.self) { try thumbnailer.update(configuration: configuration) }
        #expect(copy.configuration.defaultQuality == 55)
    }

    @Test func truncatedJPEGFailsToDecode() throws {
        // Given a JPEG cut at 40 % of its bytes
        let thumbnailer = try TestThumbnailer.make()
        // Then it is a decode failure (fail_on=error), not half a picture
        let error = #expect(throws: ThumbnailError.self) {
            try thumbnailer.render(Fixtures.bytes("truncated.jpg"), spec: TestThumbnailer.spec(64, 64))
        }
        guard case .decodeFailed = error else {
            Issue.record("expected decodeFailed, got \(String(describing: error))")
            return
        }
    }

    @Test func decoderWarningsStillRender() throws {
        // Given a complete JPEG with junk between its first two segments (libjpeg: "Corrupt JPEG data: 3
        // extraneous bytes before marker", a warning that fail_on=warning would refuse)
        var bytes = Fixtures.bytes("progressive.jpg")
        try #require(bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF)
        let firstSegmentEnd = 4 + Int(bytes[4]) << 8 + Int(bytes[5])
        bytes.insert(contentsOf: [0x00, 0x13, 0x37], at: firstSegmentEnd)
        // Then fail_on=error lets it through, with the right picture
        let thumbnail = try TestThumbnailer.make().render(bytes, spec: TestThumbnailer.spec(64, 64))
        let image = try DecodedImage(decoding: thumbnail.bytes)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48)) == nil)
    }

    @Test(arguments: [[UInt8](), Fixtures.bytes("page.html"), Array("just text".utf8)])
    func nonImagesAreNotAnImage(_ bytes: [UInt8]) throws {
        let thumbnailer = try TestThumbnailer.make()
        #expect(throws: ThumbnailError.notAnImage) {
            try thumbnailer.render(bytes, spec: TestThumbnailer.spec(64, 64))
        }
    }

    @Test(arguments: ["image.svg", "document.pdf", "image.bmp"])
    func refusedLoadersAreUnsupported(_ fixture: String) throws {
        // Given formats libvips could read with an untrusted or disallowed loader (rsvg, poppler, ImageMagick)
        let thumbnailer = try TestThumbnailer.make()
        // Then they are refused as unsupported formats (or not recognised at all), never rendered
        let error = #expect(throws: ThumbnailError.self) {
            try thumbnailer.render(Fixtures.bytes(fixture), spec: TestThumbnailer.spec(64, 64))
        }
        switch error {
        case .unsupportedFormat, .notAnImage: break
        default: Issue.record("\(fixture): expected unsupportedFormat, got \(String(describing: error))")
        }
    }

    @Test func svgIsNamedInTheError() throws {
        let thumbnailer = try TestThumbnailer.make()
        #expect(throws: ThumbnailError.unsupportedFormat("svg")) {
            try thumbnailer.render(Fixtures.bytes("image.svg"), spec: TestThumbnailer.spec(64, 64))
        }
    }

    @Test func sourceFormatsCanBeDisabled() throws {
        // Given a configuration that accepts JPEG and PNG only
        let thumbnailer = try TestThumbnailer.make { $0.allowedSourceFormats = [.jpeg, .png] }
        // Then WebP, GIF and AVIF sources are refused by name
        for (fixture, name) in [("quadrants.webp", "webp"), ("animated.gif", "gif"), ("quadrants.avif", "avif")] {
            #expect(throws: ThumbnailError.unsupportedFormat(name)) {
                try thumbnailer.render(Fixtures.bytes(fixture), spec: TestThumbnailer.spec(16, 16))
            }
        }
        _ = try thumbnailer.render(Fixtures.bytes("quadrants.png"), spec: TestThumbnailer.spec(16, 16))
    }

    @Test func avifCanBeAllowedWithoutHEIC() throws {
        // Given AVIF allowed but not HEIF: the shared heif loader must still open AVIF
        let thumbnailer = try TestThumbnailer.make { $0.allowedSourceFormats = [.avif] }
        let thumbnail = try thumbnailer.render(Fixtures.bytes("quadrants.avif"), spec: TestThumbnailer.spec(16, 16))
        #expect(thumbnail.sourceFormat == .avif)
    }

    @Test func aFailedJobDoesNotPoisonTheNext() throws {
        // Given a failure (libvips's error buffer is process-wide)
        let thumbnailer = try TestThumbnailer.make()
        _ = try? thumbnailer.render(Fixtures.bytes("truncated.jpg"), spec: TestThumbnailer.spec(64, 64))
        // Then the next job on the same thread succeeds
        let thumbnail = try thumbnailer.render(Fixtures.bytes("quadrants.png"), spec: TestThumbnailer.spec(16, 16))
        #expect(thumbnail.width == 16)
    }
}
