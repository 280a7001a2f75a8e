// SPDX-License-Identifier: Apache-2.0
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Small boxes render through an intermediate: which boxes do, that the output does not depend on whether
/// the intermediate was kept, that it still looks right (orientation, colour, alpha, animation), and that
/// failures are the same as a direct render's.
@Suite struct IntermediateTests {
    /// Bands small enough that the 64x48 fixtures use them, with a margin of 2: a box of at most 32x24 goes
    /// through band 64.
    static func smallBands() throws -> Thumbnailer {
        try TestThumbnailer.make {
            $0.intermediateBands = [64, 512]
            $0.intermediateMargin = 2
        }
    }

    /// Renders with a provider that records the bands asked for and keeps the intermediate it made (for one
    /// source only: it does not look at the source when it hands the kept one back).
    final class Recorder: Sendable {
        let bands = Mutex<[Int]>([])
        let kept = Mutex<IntermediateImage?>(nil)

        func render(_ thumbnailer: Thumbnailer, _ source: [UInt8], _ spec: ThumbnailSpec) throws -> RenderedThumbnail {
            try thumbnailer.render(source, spec: spec) { (band, make) throws(ThumbnailError) -> IntermediateImage in
                bands.withLock { $0.append(band) }
                if let kept = kept.withLock({ $0 }), kept.band == band { return kept }
                let made = try make()
                kept.withLock { $0 = made }
                return made
            }
        }
    }

    @Test func smallBoxesUseTheSmallestBandThatHoldsTwiceTheBox() throws {
        let thumbnailer = try Self.smallBands()
        let recorder = Recorder()
        let source = Fixtures.bytes("progressive.jpg")  // 320x240
        // 32x24 is at most half of band 64's 64x48: band 64
        _ = try recorder.render(thumbnailer, source, TestThumbnailer.spec(32, 32))
        // 100x75 needs more than band 64 but fits half of band 512 (which holds the whole 320x240)
        _ = try recorder.render(thumbnailer, source, TestThumbnailer.spec(100, 100))
        // 200x150 is more than half of the source itself: no band, the source is resized directly
        _ = try recorder.render(thumbnailer, source, TestThumbnailer.spec(200, 200))
        // Cover of a wide box: the scale is set by the height, 120/240, exactly half of band 512
        _ = try recorder.render(thumbnailer, source, TestThumbnailer.spec(160, 120, fit: .cover))
        // Upscaling never goes through an intermediate
        _ = try recorder.render(thumbnailer, source, TestThumbnailer.spec(640, 640, enlarge: true))
        #expect(recorder.bands.withLock { $0 } == [64, 512, 512])
        // With the default margin of 1, a box as large as the intermediate uses it; upscaling still does not
        let defaults = Recorder()
        _ = try defaults.render(TestThumbnailer.make(), source, TestThumbnailer.spec(200, 200))
        _ = try defaults.render(TestThumbnailer.make(), source, TestThumbnailer.spec(640, 640, enlarge: true))
        #expect(defaults.bands.withLock { $0 } == [512])
    }

    @Test func keptAndFreshIntermediatesGiveTheSameBytes() throws {
        let thumbnailer = try TestThumbnailer.make()
        let source = Fixtures.bytes("progressive.jpg")  // 320x240
        let recorder = Recorder()
        for spec in try [
            TestThumbnailer.spec(64, 64, format: .exactly(.jpeg)),
            TestThumbnailer.spec(100, 60, fit: .cover, gravity: .east, format: .exactly(.webp)),
            TestThumbnailer.spec(50, 50, fit: .fill, format: .exactly(.png)),
            TestThumbnailer.spec(nil, 40, format: .auto(accepting: [])),
        ] {
            // Rendered once with the kept intermediate of an earlier box, once on its own
            let kept = try recorder.render(thumbnailer, source, spec)
            let fresh = try thumbnailer.render(source, spec: spec)
            #expect(kept.bytes == fresh.bytes)
            #expect(kept.width == fresh.width && kept.height == fresh.height)
        }
        #expect(recorder.bands.withLock { $0.count } == 4)
        #expect(recorder.kept.withLock { $0 } != nil)
    }

    @Test(arguments: 1...8)
    func orientationIsAppliedThroughTheIntermediate(_ orientation: Int) throws {
        let recorder = Recorder()
        let thumbnail = try recorder.render(
            Self.smallBands(), Fixtures.orientation(orientation), TestThumbnailer.spec(32, 32))
        let image = try DecodedImage(decoding: thumbnail.bytes)
        #expect(recorder.bands.withLock { $0 } == [64])
        #expect(thumbnail.width == 32 && thumbnail.height == 24)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24)) == nil)
        #expect(!image.hasOrientationTag && !image.hasEXIF)
    }

    @Test(arguments: ["cmyk.jpg", "display-p3.png", "rgb16.png", "quadrants.webp", "quadrants.tiff", "metadata.jpg"])
    func coloursSurviveTheIntermediate(_ fixture: String) throws {
        let thumbnailer = try Self.smallBands()
        let recorder = Recorder()
        let thumbnail = try recorder.render(thumbnailer, Fixtures.bytes(fixture), TestThumbnailer.spec(32, 32))
        let direct = try TestThumbnailer.make { $0.intermediateBands = [] }
            .render(Fixtures.bytes(fixture), spec: TestThumbnailer.spec(32, 32))
        #expect(recorder.bands.withLock { $0 } == [64])
        let image = try DecodedImage(decoding: thumbnail.bytes)
        let reference = try DecodedImage(decoding: direct.bytes)
        #expect(image.bands == 3 && !image.hasICCProfile)
        #expect(image.width == reference.width && image.height == reference.height)
        // Same picture as the direct render, on average within 4 levels (the quadrant edges differ most:
        // libwebp's own scaled decode, used by the direct render of a WebP, filters differently; 3.0 here)
        #expect(Self.meanAbsoluteDifference(image, reference) < 4)
        let probes = Fixtures.quadrantProbes(width: 32, height: 24).map {
            (x: $0.x, y: $0.y, colour: reference.colour(x: $0.x, y: $0.y))
        }
        #expect(image.mismatch(in: probes, tolerance: 8) == nil)
    }

