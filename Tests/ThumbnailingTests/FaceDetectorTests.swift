// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Faces and good features to track on real photographs (scikit-image's, from its wheel in `.venv-test/`), checked
/// against Debian's python3-opencv running the same cascade with the same parameters on the same grey pixels, and
/// those grey pixels against Pillow's `convert("L")` (thumbor's engine's grey); the analysis intermediate against a
/// render's.
@Suite struct FaceDetectorTests {
    // MARK: - Grey pixels

    @Test(arguments: [("astronaut.png", 512), ("coffee.png", 256), ("camera.png", 512)])
    func greyPixelsArePillowsConvertL(name: String, band: Int) throws {
        let image = try TestThumbnailer.make().analysisImage(Oracles.photograph(name), band: band)
        let pixels = try image.pixels()
        let grey = try image.greyPixels()
        #expect(grey.width == pixels.width && grey.height == pixels.height && grey.bands == 1)
        #expect(grey.width == band || grey.height == band)
        let pillow = try Oracles.pillowGrey(pixels)
        #expect(pillow.count == grey.bytes.count)
        #expect(pillow == grey.bytes, "grey pixels differ from Pillow's convert(\"L\") of the same pixels")
    }

    /// Alpha is ignored, a grey picture's band taken as it is, whatever the profile (converted to sRGB first).
    @Test(arguments: ["rgba.png", "grey-alpha.png", "grey.png", "cmyk.jpg", "display-p3.png"])
    func greyPixelsOfFixturesArePillowsConvertL(name: String) throws {
        let image = try TestThumbnailer.make().analysisImage(Fixtures.bytes(name), band: 64)
        let pixels = try image.pixels()
        let grey = try image.greyPixels()
        #expect(grey.width == pixels.width && grey.height == pixels.height)
        #expect(try Oracles.pillowGrey(pixels) == grey.bytes)
    }

    // MARK: - Faces and features against OpenCV's own Python binding

    @Test func astronautsFaceIsFoundWhereOpenCVFindsIt() throws {
        let image = try TestThumbnailer.make().analysisImage(Oracles.photograph("astronaut.png"), band: 512)
        let regions = try FaceDetector().detect(in: image)
        #expect(regions.sourceWidth == 512 && regions.sourceHeight == 512)
        let oracle = try Oracles.opencv(image.greyPixels())
        #expect(oracle.faces.count == 1)
        #expect(regions.faces.count == 1)
        for (ours, theirs) in zip(regions.faces, oracle.faces) {
            #expect(Oracles.close(ours, theirs, within: 2), "ours \(ours), OpenCV's \(theirs)")
        }
        // Her face: the box lies over the head in the picture's upper middle (x 150...300, y 40...190).
        let face = try #require(regions.faces.first)
        #expect(face.x >= 150 && face.x + face.width <= 300 && face.y >= 40 && face.y + face.height <= 190)
        #expect(face.width >= 80 && face.width == face.height)
        Oracles.expectFeatures(regions.features, equal: oracle.features, scale: (1, 1))
    }

    @Test func boxesAndPointsAreInSourcePixelsWhateverTheBand() throws {
        let source = try Oracles.photograph("astronaut.png")  // 512 x 512
        let thumbnailer = try TestThumbnailer.make()
        let detector = try FaceDetector()
        let full = try detector.detect(in: thumbnailer.analysisImage(source, band: 512))
        let half = try thumbnailer.analysisImage(source, band: 256)
        let regions = try detector.detect(in: half)
        #expect(regions.sourceWidth == 512 && regions.sourceHeight == 512)
        // OpenCV on the 256 px picture, its boxes twice as large: ours, exactly (whole numbers times 2).
        let oracle = try Oracles.opencv(half.greyPixels())
        #expect(regions.faces.count == oracle.faces.count && regions.faces.count == 1)
        for (ours, theirs) in zip(regions.faces, oracle.faces) {
            let doubled = DetectedRegions.Box(
                x: theirs.x * 2, y: theirs.y * 2, width: theirs.width * 2, height: theirs.height * 2)
            #expect(ours == doubled)
        }
        Oracles.expectFeatures(regions.features, equal: oracle.features, scale: (2, 2))
        // The same face as on the full-size picture, within a tenth of its size.
        let large = try #require(full.faces.first), small = try #require(regions.faces.first)
        let tolerance = large.width / 10
        #expect(Oracles.close(large, small, within: tolerance), "512 px: \(large), 256 px: \(small)")
    }

