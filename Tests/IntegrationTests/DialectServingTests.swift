// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// The foreign forms beside their thumbnails: imgproxy's `/info/…` (imgproxy's JSON from the source's header,
    /// signed as imgproxy signs, from the source cache without an origin fetch when the source is there), and a
    /// reload of thumbor's keys.
    @Suite(.timeLimit(.minutes(1))) struct DialectServingTests {
        /// imgproxy's signature of `path` under key `secret` and salt `hello` (hexadecimal in the configuration).
        static func signed(_ path: String) -> String {
            let pair = ImgproxyForm.Keys.Pair(
                key: URLSignature.SharedKey(bytes: Array("secret".utf8)), salt: Array("hello".utf8))
            return "/" + ImgproxySignature.signature(path: path.utf8, pair: pair, size: 32) + path
        }

        static func json(_ response: RawHTTPClient.Response) -> [String: Any]? {
            try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        }

        @Test func imgproxysInfoDescribesTheSource() async throws {
            // Given imgproxy's form at /imgproxy/ with a key, and a photo with EXIF at the origin
            let harness = try Harness([
                "imgproxy.enabled": "true", "imgproxy.keys": "[\"736563726574\"]", "imgproxy.salts": "[\"68656c6c6f\"]",
            ])
            harness.origin.route("/c.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            harness.origin.route("/o.jpg", .ok(Fixtures.bytes("orientation-6.jpg")))
            let source = Harness.percentEncoded(harness.origin.url("/c.jpg"))

            // When its info is asked, plainly and with the EXIF
            let plain = try await harness.request("/imgproxy/info" + Self.signed("/plain/\(source)"))
            let withEXIF = try await harness.request("/imgproxy/info" + Self.signed("/exif:1/s:0/plain/\(source)"))

            // Then imgproxy's fields, the first fetched, the second from the source cache
            #expect(plain.status == 200)
            #expect(plain.header("x-source") == "fetched")
            let info = try #require(Self.json(plain))
            #expect(info["format"] as? String == "jpeg")
            #expect(info["width"] as? Int == 64 && info["height"] as? Int == 48)
            #expect(info["size"] as? Int == Fixtures.bytes("copyright.jpg").count)
            #expect(info["exif"] == nil)
            #expect(withEXIF.header("x-source") == "cached")
            let described = try #require(Self.json(withEXIF))
            #expect(described["size"] == nil)
            let exif = try #require(described["exif"] as? [String: String])
            #expect(exif == ["Make": "thumbd", "Model": "fixture"])
            #expect(harness.origin.hits("/c.jpg") == 1)

            // Upright sizes; a base64 source works too
            let turned = Data(harness.origin.url("/o.jpg").utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            let upright = try #require(
                Self.json(try await harness.request("/imgproxy/info" + Self.signed("/\(turned)"))))
            #expect(upright["width"] as? Int == 64 && upright["height"] as? Int == 48)

            // A tampered byte is a 403, an info option thumbd does not show a 400 naming it
            let tampered =
                "/imgproxy/info" + Self.signed("/plain/\(source)").replacingOccurrences(of: "c.jpg", with: "o.jpg")
            expectJSONError(try await harness.request(tampered), status: 403, mentioning: "invalid signature")
            let iptc = try await harness.request("/imgproxy/info" + Self.signed("/iptc:1/plain/\(source)"))
            expectJSONError(iptc, status: 400, mentioning: "unsupported option: iptc")
            // A processing URL beside it still renders
            let thumbnail = try await harness.request("/imgproxy" + Self.signed("/rs:fit:32:32/plain/\(source)@png"))
            #expect(thumbnail.status == 200 && thumbnail.header("content-type") == "image/png")
        }
        @Test func aPlacedCropIsOneEntryThroughThumbAndImgproxy() async throws {
            // Given imgproxy's form without keys, and the 300x300 grid of 100 px cells at the origin
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))

            // When a 100x100 px crop from the south-east corner, 100 px in from the right, is asked through /thumb
            // and then as imgproxy writes it (the crop's own gravity, and `g:` standing in for it)
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=50&crop=100,100&crop_gravity=southeast&crop_offset=100,0&format=png")
            let imgproxy = try await harness.request("/imgproxy/_/w:50/c:100:100:soea:100:0/plain/\(source)@png")
            let byGravity = try await harness.request("/imgproxy/_/w:50/g:soea/c:100:100/plain/\(source)@png")

            // Then /thumb renders it (MISS) and imgproxy's URL is the same entry (HIT-MEMORY, the same bytes)
            #expect(thumb.status == 200 && thumb.header("x-cache") == "MISS")
            #expect(imgproxy.status == 200 && imgproxy.header("x-cache") == "HIT-MEMORY")
            #expect(imgproxy.body == thumb.body)
            let image = try DecodedImage(decoding: thumb.body)
            #expect(image.width == 50 && image.height == 50)
            // The bottom row's middle cell, edge to edge
            let cell = Fixtures.grid[2][1]
            #expect(image.mismatch(in: [(2, 2, cell), (47, 47, cell), (25, 25, cell)], tolerance: 8) == nil)
            // `c:` without a gravity of its own is placed by `g:`: the bottom-right cell, a new entry
            #expect(byGravity.status == 200 && byGravity.header("x-cache") == "MISS", "\(byGravity.text.prefix(200))")
            let corner = try DecodedImage(decoding: byGravity.body)
            #expect(
                corner.mismatch(in: [(2, 2, Fixtures.grid[2][2]), (47, 47, Fixtures.grid[2][2])], tolerance: 8) == nil)
            #expect(harness.origin.hits("/grid.png") == 1)
        }

        @Test func aGravityOffsetIsOneEntryThroughThumbAndImgproxy() async throws {
            // Given imgproxy's form and the 300x300 grid of 100 px cells at the origin
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))

            // When a row-high cover crop from the north edge, 50 CSS px down at dpr 2, is asked both ways
            let imgproxy = try await harness.request("/imgproxy/_/rs:fill:150:50/dpr:2/g:no:0:50/plain/\(source)@png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=150&h=50&dpr=2&dpr_limit=1&fit=cover&gravity=north&gravity_offset=0,50&format=png"
            )

            // Then it is the middle row (100 output px down), one entry
            #expect(imgproxy.status == 200 && imgproxy.header("x-cache") == "MISS", "\(imgproxy.text.prefix(200))")
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.body == imgproxy.body)
            let image = try DecodedImage(decoding: imgproxy.body)
            #expect(image.width == 300 && image.height == 100)
            let probes = (0..<3).map { (x: $0 * 100 + 50, y: 50, colour: Fixtures.grid[1][$0]) }
            #expect(image.mismatch(in: probes, tolerance: 8) == nil)
        }

        @Test func fillDownWithoutEnlargeIsOneEntryThroughThumbAndImgproxy() async throws {
            // Given imgproxy's form and the 64x48 quadrant picture at the origin
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/q.png"))

            // When a 128x128 fill-down from the west, not enlarged, is asked both ways
            let imgproxy = try await harness.request("/imgproxy/_/rs:fill-down:128:128/g:we/plain/\(source)@png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=128&h=128&fit=cover-down&gravity=west&format=png")

            // Then the box's square aspect at the largest size inside the picture, its west part, one entry
            #expect(imgproxy.status == 200 && imgproxy.header("x-cache") == "MISS", "\(imgproxy.text.prefix(200))")
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.body == imgproxy.body)
            let image = try DecodedImage(decoding: imgproxy.body)
            #expect(image.width == 48 && image.height == 48)
            let probes = [
                (x: 16, y: 12, colour: Fixtures.red), (x: 40, y: 12, colour: Fixtures.green),
                (x: 16, y: 36, colour: Fixtures.blue), (x: 40, y: 36, colour: Fixtures.yellow),
            ]
            #expect(image.mismatch(in: probes) == nil)
        }

        @Test func aBoxBeyondTheLargestSideWithoutEnlargeIsThePicturesSize() async throws {
            // Given imgproxy's and thumbor's forms and the 300x300 grid at the origin
            let harness = try Harness([
                "imgproxy.enabled": "true", "thumbor.enabled": "true", "thumbor.allow_unsafe": "true",
            ])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))
            let host = "\(originHost):\(harness.origin.port)"

            // When a 5000x5000 box, nothing enlarged, is asked through imgproxy, thumbor's fit-in and /thumb
            let imgproxy = try await harness.request("/imgproxy/_/rs:fit:5000:5000/plain/\(source)@png")
            let thumbor = try await harness.request(
                "/thumbor/unsafe/fit-in/5000x5000/filters:format(png)/\(host)/grid.png")
            let thumb = try await harness.request("/thumb?url=\(source)&w=4096&h=4096&format=png")

            // Then the picture at its own size, one entry
            #expect(imgproxy.status == 200 && imgproxy.header("x-cache") == "MISS", "\(imgproxy.text.prefix(200))")
            let image = try DecodedImage(decoding: imgproxy.body)
            #expect(image.width == 300 && image.height == 300)
            #expect(image.mismatch(in: [(x: 250, y: 50, colour: Fixtures.grid[0][2])], tolerance: 8) == nil)
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.body == imgproxy.body && thumbor.body == imgproxy.body)
        }

        @Test func thumborsPixelCropBesideAFlipIsOneEntryWithThumb() async throws {
            // Given thumbor's form, unsigned URLs allowed, and the 300x300 grid of 100 px cells at the origin
            let harness = try Harness(["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))

            // When thumbor's crop of the top row's first two cells, mirrored, is asked, then the same plan as /thumb
            let thumbor = try await harness.request(
                "/thumbor/unsafe/0x0:200x100/-100x50/filters:format(png)/\(host)/grid.png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=100&h=50&fit=cover&enlarge=1&flip=h&crop=200,100&crop_gravity=northeast"
                    + "&rounding=thumbor-crop&format=png")

            // Then thumbor's crop comes before its mirror: green on the left, red on the right
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            let image = try DecodedImage(decoding: thumbor.body)
            #expect(image.width == 100 && image.height == 50)
            let probes = [(5, 25, Fixtures.grid[0][1]), (45, 25, Fixtures.grid[0][1]), (55, 25, Fixtures.grid[0][0])]
            #expect(image.mismatch(in: probes + [(95, 25, Fixtures.grid[0][0])], tolerance: 8) == nil)
            // And /thumb's spelling is the same entry
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.body == thumbor.body)

            // A trim with a manual crop: the crop's coordinates are the trimmed picture's (nothing to trim here)
            let trimmed = try await harness.request(
                "/thumbor/unsafe/trim/100x100:200x200/fit-in/50x50/filters:format(png)/\(host)/grid.png")
            #expect(trimmed.status == 200, "\(trimmed.text.prefix(200))")
            let middle = try DecodedImage(decoding: trimmed.body)
            #expect(middle.width == 50 && middle.height == 50)
            #expect(
                middle.mismatch(in: [(3, 3, Fixtures.grid[1][1]), (46, 46, Fixtures.grid[1][1])], tolerance: 8) == nil)
            #expect(harness.origin.hits("/grid.png") == 1)
        }

        @Test func thumborsExactCropKeepsThumborsWholePixelsAndIsOneEntryWithItsThumbQuery() async throws {
            // Given thumbor's form with thumbor.exact_crop on, and a 64x48 grey picture: left half 40, right half 200
            let harness = try Harness([
                "thumbor.enabled": "true", "thumbor.allow_unsafe": "true", "thumbor.exact_crop": "true",
            ])
            harness.origin.route("/grey.png", .ok(Fixtures.bytes("grey.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/grey.png"))

            // When a 1x100 crop of it is asked through thumbor's form, then through /thumb with thumbor's crop
            let thumbor = try await harness.request("/thumbor/unsafe/1x100/filters:format(png)/\(host)/grey.png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=1&h=100&fit=cover&enlarge=1&rounding=thumbor-crop&format=png")

            // Then thumbor's column: ceil(1 × 48 / 100) = 1 wide from round(32 - 0.5) = 32 (half to even), the
            // right half's first, stretched: every pixel 200 (thumbd's own cover takes the middle of 31 and 32)
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            let column = try DecodedImage(decoding: thumbor.body)
            #expect(column.width == 1 && column.height == 100)
            let probes = [(0, 0, RGB(200, 200, 200)), (0, 50, RGB(200, 200, 200)), (0, 99, RGB(200, 200, 200))]
            #expect(column.mismatch(in: probes, tolerance: 1) == nil)
            // And it is one entry with /thumb's query
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY", "\(thumb.text.prefix(200))")
            #expect(thumb.body == thumbor.body)

            // When thumbor keeps the whole height of a wider crop (40x30 of 64x48: equal aspects, nothing cut) and
            // a narrow one on the left (8x48/left: 8 columns from 0)
            let whole = try await harness.request("/thumbor/unsafe/40x30/filters:format(png)/\(host)/grey.png")
            let left = try await harness.request("/thumbor/unsafe/16x96/left/filters:format(png)/\(host)/grey.png")
            // Then the first shows both halves; the second only the left half's 40
            let wholeImage = try DecodedImage(decoding: whole.body)
            #expect(wholeImage.width == 40 && wholeImage.height == 30)
            #expect(
                wholeImage.mismatch(in: [(2, 15, RGB(40, 40, 40)), (37, 15, RGB(200, 200, 200))], tolerance: 2) == nil)
            let leftImage = try DecodedImage(decoding: left.body)
            #expect(leftImage.width == 16 && leftImage.height == 96)
            #expect(leftImage.mismatch(in: [(0, 50, RGB(40, 40, 40)), (15, 50, RGB(40, 40, 40))], tolerance: 2) == nil)
            #expect(harness.origin.hits("/grey.png") == 1)
        }

        @Test func thumborsCropModeIsThumbdsCoverAndOneEntryWithImgproxysFillByDefault() async throws {
            // Given thumbor's and imgproxy's forms with the default thumbor.exact_crop (off), and the grey halves
            let harness = try Harness([
                "thumbor.enabled": "true", "thumbor.allow_unsafe": "true", "imgproxy.enabled": "true",
                "imgproxy.prefix": "/imgproxy/",
            ])
            harness.origin.route("/grey.png", .ok(Fixtures.bytes("grey.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = harness.origin.url("/grey.png")

            // When the same 1x100 crop is asked through thumbor's form and imgproxy's
            let thumbor = try await harness.request("/thumbor/unsafe/1x100/filters:format(png)/\(host)/grey.png")
            let imgproxy = try await harness.request("/imgproxy/insecure/rs:fill:1:100:1/plain/\(source)@png")

            // Then one entry: thumbd's cover, which keeps the aspect exactly and centres its crop of the enlarged
            // picture at 31.7 source pixels, so it shows the left half's grey where thumbor's column 32 is 200
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            #expect(
                imgproxy.status == 200 && imgproxy.header("x-cache") == "HIT-MEMORY", "\(imgproxy.text.prefix(200))")
            #expect(imgproxy.body == thumbor.body)
            let column = try DecodedImage(decoding: thumbor.body)
            let grey = column.colour(x: 0, y: 50)
            #expect(grey.red < 195, "\(grey)")
        }

        @Test func thumborsOrigBesideANumberIsThePicturesSideAfterTheCrop() async throws {
            // Given thumbor's form, unsigned URLs allowed, and the 300x300 grid of 100 px cells at the origin
            let harness = try Harness(["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))

            // When the top two rows are cropped and filled into 150 x the crop's height, then the same as /thumb
            let thumbor = try await harness.request(
                "/thumbor/unsafe/0x0:300x200/150xorig/filters:format(png)/\(host)/grid.png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=150&h=4096&orig=h&fit=cover&enlarge=1&crop=0,0,300,200&format=png")

            // Then 150x200 (the crop's 200, not the source's 300), the middle column with a strip of each side
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            let image = try DecodedImage(decoding: thumbor.body)
            #expect(image.width == 150 && image.height == 200)
            let grid = Fixtures.grid
            let probes = [(10, 50, grid[0][0]), (75, 50, grid[0][1]), (140, 50, grid[0][2]), (75, 150, grid[1][1])]
            #expect(image.mismatch(in: probes, tolerance: 8) == nil)
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY", "\(thumb.text.prefix(200))")
            #expect(thumb.body == thumbor.body)

            // fit-in with the width the picture's: 300x300 inside 300x100, never enlarged
            let fitted = try await harness.request(
                "/thumbor/unsafe/fit-in/-origx100/filters:format(png)/\(host)/grid.png")
            #expect(fitted.status == 200, "\(fitted.text.prefix(200))")
            let small = try DecodedImage(decoding: fitted.body)
            #expect(small.width == 100 && small.height == 100)
            #expect(small.mismatch(in: [(5, 5, grid[0][2]), (95, 5, grid[0][0])], tolerance: 8) == nil)
            #expect(harness.origin.hits("/grid.png") == 1)
        }

        @Test func thumborsProportionScalesTheOutputNotTheBox() async throws {
            // Given thumbor's form, unsigned URLs allowed, and the 300x300 grid at the origin
            let harness = try Harness(["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))

            // When a quarter of fit-in 400x100 is asked, then the same as /thumb, then a tenth without a size
            let thumbor = try await harness.request(
                "/thumbor/unsafe/fit-in/400x100/filters:proportion(0.25):format(png)/\(host)/grid.png")
            let thumb = try await harness.request("/thumb?url=\(source)&w=400&h=100&scale=0.25&format=png")
            let unsized = try await harness.request(
                "/thumbor/unsafe/filters:proportion(0.1):format(png)/\(host)/grid.png")

            // Then 100x100 (what the box gives) times 0.25, one entry; the picture's own 300x300 times 0.1
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            let image = try DecodedImage(decoding: thumbor.body)
            #expect(image.width == 25 && image.height == 25)
            #expect(
                image.mismatch(in: [(1, 1, Fixtures.grid[0][0]), (23, 23, Fixtures.grid[2][2])], tolerance: 8) == nil)
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.body == thumbor.body)
            #expect(unsized.status == 200, "\(unsized.text.prefix(200))")
            let small = try DecodedImage(decoding: unsized.body)
            #expect(small.width == 30 && small.height == 30)
        }

        @Test func thumborsGreyAndSaturationAreThumborsFormulasAndOneEntryWithThumb() async throws {
            // Given thumbor's form, unsigned URLs allowed, and the 300x300 grid at the origin
            let harness = try Harness(["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"])
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/grid.png"))

            // When grayscale() is asked through thumbor's form, then grayscale=rec601 through /thumb
            let grey = try await harness.request(
                "/thumbor/unsafe/300x300/filters:grayscale():format(png)/\(host)/grid.png")
            let box = "w=300&h=300&fit=cover&enlarge=1"
            let thumbGrey = try await harness.request("/thumb?url=\(source)&\(box)&grayscale=rec601&format=png")

            // Then Pillow's Rec. 601 luma of the red cell, (255 × 19595 + 32768) >> 16 = 76, and one entry
            #expect(grey.status == 200 && grey.header("x-cache") == "MISS", "\(grey.text.prefix(200))")
            let greyImage = try DecodedImage(decoding: grey.body)
            let greyProbes = [(50, 50, RGB(76, 76, 76)), (150, 50, RGB(150, 150, 150))]
            #expect(greyImage.mismatch(in: greyProbes, tolerance: 0) == nil)
            #expect(thumbGrey.status == 200 && thumbGrey.header("x-cache") == "HIT-MEMORY")
            #expect(thumbGrey.body == grey.body)

            // When thumbor's negative saturation is asked, then the same through /thumb
            let inverted = try await harness.request(
                "/thumbor/unsafe/300x300/filters:saturation(-0.5):format(png)/\(host)/grid.png")
            let thumbInverted = try await harness.request(
                "/thumb?url=\(source)&\(box)&saturation=-0.5&saturation_model=hsp&format=png")

            // Then thumbor's formula: red (255, 0, 0) about its HSP brightness 139.4 becomes (81, 209, 209); one entry
            #expect(inverted.status == 200 && inverted.header("x-cache") == "MISS", "\(inverted.text.prefix(200))")
            let invertedImage = try DecodedImage(decoding: inverted.body)
            #expect(invertedImage.mismatch(in: [(50, 50, RGB(81, 209, 209))], tolerance: 0) == nil)
            #expect(thumbInverted.status == 200 && thumbInverted.header("x-cache") == "HIT-MEMORY")
            #expect(thumbInverted.body == inverted.body)
        }

        @Test func thumborsFillAutoAndBlurAreOneEntryEachWithThumb() async throws {
            // Given thumbor's form, unsigned URLs allowed, and the 64x48 quadrant picture at the origin
            let harness = try Harness(["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"])
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/q.png"))

            // When fit-in 64x64 with fill(auto) is asked through thumbor's form, then as /thumb
            let thumbor = try await harness.request(
                "/thumbor/unsafe/fit-in/64x64/filters:fill(auto):format(png)/\(host)/q.png")
            let thumb = try await harness.request("/thumb?url=\(source)&w=64&h=64&fit=pad&bg=auto&format=png")

            // Then the bands above and below are the picture's mean colour, one entry
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY", "\(thumb.text.prefix(200))")
            #expect(thumb.body == thumbor.body)
            let image = try DecodedImage(decoding: thumbor.body)
            #expect(image.width == 64 && image.height == 64)
            #expect(image.colour(x: 0, y: 0) == RGB(135, 127, 87) && image.colour(x: 63, y: 63) == RGB(135, 127, 87))

            // And fill(blur) likewise, with the blurred picture above and below
            let blurred = try await harness.request(
                "/thumbor/unsafe/fit-in/64x80/filters:fill(blur):format(png)/\(host)/q.png")
            let blurredThumb = try await harness.request("/thumb?url=\(source)&w=64&h=80&fit=pad&bg=blur&format=png")
            #expect(blurred.status == 200 && blurred.header("x-cache") == "MISS", "\(blurred.text.prefix(200))")
            #expect(blurredThumb.status == 200 && blurredThumb.header("x-cache") == "HIT-MEMORY")
            let pad = try DecodedImage(decoding: blurred.body)
            #expect(pad.width == 64 && pad.height == 80)
            #expect(pad.colour(x: 0, y: 0).red > pad.colour(x: 63, y: 0).red + 20)
            #expect(pad.mismatch(in: [(x: 16, y: 28, colour: Fixtures.red)], tolerance: 4) == nil)
        }

        @Test func imgproxysDprOnASmallSourceIsOneEntryWithThumbsDprLimit() async throws {
            // Given imgproxy's form and the 64x48 quadrant picture at the origin
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/q.png"))

            // When a 40x40 fill at dpr 2 (80x80, more than the picture's 48 rows) is asked both ways, not enlarged
            let imgproxy = try await harness.request("/imgproxy/_/rs:fill:40:40/dpr:2/plain/\(source)@png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=40&h=40&dpr=2&dpr_limit=1&fit=cover&format=png")

            // Then the dpr is lowered to 1.2 (what the picture has): 48x48, the box's square aspect, one entry
            #expect(imgproxy.status == 200 && imgproxy.header("x-cache") == "MISS", "\(imgproxy.text.prefix(200))")
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY", "\(thumb.text.prefix(200))")
            #expect(thumb.body == imgproxy.body)
            let image = try DecodedImage(decoding: imgproxy.body)
            #expect(image.width == 48 && image.height == 48)
            let probes = [
                (x: 12, y: 12, colour: Fixtures.red), (x: 36, y: 12, colour: Fixtures.green),
                (x: 12, y: 36, colour: Fixtures.blue), (x: 36, y: 36, colour: Fixtures.yellow),
            ]
            #expect(image.mismatch(in: probes) == nil)
        }

        @Test func imgproxysSmartCropIsOneEntryWithThumbsAttentionCrop() async throws {
            // Given imgproxy's form and interest.png (grey, a checkerboard at x < 100, 100 ≤ y < 200) at the origin
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/i.png", .ok(Fixtures.bytes("interest.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/i.png"))

            // When a 100x100 crop placed by libvips's attention is asked both ways
            let imgproxy = try await harness.request("/imgproxy/_/rs:fit:100:100/c:100:100:sm/plain/\(source)@png")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=100&h=100&crop=100,100&crop_gravity=attention&format=png")

            // Then the crop holds the patch (a centred one would be grey), one entry
            #expect(imgproxy.status == 200 && imgproxy.header("x-cache") == "MISS", "\(imgproxy.text.prefix(200))")
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY", "\(thumb.text.prefix(200))")
            #expect(thumb.body == imgproxy.body)
            let image = try DecodedImage(decoding: imgproxy.body)
            #expect(image.width == 100 && image.height == 100)
            #expect(image.colour(x: 10, y: 10).distance(to: Fixtures.interestBackground) > 60)
        }

        @Test func thumborsSizesAreThumborsArithmetic() async throws {
            // Given thumbor's form, unsigned URLs allowed, the 320x240 JPEG and the 300x300 grid at the origin
            let harness = try Harness(["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"])
            harness.origin.route("/p.jpg", .ok(Fixtures.bytes("progressive.jpg"), contentType: "image/jpeg"))
            harness.origin.route("/grid.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"
            let source = Harness.percentEncoded(harness.origin.url("/p.jpg"))

            // When full-fit-in 150x10 is asked through thumbor's form, then as /thumb with thumbor's rounding, then
            // without it; the crop mode's 150x0 of the (upright 64x48) orientation-8 picture; a negative saturation
            let thumbor = try await harness.request("/thumbor/unsafe/full-fit-in/150x10/\(host)/p.jpg")
            let thumb = try await harness.request(
                "/thumb?url=\(source)&w=150&h=10&fit=outside&enlarge=1&rounding=thumbor-full-fit-in")
            let own = try await harness.request("/thumb?url=\(source)&w=150&h=10&fit=outside&enlarge=1")
            harness.origin.route("/o8.jpg", .ok(Fixtures.bytes("orientation-8.jpg"), contentType: "image/jpeg"))
            let crop = try await harness.request("/thumbor/unsafe/150x0/\(host)/o8.jpg")
            let inverted = try await harness.request(
                "/thumbor/unsafe/fit-in/30x30/filters:saturation(-1):format(png)/\(host)/grid.png")
            harness.origin.route("/rgba.png", .ok(Fixtures.bytes("rgba.png"), contentType: "image/png"))
            let letterbox = try await harness.request(
                "/thumbor/unsafe/fit-in/48x64/filters:no_upscale():fill(ffffff):format(png)/\(host)/rgba.png")

            // Then thumbor's 150x113 (112.5 rounded up), one entry with /thumb's rounding; thumbd's own 150x112
            #expect(thumbor.status == 200 && thumbor.header("x-cache") == "MISS", "\(thumbor.text.prefix(200))")
            let image = try DecodedImage(decoding: thumbor.body)
            #expect(image.width == 150 && image.height == 113)
            #expect(thumb.status == 200 && thumb.header("x-cache") == "HIT-MEMORY")
            #expect(own.status == 200 && own.header("x-cache") == "MISS")
            let ownImage = try DecodedImage(decoding: own.body)
            #expect(ownImage.width == 150 && ownImage.height == 112)
            // 150 x 112.5 rounded half to even, as thumbor derives the missing side
            let cropped = try DecodedImage(decoding: crop.body)
            #expect(crop.status == 200 && cropped.width == 150 && cropped.height == 112, "\(crop.text.prefix(200))")
            // saturation(-1): the red cell turns to its opposite hue (more green and blue than red), grey stays
            #expect(inverted.status == 200, "\(inverted.text.prefix(200))")
            let turned = try DecodedImage(decoding: inverted.body)
            let red = turned.colour(x: 5, y: 5)
            #expect(red.green > red.red && red.blue > red.red, "\(red)")
            #expect(turned.mismatch(in: [(25, 25, Fixtures.grid[2][2])], tolerance: 8) == nil)
            // no_upscale() beside fill(): the 64x48 picture's 48x64 box is 48x48 (each side at most the picture's)
            #expect(letterbox.status == 200, "\(letterbox.text.prefix(200))")
            let boxed = try DecodedImage(decoding: letterbox.body)
            #expect(boxed.width == 48 && boxed.height == 48)
        }

        @Test func aReloadOfThumborsKeysAppliesToTheNextRequestEvenARepeatedOne() async throws {
            // Given thumbor's form with one key, and a thumbnail in memory through a URL signed with it
            let harness = try Harness([
                "thumbor.enabled": "true", "thumbor.prefix": "/t/", "thumbor.security_keys": "[\"old-key\"]",
            ])
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let signedPart = "fit-in/32x32/filters:format(png)/\(originHost):\(harness.origin.port)/q.png"
            let byOld = "/t/" + ThumborForm.signature(of: signedPart, key: "old-key") + "/" + signedPart
            #expect(try await harness.request(byOld).status == 200)
            #expect(try await harness.request(byOld).header("x-cache") == "HIT-MEMORY")

            // When a reload replaces the key
            var settings = harness.service.settings
            settings.thumbor.securityKeys = ["new-key"]
            let outcome = try harness.service.apply(settings)

            // Then the old signature is refused at once (though the alias path answered it a moment ago), and the new
            // key's is served from memory
            #expect(outcome.changedKeys == ["thumbor.security_keys"])
            expectJSONError(try await harness.request(byOld), status: 403, mentioning: "invalid signature")
            let byNew = "/t/" + ThumborForm.signature(of: signedPart, key: "new-key") + "/" + signedPart
            let answer = try await harness.request(byNew)
            #expect(answer.status == 200 && answer.header("x-cache") == "HIT-MEMORY")
            #expect(harness.origin.hits("/q.png") == 1)
        }
    }
}