    /// thumbd's own Lanczos-3 (resample/lanczos3.c) makes the 512 px intermediate of a large picture and the box
    /// from it: flat areas keep their exact colour (the weights sum to one), and the whole picture stays
    /// within a level or two of libvips's direct render, for colour and grey, from PNG and from JPEG (whose
    /// intermediate is decoded at 1/2 by libjpeg, then resampled).
    @Test(arguments: [("grid.png", ImageFormat.png), ("grey.png", .png), ("grid.png", .jpeg), ("grey.png", .jpeg)])
    func thumbdsResampleMatchesADirectRender(_ fixture: String, _ sourceFormat: ImageFormat) throws {
        // A 1500 px source, so the intermediate is resampled from it and the 160 px box again from that.
        let large = try TestThumbnailer.make().render(
            Fixtures.bytes(fixture),
            spec: TestThumbnailer.spec(1500, 1500, quality: 95, enlarge: true, format: .exactly(sourceFormat)))
        let recorder = Recorder()
        let thumbnail = try recorder.render(TestThumbnailer.make(), large.bytes, TestThumbnailer.spec(160, 160))
        let direct = try TestThumbnailer.make { $0.intermediateBands = [] }
            .render(large.bytes, spec: TestThumbnailer.spec(160, 160))
        #expect(recorder.bands.withLock { $0 } == [512])
        let image = try DecodedImage(decoding: thumbnail.bytes)
        let reference = try DecodedImage(decoding: direct.bytes)
        #expect(image.width == reference.width && image.height == reference.height)
        #expect(image.bands == reference.bands)
        #expect(Self.meanAbsoluteDifference(image, reference) < 1.5)
        // Away from the edges between areas (the corner cells of the grid, the halves of the grey), the colour
        // is the source's: exactly from PNG, within JPEG's own error from JPEG.
        let tolerance = sourceFormat == .png ? 0 : 3
        let source = try DecodedImage(decoding: Fixtures.bytes(fixture))
        for (u, v) in [(1, 1), (5, 1), (1, 5), (5, 5)] {
            let (x, y) = (u * image.width / 6, v * image.height / 6)
            let original = source.colour(x: u * source.width / 6, y: v * source.height / 6)
            #expect(image.colour(x: x, y: y).isClose(to: original, tolerance: tolerance), "at \(x), \(y)")
        }
    }

    @Test func alphaAndAnimationSurviveTheIntermediate() throws {
        let thumbnailer = try Self.smallBands()
        let recorder = Recorder()
        // Top opaque, bottom transparent: PNG under auto, with the transparency kept
        let rgba = try recorder.render(
            thumbnailer, Fixtures.bytes("rgba.png"), TestThumbnailer.spec(32, 32, format: .auto(accepting: [])))
        #expect(rgba.format == .png)
        let image = try DecodedImage(decoding: rgba.bytes)
        #expect(image.bands == 4 && image.alpha(x: 8, y: 4) == 255 && image.alpha(x: 8, y: 20) == 0)
        // First frame (red) of an animation (a recorder of its own: a Recorder keeps one source's intermediate)
        let animation = Recorder()
        let gif = try animation.render(thumbnailer, Fixtures.bytes("animated.gif"), TestThumbnailer.spec(24, 24))
        let frame = try DecodedImage(decoding: gif.bytes)
        #expect(frame.width == 24 && frame.height == 16 && frame.pageCount == 1)
        #expect(frame.colour(x: frame.width / 2, y: frame.height / 2).isClose(to: Fixtures.red))
        #expect(recorder.bands.withLock { $0 } == [64] && animation.bands.withLock { $0 } == [64])
    }

    @Test func failuresAreThoseOfADirectRender() throws {
        let thumbnailer = try TestThumbnailer.make()
        let recorder = Recorder()
        // A truncated 256x256 JPEG fails while its intermediate is decoded: decodeFailed, as before
        #expect {
            try recorder.render(thumbnailer, Fixtures.bytes("truncated.jpg"), TestThumbnailer.spec(64, 64))
        } throws: { error in
            guard case ThumbnailError.decodeFailed = error else { return false }
            return true
        }
        #expect(recorder.bands.withLock { $0 } == [512])
        // A header bomb is refused before any intermediate is asked for
        #expect {
            try recorder.render(thumbnailer, Fixtures.bytes("bomb.png"), TestThumbnailer.spec(64, 64))
        } throws: { error in
            guard case ThumbnailError.tooManyPixels = error else { return false }
            return true
        }
        #expect(recorder.bands.withLock { $0 } == [512])
    }

    /// Mean of |a - b| over every sample of two images of the same size.
    static func meanAbsoluteDifference(_ a: DecodedImage, _ b: DecodedImage) -> Double {
        guard a.pixels.count == b.pixels.count, !a.pixels.isEmpty else { return .infinity }
        let total = zip(a.pixels, b.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
        return Double(total) / Double(a.pixels.count)
    }
}
