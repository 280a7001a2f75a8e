// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport
import Thumbnailing

/// The per-source analysis against other projects' code (Tests/Builders/analysis_oracle.py): Wolt's BlurHash C
/// encoder and decoder (Debian's python3-blurhash), thumbhash-python (Evan Wallace's reference, ported), ImageHash
/// 4.3.2's phash and dhash, and a k-means written in numpy; on scikit-image's photographs and the test fixtures.
@Suite struct AnalysisOracleTests {
    /// Pictures of every kind the hashes meet: photographs (PNG and JPEG), a PNG with alpha, grey with alpha, flat
    /// quadrants, a progressive JPEG.
    static let pictures: [Picture] = [
        .photograph("astronaut.png"), .photograph("coffee.png"), .photograph("chelsea.png"),
        .photograph("rocket.jpg"), .fixture("rgba.png"), .fixture("grey-alpha.png"), .fixture("quadrants.png"),
        .fixture("progressive.jpg"), .astronautWithAlpha,
    ]
    /// The photographs (and the astronaut with alpha): pictures with detail at every frequency. On a flat picture
    /// (the quadrant fixtures) most of pHash's 64 coefficients are zero in exact arithmetic, so each bit is the sign
    /// of a rounding error and neither side can be matched (15 to 29 bits measured); dHash still is (0 bits).
    static let withAlpha: Set<String> = ["rgba.png", "grey-alpha.png", Picture.astronautWithAlpha.name]
    static let detailed = pictures.filter { $0.isPhotograph || $0.name == Picture.astronautWithAlpha.name }

    // MARK: - BlurHash

    @Test(arguments: pictures)
    func blurhashDecodesToThePictureAsTheReferencesOwnDoes(picture: Picture) throws {
        let (analysis, pixels) = try Self.analyse(picture)
        let answer = try AnalysisOracle.ask(
            "blurhash", python: AnalysisOracle.debianPython,
            [
                "hash": analysis.blurhash, "components": analysis.blurhashComponents, "source": picture.path,
                "width": pixels.width, "height": pixels.height, "rgba": AnalysisOracle.hex(pixels.rgba),
            ])
        let ours = try #require(answer["oursToSource"] as? Double)
        let theirs = try #require(answer["theirsToSource"] as? Double)
        let between = try #require(answer["oursToTheirs"] as? Double)
        print(
            "blurhash \(picture): ours \(analysis.blurhash) reference \(answer["referenceOfMiniature"] ?? "")"
                + " / \(answer["referenceOfSource"] ?? ""); to source ours \(ours) theirs \(theirs) between \(between)")
        #expect(analysis.blurhash.count == 4 + 2 * 4 * 3)
        #expect(answer["referenceOfMiniature"] as? String == analysis.blurhash)
        // Measured: thumbd's hash is the reference C encoder's of the same miniature, character for character, on
        // every picture. Against the reference's hash of Pillow's scaling of the source, decoded within 3.4 levels,
        // except rocket.jpg (libjpeg's shrink-on-load gives slightly other pixels): 5.5 apart, 13.9 from the picture
        // against the reference's own 12.7 (thumbd's miniature fits 32 px since 2026-11-28, a box average of the
        // intermediate's 128 px reduction).
        // BlurHash has no alpha: thumbd's transparent pixels are black (premultiplied away), Pillow's
        // convert("RGB") keeps the colour under them, so only opaque pictures are compared with the source's hash
        // (astronaut-alpha.png: 7.6 levels apart).
        if !Self.withAlpha.contains(picture.name) {
            #expect(ours <= theirs + 2)
            #expect(between <= 6)
        }
    }

    // MARK: - ThumbHash

