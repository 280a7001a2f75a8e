// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// `min_w`/`min_h` (imgproxy's `mw`/`mh`) and `extend` (imgproxy's `ex`/`exar` without `el`) on quadrants.png:
/// 64x48, red, green, blue and yellow quarters.
@Suite struct MinimumSidesAndExtendTests {
    static func render(
        width: Int?, height: Int?, fit: Fit = .contain, gravity: Gravity = .centre,
        _ configure: (inout ThumbnailSpec.Operations) -> Void
    ) throws -> DecodedImage {
        var operations = ThumbnailSpec.Operations()
        configure(&operations)
        let spec = try ThumbnailSpec(
            width: width, height: height, fit: fit, gravity: gravity, format: .exactly(.png), operations: operations)
        return try DecodedImage(
            decoding: TestThumbnailer.make().render(Fixtures.bytes("quadrants.png"), spec: spec).bytes)
    }

    static func quadrants(_ width: Int, _ height: Int, top: Int = 0, left: Int = 0) -> [(x: Int, y: Int, colour: RGB)] {
        [
            (left + width / 4, top + height / 4, Fixtures.red),
            (left + width * 3 / 4, top + height / 4, Fixtures.green),
            (left + width / 4, top + height * 3 / 4, Fixtures.blue),
            (left + width * 3 / 4, top + height * 3 / 4, Fixtures.yellow),
        ]
    }

    @Test(
        arguments: [
            // (box, fit, min width, min height, expected size)
            (32, 32, Fit.contain, 100, 0, 100, 75),  // 32x24, raised to 100 wide without enlarge
            (32, 32, Fit.contain, 0, 60, 80, 60),
            (32, 32, Fit.contain, 40, 60, 80, 60),  // the larger raise wins
            (32, 32, Fit.contain, 20, 0, 32, 24),  // already wide enough: nothing
            (32, 32, Fit.cover, 0, 60, 32, 32),  // cover raised to 80x60, then cut to the box
            (40, 20, Fit.fill, 80, 0, 80, 40),  // fill's both sides follow the raise
            (32, 32, Fit.pad, 48, 0, 48, 36),  // pad's canvas is at least the picture
        ] as [(Int, Int, Fit, Int, Int, Int, Int)])
    func theScaleIsRaisedToTheMinimum(
        _ boxWidth: Int, _ boxHeight: Int, _ fit: Fit, _ minimumWidth: Int, _ minimumHeight: Int, _ width: Int,
        _ height: Int
    ) throws {
        let image = try Self.render(width: boxWidth, height: boxHeight, fit: fit) {
            $0.minimumWidth = minimumWidth
            $0.minimumHeight = minimumHeight
        }
        #expect(image.width == width && image.height == height, "\(image.width)x\(image.height)")
        #expect(image.mismatch(in: Self.quadrants(image.width, image.height), tolerance: 16) == nil)
    }

    @Test func extendBoxPadsTheGivenSidesAroundTheUnenlargedPicture() throws {
        // A one-sided 100 px high box: the picture stays 64x48, the height is extended, the width stays
        let oneSide = try Self.render(width: nil, height: 100, gravity: .south) {
            $0.extend = .box(width: false, height: true)
            $0.background = RGBAColour(hex: "ff00ff")
        }
        #expect(oneSide.width == 64 && oneSide.height == 100)
        #expect(oneSide.mismatch(in: Self.quadrants(64, 48, top: 52), tolerance: 4) == nil)
        #expect(oneSide.colour(x: 2, y: 2) == RGB(255, 0, 255))
        // A cover of 100x60, not enlarged: 64x48 (the picture), the canvas extended to the box, centred
        let cover = try Self.render(width: 100, height: 60, fit: .cover) {
            $0.extend = .box(width: true, height: true)
            $0.background = RGBAColour(hex: "000000")
        }
        #expect(cover.width == 100 && cover.height == 60)
        #expect(cover.mismatch(in: Self.quadrants(64, 48, top: 6, left: 18), tolerance: 4) == nil)
        #expect(cover.colour(x: 2, y: 30) == RGB(0, 0, 0) && cover.colour(x: 97, y: 30) == RGB(0, 0, 0))
    }

    @Test(
        arguments: [
            // (box, expected canvas): the picture is 64x48 (contain, never enlarged)
            (400, 400, 64, 64), (400, 100, 192, 48), (150, 300, 64, 128), (128, 96, 64, 48),
        ] as [(Int, Int, Int, Int)])
    func extendAspectGrowsTheCanvasToTheBoxsAspect(_ boxWidth: Int, _ boxHeight: Int, _ width: Int, _ height: Int)
        throws
    {
        let image = try Self.render(width: boxWidth, height: boxHeight) { $0.extend = .aspect }
        #expect(image.width == width && image.height == height, "\(image.width)x\(image.height)")
        let top = (height - 48) / 2, left = (width - 64) / 2
        #expect(image.mismatch(in: Self.quadrants(64, 48, top: top, left: left), tolerance: 4) == nil)
        if height > 48 { #expect(image.alpha(x: 0, y: 0) == 0, "the added canvas is transparent") }
    }

    /// `crop_gravity=attention` (imgproxy's `c:W:H:sm`): interest.png is grey with a red and yellow checkerboard at
    /// x < 100, 100 ≤ y < 200, where libvips's attention finds (75, 187) (`vips smartcrop … --attention-x`): the
    /// 100x100 crop is centred there as vips_smartcrop centres its own, (25, 137) to (125, 237), whichever path
    /// renders it; a centred crop would be grey only.
    @Test(arguments: [100, 40])
    func anAttentionCropIsPlacedOnTheSourcesPixels(_ side: Int) throws {
        var operations = ThumbnailSpec.Operations()
        operations.crop = .placed(
            width: .pixels(100), height: .pixels(100), gravity: .compass(.attention, x: .zero, y: .zero))
        let spec = try ThumbnailSpec(width: side, height: side, format: .exactly(.png), operations: operations)
        let image = try DecodedImage(
            decoding: TestThumbnailer.make().render(Fixtures.bytes("interest.png"), spec: spec).bytes)
        #expect(image.width == side && image.height == side)
        let k = Double(side) / 100
        func at(_ x: Double, _ y: Double) -> RGB { image.colour(x: Int(x * k), y: Int(y * k)) }
        // Source (35, 147) and (60, 190) are in the patch; (35, 230) and (110, 150) are grey
        #expect(at(10, 10).distance(to: Fixtures.interestBackground) > 60, "\(at(10, 10))")
        #expect(at(35, 50).distance(to: Fixtures.interestBackground) > 60, "\(at(35, 50))")
        #expect(at(10, 90).distance(to: Fixtures.interestBackground) < 10, "\(at(10, 90))")
        #expect(at(85, 10).distance(to: Fixtures.interestBackground) < 10, "\(at(85, 10))")
    }

    /// A minimum side on a thin picture asks for more than any box: refused before anything is decoded, whichever
    /// path (a 2x2000 picture raised to 4096 px wide would be 4096x4096000).
    @Test(arguments: [10, 40])
    func aMinimumBeyondThePixelLimitIsRefused(_ side: Int) throws {
        let source = try FlatImage.make(width: 2, height: 2000, as: .png)
        var operations = ThumbnailSpec.Operations()
        operations.minimumWidth = 4096
        let spec = try ThumbnailSpec(width: side, height: side, format: .exactly(.png), operations: operations)
        #expect(throws: ThumbnailError.canvasTooLarge) { try TestThumbnailer.make().render(source, spec: spec) }
    }
}
