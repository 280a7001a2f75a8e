// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

/// What one URL signed by a real builder must give (ThumborBuilderTests, ImgproxyBuilderTests), and the check of an
/// answer against it: status, type, size, then the pixels where the option changes them.
struct BuilderExpectation: Sendable {
    var status = 200
    var width = 0
    var height = 0
    var mime = "image/jpeg"
    /// Colours at points of the answer.
    var probes: [(x: Int, y: Int, colour: RGB)] = []
    /// A pixel that must be grey (its three channels within 4 of each other).
    var grey: (x: Int, y: Int)?
    /// A pixel that must be far (over 40) from each of these colours: a blend.
    var blend: (x: Int, y: Int, from: [RGB])?
    /// Whether the answer carries EXIF data, when that is what the case shows.
    var exif: Bool?
    /// Whether the answer carries an ICC profile, when that is what the case shows.
    var icc: Bool?
    /// An error's text.
    var error: String?
    /// A thumbor `meta/` answer: the source's size (the answer's target is ``width`` x ``height``).
    var meta: (width: Int, height: Int)?

    /// The quadrants' four colours at the quadrant centres of a `width` x `height` answer, in reading order.
    static func quadrants(_ width: Int, _ height: Int, _ colours: [RGB]) -> [(x: Int, y: Int, colour: RGB)] {
        zip(
            [
                (width / 4, height / 4), (width * 3 / 4, height / 4), (width / 4, height * 3 / 4),
                (width * 3 / 4, height * 3 / 4),
            ], colours
        ).map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// Checks an image answer (or a refusal) named `name` for `url` against this expectation; a `meta` one is the
    /// caller's to check (it is JSON).
    func check(_ name: String, _ url: String, _ response: RawHTTPClient.Response) throws {
        #expect(response.status == status, "\(name): \(url) → \(response.text.prefix(200))")
        if let error {
            expectJSONError(response, status: status, mentioning: error)
            return
        }
        guard response.status == 200 else { return }
        #expect(response.header("content-type") == mime, "\(name)")
        guard meta == nil else { return }
        let image = try response.image()
        #expect(image.width == width && image.height == height, "\(name): \(image.width)x\(image.height)")
        guard image.width == width && image.height == height else { return }
        for probe in probes {
            let colour = image.colour(x: probe.x, y: probe.y)
            #expect(colour.isClose(to: probe.colour, tolerance: 40), "\(name) at (\(probe.x), \(probe.y)): \(colour)")
        }
        if let grey {
            let colour = image.colour(x: grey.x, y: grey.y)
            #expect(colour.distance(to: RGB(colour.red, colour.red, colour.red)) <= 4, "\(name): \(colour)")
        }
        if let blend {
            let colour = image.colour(x: blend.x, y: blend.y)
            for pure in blend.from { #expect(colour.distance(to: pure) > 40, "\(name): \(colour) vs \(pure)") }
        }
        if let exif { #expect(image.hasEXIF == exif, "\(name)") }
        if let icc { #expect(image.hasICCProfile == icc, "\(name)") }
    }
}
