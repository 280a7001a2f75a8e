// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// `redact`: each detected face blurred, pixelated or outlined where it shows in the output, proved by pixels on
/// grid.png (300x300, 3x3 cells of 100 px) and animated-halves.gif with the detections given by hand, against the
/// same render without `redact`: inside the (grown) box the picture changed, outside it is the same.
@Suite struct RedactTests {
    static let red = RGB(255, 0, 0)

    static func spec(
        _ box: (Int, Int), redact: ThumbnailSpec.Redaction?, fit: Fit = .contain, gravity: Gravity = .centre,
        orientation: ThumbnailSpec.Orientation = .none, crop: ThumbnailSpec.Crop? = nil, format: ImageFormat = .png
    ) throws -> ThumbnailSpec {
        var operations = ThumbnailSpec.Operations()
        operations.redact = redact
        operations.orientation = orientation
        operations.crop = crop
        return try ThumbnailSpec(
            width: box.0, height: box.1, fit: fit, gravity: gravity, format: .exactly(format), operations: operations)
    }

    /// The render of `spec` with `faces` (in grid.png's pixels), and the same render without `redact`.
    static func renders(
        _ spec: ThumbnailSpec, faces: [DetectedRegions.Box], fixture: String = "grid.png",
        sides: (Int, Int) = (300, 300),
        direct: Bool = false, allFrames: Bool = false
    ) throws -> (redacted: DecodedImage, plain: DecodedImage) {
        let thumbnailer = try TestThumbnailer.make { if direct { $0.intermediateBands = [] } }
        let redacting = thumbnailer.normalized(spec)
        #expect(redacting.needsDetection)
        var operations = spec.operations
        operations.redact = nil
        let plain = thumbnailer.normalized(
            try ThumbnailSpec(
                width: spec.width, height: spec.height, fit: spec.fit, gravity: spec.gravity, enlarge: spec.enlarge,
                format: spec.format, operations: operations))
        let regions = DetectedRegions(sourceWidth: sides.0, sourceHeight: sides.1, faces: faces, features: [])
        let bytes = Fixtures.bytes(fixture)
        return (
            try DecodedImage(
                decoding: thumbnailer.render(bytes, spec: redacting, regions: regions).bytes, allFrames: allFrames),
            try DecodedImage(decoding: thumbnailer.render(bytes, spec: plain).bytes, allFrames: allFrames)
        )
    }

    /// The pixels of `image` whose colour differs from `other`'s, as the smallest rectangle holding them
    /// (x0, y0, x1, y1 inclusive); `nil` when none differs.
    static func changed(_ image: DecodedImage, _ other: DecodedImage, tolerance: Int = 0) -> (Int, Int, Int, Int)? {
        var bounds: (Int, Int, Int, Int)?
        for y in 0..<image.height {
            for x in 0..<image.width where image.colour(x: x, y: y).distance(to: other.colour(x: x, y: y)) > tolerance {
                bounds = bounds.map { (min($0.0, x), min($0.1, y), max($0.2, x), max($0.3, y)) } ?? (x, y, x, y)
            }
        }
        return bounds
    }

