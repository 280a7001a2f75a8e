// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// `gravity_offset` (imgproxy's `g:type:x:y`) moves the cover crop inward from the gravity's edges, proved by pixels:
/// grid.png is 300x300 in 3x3 cells of 100 px, covered into a 300x100 box (one row of cells, no scaling).
@Suite struct GravityOffsetTests {
    static func row(_ gravity: Gravity, _ offset: ThumbnailSpec.CropOffset, box: (Int, Int) = (300, 100)) throws
        -> DecodedImage
    {
        var operations = ThumbnailSpec.Operations()
        operations.gravityOffset = offset
        let spec = try ThumbnailSpec(
            width: box.0, height: box.1, fit: .cover, gravity: gravity, format: .exactly(.png), operations: operations)
        return try TestThumbnailer.render("grid.png", spec).1
    }

    static func keeps(_ image: DecodedImage, row: Int) -> String? {
        var probes: [(x: Int, y: Int, colour: RGB)] = []
        for column in 0..<3 {
            let colour: RGB = Fixtures.grid[row][column]
            probes.append((x: column * 100 + 50, y: 3, colour: colour))
            probes.append((x: column * 100 + 50, y: 96, colour: colour))
        }
        return image.mismatch(in: probes, tolerance: 8)
    }

    @Test func pixelOffsetsPointInwardFromTheEdge() throws {
        // North, 100 px down: the middle row; south, 100 px up: the middle row too
        #expect(Self.keeps(try Self.row(.north, .init(x: .zero, y: .pixels(100))), row: 1) == nil)
        #expect(Self.keeps(try Self.row(.south, .init(x: .zero, y: .pixels(100))), row: 1) == nil)
        // At the centre the offset shifts down: +100 is the bottom row
        #expect(Self.keeps(try Self.row(.centre, .init(x: .zero, y: .pixels(100))), row: 2) == nil)
    }

    @Test func fractionalOffsetsAreOfTheResizedSideAndTheCropStaysInside() throws {
        // A third of the 300 px side up from the south edge: the middle row
        let third = FixedDecimal(parsing: "0.3333")!
        #expect(Self.keeps(try Self.row(.south, .init(x: .zero, y: .fraction(third))), row: 1) == nil)
        // Past the edge: clamped, the crop stays inside (the top row)
        #expect(Self.keeps(try Self.row(.south, .init(x: .zero, y: .pixels(900))), row: 0) == nil)
    }

    @Test func theOffsetIsScaledWhenTheCoverEnlarges() throws {
        // 600x200 from 300x300 (enlarged x2, cut at the source's size first): 200 output px down from north is
        // the middle row
        var operations = ThumbnailSpec.Operations()
        operations.gravityOffset = .init(x: .zero, y: .pixels(200))
        let spec = try ThumbnailSpec(
            width: 600, height: 200, fit: .cover, gravity: .north, enlarge: true, format: .exactly(.png),
            operations: operations)
        let image = try TestThumbnailer.render("grid.png", spec).1
        #expect(image.width == 600 && image.height == 200)
        #expect(image.mismatch(in: [(x: 100, y: 100, colour: Fixtures.grid[1][0])], tolerance: 8) == nil)
    }
}