    @Test(arguments: ["coffee.png", "chelsea.png", "rocket.jpg"])
    func picturesWithoutAFaceHaveNoneButFeatures(name: String) throws {
        let image = try TestThumbnailer.make().analysisImage(Oracles.photograph(name), band: 512)
        let regions = try FaceDetector().detect(in: image)
        let oracle = try Oracles.opencv(image.greyPixels())
        #expect(oracle.faces.isEmpty)
        #expect(regions.faces.isEmpty)
        #expect(regions.features.count == 20)  // thumbor's maxCorners: textured photographs give them all
        let grey = try image.greyPixels()
        Oracles.expectFeatures(
            regions.features, equal: oracle.features,
            scale: (
                Double(regions.sourceWidth) / Double(grey.width), Double(regions.sourceHeight) / Double(grey.height)
            ))
    }

    @Test func twoPeopleGiveTwoFaces() throws {
        // The astronaut beside her mirror image (1024 x 512), made with Pillow.
        let source = try Oracles.pillow(
            "from PIL import Image, ImageOps\n"
                + "a = Image.open(sys.argv[1]).convert('RGB')\n"
                + "both = Image.new('RGB', (1024, 512)); both.paste(a, (0, 0)); both.paste(ImageOps.mirror(a), (512, 0))\n"
                + "both.save(out, 'PNG')\n",
            arguments: [Photographs.path("astronaut.png")])
        let thumbnailer = try TestThumbnailer.make()
        let image = try thumbnailer.analysisImage(source, band: 512)  // 512 x 256: faces of about 50 px
        let regions = try FaceDetector().detect(in: image)
        #expect(regions.sourceWidth == 1024 && regions.sourceHeight == 512)
        let oracle = try Oracles.opencv(image.greyPixels())
        #expect(oracle.faces.count == 2)
        #expect(regions.faces.count == 2)
        // One face on each half, mirrored about the middle (x = 512) within a few source pixels.
        let sorted = regions.faces.sorted { $0.x < $1.x }
        if sorted.count == 2 {
            #expect(sorted[0].x + sorted[0].width <= 512 && sorted[1].x >= 512)
            #expect(abs((sorted[0].x + sorted[0].width) - (1024 - sorted[1].x)) <= 6)
            #expect(abs(sorted[0].y - sorted[1].y) <= 6)
        }
    }

    @Test func facesAreInUprightPixelsOfARotatedSource() throws {
        // The astronaut stored turned a quarter counter-clockwise with EXIF orientation 6 (a camera held upright):
        // upright, she is where she is in the PNG.
        let source = try Oracles.pillow(
            "from PIL import Image\n"
                + "a = Image.open(sys.argv[1]).convert('RGB').transpose(Image.Transpose.ROTATE_90)\n"
                + "exif = Image.Exif(); exif[0x0112] = 6\n"
                + "a.save(out, 'JPEG', quality=95, exif=exif.tobytes())\n",
            arguments: [Photographs.path("astronaut.png")])
        let thumbnailer = try TestThumbnailer.make()
        let detector = try FaceDetector()
        let upright = try detector.detect(in: thumbnailer.analysisImage(Oracles.photograph("astronaut.png"), band: 512))
        let rotated = try detector.detect(in: thumbnailer.analysisImage(source, band: 512))
        #expect(rotated.sourceWidth == 512 && rotated.sourceHeight == 512)
        let expected = try #require(upright.faces.first), found = try #require(rotated.faces.first)
        #expect(rotated.faces.count == 1)
        #expect(Oracles.close(expected, found, within: 6), "PNG: \(expected), rotated JPEG: \(found)")
    }

    // MARK: - The analysis intermediate is a render's

