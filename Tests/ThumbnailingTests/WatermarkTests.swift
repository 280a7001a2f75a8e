// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// A watermark over the output, by pixels: grid.png (300x300, 3x3 cells; the bottom-right cell is grey 128) under
/// quadrants.png (64x48: red, green / blue, yellow) as the mark.
@Suite struct WatermarkTests {
    static func spec(_ configure: (inout ThumbnailSpec.Watermark) -> Void) throws -> ThumbnailSpec {
        var watermark = ThumbnailSpec.Watermark(image: .named("quadrants", digest: 1))
        configure(&watermark)
        var operations = ThumbnailSpec.Operations()
        operations.watermarks = [watermark]
        return try ThumbnailSpec(width: 300, height: 300, format: .exactly(.png), operations: operations)
    }

    static func render(_ spec: ThumbnailSpec, mark: String = "quadrants.png") throws -> DecodedImage {
        try render(spec, markBytes: Fixtures.bytes(mark))
    }

    static func render(_ spec: ThumbnailSpec, markBytes: [UInt8]) throws -> DecodedImage {
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes("grid.png"), spec: spec, watermarks: [markBytes])
        return try DecodedImage(decoding: thumbnail.bytes)
    }

    static let grey = Fixtures.grid[2][2]

    @Test func theMarkSitsInItsCornerInsideTheOffsets() throws {
        // Given the mark at the south-east corner, 10 px in from both edges
        let image = try Self.render(
            try Self.spec {
                $0.offsetX = 10; $0.offsetY = 10
            })
        // Then its top-left (red) quadrant starts at (226, 242), its bottom-right (yellow) ends at (289, 289),
        // and the 10 px margin still shows the grid
        #expect(
            image.mismatch(
                in: [
                    (x: 226 + 16, y: 242 + 12, colour: Fixtures.red),
                    (x: 226 + 48, y: 242 + 36, colour: Fixtures.yellow),
                    (x: 295, y: 295, colour: Self.grey), (x: 220, y: 250, colour: Self.grey),
                ], tolerance: 8) == nil)
        #expect(!image.hasAlpha)
    }

    @Test func severalMarksAreLaidInOrder() throws {
        // Given the quadrants at the top-left corner, grey.png (64x48: grey 40 left, 200 right) at the bottom-right,
        // and grey.png again 32 px in from the left edge, over the first mark's right half
        var first = ThumbnailSpec.Watermark(image: .named("quadrants", digest: 1))
        first.position = .gravity(.northWest)
        let second = ThumbnailSpec.Watermark(image: .named("grey", digest: 2))
        var third = ThumbnailSpec.Watermark(image: .named("grey", digest: 2))
        third.position = .gravity(.northWest)
        third.offsetX = 32
        var operations = ThumbnailSpec.Operations()
        operations.watermarks = [first, second, third]
        let spec = try ThumbnailSpec(width: 300, height: 300, format: .exactly(.png), operations: operations)
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes("grid.png"), spec: spec,
            watermarks: [Fixtures.bytes("quadrants.png"), Fixtures.bytes("grey.png"), Fixtures.bytes("grey.png")])
        let image = try DecodedImage(decoding: thumbnail.bytes)
        // Then each is in its place, the third over the first
        #expect(
            image.mismatch(
                in: [
                    (x: 16, y: 12, colour: Fixtures.red), (x: 16, y: 36, colour: Fixtures.blue),
                    (x: 40, y: 12, colour: RGB(40, 40, 40)), (x: 80, y: 36, colour: RGB(200, 200, 200)),
                    (x: 250, y: 276, colour: RGB(40, 40, 40)), (x: 290, y: 276, colour: RGB(200, 200, 200)),
                    (x: 150, y: 150, colour: Fixtures.grid[1][1]), (x: 250, y: 240, colour: Self.grey),
                ], tolerance: 4) == nil)
        // And a plan whose marks are not all given is refused, not rendered with fewer
        #expect(throws: ThumbnailError.watermarkUnusable) {
            try TestThumbnailer.make().render(
                Fixtures.bytes("grid.png"), spec: spec, watermarks: [Fixtures.bytes("quadrants.png")])
        }
    }

    @Test func relativeOffsetsAreFractionsOfTheOutputsSides() throws {
        // Given the mark at the north-west corner, a tenth of the width and a fifth of the height in
        let image = try Self.render(
            try Self.spec {
                $0.position = .gravity(.northWest)
                $0.relativeOffsetX = FixedDecimal(parsing: "0.1")!
                $0.relativeOffsetY = FixedDecimal(parsing: "0.2")!
            })
        // Then it starts at (30, 60) of the 300x300 output
        #expect(
            image.mismatch(
                in: [
                    (x: 30 + 16, y: 60 + 12, colour: Fixtures.red), (x: 30 + 48, y: 60 + 36, colour: Fixtures.yellow),
                    (x: 25, y: 65, colour: Fixtures.grid[0][0]), (x: 45, y: 55, colour: Fixtures.grid[0][0]),
                ], tolerance: 8) == nil)
    }

    @Test func tileOffsetsSpaceTheTiles() throws {
        // Given tiles 20 px apart across and 10 down: each tile 84x58, the mark 10 px and 5 px in
        let image = try Self.render(
            try Self.spec {
                $0.position = .tile
                $0.offsetX = 20
                $0.offsetY = 10
            })
        // Then each mark starts at (10 + 84i, 5 + 58j), the grid shows between them
        #expect(
            image.mismatch(
                in: [
                    (x: 10 + 16, y: 5 + 12, colour: Fixtures.red), (x: 94 + 48, y: 63 + 36, colour: Fixtures.yellow),
                    (x: 178 + 16, y: 121 + 12, colour: Fixtures.red), (x: 5, y: 30, colour: Fixtures.grid[0][0]),
                    (x: 80, y: 30, colour: Fixtures.grid[0][0]), (x: 40, y: 56, colour: Fixtures.grid[0][0]),
                ], tolerance: 8) == nil)
    }

    @Test func fadeSubtractsFromEachAlphaValueAsThumborsAlphaDoes() throws {
        // Given a flat mark (200, 120, 40) at alpha 128, faded by 40 (thumbor's alpha 40: 128 − 102 = 26)
        let mark = try FlatImage.make(width: 64, height: 48, as: .png, alpha: true)
        let image = try Self.render(try Self.spec { $0.fade = 40 }, markBytes: mark)
        // Then over grey 128 it mixes at 26 / 255, where an opacity of 0.6 would mix at 77 / 255 (150, 124, 101)
        #expect(image.colour(x: 236 + 32, y: 252 + 24).isClose(to: RGB(135, 127, 119), tolerance: 3))
        // And without it at 128 / 255
        let plain = try Self.render(try Self.spec { _ in }, markBytes: mark)
        #expect(plain.colour(x: 236 + 32, y: 252 + 24).isClose(to: RGB(164, 124, 84), tolerance: 3))
    }

    @Test func opacityMixesTheMarkWithThePicture() throws {
        let image = try Self.render(try Self.spec { $0.opacity = FixedDecimal(parsing: "0.5")! })
        // Red (230, 30, 30) half over grey 128: about (179, 79, 79)
        #expect(image.colour(x: 236 + 16, y: 252 + 12).isClose(to: RGB(179, 79, 79), tolerance: 6))
    }

    // MARK: thumbor's placement (wm_place, wm_hscale)

    static func placed(_ x: String, _ y: String) -> ThumbnailSpec.Watermark.Place {
        .init(x: .init(x)!, y: .init(y)!)
    }

    @Test func percentagesAreOfTheOutputsSideFromTheEdgeTheirSignNames() throws {
        // Given 20p across (round(300 × 0.2) = 60 from the left) and -10p down (30 from the bottom: y = 300 − 48 − 30)
        let image = try Self.render(try Self.spec { $0.place = Self.placed("20p", "-10p") })
        #expect(
            image.mismatch(
                in: [
                    (x: 60 + 16, y: 222 + 12, colour: Fixtures.red), (x: 60 + 48, y: 222 + 36, colour: Fixtures.yellow),
                    (x: 55, y: 234, colour: Fixtures.grid[2][0]), (x: 70, y: 280, colour: Fixtures.grid[2][0]),
                ], tolerance: 8) == nil)
    }

    @Test func repeatOnOneAxisSpreadsTheMarksAsThumborDoes() throws {
        // Given repeat across and -0 down: 300 // 64 = 4 marks, the 44 px left spread 44 // 3 = 14 apart (x = 0, 78,
        // 156, 234), flush with the bottom (y = 252)
        let image = try Self.render(try Self.spec { $0.place = Self.placed("repeat", "-0") })
        #expect(
            image.mismatch(
                in: [
                    (x: 16, y: 264, colour: Fixtures.red), (x: 78 + 16, y: 264, colour: Fixtures.red),
                    (x: 156 + 48, y: 252 + 36, colour: Fixtures.yellow), (x: 234 + 16, y: 264, colour: Fixtures.red),
                    (x: 70, y: 264, colour: Fixtures.grid[2][0]), (x: 40, y: 240, colour: Fixtures.grid[2][0]),
                ], tolerance: 8) == nil)
    }

    @Test func repeatOnBothAxesSpreadsOnEach() throws {
        // Given repeat on both: across as above; down 300 // 48 = 6 marks, 12 px left, 12 // 5 = 2 apart (y = 0, 50, …)
        let image = try Self.render(try Self.spec { $0.place = Self.placed("repeat", "repeat") })
        #expect(
            image.mismatch(
                in: [
                    (x: 78 + 16, y: 50 + 12, colour: Fixtures.red), (x: 234 + 48, y: 250 + 36, colour: Fixtures.yellow),
                    (x: 70, y: 20, colour: Fixtures.grid[0][0]),
                ], tolerance: 8) == nil)
    }

    @Test func aHeightRatioSizesTheMarkByTheOutputsHeight() throws {
        // Given a height of 25 % (75 px; width round(64 × 75 / 48) = 100), centred: at (100, 112)
        let image = try Self.render(
            try Self.spec {
                $0.heightScale = FixedDecimal(parsing: "0.25")!
                $0.place = Self.placed("center", "center")
            })
        #expect(
            image.mismatch(
                in: [
                    (x: 100 + 25, y: 112 + 19, colour: Fixtures.red),
                    (x: 100 + 75, y: 112 + 56, colour: Fixtures.yellow),
                    (x: 95, y: 150, colour: Fixtures.grid[1][0]), (x: 150, y: 108, colour: Fixtures.grid[1][1]),
                ], tolerance: 8) == nil)
    }

    @Test func tiledMarksCoverThePicture() throws {
        let image = try Self.render(try Self.spec { $0.position = .tile })
        // Every 64x48 block repeats the mark, from the top-left corner
        #expect(
            image.mismatch(
                in: [
                    (x: 16, y: 12, colour: Fixtures.red), (x: 48, y: 12, colour: Fixtures.green),
                    (x: 64 * 3 + 16, y: 48 * 4 + 36, colour: Fixtures.blue),
                    (x: 64 * 4 + 40, y: 48 * 5 + 36, colour: Fixtures.yellow),
                ], tolerance: 8) == nil)
    }

    @Test func scaleSizesTheMarkToTheOutput() throws {
        // Half the output's width: 150 px wide, 113 high, at the north-west corner
        let image = try Self.render(
            try Self.spec {
                $0.scale = FixedDecimal(parsing: "0.5")!; $0.position = .gravity(.northWest)
            })
        #expect(
            image.mismatch(
                in: [
                    (x: 37, y: 28, colour: Fixtures.red), (x: 112, y: 28, colour: Fixtures.green),
                    (x: 112, y: 84, colour: Fixtures.yellow),
                    (x: 160, y: 50, colour: Fixtures.grid[0][1]), (x: 50, y: 125, colour: Fixtures.grid[1][0]),
                ], tolerance: 8) == nil)
    }

    @Test func aTransparentMarkLetsThePictureThrough() throws {
        // rgba.png: the quadrants with a transparent bottom half
        let image = try Self.render(try Self.spec { $0.position = .gravity(.northWest) }, mark: "rgba.png")
        #expect(image.colour(x: 16, y: 12).isClose(to: Fixtures.red, tolerance: 8))
        #expect(image.colour(x: 16, y: 40).isClose(to: Fixtures.grid[0][0], tolerance: 8))
    }

    @Test func anUnusableMarkIsAnError() throws {
        for mark in ["page.html", "image.svg", "truncated.jpg", "bomb.png"] {
            #expect(throws: ThumbnailError.watermarkUnusable, "\(mark)") {
                try Self.render(try Self.spec { _ in }, mark: mark)
            }
        }
        // and a spec with a watermark cannot render without its image
        #expect(throws: ThumbnailError.watermarkUnusable) {
            try TestThumbnailer.make().render(Fixtures.bytes("grid.png"), spec: try Self.spec { _ in })
        }
    }

    @Test func everyFrameOfAnAnimationIsMarked() throws {
        var operations = ThumbnailSpec.Operations()
        var watermark = ThumbnailSpec.Watermark(image: .url("http://example.com/m.png"))
        watermark.position = .gravity(.northWest)
        operations.watermarks = [watermark]
        let spec = try ThumbnailSpec(
            width: 96, height: 64, enlarge: true, format: .exactly(.gif), operations: operations)
        let thumbnail = try TestThumbnailer.make().render(
            Fixtures.bytes("animated.gif"), spec: spec, watermarks: [Fixtures.bytes("grey.png")])
        let image = try DecodedImage(decoding: thumbnail.bytes, allFrames: true)
        #expect(image.frameCount == 3)
        for (frame, colour) in Fixtures.animationFrames.enumerated() {
            // The grey mark's dark left half at the top-left, the frame's colour outside it
            #expect(
                image.colour(frame: frame, x: 10, y: 10).isClose(to: RGB(40, 40, 40), tolerance: 12), "frame \(frame)")
            #expect(image.colour(frame: frame, x: 80, y: 56).isClose(to: colour, tolerance: 24), "frame \(frame)")
        }
    }
}
