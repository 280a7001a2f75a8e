// SPDX-License-Identifier: Apache-2.0
import Testing
import Thumbnailing
import URLForms

@testable import ThumbdApp

/// thumbor's `meta/` lists the focal points its transformer ended with (`FocalPoint.to_dict`): the faces its face
/// detector found, else its feature detector's corners, moved into a manual crop, else the alignment's point.
@Suite struct ThumborFocalPointsTests {

    static func points(_ path: String, _ regions: DetectedRegions?) throws -> [InfoService.ThumborMeta.FocalPoint]? {
        InfoService.thumborFocalPoints(
            try ThumborPath(afterPrefix: Substring("unsafe/" + path)), picture: (400, 300), regions: regions)
    }

    @Test func facesAreCentredBelowTheHairOffsetAndWeighedByTheirArea() throws {
        let regions = DetectedRegions(
            sourceWidth: 400, sourceHeight: 300,
            faces: [.init(x: 100, y: 50, width: 81, height: 80), .init(x: 10, y: 5, width: 40, height: 40)],
            features: [.init(x: 7.9, y: 3.2)])
        let points = try #require(try Self.points("200x200/smart/example.com/a.jpg", regions))
        // Raised by 12 % of their heights: 50 - 9.6 = 40.4, + 80 / 2 = 80.4 → 80; 5 - 4.8 = 0.2 (still inside the
        // picture, so raised too), + 20 = 20.2 → 20. x: 100 + 81 / 2 (floored) = 140; 10 + 20 = 30.
        #expect(points.map(\.x) == [140, 30])
        #expect(points.map(\.y) == [80, 20])
        #expect(points.map(\.z) == [6480, 1600])
        #expect(points.allSatisfy { $0.origin == "Face Detection" })
        // No face: the corners, weighing 1, truncated.
        let corners = DetectedRegions(
            sourceWidth: 400, sourceHeight: 300, faces: [], features: [.init(x: 7.9, y: 3.2)])
        let feature = try #require(try Self.points("200x200/smart/example.com/a.jpg", corners))
        #expect(feature.map(\.x) == [7] && feature.map(\.y) == [3] && feature.map(\.origin) == ["alignment"])
    }

    @Test func aManualCropDropsThePointsOutsideAndMovesTheRest() throws {
        let regions = DetectedRegions(
            sourceWidth: 400, sourceHeight: 300, faces: [],
            features: [.init(x: 150, y: 120), .init(x: 5, y: 5)])
        let points = try #require(try Self.points("100x50:300x250/200x200/smart/example.com/a.jpg", regions))
        #expect(points.map(\.x) == [50] && points.map(\.y) == [70])
    }

    @Test func withoutDetectionsTheAlignmentsPointOfThePicture() throws {
        let centre = try #require(try Self.points("200x200/example.com/a.jpg", nil))
        #expect(centre.map(\.x) == [200] && centre.map(\.y) == [150] && centre.map(\.origin) == ["alignment"])
        let corner = try #require(try Self.points("200x200/right/bottom/smart/example.com/a.jpg", nil))
        #expect(corner.map(\.x) == [400] && corner.map(\.y) == [300])
        // focal() filters: thumbd keeps only their centre of mass, so it lists none.
        #expect(try Self.points("200x200/filters:focal(10x10:20x20)/example.com/a.jpg", nil) == nil)
    }
}
