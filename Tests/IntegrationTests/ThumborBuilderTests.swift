// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// thumbor's URL form through a whole service, with URLs signed by libthumbor (thumbor's own library, from PyPI:
    /// Tests/Builders/thumbor_urls.py): every grammar element and filter thumbd honours, each answer checked for its
    /// size, format and pixels; what it refuses, refused by name; a tampered byte, a 403.
    @Suite(.timeLimit(.minutes(3))) struct ThumborBuilderTests {
        static let key = "my-security-key"

        typealias Expected = BuilderExpectation

        static func quadrants(_ width: Int, _ height: Int, _ colours: [RGB]) -> [(x: Int, y: Int, colour: RGB)] {
            BuilderExpectation.quadrants(width, height, colours)
        }

        static let (red, green, blue, yellow) = (Fixtures.red, Fixtures.green, Fixtures.blue, Fixtures.yellow)
        static let upright = [red, green, blue, yellow]

        /// (what it shows, libthumbor's options as JSON without `image_url`, the image's path at the origin, expected).
        static func cases(mark: String) -> [(String, String, String, Expected)] {
            [
                (
                    "size", #""width": 32, "height": 24"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "fit-in", #""width": 32, "height": 32, "fit_in": true"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "crop mode fills the box", #""width": 32, "height": 32"#, "q.png",
                    .init(width: 32, height: 32, probes: quadrants(32, 32, upright))
                ),
                (
                    "flip (-W)", #""width": 32, "height": 24, "flip": true"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [green, red, yellow, blue]))
                ),
                (
                    "flop (-H)", #""width": 32, "height": 24, "flop": true"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [blue, yellow, red, green]))
                ),
                (
                    "flip and flop", #""width": 32, "height": 24, "flip": true, "flop": true"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [yellow, blue, green, red]))
                ),
                (
                    "width only", #""width": 16"#, "q.png",
                    .init(width: 16, height: 12, probes: quadrants(16, 12, upright))
                ),
                (
                    "height only", #""height": 12"#, "q.png",
                    .init(width: 16, height: 12, probes: quadrants(16, 12, upright))
                ),
                (
                    "halign left", #""width": 16, "height": 48, "halign": "left""#, "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, red), (8, 36, blue)])
                ),
                (
                    "halign right", #""width": 16, "height": 48, "halign": "right""#, "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, green), (8, 36, yellow)])
                ),
                (
                    "valign top", #""width": 64, "height": 16, "valign": "top""#, "q.png",
                    .init(width: 64, height: 16, probes: [(16, 8, red), (48, 8, green)])
                ),
                (
                    "valign bottom", #""width": 64, "height": 16, "valign": "bottom""#, "q.png",
                    .init(width: 64, height: 16, probes: [(16, 8, blue), (48, 8, yellow)])
                ),
                (
                    "flip with halign left: the source's left, mirrored",
                    #""width": 16, "height": 48, "halign": "left", "flip": true"#, "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, red), (8, 36, blue)])
                ),
                ("smart", #""width": 32, "height": 32, "smart": true"#, "q.png", .init(width: 32, height: 32)),
                (
                    "focal: the box's centre in source pixels",
                    #""width": 16, "height": 48, "filters": ["focal(48x0:64x48)"]"#,
                    "q.png", .init(width: 16, height: 48, probes: [(8, 12, green), (8, 36, yellow)])
                ),
                (
                    "manual crop", #""crop": [[0, 0], [32, 24]], "width": 16, "height": 12"#, "q.png",
                    .init(width: 16, height: 12, probes: [(8, 6, red)])
                ),
                (
                    "manual crop, fit-in", #""crop": [[32, 24], [64, 48]], "width": 16, "height": 16, "fit_in": true"#,
                    "q.png", .init(width: 16, height: 12, probes: [(8, 6, yellow)])
                ),
                (
                    "trim", #""trim": true, "width": 64, "height": 48, "fit_in": true"#, "bordered.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "trim:top-left:10", #""trim": ["top-left", 10], "width": 64, "height": 48, "fit_in": true"#,
                    "bordered.png", .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "trim:bottom-right:10", #""trim": ["bottom-right", 10], "width": 64, "height": 48, "fit_in": true"#,
                    "bordered.png", .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "trim with a flip", #""trim": true, "width": 64, "height": 48, "fit_in": true, "flip": true"#,
                    "bordered.png", .init(width: 64, height: 48, probes: quadrants(64, 48, [green, red, yellow, blue]))
                ),
                (
                    // thumbor trims, then moves the crop by the frame's corner: the crop is the untrimmed picture's
                    // (8…40 x 8…32 is the red quadrant inside the 8 px frame)
                    "trim with a manual crop",
                    #""trim": true, "crop": [[8, 8], [40, 32]], "width": 16, "height": 12, "fit_in": true"#,
                    "bordered.png", .init(width: 16, height: 12, probes: [(2, 2, red), (13, 9, red)])
                ),
                (
                    // a crop that misses the trimmed frame is dropped: the whole frame
                    "trim with a crop in the frame",
                    #""trim": true, "crop": [[0, 0], [6, 6]], "width": 64, "height": 48, "fit_in": true"#,
                    "bordered.png", .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "quality", #""width": 64, "height": 48, "filters": ["quality(95)"]"#, "q.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "format(png)", #""width": 32, "height": 24, "filters": ["format(png)"]"#, "q.png",
                    .init(width: 32, height: 24, mime: "image/png", probes: quadrants(32, 24, upright))
                ),
                (
                    "format(webp)", #""width": 32, "height": 24, "filters": ["format(webp)"]"#, "q.png",
                    .init(width: 32, height: 24, mime: "image/webp", probes: quadrants(32, 24, upright))
                ),
                (
                    "format(gif)", #""width": 32, "height": 24, "filters": ["format(gif)"]"#, "q.png",
                    .init(width: 32, height: 24, mime: "image/gif", probes: quadrants(32, 24, upright))
                ),
                (
                    "format(avif)", #""width": 32, "height": 24, "filters": ["format(avif)"]"#, "q.png",
                    .init(width: 32, height: 24, mime: "image/avif", probes: quadrants(32, 24, upright))
                ),
                (
                    "fill(black)", #""width": 32, "height": 32, "fit_in": true, "filters": ["fill(black)"]"#, "q.png",
                    .init(width: 32, height: 32, probes: [(16, 1, RGB(0, 0, 0)), (16, 30, RGB(0, 0, 0)), (8, 10, red)])
                ),
                (
                    "fill(ff00ff)", #""width": 32, "height": 32, "fit_in": true, "filters": ["fill(ff00ff)"]"#, "q.png",
                    .init(width: 32, height: 32, probes: [(16, 1, RGB(255, 0, 255)), (24, 22, yellow)])
                ),
                (
                    "background_color",
                    #""width": 64, "height": 48, "fit_in": true, "filters": ["background_color(000000)"]"#, "rgba.png",
                    .init(width: 64, height: 48, mime: "image/png", probes: [(16, 12, red), (16, 36, RGB(0, 0, 0))])
                ),
                (
                    "blur", #""width": 64, "height": 48, "filters": ["blur(4)"]"#, "q.png",
                    .init(width: 64, height: 48, probes: [(8, 6, red)], blend: (32, 12, [red, green]))
                ),
                (
                    "sharpen", #""width": 32, "height": 24, "filters": ["sharpen(2,1,true)"]"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "grayscale", #""width": 32, "height": 24, "filters": ["grayscale()"]"#, "q.png",
                    .init(width: 32, height: 24, grey: (8, 6))
                ),
                (
                    "brightness",
                    #""width": 300, "height": 300, "fit_in": true, "filters": ["brightness(40)", "format(png)"]"#,
                    "g.png", .init(width: 300, height: 300, mime: "image/png", probes: [(150, 250, RGB(102, 102, 102))])
                ),
                (
                    "contrast", #""width": 64, "height": 48, "filters": ["contrast(100)", "format(png)"]"#, "q.png",
                    .init(width: 64, height: 48, mime: "image/png", probes: [(16, 12, RGB(255, 0, 0))])
                ),
                (
                    "saturation", #""width": 64, "height": 48, "filters": ["saturation(0)"]"#, "q.png",
                    .init(width: 64, height: 48, grey: (16, 12))
                ),
                (
                    "rotate(90): counter-clockwise, after the resize",
                    #""width": 32, "height": 24, "fit_in": true, "filters": ["rotate(90)"]"#, "q.png",
                    .init(width: 24, height: 32, probes: quadrants(24, 32, [green, yellow, red, blue]))
                ),
                (
                    "rotate(180)", #""width": 32, "height": 24, "fit_in": true, "filters": ["rotate(180)"]"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [yellow, blue, green, red]))
                ),
                (
                    "rotate(270)", #""width": 32, "height": 24, "fit_in": true, "filters": ["rotate(270)"]"#, "q.png",
                    .init(width: 24, height: 32, probes: quadrants(24, 32, [blue, red, yellow, green]))
                ),
                (
                    "upscale", #""width": 128, "height": 96, "fit_in": true, "filters": ["upscale()"]"#, "q.png",
                    .init(width: 128, height: 96, probes: quadrants(128, 96, upright))
                ),
                (
                    "fit-in never enlarges", #""width": 128, "height": 96, "fit_in": true"#, "q.png",
                    .init(width: 64, height: 48)
                ),
                (
                    "the crop mode enlarges", #""width": 128, "height": 96"#, "q.png",
                    .init(width: 128, height: 96, probes: quadrants(128, 96, upright))
                ),
                (
                    "no_upscale", #""width": 128, "height": 96, "filters": ["no_upscale()"]"#, "q.png",
                    .init(width: 64, height: 48)
                ),
                (
                    "stretch", #""width": 32, "height": 32, "filters": ["stretch()"]"#, "q.png",
                    .init(width: 32, height: 32, probes: quadrants(32, 32, upright))
                ),
                (
                    "proportion", #""width": 64, "height": 48, "fit_in": true, "filters": ["proportion(0.5)"]"#,
                    "q.png", .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "max_bytes",
                    #""width": 300, "height": 300, "fit_in": true, "filters": ["max_bytes(4000)", "format(jpeg)"]"#,
                    "g.png", .init(width: 300, height: 300)
                ),
                (
                    "watermark in the corner",
                    #""width": 150, "height": 150, "fit_in": true, "filters": ["watermark(\#(mark),-5,-5,0)", "format(png)"]"#,
                    "g.png",
                    .init(width: 150, height: 150, mime: "image/png", probes: [(129, 133, yellow), (90, 105, red)])
                ),
                (
                    "watermark at 50 % transparency",
                    #""width": 150, "height": 150, "fit_in": true, "filters": ["watermark(\#(mark),10,10,50)", "format(png)"]"#,
                    "g.png",
                    .init(width: 150, height: 150, mime: "image/png", blend: (26, 46, [blue, Fixtures.grid[0][0]]))
                ),
                (
                    "watermark centred at half the width",
                    #""width": 150, "height": 150, "fit_in": true, "filters": ["watermark(\#(mark),center,center,0,50)", "format(png)"]"#,
                    "g.png",
                    .init(width: 150, height: 150, mime: "image/png", probes: [(55, 61, red), (94, 89, yellow)])
                ),
                // thumbor spreads the tiles: across 150 // 64 = 2, 22 px apart (x = 0, 86); down 3, 6 // 2 = 3 px
                // apart (y = 0, 51, 102)
                (
                    "watermark tiled",
                    #""width": 150, "height": 150, "fit_in": true, "filters": ["watermark(\#(mark),repeat,repeat,0)", "format(png)"]"#,
                    "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png",
                        probes: [(16, 12, red), (102, 12, red), (16, 63, red)])
                ),
                (
                    "strip_exif, strip_icc, autojpg",
                    #""width": 32, "height": 24, "filters": ["strip_exif()", "strip_icc()", "autojpg()"]"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "meta: thumbor's JSON", #""meta": true, "width": 32, "height": 24, "flip": true"#, "q.png",
                    .init(width: 32, height: 24, mime: "application/json", meta: (64, 48))
                ),
                (
                    "meta with a manual crop",
                    #""meta": true, "crop": [[0, 0], [32, 24]], "width": 16, "fit_in": true"#,
                    "q.png", .init(width: 16, height: 12, mime: "application/json", meta: (64, 48))
                ),
                (
                    "full-fit-in covers the box", #""width": 32, "height": 32, "full_fit_in": true"#, "q.png",
                    .init(width: 43, height: 32, probes: quadrants(43, 32, upright))
                ),
                (
                    "adaptive-fit-in turns the box", #""width": 24, "height": 32, "adaptive_fit_in": true"#, "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    // thumbor 7.8's own frame draws nothing; thumbd skips a frame image that is no nine-patch
                    "frame: a picture without nine-patch markers is left out, as without the filter",
                    #""width": 32, "height": 32, "filters": ["frame(\#(mark))"]"#, "q.png",
                    .init(width: 32, height: 32, probes: quadrants(32, 32, upright))
                ),
            ]
        }

        /// thumbor's `meta/` JSON: the source's size and frames, a resize to the target, the target.
        static func expectThumborMeta(
            _ response: RawHTTPClient.Response, name: String, source: (width: Int, height: Int), expected: Expected
        ) {
            let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            guard let thumbor = object?["thumbor"] as? [String: Any], let answer = thumbor["source"] as? [String: Any],
                let target = thumbor["target"] as? [String: Any],
                let operations = thumbor["operations"] as? [[String: Any]]
            else {
                Issue.record("\(name): not thumbor's meta JSON: \(response.text)")
                return
            }
            #expect(answer["width"] as? Int == source.width && answer["height"] as? Int == source.height, "\(name)")
            #expect(answer["frameCount"] as? Int == 1, "\(name)")
            #expect((answer["url"] as? String)?.hasSuffix("/q.png") == true, "\(name)")
            #expect(target["width"] as? Int == expected.width && target["height"] as? Int == expected.height, "\(name)")
            let resize = operations.first { $0["type"] as? String == "resize" }
            #expect(resize?["width"] as? Int == expected.width, "\(name): \(operations)")
            if name.contains("crop") {
                #expect(operations.first?["type"] as? String == "crop" && operations.first?["right"] as? Int == 32)
            } else {
                #expect(operations.last?["type"] as? String == "flip_horizontally", "\(name): \(operations)")
            }
        }

        @Test func libthumborsSignedURLsAreAnsweredAsThumborWould() async throws {
            // Given thumbd with thumbor's form at / (signed only), and the quadrants, the grid, a bordered picture
            // and a transparent one at the origin
            let harness = try Harness([
                "thumbor.enabled": "true", "thumbor.prefix": "/", "thumbor.security_keys": "[\"\(Self.key)\"]",
            ])
            for (path, fixture) in [("q.png", "quadrants.png"), ("g.png", "grid.png"), ("rgba.png", "rgba.png")] {
                harness.origin.route("/" + path, .ok(Fixtures.bytes(fixture), contentType: "image/png"))
            }
            // The quadrants in an 8 px white frame, made by thumbd itself (PNG: the frame is exactly white)
            let framed = try await harness.request(
                harness.thumbTarget("/q.png", "w=64&h=48&padding=8&bg=ffffff&format=png"))
            #expect(framed.status == 200)
            harness.origin.route("/bordered.png", .ok(framed.body, contentType: "image/png"))
            harness.origin.route("/m.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let host = "\(originHost):\(harness.origin.port)"

            // When libthumbor signs every case (the image without a scheme, as thumbor users write it)
            let cases = Self.cases(mark: "\(host)/m.png")
            let options = cases.map { "{\($0.1), \"image_url\": \"\(host)/\($0.2)\"}" }
            let urls = try URLBuilders.run(
                "thumbor_urls.py", spec: "{\"key\": \"\(Self.key)\", \"cases\": [\(options.joined(separator: ", "))]}")
            #expect(urls.count == cases.count)
            #expect(urls.count >= 40)

            // Then each answer is what thumbor's URL asks
            var sizes: [String: Int] = [:]
            for ((name, _, _, expected), url) in zip(cases, urls) {
                let response = try await harness.request(url)
                try expected.check(name, url, response)
                guard response.status == 200 else { continue }
                sizes[name] = response.body.count
                if let meta = expected.meta {
                    Self.expectThumborMeta(response, name: name, source: meta, expected: expected)
                }
                if name == "max_bytes" { #expect(response.header("x-thumbd-quality") != nil) }
                if name.hasPrefix("frame") { #expect(response.header("x-thumbd-skipped-filters") == "frame") }
            }

            // A tampered byte anywhere is a 403, and unsafe/ is not allowed here
            let signed = try #require(urls.first)
            let tampered = signed.replacingOccurrences(of: "32x24", with: "32x25")
            expectJSONError(try await harness.request(tampered), status: 403, mentioning: "invalid signature")
            let unsafe = "/unsafe/" + signed.split(separator: "/", maxSplits: 2)[1]
            expectJSONError(try await harness.request(unsafe), status: 403, mentioning: "missing signature")
        }
    }
}
