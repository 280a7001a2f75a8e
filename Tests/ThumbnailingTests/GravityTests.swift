// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Which part a cover crop keeps, proved by pixels: grid.png is 300x300 in 3x3 cells of distinct colours.
@Suite struct GravityTests {
    /// The cell (row, column) at the middle of what each gravity keeps.
    static let expectedCentreCell: [Gravity: (row: Int, column: Int)] = [
        .centre: (1, 1), .north: (0, 1), .south: (2, 1), .east: (1, 2), .west: (1, 0),
        .northEast: (0, 2), .northWest: (0, 0), .southEast: (2, 2), .southWest: (2, 0),
    ]

    static let compassGravities = Gravity.allCases.filter { !$0.looksAtPixels }

    @Test(arguments: compassGravities)
    func wideBoxKeepsTheRowOfTheGravity(_ gravity: Gravity) throws {
        // Given the grid and a 300x100 box (crop one row of cells, no scaling)
        let spec = try TestThumbnailer.spec(300, 100, fit: .cover, gravity: gravity)
        // When rendered
        let (_, image) = try TestThumbnailer.render("grid.png", spec)
        // Then the whole row of the gravity's vertical position is kept
        let row = try #require(Self.expectedCentreCell[gravity]).row
        #expect(image.width == 300 && image.height == 100)
        let probes = (0..<3).map { column in (x: column * 100 + 50, y: 50, colour: Fixtures.grid[row][column]) }
        #expect(image.mismatch(in: probes, tolerance: 8) == nil)
    }

    @Test(arguments: compassGravities)
    func tallBoxKeepsTheColumnOfTheGravity(_ gravity: Gravity) throws {
        // Given the grid and a 100x300 box (crop one column of cells)
        let spec = try TestThumbnailer.spec(100, 300, fit: .cover, gravity: gravity)
        // When rendered
        let (_, image) = try TestThumbnailer.render("grid.png", spec)
        // Then the whole column of the gravity's horizontal position is kept
        let column = try #require(Self.expectedCentreCell[gravity]).column
        #expect(image.width == 100 && image.height == 300)
        let probes = (0..<3).map { row in (x: 50, y: row * 100 + 50, colour: Fixtures.grid[row][column]) }
        #expect(image.mismatch(in: probes, tolerance: 8) == nil)
    }

    @Test(arguments: compassGravities)
    func cropAfterDownscaleKeepsTheRightCells(_ gravity: Gravity) throws {
        // Given the grid and a 150x50 box: scaled by 1/2 to 150x150, then cropped to one row of 50 px cells
        let spec = try TestThumbnailer.spec(150, 50, fit: .cover, gravity: gravity)
        // When rendered
        let (_, image) = try TestThumbnailer.render("grid.png", spec)
        // Then the row of the gravity's vertical position survives the resize and crop
        let row = try #require(Self.expectedCentreCell[gravity]).row
        #expect(image.width == 150 && image.height == 50)
        let probes = (0..<3).map { column in (x: column * 50 + 25, y: 25, colour: Fixtures.grid[row][column]) }
        #expect(image.mismatch(in: probes, tolerance: 16) == nil)
    }

    @Test(arguments: [Gravity.attention, .entropy])
    func smartGravityFindsTheBusyPatch(_ gravity: Gravity) throws {
        // Given a flat grey picture with a busy, saturated patch in its left third (rows 100...199)
        let spec = try TestThumbnailer.spec(100, 300, fit: .cover, gravity: gravity)
        // When a 100 px wide column is kept
        let (_, image) = try TestThumbnailer.render("interest.png", spec)
        // Then it is the left column (with the patch), where the centre gravity would keep only grey
        #expect(image.width == 100 && image.height == 300)
        #expect(!image.colour(x: 50, y: 150).isClose(to: Fixtures.interestBackground, tolerance: 60))
        #expect(image.colour(x: 50, y: 20).isClose(to: Fixtures.interestBackground, tolerance: 8))
    }

    @Test func centreGravityMissesThePatch() throws {
        // Given the same picture, centre gravity (control for the smart-gravity test)
        let spec = try TestThumbnailer.spec(100, 300, fit: .cover, gravity: .centre)
        // When rendered
        let (_, image) = try TestThumbnailer.render("interest.png", spec)
        // Then only the grey middle column is kept
        #expect(image.colour(x: 50, y: 150).isClose(to: Fixtures.interestBackground, tolerance: 8))
    }

    @Test func gravityAppliesToTheUprightPicture() throws {
        // Given a JPEG stored rotated (EXIF orientation 6) and a cover box that keeps the top half
        let spec = try TestThumbnailer.spec(64, 24, fit: .cover, gravity: .north)
        // When rendered
        let (_, image) = try TestThumbnailer.render("orientation-6.jpg", spec)
        // Then the kept half is the upright top: red then green
        #expect(image.width == 64 && image.height == 24)
        #expect(image.mismatch(in: [(16, 12, Fixtures.red), (48, 12, Fixtures.green)]) == nil)
    }
}