    /// The variance of the red, green and blue samples in x0..<x1, y0..<y1.
    static func variance(_ image: DecodedImage, _ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) -> Double {
        var values: [Double] = []
        for y in y0..<y1 {
            for x in x0..<x1 {
                let c = image.colour(x: x, y: y)
                values += [Double(c.red), Double(c.green), Double(c.blue)]
            }
        }
        let mean = values.reduce(0, +) / Double(values.count)
        return values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count)
    }

    static func inside(_ bounds: (Int, Int, Int, Int)?, _ x0: Int, _ y0: Int, _ x1: Int, _ y1: Int) -> Bool {
        guard let bounds else { return false }
        return bounds.0 >= x0 && bounds.1 >= y0 && bounds.2 <= x1 && bounds.3 <= y1
    }

    // MARK: - Blur, pixelate, box

    @Test(arguments: [false, true])
    func blurLowersTheVarianceInsideTheGrownBoxAndNothingElseChanges(direct: Bool) throws {
        // A 40x40 face on the corner where four cells meet, grown by 0.2 of its size on every side: 72...127.
        let (redacted, plain) = try Self.renders(
            Self.spec((300, 300), redact: .init()), faces: [.init(x: 80, y: 80, width: 40, height: 40)],
            direct: direct)
        // Four flat cells: the default sigma (56 / 6) mixes them near their edges.
        #expect(Self.variance(redacted, 72, 72, 128, 128) < Self.variance(plain, 72, 72, 128, 128) * 0.8)
        let changed = Self.changed(redacted, plain)
        #expect(Self.inside(changed, 72, 72, 127, 127), "\(String(describing: changed))")
        // The grown box's corners are redacted too (the margin), not only the face's.
        #expect(changed.map { $0.0 <= 76 && $0.2 >= 123 } == true)
    }

    @Test func aStrongerSigmaBlursMore() throws {
        let face = DetectedRegions.Box(x: 80, y: 80, width: 40, height: 40)
        let (redacted, plain) = try Self.renders(
            Self.spec((300, 300), redact: .init(mode: .blur, strength: FixedDecimal(units: 300_000))), faces: [face])
        #expect(Self.variance(redacted, 72, 72, 128, 128) < Self.variance(plain, 72, 72, 128, 128) / 3)
        #expect(Self.inside(Self.changed(redacted, plain), 72, 72, 127, 127))
    }

    @Test func pixelateMakesBlocksOfOneColourFromTheBoxsCorner() throws {
        let (redacted, plain) = try Self.renders(
            Self.spec((300, 300), redact: .init(mode: .pixelate, strength: FixedDecimal(units: 80_000))),
            faces: [.init(x: 80, y: 80, width: 40, height: 40)])
        // 72...127: seven blocks of 8 on each side, each one colour.
        for blockY in 0..<7 {
            for blockX in 0..<7 {
                let first = redacted.colour(x: 72 + blockX * 8, y: 72 + blockY * 8)
                for y in 0..<8 {
                    for x in 0..<8 {
                        #expect(redacted.colour(x: 72 + blockX * 8 + x, y: 72 + blockY * 8 + y) == first)
                    }
                }
            }
        }
        #expect(Self.inside(Self.changed(redacted, plain), 72, 72, 127, 127))
        #expect(Self.changed(redacted, plain) != nil)
    }

    @Test func boxDrawsTheOutlineAndLeavesTheInside() throws {
        // A face in the centre cell (cyan), no margin, the default line of 2 pixels.
        let (redacted, plain) = try Self.renders(
            Self.spec((300, 300), redact: .init(mode: .box, margin: .zero)),
            faces: [.init(x: 120, y: 130, width: 60, height: 50)])
        #expect(
            redacted.mismatch(
                in: [
                    (120, 150, Self.red), (121, 150, Self.red), (179, 150, Self.red), (150, 130, Self.red),
                    (150, 179, Self.red), (122, 150, Fixtures.grid[1][1]), (150, 155, Fixtures.grid[1][1]),
                ],
                tolerance: 0) == nil)
        #expect(Self.inside(Self.changed(redacted, plain), 120, 130, 179, 179))
    }

    @Test func aWiderLineAndAScaledOutput() throws {
        // 300 -> 100: the face (120, 130, 60 x 50) is (40, 43.3, 20 x 16.7) in the output; lines of 3.
        let (redacted, plain) = try Self.renders(
            Self.spec((100, 100), redact: .init(mode: .box, strength: FixedDecimal(units: 30_000), margin: .zero)),
            faces: [.init(x: 120, y: 130, width: 60, height: 50)])
        #expect(
            redacted.mismatch(
                in: [
                    (40, 50, Self.red), (42, 50, Self.red), (59, 50, Self.red), (50, 43, Self.red), (50, 59, Self.red),
                    (50, 50, Fixtures.grid[1][1]),
                ],
                tolerance: 0) == nil)
        #expect(Self.inside(Self.changed(redacted, plain), 40, 43, 59, 59))
    }

    // MARK: - Where the face is

    @Test(arguments: [false, true])
    func theBoxTurnsWithThePictureAndMovesWithTheCrop(direct: Bool) throws {
        // A face in the top-right cell; turned a quarter clockwise it is at (220, 220, 60 x 60). The crop keeps the
        // turned picture's bottom-right quarter, where it is at (70, 70).
        let (redacted, plain) = try Self.renders(
            Self.spec(
                (150, 150), redact: .init(mode: .box, margin: .zero),
                orientation: ThumbnailSpec.Orientation(degrees: 90)!,
                crop: .pixels(left: 150, top: 150, width: 150, height: 150)),
            faces: [.init(x: 220, y: 20, width: 60, height: 60)], direct: direct)
        #expect(
            redacted.mismatch(
                in: [(70, 100, Self.red), (129, 100, Self.red), (100, 70, Self.red), (100, 129, Self.red)],
                tolerance: 0) == nil)
        #expect(Self.inside(Self.changed(redacted, plain), 70, 70, 129, 129))
    }

    @Test func withoutAutorotateTheBoxIsWhereTheFaceIsStored() throws {
        // orientation-6.jpg: the quadrants (64x48 upright) stored turned a quarter anticlockwise (48x64) with EXIF 6.
        // The detection's face is in the upright picture's top-right (green) quadrant, at (36, 4, 20 x 16).
        let face = DetectedRegions.Box(x: 36, y: 4, width: 20, height: 16)
        var spec = try Self.spec((64, 64), redact: .init(mode: .box, margin: .zero))
        let (upright, uprightPlain) = try Self.renders(
            spec, faces: [face], fixture: "orientation-6.jpg", sides: (64, 48))
        #expect(upright.width == 64 && upright.height == 48)
        #expect(Self.changed(upright, uprightPlain).map { $0 == (36, 4, 55, 19) } == true)
        // Stored as it is (autorotate=0): the same face is at (4, 8, 16 x 20).
        var operations = spec.operations
        operations.autoOrient = false
        spec = try ThumbnailSpec(width: 64, height: 64, format: .exactly(.png), operations: operations)
        let (stored, storedPlain) = try Self.renders(
            spec, faces: [face], fixture: "orientation-6.jpg", sides: (64, 48))
        #expect(stored.width == 48 && stored.height == 64)
        let changed = Self.changed(stored, storedPlain)
        #expect(changed.map { $0 == (4, 8, 19, 27) } == true, "\(String(describing: changed))")
    }

    @Test func theTrimsFrameMovesTheBox() throws {
        // interest.png: flat grey with a checkerboard patch at x 0...99, y 100...199, which the trim keeps. A face at
        // (20, 120, 40 x 40) in the source is at (20, 20) in the trimmed output.
        var operations = ThumbnailSpec.Operations()
        operations.trim = ThumbnailSpec.Trim(threshold: 10, colour: nil)
        operations.redact = .init(mode: .pixelate, strength: FixedDecimal(units: 100_000), margin: .zero)
        let spec = try ThumbnailSpec(width: 100, height: 100, format: .exactly(.png), operations: operations)
        let (redacted, plain) = try Self.renders(
            spec, faces: [.init(x: 20, y: 120, width: 40, height: 40)], fixture: "interest.png")
        #expect(plain.width == 100 && plain.height == 100)
        let changed = Self.changed(redacted, plain)
        #expect(changed != nil)
        #expect(Self.inside(changed, 20, 20, 59, 59), "\(String(describing: changed))")
    }

    @Test func aFacePartlyOutsideTheCropIsRedactedWhereItShows() throws {
        // The crop keeps x 0...149; the face spans x 120...179: its left edge is drawn, no line where the crop cuts it.
        let (redacted, plain) = try Self.renders(
            Self.spec(
                (150, 150), redact: .init(mode: .box, margin: .zero),
                crop: .pixels(left: 0, top: 150, width: 150, height: 150)),
            faces: [.init(x: 120, y: 200, width: 60, height: 40)])
        #expect(
            redacted.mismatch(in: [(120, 70, Self.red), (140, 50, Self.red), (140, 89, Self.red)], tolerance: 0) == nil)
        #expect(redacted.colour(x: 149, y: 70) == plain.colour(x: 149, y: 70))
        #expect(Self.inside(Self.changed(redacted, plain), 120, 50, 149, 89))
        // Blurred: the part that shows changes, nothing else.
        let (blurred, original) = try Self.renders(
            Self.spec(
                (150, 150), redact: .init(margin: .zero), crop: .pixels(left: 0, top: 0, width: 150, height: 150)),
            faces: [.init(x: 80, y: 80, width: 100, height: 40)])
        let changed = Self.changed(blurred, original)
        #expect(Self.inside(changed, 80, 80, 149, 119), "\(String(describing: changed))")
        #expect(changed != nil)
    }

    @Test(arguments: [Gravity.centre, .attention])
    func theCoverCropMovesTheBox(gravity: Gravity) throws {
        // A 300x100 cover keeps one row of cells: the face follows wherever the crop went.
        let face = DetectedRegions.Box(x: 120, y: 120, width: 60, height: 60)
        let (redacted, plain) = try Self.renders(
            Self.spec((300, 100), redact: .init(mode: .box, margin: .zero), fit: .cover, gravity: gravity),
            faces: [face])
        let changed = Self.changed(redacted, plain)
        if gravity == .centre {
            // The middle row: the face is 100 rows higher.
            #expect(
                redacted.mismatch(in: [(120, 50, Self.red), (179, 50, Self.red), (150, 20, Self.red)], tolerance: 0)
                    == nil)
            #expect(Self.inside(changed, 120, 20, 179, 79))
        } else {
            // Wherever attention cut, the outline's sides are at x 120 and 179, and it is at most 60 rows high.
            #expect(changed.map { $0.0 == 120 && $0.2 == 179 && $0.3 - $0.1 <= 59 } ?? true)
        }
    }

    @Test func anEnlargedCoverCutBeforeItsResizeMovesTheBoxToo() throws {
        // 300x300 into 600x300 with enlarge: the middle 150 rows (75...224) cut at the source's size, then doubled.
        // The face (120, 120, 60 x 60) is at (240, 90, 120 x 120) in the output.
        var spec = try Self.spec((600, 300), redact: .init(mode: .box, margin: .zero), fit: .cover)
        spec = try ThumbnailSpec(
            width: 600, height: 300, fit: .cover, enlarge: true, format: .exactly(.png), operations: spec.operations)
        let (redacted, plain) = try Self.renders(spec, faces: [.init(x: 120, y: 120, width: 60, height: 60)])
        #expect(redacted.width == 600 && redacted.height == 300)
        #expect(
            redacted.mismatch(
                in: [(240, 150, Self.red), (359, 150, Self.red), (300, 90, Self.red), (300, 209, Self.red)],
                tolerance: 0) == nil)
        #expect(Self.inside(Self.changed(redacted, plain), 240, 90, 359, 209))
    }

    @Test func everyFrameOfAnAnimationIsRedacted() throws {
        // animated-halves.gif: 48x32 frames, the left half red, green or blue, the right half yellow. A face on
        // the line between the halves, outlined in every frame.
        let (redacted, plain) = try Self.renders(
            Self.spec((48, 32), redact: .init(mode: .box, margin: .zero), format: .gif),
            faces: [.init(x: 16, y: 8, width: 16, height: 16)], fixture: "animated-halves.gif", sides: (48, 32),
            allFrames: true)
        #expect(redacted.frameCount == 3 && plain.frameCount == 3)
        for frame in 0..<3 {
            #expect(redacted.colour(frame: frame, x: 26, y: 8).distance(to: Self.red) <= 8, "frame \(frame)")
            #expect(redacted.colour(frame: frame, x: 30, y: 16).distance(to: Self.red) <= 8, "frame \(frame)")
            #expect(redacted.colour(frame: frame, x: 40, y: 16) == plain.colour(frame: frame, x: 40, y: 16))
            #expect(redacted.colour(frame: frame, x: 28, y: 16) == plain.colour(frame: frame, x: 28, y: 16))
        }
    }

    // MARK: - Without detections, without faces

    @Test func withoutDetectionsTheRenderFails() throws {
        let thumbnailer = try TestThumbnailer.make()
        let spec = thumbnailer.normalized(try Self.spec((100, 100), redact: .init()))
        #expect(throws: ThumbnailError.detectionUnavailable("redact")) {
            try thumbnailer.render(Fixtures.bytes("grid.png"), spec: spec)
        }
    }

    @Test func withoutAFaceThePictureIsUnchanged() throws {
        let thumbnailer = try TestThumbnailer.make()
        let spec = thumbnailer.normalized(try Self.spec((100, 100), redact: .init(mode: .pixelate)))
        let plain = thumbnailer.normalized(try Self.spec((100, 100), redact: nil))
        let none = DetectedRegions(sourceWidth: 300, sourceHeight: 300, faces: [], features: [])
        let grid = Fixtures.bytes("grid.png")
        #expect(
            try thumbnailer.render(grid, spec: spec, regions: none).bytes == thumbnailer.render(grid, spec: plain).bytes
        )
    }

    @Test func aPlanThatAnswersTheSourcesOwnBytesCannotRedact() {
        var operations = ThumbnailSpec.Operations()
        operations.redact = .init()
        operations.raw = true
        #expect(throws: SpecError.self) { try operations.validate() }
        operations.raw = false
        operations.skipProcessing = [.jpeg]
        #expect(
            throws: SpecError(field: "skip", reason: "not with redact (a skipped source would be answered unredacted)")
        ) {
            try operations.validate()
        }
    }

    @Test func beyondThirtyTwoFacesTheLastBoxHoldsTheRest() {
        let faces = (0..<40).map { DetectedRegions.Rect(x: Double($0 * 10), y: 0, width: 5, height: 5) }
        let boxes = Thumbnailer.redactionBoxes(faces, margin: .zero)
        #expect(boxes.count == 32)
        #expect(boxes[30] == faces[30])
        #expect(boxes[31] == DetectedRegions.Rect(x: 310, y: 0, width: 85, height: 5))
        let grown = Thumbnailer.redactionBoxes([.init(x: 10, y: 20, width: 30, height: 40)], margin: .one)
        #expect(grown == [.init(x: -20, y: -20, width: 90, height: 120)])
    }
}