    @Test(arguments: pictures)
    func thumbhashDecodesToThePictureAsTheReferencesOwnDoes(picture: Picture) throws {
        let (analysis, pixels) = try Self.analyse(picture)
        let answer = try AnalysisOracle.ask(
            "thumbhash", python: AnalysisOracle.venvPython,
            [
                "hash": analysis.thumbhash, "source": picture.path, "width": pixels.width, "height": pixels.height,
                "rgba": AnalysisOracle.hex(pixels.rgba),
            ])
        let ours = try #require(answer["oursToSource"] as? Double)
        let theirs = try #require(answer["theirsToSource"] as? Double)
        let between = try #require(answer["oursToTheirs"] as? Double)
        print(
            "thumbhash \(picture): ours \(analysis.thumbhash) reference \(answer["referenceOfMiniature"] ?? "")"
                + " / \(answer["referenceOfSource"] ?? ""); to source ours \(ours) theirs \(theirs) between \(between)")
        // Measured: the reference's hash of thumbd's miniature is thumbd's, byte for byte. Against
        // thumbhash-python's own hash of the source (Pillow's thumbnail of the full decode, up to 100 px): on the
        // photographs decoded within 4.0 levels (astronaut and chelsea: the same bytes) and as close to the picture as
        // the reference's within 0.1 levels, except rocket.jpg (libjpeg's shrink-on-load): 9.3 from the picture against
        // the reference's 7.3; the flat four-colour fixtures 5.8 and 5.9 apart (since 2026-11-28 thumbd's miniature
        // fits 32 px, for its cost: ThumbHash's components then see fewer pixels of each edge).
        #expect(answer["referenceOfMiniature"] as? String == analysis.thumbhash)
        #expect(ours <= theirs + 3)
        #expect(between <= 6)
    }

    // MARK: - pHash and dHash

    @Test(arguments: pictures)
    func hashesAreImagehashs(picture: Picture) throws {
        let (analysis, pixels) = try Self.analyse(picture)
        let answer = try AnalysisOracle.ask(
            "imagehash", python: AnalysisOracle.venvPython,
            [
                "source": picture.path, "phashGrey": AnalysisOracle.hex(pixels.phashGrey),
                "dhashGrey": AnalysisOracle.hex(pixels.dhashGrey),
            ])
        let phash = try #require((answer["phash"] as? NSNumber)?.uint64Value)
        let dhash = try #require((answer["dhash"] as? NSNumber)?.uint64Value)
        let phashOfGrey = try #require((answer["phashOfGrey"] as? NSNumber)?.uint64Value)
        let dhashOfGrey = try #require((answer["dhashOfGrey"] as? NSNumber)?.uint64Value)
        let phashBits = (phash ^ analysis.phash).nonzeroBitCount, dhashBits = (dhash ^ analysis.dhash).nonzeroBitCount
        print(
            "imagehash \(picture): phash \(String(analysis.phash, radix: 16)) vs \(String(phash, radix: 16)) "
                + "\(phashBits) bits; dhash \(String(analysis.dhash, radix: 16)) vs \(String(dhash, radix: 16)) \(dhashBits) bits"
        )
        // imagehash on thumbd's own grey copies: the same bits. On the source file (Pillow's full decode and resize):
        // measured 0 bits on the PNG photographs, 4 (pHash) and 1 (dHash) on rocket.jpg, whose intermediate comes
        // from libjpeg's shrink-on-load.
        #expect(dhashOfGrey == analysis.dhash)
        #expect(dhashBits <= 4)
        if Self.detailed.contains(where: { $0.name == picture.name }) {
            #expect(phashOfGrey == analysis.phash)
            #expect(phashBits <= 6)
        }
    }

    // MARK: - Colours

    @Test(arguments: pictures)
    func coloursAreAKMeanss(picture: Picture) throws {
        let (analysis, _) = try Self.analyse(picture)
        let palette = analysis.palette.map { [Int($0.colour.red), Int($0.colour.green), Int($0.colour.blue)] }
        let average = analysis.average
        let answer = try AnalysisOracle.ask(
            "kmeans", python: AnalysisOracle.venvPython,
            [
                "source": picture.path, "k": 8, "seed": 0, "palette": palette,
                "average": [Int(average.red), Int(average.green), Int(average.blue)],
            ])
        let averageDeltaE = try #require(answer["averageDeltaE"] as? Double)
        let clusterToPalette = try #require(answer["largestClusterToPalette"] as? Double)
        let swatchToClusters = try #require(answer["largestSwatchToClusters"] as? Double)
        print(
            "kmeans \(picture): average \(average.hex) dE \(averageDeltaE); largest cluster to palette \(clusterToPalette); "
                + "largest swatch \(analysis.palette.first.map { "\($0.colour.hex) \($0.share)" } ?? "") to clusters \(swatchToClusters); "
                + "clusters \(answer["clusters"] ?? "")")
        // Measured (CIE76): the average within 0.6 of numpy's on the PNGs, 3.7 on rocket.jpg (libjpeg's
        // shrink-on-load); the largest k-means cluster within 4.6 of a palette colour, the largest swatch within 6.9
        // of a cluster centre (rocket.jpg, whose blues k-means and libimagequant cut differently; 5.7 chelsea.png,
        // 5.5 progressive.jpg, under 4.1 elsewhere); about 0.5 on the flat fixtures. A just noticeable difference
        // is about 2.3. With the 64 px miniature (the palette's pixels since 2026-11-28, for its cost), the largest
        // swatch of astronaut-alpha.png (its alpha ramp) is 10.5 from a cluster centre; the others as above.
        #expect(averageDeltaE <= 4)
        #expect(clusterToPalette <= 7)
        #expect(swatchToClusters <= 11)
    }

