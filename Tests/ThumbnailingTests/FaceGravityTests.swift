// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// How detections become the crop (`gravity=face`, `face_zoom`, `face_pad`, thumbor's `smart`), proved by pixels on
/// grid.png (300x300, 3x3 cells of 100 px) with the detections given by hand: what the detector finds is
/// FaceDetectorTests' concern, where the crop goes once it has is this suite's.
@Suite struct FaceGravityTests {
    static func render(
        _ box: (Int, Int), gravity: Gravity, faces: [DetectedRegions.Box], features: [DetectedRegions.Point] = [],
        faceCrop: ThumbnailSpec.FaceCrop? = nil, orientation: ThumbnailSpec.Orientation = .none, enlarge: Bool = false
    ) throws -> DecodedImage {
        var operations = ThumbnailSpec.Operations()
        operations.faceCrop = faceCrop
        operations.orientation = orientation
        let thumbnailer = try TestThumbnailer.make()
        let spec = thumbnailer.normalized(
            try ThumbnailSpec(
                width: box.0, height: box.1, fit: .cover, gravity: gravity, enlarge: enlarge, format: .exactly(.png),
                operations: operations))
        #expect(spec.needsDetection)
        let regions = DetectedRegions(sourceWidth: 300, sourceHeight: 300, faces: faces, features: features)
        let thumbnail = try thumbnailer.render(Fixtures.bytes("grid.png"), spec: spec, regions: regions)
        return try DecodedImage(decoding: thumbnail.bytes)
    }

    /// The colours of one row of cells, probed near the output's top and bottom edges.
    static func keeps(_ image: DecodedImage, row: Int) -> String? {
        var probes: [(x: Int, y: Int, colour: RGB)] = []
        for column in 0..<3 {
            probes.append((x: column * 100 + 50, y: 3, colour: Fixtures.grid[row][column]))
            probes.append((x: column * 100 + 50, y: 96, colour: Fixtures.grid[row][column]))
        }
        return image.mismatch(in: probes, tolerance: 8)
    }

    @Test func theCoverCropIsCentredOnTheFacesAndStaysInside() throws {
        // A face in the bottom row: a 300x100 cover keeps the bottom row.
        let bottom = try Self.render((300, 100), gravity: .face, faces: [.init(x: 120, y: 220, width: 60, height: 60)])
        #expect(Self.keeps(bottom, row: 2) == nil)
        // Two faces, top and bottom: their box's centre is the middle row.
        let both = try Self.render(
            (300, 100), gravity: .face,
            faces: [.init(x: 20, y: 10, width: 60, height: 60), .init(x: 220, y: 230, width: 60, height: 60)])
        #expect(Self.keeps(both, row: 1) == nil)
    }

