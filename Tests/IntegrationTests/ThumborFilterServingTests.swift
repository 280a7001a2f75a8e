// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// thumbor's filters as a thumbor user's URLs carry them (issue 27): what thumbor itself skips is skipped, named
    /// in `X-Thumbd-Skipped-Filters` on every answer (the hot set's too) and counted; `thumbor.skipped_filters:
    /// refuse` makes it a 400; the filters thumbd renders are the same cache entry as their `/thumb` parameters.
    @Suite(.timeLimit(.minutes(1))) struct ThumborFilterServingTests {
        static func harness() throws -> Harness {
            let harness = try Harness([
                "thumbor.enabled": "true", "thumbor.prefix": "/t/", "thumbor.allow_unsafe": "true",
            ])
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            return harness
        }

        static func thumbor(_ harness: Harness, _ options: String) -> String {
            "/t/unsafe/\(options)/\(originHost):\(harness.origin.port)/q.png"
        }

        @Test func whatThumborSkipsIsSkippedNamedAndCountedOnEveryAnswer() async throws {
            // Given thumbor's form, and a URL whose filters thumbor 7.8 skips: too few arguments, no such builtin
            let harness = try Self.harness()
            let plain = Self.thumbor(harness, "fit-in/32x32/filters:format(png)")
            let skipping = Self.thumbor(
                harness, "fit-in/32x32/filters:sharpen(1,2):format(png):red_eye():rgb(10,10):focal(0.89x0.72)")

            // When it is asked, then the URL without them
            let first = try await harness.request(skipping)
            let without = try await harness.request(plain)

            // Then the rest of the URL is rendered: the same picture, one cache entry
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            #expect(first.header("x-thumbd-skipped-filters") == "sharpen, red_eye, rgb, focal")
            #expect(without.header("x-cache") == "HIT-MEMORY")
            #expect(without.header("x-thumbd-skipped-filters") == nil)
            #expect(without.body == first.body)
            // And each skipped filter is counted once, when the URL was parsed
            let scrape = try await harness.scrape(until: { $0["thumbd_thumbor_skipped_filters_total"] == 4 })
            #expect(scrape["thumbd_thumbor_skipped_filters_total"] == 4)

            // And the alias table's and a hot set's answers name them too
            let again = try await harness.request(skipping)
            #expect(again.header("x-cache") == "HIT-MEMORY")
            #expect(again.header("x-thumbd-skipped-filters") == "sharpen, red_eye, rgb, focal")
            let hot = try await HotSetTests.hotHit(harness, skipping)
            #expect(hot.header("x-thumbd-skipped-filters") == "sharpen, red_eye, rgb, focal")
            #expect(hot.body == first.body)
            let plainHot = try await HotSetTests.hotHit(harness, plain)
            #expect(plainHot.header("x-thumbd-skipped-filters") == nil)

            // When the setting says refuse (a reload), the same URL is a 400 naming the first of them
            var settings = harness.service.settings
            settings.thumbor.skippedFilters = .refuse
            _ = try harness.service.apply(settings)
            expectJSONError(try await harness.request(skipping), status: 400, mentioning: "sharpen")
            let unknown = Self.thumbor(harness, "fit-in/32x32/filters:red_eye()")
            expectJSONError(try await harness.request(unknown), status: 400, mentioning: "filter red_eye")
            #expect(try await harness.request(plain).status == 200)
        }

        @Test func aFormatOutsideThumborsListIsSkippedAndNamed() async throws {
            // Given thumbor's form, and format(bmp), which thumbor's format filter ignores (the default format)
            let harness = try Self.harness()
            let bmp = Self.thumbor(harness, "fit-in/32x32/filters:format(bmp):quality(80)")
            let plain = Self.thumbor(harness, "fit-in/32x32/filters:quality(80)")

            // When it is asked, then the URL without it
            let first = try await harness.request(bmp)
            let without = try await harness.request(plain)

            // Then the rest is rendered in the default format and the skip is named: one entry with the plain URL
            #expect(first.status == 200 && first.header("x-cache") == "MISS", "\(first.text.prefix(200))")
            #expect(first.header("x-thumbd-skipped-filters") == "format")
            #expect(without.header("x-cache") == "HIT-MEMORY")
            #expect(without.body == first.body)
        }

        @Test func frameIsFetchedAfterTheSourceAndIsOneEntryWithFrameURL() async throws {
            // Given the quadrants and a 12x12 nine-patch (a magenta-cornered cyan ring; margins 4, 3, 3, 4) at the
            // origin
            let harness = try Self.harness()
            harness.origin.route("/nine.png", .ok(Fixtures.bytes("nine-patch.png"), contentType: "image/png"))
            let patch = "\(originHost):\(harness.origin.port)/nine.png"
            let thumbor = Self.thumbor(harness, "64x48/filters:format(png):frame(\(patch))")
            let thumb = harness.thumbTarget(
                "/q.png",
                "w=64&h=48&fit=cover&enlarge=1&format=png&frame_url="
                    + Harness.percentEncoded(harness.origin.url("/nine.png")) + "&frame_optional=1")

            // When thumbor's frame() is asked, then the same plan through /thumb (thumbor's form skips a frame
            // image that is no nine-patch: frame_optional)
            let image = try await Self.oneEntry(harness, thumbor, thumb)

            // Then the picture grows by the margins with the ring drawn around it, one render and one entry, and
            // the nine-patch was fetched once
            #expect(image.width == 71 && image.height == 55)
            let probes: [(x: Int, y: Int, colour: RGB)] = [
                (1, 1, RGB(200, 40, 200)), (35, 1, RGB(40, 200, 200)), (3, 27, RGB(255, 255, 255)),
                (20, 15, Fixtures.red), (52, 39, Fixtures.yellow),
            ]
            #expect(image.mismatch(in: probes, tolerance: 4) == nil)
            #expect(harness.origin.hits("/nine.png") == 1)

            // And a frame image that is no picture: left out and named (OptionalFrameServingTests), and the service
            // keeps serving
            harness.origin.route("/text.png", .ok(Array("not a picture".utf8), contentType: "image/png"))
            let broken = Self.thumbor(
                harness, "64x48/filters:format(png):frame(\(originHost):\(harness.origin.port)/text.png)")
            let skipped = try await harness.request(broken)
            #expect(skipped.status == 200, "\(skipped.text.prefix(200))")
            #expect(skipped.header("x-thumbd-skipped-filters") == "frame")
            #expect(try DecodedImage(decoding: skipped.body).width == 64)
            #expect(try await harness.request(thumbor).header("x-cache") == "HIT-MEMORY")

            // And a frame the origin does not have: a 502 naming the frame, not the watermark
            let missing = try await harness.request(
                Self.thumbor(harness, "64x48/filters:format(png):frame(\(originHost):\(harness.origin.port)/none.png)"))
            #expect(missing.status == 502 && missing.text.contains("frame unavailable"), "\(missing.text.prefix(200))")
        }

        @Test func severalWatermarksAreLaidInOrderAndAreOneEntryWithWm2() async throws {
            // Given grid.png (300x300, 3x3 cells) and two marks at the origin: the quadrants (64x48: red, green over
            // blue, yellow) and grey.png (64x48: grey 40 on the left, 200 on the right)
            let harness = try Self.harness()
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            harness.origin.route("/a.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            harness.origin.route("/b.png", .ok(Fixtures.bytes("grey.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            // The quadrants at the top-left corner, grey.png half-transparent at the bottom-right one, and grey.png
            // again 32 px in from the left edge, over the right half of the first mark
            let thumbor =
                "/t/unsafe/300x300/filters:format(png):watermark(\(host)/a.png,0,0,0):watermark(\(host)/b.png,-0,-0,50)"
                + ":watermark(\(host)/b.png,32,0,0)/\(host)/grid.png"
            func encoded(_ path: String) -> String { Harness.percentEncoded(harness.origin.url(path)) }
            let thumb = harness.thumbTarget(
                "/grid.png",
                "w=300&h=300&fit=cover&enlarge=1&format=png&wm_url=\(encoded("/a.png"))&wm_pos=northwest"
                    + "&wm2_url=\(encoded("/b.png"))&wm2_fade=50"
                    + "&wm3_url=\(encoded("/b.png"))&wm3_pos=northwest&wm3_x=32")

            // When thumbor's URL is asked, then the same plan through /thumb: one render and one entry
            let image = try await Self.oneEntry(harness, thumbor, thumb)

            // Then each mark is where its filter put it, the third over the first, the grid elsewhere
            #expect(image.width == 300 && image.height == 300)
            let grey = Fixtures.grid[2][2]
            let probes: [(x: Int, y: Int, colour: RGB)] = [
                (16, 12, Fixtures.red), (16, 36, Fixtures.blue),  // the first mark's left half
                (40, 12, RGB(40, 40, 40)), (80, 36, RGB(200, 200, 200)),  // the third mark over it and beside it
                (100, 60, Fixtures.grid[0][1]), (150, 150, Fixtures.grid[1][1]),  // the grid untouched
                (250, 276, RGB(84, 84, 84)), (290, 276, RGB(164, 164, 164)),  // the second, half over grey 128
                (250, 240, grey),
            ]
            #expect(image.mismatch(in: probes, tolerance: 4) == nil)
            // And each mark image was fetched once
            #expect(harness.origin.hits("/a.png") == 1 && harness.origin.hits("/b.png") == 1)
        }

        @Test func aFocalPointBesideAFlipOrARotateIsWhereThumborMeasuresIt() async throws {
            // Given grid.png (300x300; rows red, green, blue / yellow, cyan, magenta / white, black, grey) and a focal
            // point in its top-right cell (250, 50), measured as thumbor measures it: before its flip and rotate
            let harness = try Self.harness()
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            func render(_ options: String) async throws -> DecodedImage {
                let answer = try await harness.request("/t/unsafe/\(options)/\(host)/grid.png")
                #expect(answer.status == 200, "\(options): \(answer.text.prefix(200))")
                return try DecodedImage(decoding: answer.body)
            }
            let grid = Fixtures.grid
            // When a 100x300 column is cut around it and flipped: thumbor cuts the right column, then flips it
            let flipped = try await render("-100x300/filters:format(png):focal(200x0:300x100)")
            #expect(flipped.width == 100 && flipped.height == 300)
            #expect(
                flipped.mismatch(
                    in: [(50, 50, grid[0][2]), (50, 150, grid[1][2]), (50, 250, grid[2][2])], tolerance: 2)
                    == nil)
            // And when a 300x100 row is cut around it and turned a quarter counter-clockwise: thumbor cuts the top
            // row, then turns it (its right end on top)
            let turned = try await render("300x100/filters:format(png):focal(200x0:300x100):rotate(90)")
            #expect(turned.width == 100 && turned.height == 300)
            #expect(
                turned.mismatch(in: [(50, 50, grid[0][2]), (50, 150, grid[0][1]), (50, 250, grid[0][0])], tolerance: 2)
                    == nil)
            // And the same plan through /thumb is the same entry
            let thumb = harness.thumbTarget(
                "/grid.png", "w=100&h=300&fit=cover&enlarge=1&format=png&flip=h&gravity=fpx:250,50,ne")
            #expect(try await harness.request(thumb).header("x-cache") == "HIT-MEMORY")
        }

        @Test func aTrimAndACropInPixelsBesideAFlipCutWhatThumborCutsThenFlip() async throws {
            // Given grid.png inside a 20 px white border (made by thumbd itself: its padding, as PNG)
            let harness = try Self.harness()
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let bordered = try await harness.request(
                harness.thumbTarget("/grid.png", "w=300&h=300&padding=20&bg=ffffff&format=png"))
            #expect(bordered.status == 200)
            harness.origin.route("/bordered.png", .ok(bordered.body, contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            func render(_ options: String) async throws -> DecodedImage {
                let answer = try await harness.request("/t/unsafe/\(options)/\(host)/bordered.png")
                #expect(answer.status == 200, "\(options): \(answer.text.prefix(200))")
                return try DecodedImage(decoding: answer.body)
            }
            // When thumbor's trim and a crop in pixels of the untrimmed picture (10,10 to 210,110: thumbor moves it
            // by the trimmed frame's corner and clamps it, so the grid's 0,0 to 190,90) are asked, with and
            // without a flip
            let plain = try await render("trim/10x10:210x110/200x100/filters:format(png)")
            let flipped = try await render("trim/10x10:210x110/-200x100/filters:format(png)")
            // Then the plain one is the grid's red and green cells, no border, and the flipped one its mirror
            let (red, green) = (Fixtures.grid[0][0], Fixtures.grid[0][1])
            #expect(plain.width == 200 && plain.height == 100 && flipped.width == 200 && flipped.height == 100)
            #expect(
                plain.mismatch(in: [(3, 50, red), (60, 50, red), (150, 50, green), (196, 50, green)], tolerance: 3)
                    == nil)
            #expect(
                flipped.mismatch(in: [(3, 50, green), (50, 50, green), (140, 50, red), (196, 50, red)], tolerance: 3)
                    == nil)
            for (x, y) in [(0, 0), (30, 40), (99, 99), (104, 10), (111, 70), (199, 50)] {
                #expect(
                    flipped.colour(x: 199 - x, y: y).isClose(to: plain.colour(x: x, y: y), tolerance: 3), "(\(x), \(y))"
                )
            }
        }

        @Test func roundCornerIsOneEntryWithItsThumbParameters() async throws {
            // Given the quadrants (64x48: red, green over blue, yellow) and thumbor's round_corner in red
            let harness = try Self.harness()
            let thumbor = Self.thumbor(harness, "64x48/filters:format(png):round_corner(12|8,255,0,255)")
            let thumb = harness.thumbTarget(
                "/q.png", "w=64&h=48&fit=cover&enlarge=1&format=png&radius=12,8&radius_bg=ff00ff")

            // When both are asked
            let first = try await harness.request(thumbor)
            let second = try await harness.request(thumb)

            // Then one render, one entry
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            #expect(second.header("x-cache") == "HIT-MEMORY")
            #expect(first.body == second.body)
            // And each corner is the colour, the centre of each quadrant untouched, the edge midpoints too (the
            // quadrants are 230,30,30 / 30,200,60 over 40,60,220 / 240,220,40)
            let image = try DecodedImage(decoding: first.body)
            #expect(image.width == 64 && image.height == 48)
            let magenta = RGB(255, 0, 255)
            for (x, y) in [(0, 0), (63, 0), (0, 47), (63, 47), (1, 1), (62, 46)] {
                #expect(image.colour(x: x, y: y).isClose(to: magenta, tolerance: 2), "(\(x), \(y))")
            }
            #expect(
                image.mismatch(
                    in: [
                        (16, 12, RGB(230, 30, 30)), (48, 12, RGB(30, 200, 60)), (16, 36, RGB(40, 60, 220)),
                        (48, 36, RGB(240, 220, 40)), (31, 0, RGB(230, 30, 30)), (0, 36, RGB(40, 60, 220)),
                        (12, 8, RGB(230, 30, 30)),
                    ], tolerance: 2) == nil)
        }

        @Test func transparentCornersHaveAlphaAndJPEGPaintsTheColour() async throws {
            let harness = try Self.harness()
            // Transparent corners: PNG keeps them transparent
            let png = try await harness.request(
                Self.thumbor(harness, "64x48/filters:format(png):round_corner(10,0,0,0,true)"))
            let transparent = try DecodedImage(decoding: png.body)
            #expect(transparent.hasAlpha)
            #expect(transparent.alpha(x: 0, y: 0) == 0 && transparent.alpha(x: 63, y: 47) == 0)
            #expect(transparent.alpha(x: 32, y: 24) == 255 && transparent.alpha(x: 32, y: 0) == 255)
            // JPEG cannot: the corners take the colour, as thumbor's JPEG (its alpha dropped) shows them
            let jpeg = try await harness.request(
                Self.thumbor(harness, "64x48/filters:format(jpeg):round_corner(10,0,0,0,true)"))
            let painted = try DecodedImage(decoding: jpeg.body)
            #expect(!painted.hasAlpha)
            #expect(painted.colour(x: 0, y: 0).isClose(to: RGB(0, 0, 0), tolerance: 24))
            #expect(painted.colour(x: 16, y: 12).isClose(to: RGB(230, 30, 30), tolerance: 24))
        }

        /// A thumbor target and its `/thumb` twin: one render (MISS), then one entry (HIT-MEMORY) with the same
        /// bytes; the decoded picture.
        static func oneEntry(_ harness: Harness, _ thumbor: String, _ thumb: String) async throws -> DecodedImage {
            let first = try await harness.request(thumbor)
            let second = try await harness.request(thumb)
            #expect(first.status == 200 && first.header("x-cache") == "MISS", "\(thumbor): \(first.text.prefix(200))")
            #expect(second.status == 200 && second.header("x-cache") == "HIT-MEMORY", "\(thumb)")
            #expect(first.body == second.body)
            return try DecodedImage(decoding: first.body)
        }

        /// thumbor's options on the quadrants and their `/thumb` twin: one render, one entry; the decoded picture.
        static func sameEntry(_ harness: Harness, thumbor: String, thumb: String) async throws -> DecodedImage {
            try await oneEntry(harness, Self.thumbor(harness, thumbor), harness.thumbTarget("/q.png", thumb))
        }

        static let box = "w=64&h=48&fit=cover&enlarge=1&format=png"

        @Test func rgbShiftsEachBandByItsLevels() async throws {
            // rgb(10,-20,0): +25, -51, 0 levels on the quadrants (230,30,30 / 30,200,60 over 40,60,220 / 240,220,40)
            let harness = try Self.harness()
            let image = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):rgb(10,-20,0)", thumb: Self.box + "&rgb=25,-51,0")
            #expect(
                image.mismatch(
                    in: [
                        (16, 12, RGB(255, 0, 30)), (48, 12, RGB(55, 149, 60)), (16, 36, RGB(65, 9, 220)),
                        (48, 36, RGB(255, 169, 40)),
                    ], tolerance: 1) == nil)
        }

        @Test func colorizeMovesEachBandTowardTheColour() async throws {
            // colorize(50,0,100,0000ff): red half-way to 0, green kept, blue all the way to 255
            let harness = try Self.harness()
            let image = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):colorize(50,0,100,0000ff)",
                thumb: Self.box + "&colorize=50,0,100,0000ff")
            #expect(
                image.mismatch(
                    in: [
                        (16, 12, RGB(115, 30, 255)), (48, 12, RGB(15, 200, 255)), (16, 36, RGB(20, 60, 255)),
                        (48, 36, RGB(120, 220, 255)),
                    ], tolerance: 1) == nil)
        }

        @Test func equalizeSpreadsEachBandsHistogram() async throws {
            // Four levels per band, a quarter each: thumbor's formula maps them to 0, 85, 170 and 255
            let harness = try Self.harness()
            let image = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):equalize()", thumb: Self.box + "&equalize=1")
            #expect(
                image.mismatch(
                    in: [
                        (16, 12, RGB(170, 0, 0)), (48, 12, RGB(0, 170, 170)), (16, 36, RGB(85, 85, 255)),
                        (48, 36, RGB(255, 255, 85)),
                    ], tolerance: 1) == nil)
        }

        @Test func convolutionIsACorrelationWithCopiedEdges() async throws {
            // A kernel that takes each pixel's right-hand neighbour (normalised: its sum is 1) moves the picture one
            // pixel left; the last column takes itself (edges copied)
            let harness = try Self.harness()
            let image = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):convolution(0;0;0;0;0;1;0;0;0,3)",
                thumb: Self.box + "&convolution=0;0;0;0;0;1;0;0;0,3")
            #expect(
                image.mismatch(
                    in: [
                        (30, 12, RGB(230, 30, 30)), (31, 12, RGB(30, 200, 60)), (32, 12, RGB(30, 200, 60)),
                        (63, 12, RGB(30, 200, 60)), (0, 36, RGB(40, 60, 220)),
                    ], tolerance: 0) == nil)
            // A blur kernel leaves a flat area as it is
            let blurred = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):convolution(1;2;1;2;4;2;1;2;1,3)",
                thumb: Self.box + "&convolution=1;2;1;2;4;2;1;2;1,3")
            #expect(blurred.mismatch(in: [(16, 12, RGB(230, 30, 30)), (0, 0, RGB(230, 30, 30))], tolerance: 0) == nil)
            // A kernel thumbor's C refuses (an even side) is a 400 here
            let bad = try await harness.request(Self.thumbor(harness, "64x48/filters:convolution(1;2;1;2,2)"))
            expectJSONError(bad, status: 400, mentioning: "convolution")
        }

        @Test func noiseIsGlibcsSequenceForTheSeed() async throws {
            // noise(20,7): levels random() % 20 - 10 after srandom(7), one per pixel row by row, on every band
            let harness = try Self.harness()
            let image = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):noise(20,7)", thumb: Self.box + "&noise=20,7")
            let source = try DecodedImage(decoding: Fixtures.bytes("quadrants.png"))
            var generator = random_data()
            var state = [CChar](repeating: 0, count: 128)
            var mismatches = 0
            state.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                _ = initstate_r(7, base, 128, &generator)
                for y in 0..<48 {
                    for x in 0..<64 {
                        var value: Int32 = 0
                        _ = random_r(&generator, &value)
                        let level = Int(value % 20) - 10
                        let a = source.colour(x: x, y: y)
                        let b = image.colour(x: x, y: y)
                        let expected = [a.red, a.green, a.blue].map { UInt8(max(0, min(255, Int($0) + level))) }
                        if expected != [b.red, b.green, b.blue] { mismatches += 1 }
                    }
                }
            }
            #expect(mismatches == 0)
        }

        @Test func curveTakesEachBandsTableThenTheAllChannelsOne() async throws {
            // red inverted by its own list, then every band inverted by the first list: red back where it was, green
            // and blue inverted
            let harness = try Self.harness()
            let lists = "[(0,255),(255,0)],[(0,255),(255,0)],[(0,0),(255,255)],[(0,0),(255,255)]"
            let image = try await Self.sameEntry(
                harness, thumbor: "64x48/filters:format(png):curve(\(lists))",
                thumb: Self.box + "&curve=0:255,255:0%7C0:255,255:0%7C0:0,255:255%7C0:0,255:255")
            #expect(
                image.mismatch(
                    in: [
                        (16, 12, RGB(230, 225, 225)), (48, 12, RGB(30, 55, 195)), (16, 36, RGB(40, 195, 35)),
                        (48, 36, RGB(240, 35, 215)),
                    ], tolerance: 0) == nil)
        }
    }
}