    @Test(arguments: ["astronaut.png", "coffee.png", "camera.png", "rocket.jpg"])
    func analysisIntermediateEqualsARendersIntermediate(name: String) throws {
        let source = try Oracles.photograph(name)
        let thumbnailer = try TestThumbnailer.make()
        let made = Mutex<IntermediateImage?>(nil)
        _ = try thumbnailer.render(source, spec: TestThumbnailer.spec(100, 100)) {
            (band, make) throws(ThumbnailError) -> IntermediateImage in
            let image = try make()
            made.withLock { $0 = image }
            return image
        }
        let rendered = try #require(made.withLock { $0 })
        let analysed = try thumbnailer.analysisImage(source, band: rendered.band)
        #expect(analysed.band == rendered.band)
        #expect(analysed.byteCount == rendered.byteCount)
        let ours = try analysed.pixels(), theirs = try rendered.pixels()
        #expect(ours.width == theirs.width && ours.height == theirs.height && ours.bands == theirs.bands)
        #expect(ours.bytes == theirs.bytes, "the analysis intermediate's pixels differ from the render's")
        // And a render handed the analysis intermediate gives the bytes of a render that made its own.
        let spec = try TestThumbnailer.spec(100, 100)
        let shared = try thumbnailer.render(source, spec: spec) { (_, _) throws(ThumbnailError) in analysed }
        #expect(try shared.bytes == thumbnailer.render(source, spec: spec).bytes)
    }

    @Test(arguments: [
        "rgba.png", "grey-alpha.png", "cmyk.jpg", "display-p3.png", "orientation-6.jpg", "orientation-5.jpg",
        "animated.gif", "quadrants.webp", "rgb16.png",
    ])
    func analysisIntermediateEqualsARendersForFixtures(name: String) throws {
        let source = Fixtures.bytes(name)
        let thumbnailer = try TestThumbnailer.make { $0.intermediateBands = [64, 512] }
        let made = Mutex<IntermediateImage?>(nil)
        _ = try thumbnailer.render(source, spec: TestThumbnailer.spec(24, 24, animated: false)) {
            (band, make) throws(ThumbnailError) -> IntermediateImage in
            let image = try make()
            made.withLock { $0 = image }
            return image
        }
        let rendered = try #require(made.withLock { $0 })
        let analysed = try thumbnailer.analysisImage(source, band: rendered.band)
        #expect(try analysed.pixels() == rendered.pixels())
    }

