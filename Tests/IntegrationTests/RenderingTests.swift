// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp

extension Integration {
    /// Fits, sizes, formats, gravities and awkward inputs through HTTP, checked by decoding what comes back
    /// (dimensions, format, and pixels where orientation or colour is the point).
    @Suite(.timeLimit(.minutes(2))) struct RenderingTests {
        /// Serves `fixture` at a path of its own on the shared origin and returns the shared harness.
        private func serving(_ fixture: String, as path: String? = nil) throws -> (Harness, String) {
            let harness = try Harness.shared()
            let path = path ?? "/render/\(fixture)"
            harness.origin.route(path, .ok(Fixtures.bytes(fixture)))
            return (harness, path)
        }

        // MARK: - Fit and size

        /// progressive.jpg is 320x240 (the quadrants scaled by 5).
        static let sizes: [(parameters: String, width: Int, height: Int)] = [
            ("w=100&h=100", 100, 75),  // contain is the default
            ("w=100&h=100&fit=contain", 100, 75),
            ("w=100&h=100&fit=cover", 100, 100),
            ("w=100&h=100&fit=fill", 100, 100),
            ("w=160", 160, 120),  // one side: aspect kept
            ("h=60", 80, 60),
            ("w=50&dpr=2", 100, 75),
            ("w=50&dpr=1.5", 75, 56),
            ("w=1000", 320, 240),  // no upscaling by default
            ("w=1000&h=1000&fit=cover", 320, 240),  // nor for cover: the source as it is
            ("w=640&h=100&fit=fill", 320, 50),  // fill scales its box down rather than upscale
            ("w=640&enlarge=1", 640, 480),
            ("w=640&enlarge=true&dpr=2", 1280, 960),
        ]

        @Test(arguments: sizes)
        func fitAndSizeGiveTheRightDimensions(_ parameters: String, width: Int, height: Int) async throws {
            // Given a 320x240 source
            let (harness, path) = try serving("progressive.jpg")
            // When a thumbnail is asked for with these parameters (PNG output, to check pixels exactly)
            let response = try await harness.request(harness.thumbTarget(path, parameters + "&format=png"))
            // Then it has the expected size, and the quadrants are where they belong (stretched, cropped or not)
            #expect(response.status == 200)
            let image = try response.image()
            #expect(image.width == width && image.height == height)
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: image.width, height: image.height)) == nil)
        }

        // MARK: - Formats

        static let vips = Result { try Vips.initialize() }

        @Test(arguments: [ImageFormat.jpeg, .png, .webp, .avif])
        func explicitFormatIsWrittenWithoutVary(_ format: ImageFormat) async throws {
            let canSaveAVIF = try Self.vips.get().canSaveAVIF
            try #require(format != .avif || canSaveAVIF, "this libvips cannot write AVIF")
            // Given a source and an Accept header that would pick another format under auto
            let (harness, path) = try serving("quadrants.png")
            // When the format is named
            let response = try await harness.request(
                harness.thumbTarget(path, "w=64&format=\(format == .jpeg ? "jpg" : format.rawValue)"),
                headers: [("Accept", "image/webp,image/avif")])
            // Then that format comes back, labelled, and the answer does not vary on Accept
            #expect(response.status == 200)
            #expect(response.header("content-type") == format.mimeType)
            #expect(response.header("vary") == nil)
            let image = try response.image()
            #expect(image.mimeType == format.mimeType)
            #expect(image.width == 64 && image.height == 48)
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 32) == nil)
        }

        /// An Accept header, the source, and the format `auto` must pick (AVIF only when libvips can write it).
        static let negotiations: [(accept: String?, fixture: String, expected: ImageFormat)] = [
            (nil, "quadrants.png", .jpeg),
            ("*/*", "quadrants.png", .jpeg),
            ("image/*", "quadrants.png", .jpeg),
            ("image/webp,*/*;q=0.8", "quadrants.png", .webp),
            ("image/avif,image/webp,*/*", "quadrants.png", .avif),
            ("image/avif;q=0,image/webp", "quadrants.png", .webp),
            ("image/webp;q=0", "quadrants.png", .jpeg),
            (nil, "rgba.png", .png),  // transparency needs PNG when neither WebP nor AVIF is accepted
            ("image/webp", "rgba.png", .webp),
        ]

        @Test(arguments: negotiations)
        func autoFormatFollowsAcceptAndSaysVary(
            _ accept: String?, fixture: String, expected: ImageFormat
        ) async throws {
            let canSaveAVIF = try Self.vips.get().canSaveAVIF
            let expected = expected == .avif && !canSaveAVIF ? ImageFormat.webp : expected
            // Given a source and a client's Accept header
            let (harness, path) = try serving(fixture)
            // When the format is left to negotiation
            let response = try await harness.request(
                harness.thumbTarget(path, "w=32&format=auto"), headers: accept.map { [("Accept", $0)] } ?? [])
            // Then the negotiated format comes back, and caches are told the answer depends on Accept
            #expect(response.status == 200)
            #expect(response.header("content-type") == expected.mimeType)
            #expect(response.header("vary") == "Accept")
            #expect(try response.image().mimeType == expected.mimeType)
        }

        @Test func acceptSentOnSeveralLinesCountsEveryLine() async throws {
            // Given a client that splits its Accept header over two lines, WebP on the second
            let (harness, path) = try serving("quadrants.png")
            let response = try await harness.request(
                harness.thumbTarget(path, "w=32"), headers: [("Accept", "text/html"), ("Accept", "image/webp")])
            // Then WebP is negotiated, as if the lines were one comma-separated list
            #expect(response.header("content-type") == "image/webp")
        }

        @Test func formatDefaultsToAuto() async throws {
            let (harness, path) = try serving("quadrants.png")
            let response = try await harness.request(
                harness.thumbTarget(path, "w=32"), headers: [("Accept", "image/webp")])
            #expect(response.header("content-type") == "image/webp")
            #expect(response.header("vary") == "Accept")
        }

        @Test func qualityReachesTheEncoder() async throws {
            // Given a photo-like source (noise compresses badly, so quality shows in the size)
            let (harness, path) = try serving("progressive.jpg")
            // When it is encoded at quality 10 and at 95
            let low = try await harness.request(harness.thumbTarget(path, "w=320&format=jpeg&q=10"))
            let high = try await harness.request(harness.thumbTarget(path, "w=320&format=jpeg&q=95"))
            // Then both are the same picture, and the low-quality one is clearly smaller
            #expect(try low.image().width == 320 && high.image().width == 320)
            #expect(low.body.count * 3 / 2 < high.body.count, "q=10: \(low.body.count) B, q=95: \(high.body.count) B")
            #expect(low.header("etag") != high.header("etag"))
        }

        // MARK: - Gravity

        /// The grid cell (row, column) at the middle of what each compass gravity keeps.
        static let compassCells: [(gravity: String, row: Int, column: Int)] = [
            ("centre", 1, 1), ("center", 1, 1), ("north", 0, 1), ("south", 2, 1), ("east", 1, 2), ("west", 1, 0),
            ("northeast", 0, 2), ("northwest", 0, 0), ("southeast", 2, 2), ("southwest", 2, 0),
        ]

        @Test(arguments: compassCells)
        func compassGravityKeepsItsSide(_ gravity: String, row: Int, column: Int) async throws {
            // Given grid.png: 300x300 in 3x3 cells of known colours
            let (harness, path) = try serving("grid.png")
            // When a wide strip and a tall strip are cropped with this gravity
            let crop = "fit=cover&gravity=\(gravity)&format=png"
            let wide = try await harness.request(harness.thumbTarget(path, "w=300&h=100&\(crop)"))
            let tall = try await harness.request(harness.thumbTarget(path, "w=100&h=300&\(crop)"))
            // Then the wide one is the gravity's row of cells and the tall one its column
            let rowImage = try wide.image()
            let columnImage = try tall.image()
            #expect(rowImage.width == 300 && rowImage.height == 100)
            #expect(columnImage.width == 100 && columnImage.height == 300)
            let rowProbes = (0..<3).map { (x: $0 * 100 + 50, y: 50, colour: Fixtures.grid[row][$0]) }
            let columnProbes = (0..<3).map { (x: 50, y: $0 * 100 + 50, colour: Fixtures.grid[$0][column]) }
            #expect(rowImage.mismatch(in: rowProbes, tolerance: 8) == nil)
            #expect(columnImage.mismatch(in: columnProbes, tolerance: 8) == nil)
        }

        @Test(arguments: ["attention", "entropy"])
        func smartGravityFindsTheBusyPatch(_ gravity: String) async throws {
            // Given a flat grey picture with a busy patch in its left third
            let (harness, path) = try serving("interest.png")
            // When a tall strip is cropped with a smart gravity
            let response = try await harness.request(
                harness.thumbTarget(path, "w=100&h=300&fit=cover&gravity=\(gravity)&format=png"))
            // Then the strip holds the patch, which the centre would have missed
            let image = try response.image()
            #expect(image.width == 100 && image.height == 300)
            #expect(!image.colour(x: 50, y: 150).isClose(to: Fixtures.interestBackground, tolerance: 60))
        }

        // MARK: - Inputs

        @Test(arguments: 1...8)
        func exifOrientationIsApplied(_ orientation: Int) async throws {
            // Given the quadrants stored with EXIF orientation N
            let (harness, path) = try serving("orientation-\(orientation).jpg")
            // When rendered at its own size
            let response = try await harness.request(harness.thumbTarget(path, "w=64&format=png"))
            // Then it comes out upright, with the quadrants in place and no orientation tag left
            let image = try response.image()
            #expect(image.width == 64 && image.height == 48)
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 32) == nil)
            #expect(!image.hasOrientationTag)
        }

        @Test func cmykComesOutAsSRGBWithTheRightColours() async throws {
            let (harness, path) = try serving("cmyk.jpg")
            let response = try await harness.request(harness.thumbTarget(path, "w=64&format=png"))
            let image = try response.image()
            #expect(image.bands == 3)
            let probes = zip(Fixtures.quadrantProbes(width: 64, height: 48), Fixtures.cmykQuadrants).map {
                (x: $0.x, y: $0.y, colour: $1)
            }
            #expect(image.mismatch(in: probes, tolerance: 40) == nil)
        }

        @Test func sixteenBitInputGivesEightBitOutput() async throws {
            let (harness, path) = try serving("rgb16.png")
            let response = try await harness.request(harness.thumbTarget(path, "w=64&format=png"))
            // PNG IHDR: the bit depth is byte 24 of the file
            #expect(response.body.count > 24 && response.body[24] == 8)
            let image = try response.image()
            #expect(image.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 8) == nil)
        }

        @Test func greyWithAlphaStaysGreyWithAlpha() async throws {
            // Given a grey picture whose right half is transparent, and a client without WebP or AVIF
            let (harness, path) = try serving("grey-alpha.png")
            let response = try await harness.request(harness.thumbTarget(path, "w=64"))
            // Then auto picks PNG, which keeps grey and alpha
            #expect(response.header("content-type") == "image/png")
            let image = try response.image()
            #expect(image.bands == 2)
            let dark = RGB(Fixtures.greyDark, Fixtures.greyDark, Fixtures.greyDark)
            #expect(image.colour(x: 16, y: 24).isClose(to: dark, tolerance: 4))
            #expect(image.alpha(x: 16, y: 24) == 255)
            #expect(image.alpha(x: 48, y: 24) == 0)
        }

        /// The AVIF holds three images (a HEIF image collection, which libvips reads as pages, as heifsave writes
        /// them); libheif 1.15 reads no AVIF sequence track (`avis`): such a file gives its primary image.
        @Test(arguments: ["animated.gif", "animated.webp", "animated.avif"])
        func animatedSourceStaysAnimatedOrGivesItsFirstFrame(_ fixture: String) async throws {
            let (harness, path) = try serving(fixture)
            // Animated by default: every frame, in order
            let animated = try await harness.request(harness.thumbTarget(path, "w=48&format=webp"))
            let frames = try DecodedImage(decoding: animated.body, allFrames: true)
            #expect(frames.frameCount == 3 && frames.width == 48 && frames.pageHeight == 32)
            for (frame, colour) in Fixtures.animationFrames.enumerated() {
                #expect(frames.colour(frame: frame, x: 24, y: 16).isClose(to: colour, tolerance: 32))
            }
            // animated=0: the first frame
            let response = try await harness.request(harness.thumbTarget(path, "w=48&format=webp&animated=0"))
            let image = try response.image()
            #expect(image.pageCount == 1)
            #expect(image.width == 48 && image.height == 32)
            #expect(image.colour(x: 24, y: 16).isClose(to: Fixtures.red, tolerance: 32))
        }

        @Test func metadataIsStripped() async throws {
            let (harness, path) = try serving("metadata.jpg")
            let response = try await harness.request(harness.thumbTarget(path, "w=64&format=jpeg"))
            let image = try response.image()
            #expect(!image.hasEXIF && !image.hasXMP)
        }
    }
}