    // MARK: - Helpers

    /// A picture's path and its analysis (at the render's first band, 512 px), with the analysers' pixels.
    static func analyse(_ picture: Picture, options: AnalysisOptions = AnalysisOptions()) throws -> (
        SourceAnalysis, AnalysisPixels
    ) {
        let thumbnailer = try TestThumbnailer.make()
        let image = try thumbnailer.analysisImage(Data(contentsOf: URL(fileURLWithPath: picture.path)), band: 512)
        return (
            try thumbnailer.analyse(image, options: options),
            try image.analysisPixels(paletteColours: options.paletteColours)
        )
    }
}

/// A test picture: one of scikit-image's photographs or a fixture.
struct Picture: Sendable, CustomTestStringConvertible, CustomStringConvertible {
    var name: String
    var isPhotograph: Bool

    static func photograph(_ name: String) -> Picture { Picture(name: name, isPhotograph: true) }
    /// The astronaut (PNG) with an alpha ramp across (0 on the left, 255 on the right) and a transparent corner,
    /// made once per process with Pillow.
    static let astronautWithAlpha = Picture(name: "astronaut-alpha.png", isPhotograph: false)
    static func fixture(_ name: String) -> Picture { Picture(name: name, isPhotograph: false) }

    var path: String {
        get throws {
            if isPhotograph { return try Photographs.path(name) }
            if name == Self.astronautWithAlpha.name { return try Self.madePath() }
            return Fixtures.url(name).path
        }
    }

    private static func madePath() throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/thumbd-analysis-\(getpid())-astronaut-alpha.png"
        if FileManager.default.fileExists(atPath: path) { return path }
        let bytes = try Oracles.pillow(
            "from PIL import Image\n"
                + "a = Image.open(sys.argv[1]).convert('RGBA')\n"
                + "ramp = Image.linear_gradient('L').rotate(90).resize(a.size)\n"
                + "ramp.paste(0, (0, 0, 128, 128))\n"
                + "a.putalpha(ramp.transpose(Image.FLIP_LEFT_RIGHT))\n"
                + "a.save(out, 'PNG')\n",
            arguments: [Photographs.path("astronaut.png")])
        try Data(bytes).write(to: URL(fileURLWithPath: path + ".part"))
        _ = rename(path + ".part", path)
        return path
    }
    var description: String { name }
    var testDescription: String { name }
}

/// Runs Tests/Builders/analysis_oracle.py.
enum AnalysisOracle {
    static let debianPython = "/usr/bin/python3"
    static var venvPython: String { Oracles.packageRoot + "/.venv-test/bin/python" }

    /// The script's answer to `command` with `request`'s fields.
    static func ask(_ command: String, python: String, _ request: [String: Any]) throws -> [String: Any] {
        let directory = try TempDirectory(prefix: "thumbd-analysis")
        let path = directory.appending("request.json")
        var request = request
        request["command"] = command
        try JSONSerialization.data(withJSONObject: request).write(to: URL(fileURLWithPath: path))
        let printed = try Oracles.run(
            python, "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')",
            [Oracles.packageRoot + "/Tests/Builders/analysis_oracle.py", path])
        guard let answer = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any] else {
            throw Oracles.Failure(description: "unexpected answer from analysis_oracle.py: \(printed)")
        }
        return answer
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
