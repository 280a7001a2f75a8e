// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Placed crops (imgproxy's `c:W:H:gravity:x:y`, `/thumb`'s `crop=W,H&crop_gravity=…&crop_offset=x,y`), resolved by
/// the render once the picture's size is known, proved by pixels: grid.png is 300x300 in 3x3 cells of 100 px.
@Suite struct PlacedCropTests {
    static let compass: [(Gravity, row: Int, column: Int)] = [
        (.centre, 1, 1), (.north, 0, 1), (.south, 2, 1), (.east, 1, 2), (.west, 1, 0),
        (.northEast, 0, 2), (.northWest, 0, 0), (.southEast, 2, 2), (.southWest, 2, 0),
    ]

    static func render(_ crop: ThumbnailSpec.Crop, box: Int = 100) throws -> DecodedImage {
        var operations = ThumbnailSpec.Operations()
        operations.crop = crop
        let spec = try ThumbnailSpec(width: box, height: box, format: .exactly(.png), operations: operations)
        return try TestThumbnailer.render("grid.png", spec).1
    }

    @Test(arguments: 0..<9)
    func aPixelCropKeepsTheCellOfItsGravity(_ index: Int) throws {
        // Given a 100x100 px crop placed by a compass point (no scaling: the box is the crop's size)
        let (gravity, row, column) = Self.compass[index]
        let crop = ThumbnailSpec.Crop.placed(
            width: .pixels(100), height: .pixels(100), gravity: .compass(gravity, x: .zero, y: .zero))
        // When rendered
        let image = try Self.render(crop)
        // Then exactly that cell is the output, edge to edge
        #expect(image.width == 100 && image.height == 100)
        let cell = Fixtures.grid[row][column]
        let probes = [(2, 2), (97, 2), (50, 50), (2, 97), (97, 97)].map { (x: $0.0, y: $0.1, colour: cell) }
        #expect(image.mismatch(in: probes, tolerance: 8) == nil, "\(gravity)")
    }

    @Test func offsetsPointInwardAndTheRegionStaysInside() throws {
        // From the south-east corner, 100 px in from the right and 0.34 of the height up: the middle-centre cell
        let inward = try Self.render(
            .placed(
                width: .pixels(100), height: .pixels(100),
                gravity: .compass(.southEast, x: .pixels(100), y: .fraction(FixedDecimal(parsing: "0.3333")!))))
        #expect(inward.mismatch(in: [(x: 50, y: 50, colour: Fixtures.grid[1][1])], tolerance: 8) == nil)
        #expect(inward.mismatch(in: [(x: 3, y: 3, colour: Fixtures.grid[1][1])], tolerance: 8) == nil)
        // An offset past the edge is clamped: the region stays inside the picture (the top-left cell)
        let clamped = try Self.render(
            .placed(
                width: .pixels(100), height: .pixels(100), gravity: .compass(.west, x: .pixels(-50), y: .pixels(-500))))
        #expect(clamped.mismatch(in: [(x: 3, y: 3, colour: Fixtures.grid[0][0])], tolerance: 8) == nil)
        #expect(clamped.mismatch(in: [(x: 96, y: 96, colour: Fixtures.grid[0][0])], tolerance: 8) == nil)
    }

    @Test func pixelsMixWithFractionsAndAFocalPointCentresTheRegion() throws {
        // 100 px wide, a third of the height, centred on the bottom-right cell's middle
        let third = FixedDecimal(parsing: "0.3333")!
        let image = try Self.render(
            .placed(
                width: .pixels(100), height: .fraction(third),
                gravity: .focalPoint(x: FixedDecimal(parsing: "0.8333")!, y: FixedDecimal(parsing: "0.8333")!)))
        #expect(image.width == 100 && image.height == 100)
        #expect(image.mismatch(in: [(x: 50, y: 50, colour: Fixtures.grid[2][2])], tolerance: 8) == nil)
        #expect(image.mismatch(in: [(x: 3, y: 3, colour: Fixtures.grid[2][2])], tolerance: 8) == nil)
    }

    @Test func aCropLargerThanThePictureIsThePictureAndThenResized() throws {
        // A 5000x200 px crop of a 300x300 picture is 300x200 (clamped), placed at the south edge, resized into 150
        let image = try Self.render(
            .placed(width: .pixels(5000), height: .pixels(200), gravity: .compass(.south, x: .zero, y: .zero)),
            box: 150)
        #expect(image.width == 150 && image.height == 100)
        #expect(image.mismatch(in: [(x: 25, y: 25, colour: Fixtures.grid[1][0])], tolerance: 8) == nil)
        #expect(image.mismatch(in: [(x: 125, y: 75, colour: Fixtures.grid[2][2])], tolerance: 8) == nil)
    }

    @Test func thePlacedCropRunsOnTheTurnedPicture() throws {
        // Turned a quarter clockwise, the grid's bottom-left cell is the top-left: north-west keeps it
        var operations = ThumbnailSpec.Operations()
        operations.orientation = ThumbnailSpec.Orientation(degrees: 90)!
        operations.crop = .placed(
            width: .pixels(100), height: .pixels(100), gravity: .compass(.northWest, x: .zero, y: .zero))
        let spec = try ThumbnailSpec(width: 100, height: 100, format: .exactly(.png), operations: operations)
        let image = try TestThumbnailer.render("grid.png", spec).1
        #expect(image.mismatch(in: [(x: 50, y: 50, colour: Fixtures.grid[2][0])], tolerance: 8) == nil)
    }
}
