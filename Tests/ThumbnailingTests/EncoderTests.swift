// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Encoder options and kept metadata, by what the output bytes say.
@Suite struct EncoderTests {
    static func render(
        _ fixture: String, _ width: Int, _ format: ImageFormat, quality: Int? = nil, bands: [Int] = [512],
        _ configure: (inout ThumbnailSpec.Operations) -> Void
    ) throws -> RenderedThumbnail {
        var operations = ThumbnailSpec.Operations()
        configure(&operations)
        let spec = try ThumbnailSpec(
            width: width, height: nil, quality: quality, format: .exactly(format), operations: operations)
        return try TestThumbnailer.make { $0.intermediateBands = bands }.render(Fixtures.bytes(fixture), spec: spec)
    }

    /// The horizontal and vertical sampling factors of a JPEG's first component (from its SOF marker).
    static func lumaSampling(_ jpeg: [UInt8]) -> UInt8? {
        var index = 2
        while index + 4 < jpeg.count, jpeg[index] == 0xFF {
            let marker = jpeg[index + 1]
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker == 0xC0 || marker == 0xC2 { return jpeg[index + 11] }
            index += 2 + length
        }
        return nil
    }

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        return bytes.indices.contains { start in
            start + needle.count <= bytes.count && Array(bytes[start..<start + needle.count]) == needle
        }
    }

    @Test func progressiveJPEGAndInterlacedPNG() throws {
        for format in [ImageFormat.jpeg, .png] {
            let plain = try Self.render("progressive.jpg", 160, format) { $0.progressive = false }
            let interlaced = try Self.render("progressive.jpg", 160, format) { $0.progressive = true }
            #expect(try !DecodedImage(decoding: plain.bytes).isInterlaced)
            #expect(try DecodedImage(decoding: interlaced.bytes).isInterlaced)
        }
    }

    @Test func chromaSubsampling() throws {
        // Luma sampled 2x2 against chroma at 4:2:0, 1x1 at 4:4:4
        let subsampled = try Self.render("progressive.jpg", 160, .jpeg, quality: 95) { $0.chroma = .subsampled }
        let full = try Self.render("progressive.jpg", 160, .jpeg, quality: 75) { $0.chroma = .full }
        #expect(Self.lumaSampling(subsampled.bytes) == 0x22)
        #expect(Self.lumaSampling(full.bytes) == 0x11)
        // Unset: libvips's rule, kept by thumbd's own JPEG writer: subsampled below quality 90, full from 90.
        let low = try Self.render("progressive.jpg", 160, .jpeg, quality: 89) { _ in }
        let high = try Self.render("progressive.jpg", 160, .jpeg, quality: 90) { _ in }
        #expect(Self.lumaSampling(low.bytes) == 0x22)
        #expect(Self.lumaSampling(high.bytes) == 0x11)
    }

    /// Thumbnails with nothing to keep are written by libjpeg or libwebp directly (encode/encode.c); with
    /// metadata kept, by libvips. Both give the same picture at the same quality.
    @Test func jxlEffortAndLosslessChangeTheEncoding() throws {
        guard try TestThumbnailer.make().vips.canSaveJXL else { return }
        let fast = try Self.render("progressive.jpg", 160, .jxl) { $0.jxlEffort = 3 }
        let slow = try Self.render("progressive.jpg", 160, .jxl) { $0.jxlEffort = 9 }
        let standard = try Self.render("progressive.jpg", 160, .jxl) { _ in }
        let lossless = try Self.render("progressive.jpg", 160, .jxl) { $0.lossless = true }
        #expect(fast.bytes != slow.bytes)
        #expect(standard.format == .jxl && standard.bytes.starts(with: [0xFF, 0x0A]))
        #expect(lossless.bytes != standard.bytes && lossless.bytes.starts(with: [0xFF, 0x0A]))
    }

    @Test(arguments: [ImageFormat.jpeg, .webp])
    func thumbdsWritersAndLibvipssAgree(_ format: ImageFormat) throws {
        let direct = try Self.render("copyright.jpg", 48, format, quality: 85) { _ in }
        let kept = try Self.render("copyright.jpg", 48, format, quality: 85) { $0.keepCopyright = true }
        let a = try DecodedImage(decoding: direct.bytes)
        let b = try DecodedImage(decoding: kept.bytes)
        #expect(!a.hasEXIF && b.hasEXIF)
        #expect(a.width == b.width && a.height == b.height && a.bands == b.bands)
        #expect(a.pixels == b.pixels)
        if format == .jpeg { #expect(Self.lumaSampling(direct.bytes) == Self.lumaSampling(kept.bytes)) }
    }

    @Test func losslessWebPKeepsEveryPixel() throws {
        let source = try DecodedImage(decoding: Fixtures.bytes("quadrants.png"))
        let lossless = try DecodedImage(
            decoding: try Self.render("quadrants.png", 64, .webp) { $0.lossless = true }.bytes)
        let lossy = try DecodedImage(decoding: try Self.render("quadrants.png", 64, .webp, quality: 30) { _ in }.bytes)
        #expect(lossless.pixels == source.pixels)
        #expect(lossy.pixels != source.pixels)
    }

    @Test func avifEffortChangesTheEncoding() throws {
        guard try TestThumbnailer.make().vips.canSaveAVIF else { return }
        let fast = try Self.render("progressive.jpg", 160, .avif) { $0.avifEffort = 0 }
        let slow = try Self.render("progressive.jpg", 160, .avif) { $0.avifEffort = 6 }
        #expect(fast.bytes != slow.bytes)
    }

    @Test(arguments: [ImageFormat.jpeg, .webp])
    func maxBytesLowersTheQualityUntilTheBodyFits(_ format: ImageFormat) throws {
        // Given a thumbnail that is larger than 6 KB at quality 95
        let unbounded = try Self.render("interest.png", 300, format, quality: 95) { _ in }
        #expect(unbounded.bytes.count > 6_000)
        #expect(unbounded.quality == nil)
        // When it may be at most 6 KB
        let bounded = try Self.render("interest.png", 300, format, quality: 95) { $0.maxBytes = 6_000 }
        // Then it fits, at a lower quality that the result reports
        #expect(bounded.bytes.count <= 6_000)
        let quality = try #require(bounded.quality)
        #expect((10..<95).contains(quality))
        // And when nothing fits, the floor's encode is sent, and says so
        let floor = try Self.render("interest.png", 300, format, quality: 95) { $0.maxBytes = 1024 }
        #expect(floor.quality == ThumbnailSpec.Operations.maxBytesQualityFloor)
        #expect(floor.bytes.count < bounded.bytes.count)
    }

    @Test(arguments: [ImageFormat.jpeg, .webp, .avif])
    func keepCopyrightKeepsCopyrightAndArtistOnly(_ format: ImageFormat) throws {
        let canSaveAVIF = try TestThumbnailer.make().vips.canSaveAVIF
        guard format != .avif || canSaveAVIF else { return }
        for bands in [[512], []] {  // through an intermediate, and direct
            let width = 32
            let kept = try Self.render("copyright.jpg", width, format, bands: bands) { $0.keepCopyright = true }
            #expect(Self.contains(kept.bytes, "(c) Example Photos"), "\(format) \(bands)")
            #expect(Self.contains(kept.bytes, "Ada Example"), "\(format) \(bands)")
            #expect(!Self.contains(kept.bytes, "fixture"), "the camera model goes: \(format) \(width)")
            let stripped = try Self.render("copyright.jpg", width, format, bands: bands) { _ in }
            #expect(!Self.contains(stripped.bytes, "Ada Example"))
            #expect(try !DecodedImage(decoding: stripped.bytes).hasEXIF)
        }
    }

    @Test func iccKeepKeepsTheProfileAndItsNumbers() throws {
        for (width, crop) in [(32, false), (32, true)] {  // direct, and through an intermediate of its own (a crop)
            let converted = try DecodedImage(
                decoding: try Self.render("display-p3.png", width, .png) {
                    if crop { $0.crop = .pixels(left: 0, top: 0, width: 64, height: 47) }
                }.bytes)
            let kept = try DecodedImage(
                decoding: try Self.render("display-p3.png", width, .png) {
                    $0.keepColourProfile = true
                    if crop { $0.crop = .pixels(left: 0, top: 0, width: 64, height: 47) }
                }.bytes)
            let x = converted.width / 4, y = converted.height / 4
            #expect(!converted.hasICCProfile && converted.colour(x: x, y: y).isClose(to: Fixtures.red))
            #expect(kept.hasICCProfile, "\(width)")
            // The kept pixels are the P3 numbers: red is less saturated in P3 terms than in sRGB
            #expect(!kept.colour(x: x, y: y).isClose(to: Fixtures.red, tolerance: 8), "\(width)")
        }
    }
}
