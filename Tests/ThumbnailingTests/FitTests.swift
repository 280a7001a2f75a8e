// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Output dimensions for every fit, box shape and enlarge setting. Source: progressive.jpg, 320x240 (4:3).
@Suite struct FitTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let width: Int?
        let height: Int?
        let fit: Fit
        let enlarge: Bool
        let expected: (width: Int, height: Int)
        var testDescription: String {
            "\(fit) \(width.map(String.init) ?? "-")x\(height.map(String.init) ?? "-")\(enlarge ? " enlarge" : "")"
        }
    }

    static let cases: [Case] = [
        // contain: inside the box, aspect kept.
        Case(width: 100, height: 100, fit: .contain, enlarge: false, expected: (100, 75)),
        Case(width: 100, height: 50, fit: .contain, enlarge: false, expected: (67, 50)),
        Case(width: 160, height: nil, fit: .contain, enlarge: false, expected: (160, 120)),
        Case(width: nil, height: 60, fit: .contain, enlarge: false, expected: (80, 60)),
        Case(width: 400, height: 400, fit: .contain, enlarge: false, expected: (320, 240)),
        Case(width: 400, height: 400, fit: .contain, enlarge: true, expected: (400, 300)),
        Case(width: 640, height: nil, fit: .contain, enlarge: true, expected: (640, 480)),
        // cover-down: cover, but a box larger than the picture shrinks to the largest of its aspect inside it.
        Case(width: 100, height: 100, fit: .coverDown, enlarge: false, expected: (100, 100)),
        Case(width: 400, height: 400, fit: .coverDown, enlarge: false, expected: (240, 240)),
        Case(width: 1000, height: 300, fit: .coverDown, enlarge: false, expected: (320, 96)),
        Case(width: 400, height: 400, fit: .coverDown, enlarge: true, expected: (400, 400)),
        // cover: fills the box, the overflow is cropped; never larger than the (unenlarged) source.
        Case(width: 100, height: 100, fit: .cover, enlarge: false, expected: (100, 100)),
        Case(width: 200, height: 50, fit: .cover, enlarge: false, expected: (200, 50)),
        Case(width: 30, height: 200, fit: .cover, enlarge: false, expected: (30, 200)),
        Case(width: 400, height: 400, fit: .cover, enlarge: false, expected: (320, 240)),
        Case(width: 400, height: 400, fit: .cover, enlarge: true, expected: (400, 400)),
        // cover with one side behaves as contain.
        Case(width: 160, height: nil, fit: .cover, enlarge: false, expected: (160, 120)),
        // fill: exactly the box; without enlarge the box shrinks (keeping its aspect) to avoid upscaling.
        Case(width: 100, height: 100, fit: .fill, enlarge: false, expected: (100, 100)),
        Case(width: 50, height: 200, fit: .fill, enlarge: false, expected: (50, 200)),
        Case(width: 400, height: 100, fit: .fill, enlarge: false, expected: (320, 80)),
        Case(width: 400, height: 100, fit: .fill, enlarge: true, expected: (400, 100)),
        Case(width: nil, height: 120, fit: .fill, enlarge: false, expected: (160, 120)),
    ]

    @Test(arguments: cases)
    func dimensions(_ c: Case) throws {
        // Given a 320x240 JPEG and a box
        let spec = try TestThumbnailer.spec(c.width, c.height, fit: c.fit, enlarge: c.enlarge)
        // When it is rendered
        let (thumbnail, image) = try TestThumbnailer.render("progressive.jpg", spec)
        // Then the output has exactly the expected size, and the picture was not distorted or cropped away
        #expect(thumbnail.width == c.expected.width)
        #expect(thumbnail.height == c.expected.height)
        if c.fit == .contain {
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: image.width, height: image.height)) == nil)
        }
    }

    @Test func oneSidedBoxNeverExceedsTheMaximumSide() throws {
        // Given a 64x48 source, a 4096 wide box without height, and enlarge
        let spec = try TestThumbnailer.spec(4096, nil, enlarge: true)
        // When rendered
        let (thumbnail, _) = try TestThumbnailer.render("quadrants.png", spec)
        // Then the unbounded side is bounded by the maximum side too
        #expect(thumbnail.width == 4096)
        #expect(thumbnail.height == 3072)
    }

    @Test func fillStretchesTheWholePicture() throws {
        // Given the quadrant picture (4:3) and a tall 32x96 fill box
        let spec = try TestThumbnailer.spec(32, 96, fit: .fill, enlarge: true)
        // When rendered
        let (_, image) = try TestThumbnailer.render("quadrants.png", spec)
        // Then every quadrant is still there, stretched, none cropped
        #expect(image.width == 32 && image.height == 96)
        #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 32, height: 96)) == nil)
    }
}
