// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// `raw` and `skip` (jobs/pass_through.c): the source's own bytes once its header has passed the checks every source
/// passes, and a render for everything else.
@Suite struct PassThroughTests {
    /// Each format thumbd reads, and the upright size the header gives.
    static let sources: [(fixture: String, format: ImageFormat, width: Int, height: Int)] = [
        ("quadrants.png", .png, 64, 48), ("quadrants.webp", .webp, 64, 48), ("quadrants.tiff", .tiff, 64, 48),
        ("quadrants.avif", .avif, 64, 48), ("progressive.jpg", .jpeg, 320, 240), ("animated.gif", .gif, 48, 32),
        ("orientation-6.jpg", .jpeg, 64, 48),
    ]

    @Test(arguments: sources)
    func rawIsTheSourcesBytesInTheFormatFound(
        _ source: (fixture: String, format: ImageFormat, width: Int, height: Int)
    ) throws {
        let bytes = Fixtures.bytes(source.fixture)
        let thumbnail = try TestThumbnailer.make().render(bytes, spec: .raw)
        #expect(thumbnail.bytes == bytes && thumbnail.isSourceBytes)
        #expect(thumbnail.format == source.format && thumbnail.sourceFormat == source.format)
        #expect(thumbnail.width == source.width && thumbnail.height == source.height)
    }

    @Test func skipPassesAListedFormatAndRendersTheRest() throws {
        let thumbnailer = try TestThumbnailer.make()
        let png = Fixtures.bytes("quadrants.png")
        var operations = ThumbnailSpec.Operations()
        operations.skipProcessing = [.png, .gif]
        let listed = try ThumbnailSpec(width: 16, height: 16, operations: operations)
        let passed = try thumbnailer.render(png, spec: listed)
        #expect(passed.bytes == png && passed.isSourceBytes && passed.format == .png)
        // Not listed: rendered into the box, not marked
        let rendered = try thumbnailer.render(Fixtures.bytes("quadrants.webp"), spec: listed)
        #expect(!rendered.isSourceBytes && rendered.width == 16 && rendered.height == 12)
        // Another format named: normalisation drops the listed formats, so the picture renders
        let webp = try ThumbnailSpec(width: 16, height: 16, format: .exactly(.webp), operations: operations)
        let normalized = thumbnailer.normalized(webp)
        #expect(normalized.operations.skipProcessing.isEmpty)
        let converted = try thumbnailer.render(png, spec: normalized)
        #expect(!converted.isSourceBytes && converted.format == .webp && converted.width == 16)
    }

    @Test func rawRefusesWhatARenderRefuses() throws {
        let thumbnailer = try TestThumbnailer.make()
        #expect(throws: ThumbnailError.notAnImage) { try thumbnailer.render(Fixtures.bytes("page.html"), spec: .raw) }
        #expect(throws: ThumbnailError.unsupportedFormat("svg")) {
            try thumbnailer.render(Fixtures.bytes("image.svg"), spec: .raw)
        }
        #expect(throws: ThumbnailError.tooManyPixels(width: 30000, height: 30000)) {
            try thumbnailer.render(Fixtures.bytes("bomb.png"), spec: .raw)
        }
        #expect(throws: ThumbnailError.tooManyFrames) {
            try thumbnailer.render(Fixtures.bytes("frame-bomb.gif"), spec: .raw)
        }
        // Without TIFF among the allowed sources, a TIFF is refused raw as it is rendered
        let noTIFF = try TestThumbnailer.make { $0.allowedSourceFormats.remove(.tiff) }
        #expect(throws: ThumbnailError.unsupportedFormat("tiff")) {
            try noTIFF.render(Fixtures.bytes("quadrants.tiff"), spec: .raw)
        }
        // Two frames allowed: the three-frame GIF is refused raw, as its animation would be
        let twoFrames = try TestThumbnailer.make { $0.maxFrames = 2 }
        #expect(throws: ThumbnailError.tooManyFrames) {
            try twoFrames.render(Fixtures.bytes("animated.gif"), spec: .raw)
        }
    }
}