    @Test func analysisChecksTheHeaderAsARenderDoes() throws {
        let source = try Oracles.photograph("astronaut.png")
        let small = try TestThumbnailer.make { $0.maxSourcePixels = 100_000 }
        #expect(throws: ThumbnailError.tooManyPixels(width: 512, height: 512)) {
            try small.analysisImage(source, band: 512)
        }
        #expect(throws: ThumbnailError.notAnImage) { try small.analysisImage(Array("not a picture".utf8), band: 512) }
        // A damaged source fails while it is decoded, a refused format before, as a render does.
        let thumbnailer = try TestThumbnailer.make()
        let spec = try TestThumbnailer.spec(64, 64)
        for name in ["truncated.jpg", "image.svg", "image.bmp"] {
            var rendered: ThumbnailError?, analysed: ThumbnailError?
            do { _ = try thumbnailer.render(Fixtures.bytes(name), spec: spec) } catch {
                rendered = error
            }
            do { _ = try thumbnailer.analysisImage(Fixtures.bytes(name), band: 512) } catch { analysed = error }
            switch (rendered, analysed) {
            case (.decodeFailed?, .decodeFailed?), (.notAnImage?, .notAnImage?): break
            case (.unsupportedFormat(let a)?, .unsupportedFormat(let b)?): #expect(a == b)
            default:
                Issue.record(
                    "\(name): render \(String(describing: rendered)), analysis \(String(describing: analysed))")
            }
        }
    }

    // MARK: - Configuration

    @Test func aMissingOrBrokenCascadeIsAnError() throws {
        let missing = "/nonexistent/haarcascade.xml"
        #expect(throws: FaceDetectorError.self) { try FaceDetector(configuration: .init(cascadePath: missing)) }
        do {
            _ = try FaceDetector(configuration: .init(cascadePath: missing))
        } catch {
            guard case .cascadeUnreadable(let path, _) = error else {
                Issue.record("expected cascadeUnreadable, got \(error)")
                return
            }
            #expect(path == missing)
        }
        // A file that is not a cascade (a PNG) fails the same way, without a crash.
        let notACascade = try Photographs.path("astronaut.png")
        #expect(throws: FaceDetectorError.self) { try FaceDetector(configuration: .init(cascadePath: notACascade)) }
        #expect(throws: FaceDetectorError.self) { try FaceDetector(configuration: .init(scaleFactor: 1)) }
    }

    @Test func theLBPCascadeFindsTheAstronautToo() throws {
        let lbp = "/usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml"
        let image = try TestThumbnailer.make().analysisImage(Oracles.photograph("astronaut.png"), band: 512)
        let regions = try FaceDetector(configuration: .init(cascadePath: lbp)).detect(in: image)
        let oracle = try Oracles.opencv(image.greyPixels(), cascade: lbp)
        #expect(regions.faces.count == 1 && oracle.faces.count == 1)
        for (ours, theirs) in zip(regions.faces, oracle.faces) {
            #expect(Oracles.close(ours, theirs, within: 2), "ours \(ours), OpenCV's \(theirs)")
        }
    }

    @Test func threadsDetectAtOnceWithTheSameAnswer() throws {
        let image = try TestThumbnailer.make().analysisImage(Oracles.photograph("astronaut.png"), band: 512)
        let detector = try FaceDetector()
        let expected = try detector.detect(in: image)
        let answers = Mutex<[DetectedRegions]>([])
        let threads = (0..<4).map { _ in
            Thread {
                for _ in 0..<3 {
                    if let regions = try? detector.detect(in: image) { answers.withLock { $0.append(regions) } }
                }
            }
        }
        threads.forEach { $0.start() }
        let deadline = ContinuousClock.now + .seconds(60)
        while answers.withLock({ $0.count }) < 12, ContinuousClock.now < deadline { usleep(10_000) }
        let all = answers.withLock { $0 }
        #expect(all.count == 12)
        #expect(all.allSatisfy { $0 == expected })
    }
}

/// The oracles: scikit-image's photographs, Pillow (in `.venv-test/`) and Debian's python3-opencv (`/usr/bin/python3`).
enum Oracles {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What OpenCV's Python binding found.
    struct Found {
        var faces: [DetectedRegions.Box]
        var features: [DetectedRegions.Point]
    }

    static var packageRoot: String { Photographs.packageRoot }

    static func photograph(_ name: String) throws -> [UInt8] { try Photographs.bytes(name) }

    /// Runs `python` on `script` (its arguments after it) and returns what it printed; fails on a non-zero exit or
    /// after 120 s.
    static func run(_ python: String, _ script: String, _ arguments: [String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no \(python): `make test` installs it (python3-opencv, make test-venv)")
        }
        let child = try ChildProcess(executable: python, arguments: ["-c", script] + arguments)
        guard let termination = child.wait(timeout: .seconds(120)) else {
            _ = child.kill(SIGKILL)
            _ = child.wait(timeout: .seconds(5))
            throw Failure(description: "\(python) did not finish in 120 s")
        }
        guard termination == .exited(0) else {
            throw Failure(description: "\(python) \(termination): \(child.standardError.suffix(2000))")
        }
        return child.standardOutput
    }