    @Test func withoutAFaceTheGravityIsAttentionsAndSmartsIsTheCentre() throws {
        let thumbnailer = try TestThumbnailer.make()
        let grid = Fixtures.bytes("grid.png")
        for (gravity, fallback) in [(Gravity.face, Gravity.attention), (.smart, .centre)] {
            let asked = thumbnailer.normalized(
                try ThumbnailSpec(width: 300, height: 100, fit: .cover, gravity: gravity, format: .exactly(.png)))
            let expected = thumbnailer.normalized(
                try ThumbnailSpec(width: 300, height: 100, fit: .cover, gravity: fallback, format: .exactly(.png)))
            let none = DetectedRegions(sourceWidth: 300, sourceHeight: 300, faces: [], features: [])
            #expect(
                try thumbnailer.render(grid, spec: asked, regions: none).bytes
                    == thumbnailer.render(grid, spec: expected).bytes)
        }
    }

    @Test func faceZoomOneIsTheSmallestRegionHoldingTheFacesAndZeroTheWholeCover() throws {
        let cell = DetectedRegions.Box(x: 200, y: 0, width: 100, height: 100)
        let tight = try Self.render((100, 100), gravity: .face, faces: [cell], faceCrop: .zoom(.one))
        #expect(tight.width == 100 && tight.height == 100)
        #expect(tight.mismatch(in: [(5, 5, Fixtures.grid[0][2]), (94, 94, Fixtures.grid[0][2])], tolerance: 8) == nil)
        // Zoom 0: as much as the box's aspect allows, the whole grid scaled to 100x100, the middle cell at the middle.
        let wide = try Self.render((100, 100), gravity: .face, faces: [cell], faceCrop: .zoom(.zero))
        #expect(wide.mismatch(in: [(50, 50, Fixtures.grid[1][1]), (83, 16, Fixtures.grid[0][2])], tolerance: 8) == nil)
        // Half-way: a 200x200 region around the cell, kept inside: the top-right four cells.
        let half = try Self.render(
            (100, 100), gravity: .face, faces: [cell], faceCrop: .zoom(FixedDecimal(parsing: "0.5")!))
        #expect(
            half.mismatch(
                in: [(25, 25, Fixtures.grid[0][1]), (75, 25, Fixtures.grid[0][2]), (75, 75, Fixtures.grid[1][2])],
                tolerance: 8) == nil)
    }

    @Test func facePadGrowsTheFacesBoxToTheBoxsAspect() throws {
        let cell = DetectedRegions.Box(x: 0, y: 100, width: 100, height: 100)
        let tight = try Self.render((100, 100), gravity: .face, faces: [cell], faceCrop: .pad(.one))
        #expect(tight.mismatch(in: [(5, 5, Fixtures.grid[1][0]), (94, 94, Fixtures.grid[1][0])], tolerance: 8) == nil)
        // Padded three times: 300x300, the whole grid.
        let whole = try Self.render(
            (100, 100), gravity: .face, faces: [cell], faceCrop: .pad(FixedDecimal(units: 3 * FixedDecimal.unitsPerOne))
        )
        #expect(
            whole.mismatch(in: [(50, 50, Fixtures.grid[1][1]), (16, 16, Fixtures.grid[0][0])], tolerance: 8) == nil)
        // A wide box around a square face: 200x100 (twice the face's height is 200 px wide), centred on the face and
        // kept inside: columns 0 and 1 of the middle row.
        let wide = try Self.render((200, 100), gravity: .face, faces: [cell], faceCrop: .pad(.one))
        #expect(
            wide.mismatch(in: [(50, 50, Fixtures.grid[1][0]), (150, 50, Fixtures.grid[1][1])], tolerance: 8) == nil)
    }

    @Test func theFacesTurnWithThePicture() throws {
        // A face in the top-right cell; turned a quarter clockwise it is in the bottom-right cell.
        let turned = try Self.render(
            (100, 100), gravity: .face, faces: [.init(x: 200, y: 0, width: 100, height: 100)], faceCrop: .zoom(.one),
            orientation: ThumbnailSpec.Orientation(degrees: 90)!)
        #expect(turned.mismatch(in: [(50, 50, Fixtures.grid[0][2])], tolerance: 8) == nil)
        let regions = DetectedRegions(
            sourceWidth: 300, sourceHeight: 200, faces: [.init(x: 10, y: 20, width: 30, height: 40)],
            features: [.init(x: 10, y: 20)])
        let quarter = regions.turned(by: ThumbnailSpec.Orientation(degrees: 90)!)
        #expect(quarter.width == 200 && quarter.height == 300)
        #expect(quarter.faces == [.init(x: 140, y: 10, width: 40, height: 30)])
        #expect(quarter.features == [.init(x: 180, y: 10)])
        let mirrored = regions.turned(by: ThumbnailSpec.Orientation(degrees: 180, mirrored: true)!)
        #expect(mirrored.faces == [.init(x: 10, y: 140, width: 30, height: 40)])
    }

    @Test func thumborsSmartIsTheFacesCentreOfMassWithTheHairOffsetThenTheFeatures() throws {
        // thumbor's arithmetic: a 100x100 face at (200, 200) raised 12 px for the hair, centre (250, 238), weight
        // 10000; a 50x50 face at (0, 0) cannot be raised (it would leave the picture), centre (25, 25), weight 2500.
        let turned = DetectedRegions(
            sourceWidth: 300, sourceHeight: 300,
            faces: [.init(x: 200, y: 200, width: 100, height: 100), .init(x: 0, y: 0, width: 50, height: 50)],
            features: [.init(x: 1, y: 1)]
        ).turned(by: .none)
        let focus = try #require(Thumbnailer.thumborFocus(turned, crop: nil))
        #expect(focus.x == 205 && focus.y == 195)  // (250*4 + 25) / 5 = 205, (238*4 + 25) / 5 = 195.4
        // No face: the features, each weighing 1, truncated to whole pixels.
        let features = DetectedRegions(
            sourceWidth: 300, sourceHeight: 300, faces: [],
            features: [.init(x: 10.9, y: 20.2), .init(x: 31.5, y: 41.7), .init(x: 290, y: 290)]
        ).turned(by: .none)
        let mean = try #require(Thumbnailer.thumborFocus(features, crop: nil))
        #expect(mean.x == 110 && mean.y == 117)  // (10 + 31 + 290) / 3, (20 + 41 + 290) / 3
        // A manual crop drops the points outside it (edges included), as thumbor's adjust_focal_points.
        let cropped = try #require(
            Thumbnailer.thumborFocus(features, crop: .pixels(left: 0, top: 0, width: 100, height: 100)))
        #expect(cropped.x == 20 && cropped.y == 30)
        // The render crops around the point: a face low in the picture, (130, 262) once raised, keeps the bottom row.
        let image = try Self.render(
            (300, 100), gravity: .smart, faces: [.init(x: 100, y: 240, width: 60, height: 60)])
        #expect(Self.keeps(image, row: 2) == nil)
    }

    @Test func facePadAndZoomAreRefusedWhereTheyCannotBeHonoured() throws {
        var operations = ThumbnailSpec.Operations()
        operations.faceCrop = .pad(.one)
        #expect(throws: SpecError.self) {
            try ThumbnailSpec(width: 100, height: 100, fit: .cover, gravity: .attention, operations: operations)
        }
        operations.trim = ThumbnailSpec.Trim(threshold: 10, colour: nil, corner: .topLeft)
        #expect(throws: SpecError.self) {
            try ThumbnailSpec(width: 100, height: 100, fit: .cover, gravity: .face, operations: operations)
        }
    }
}