    /// Pillow's `convert("L")` of `pixels` (RGB, RGBA, L or LA).
    static func pillowGrey(_ pixels: IntermediatePixels) throws -> [UInt8] {
        let directory = try TempDirectory(prefix: "thumbd-faces")
        let input = directory.appending("pixels.raw"), output = directory.appending("grey.raw")
        try Data(pixels.bytes).write(to: URL(fileURLWithPath: input))
        let mode = ["L", "LA", "RGB", "RGBA"][pixels.bands - 1]
        _ = try run(
            packageRoot + "/.venv-test/bin/python",
            "import sys\nfrom PIL import Image\n"
                + "im = Image.frombytes(sys.argv[1], (int(sys.argv[2]), int(sys.argv[3])), open(sys.argv[4], 'rb').read())\n"
                + "open(sys.argv[5], 'wb').write(im.convert('L').tobytes())\n",
            [mode, String(pixels.width), String(pixels.height), input, output])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// A picture made by a Pillow `script` (which saves into the file object `out`), as bytes.
    static func pillow(_ script: String, arguments: [String]) throws -> [UInt8] {
        let directory = try TempDirectory(prefix: "thumbd-faces")
        let output = directory.appending("made")
        _ = try run(
            packageRoot + "/.venv-test/bin/python", "import sys\nout = open(sys.argv[-1], 'wb')\n" + script,
            arguments + [output])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// Debian's python3-opencv on `grey` with thumbor's parameters: the cascade with 1.2, 4 and a smallest face of
    /// max(20, min(w, h) / 15); good features to track with 20 corners, 0.04, 1.
    static func opencv(
        _ grey: IntermediatePixels, cascade: String = FaceDetector.Configuration.defaultCascadePath
    ) throws -> Found {
        let directory = try TempDirectory(prefix: "thumbd-faces")
        let input = directory.appending("grey.raw")
        try Data(grey.bytes).write(to: URL(fileURLWithPath: input))
        let printed = try run(
            "/usr/bin/python3",
            "import sys, json, numpy, cv2\n"
                + "w, h = int(sys.argv[2]), int(sys.argv[3])\n"
                + "img = numpy.fromfile(sys.argv[1], dtype=numpy.uint8).reshape((h, w))\n"
                + "c = cv2.CascadeClassifier(sys.argv[4])\n"
                + "assert not c.empty()\n"
                + "m = max(20, int(min(w, h) / 15))\n"
                + "faces = c.detectMultiScale(img, 1.2, 4, minSize=(m, m))\n"
                + "p = cv2.goodFeaturesToTrack(img, maxCorners=20, qualityLevel=0.04, minDistance=1.0, "
                + "useHarrisDetector=False)\n"
                + "print(json.dumps({'faces': [[int(v) for v in f] for f in faces], "
                + "'features': [] if p is None else [[float(v) for v in q.ravel()] for q in p]}))\n",
            [input, String(grey.width), String(grey.height), cascade])
        guard let object = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: [[Double]]],
            let faces = object["faces"], let features = object["features"]
        else { throw Failure(description: "unexpected output from python3-opencv: \(printed)") }
        return Found(
            faces: faces.map { .init(x: Int($0[0]), y: Int($0[1]), width: Int($0[2]), height: Int($0[3])) },
            features: features.map { .init(x: $0[0], y: $0[1]) })
    }

    static func close(_ a: DetectedRegions.Box, _ b: DetectedRegions.Box, within pixels: Int) -> Bool {
        abs(a.x - b.x) <= pixels && abs(a.y - b.y) <= pixels && abs(a.width - b.width) <= pixels
            && abs(a.height - b.height) <= pixels
    }

    /// Our points (source pixels) against OpenCV's (the intermediate's, `scale` source pixels each way): the same
    /// number, and each of ours within a hundredth of a pixel of one of theirs mapped the same way (pixel centres).
    static func expectFeatures(
        _ ours: [DetectedRegions.Point], equal theirs: [DetectedRegions.Point], scale: (x: Double, y: Double),
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(ours.count == theirs.count, sourceLocation: sourceLocation)
        let mapped = theirs.map {
            DetectedRegions.Point(x: ($0.x + 0.5) * scale.x - 0.5, y: ($0.y + 0.5) * scale.y - 0.5)
        }
        for point in ours {
            let nearest = mapped.map { hypot($0.x - point.x, $0.y - point.y) }.min() ?? .infinity
            #expect(nearest < 0.01, "feature \(point) is not one of OpenCV's", sourceLocation: sourceLocation)
        }
    }
}
