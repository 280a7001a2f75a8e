// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// imgproxy's URL form through a whole service, with URLs signed by the `imgproxy` package from PyPI
    /// (Tests/Builders/imgproxy_urls.py), plus `plain/` sources signed by the script itself: every option the form
    /// honours, by its full name and its alias, each answer checked for its size, format and pixels as
    /// docs/compatibility.md maps it onto `/thumb`; what it refuses, refused by name; a tampered byte or a foreign
    /// signature, a 403.
    @Suite(.timeLimit(.minutes(3))) struct ImgproxyBuilderTests {
        /// imgproxy's documented pair: the key `secret` and the salt `hello`, in hexadecimal.
        static let (key, salt) = ("736563726574", "68656c6c6f")

        /// The package's keyword arguments for one URL. It always writes `g:<gravity>/rs:<type>:<w>:<h>:<enlarge>`
        /// after the `advanced` options, and a later option replaces an earlier one: a `nil` type or side is
        /// written empty (`rs::::0`), which leaves the advanced options' own type and sides in force.
        struct Sign: Sendable {
            var type: String?
            var width: Int?
            var height: Int?
            var gravity = "ce"
            var enlarge = false
            var ext = ""
            var advanced: [String] = []

            func json(imageURL: String) -> String {
                let fields: [String: Any] = [
                    "image_url": imageURL, "resizing_type": type ?? "", "width": width.map { $0 as Any } ?? "",
                    "height": height.map { $0 as Any } ?? "", "gravity": gravity, "enlarge": enlarge,
                    "extension": ext, "advanced": advanced,
                ]
                let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
                return String(decoding: data ?? Data(), as: UTF8.self)
            }
        }

        /// `rs:<type>:<width>:<height>:<enlarge>` from the package's own arguments, then `advanced`.
        static func rs(
            _ type: String, _ width: Int, _ height: Int, g: String = "ce", el: Bool = false, ext: String = "",
            _ advanced: String...
        ) -> Sign {
            Sign(type: type, width: width, height: height, gravity: g, enlarge: el, ext: ext, advanced: advanced)
        }

        /// The size and resizing type from the `advanced` options alone (`rs::::<enlarge>` after them).
        static func free(g: String = "ce", el: Bool = false, ext: String = "", _ advanced: String...) -> Sign {
            Sign(gravity: g, enlarge: el, ext: ext, advanced: advanced)
        }

        typealias Expected = BuilderExpectation

        static func quadrants(_ width: Int, _ height: Int, _ colours: [RGB]) -> [(x: Int, y: Int, colour: RGB)] {
            BuilderExpectation.quadrants(width, height, colours)
        }

        static let (red, green, blue, yellow) = (Fixtures.red, Fixtures.green, Fixtures.blue, Fixtures.yellow)
        static let upright = [red, green, blue, yellow]
        static let (black, white, magenta) = (RGB(0, 0, 0), RGB(255, 255, 255), RGB(255, 0, 255))

        /// A 400 naming `error`.
        static func refused(_ error: String) -> Expected { Expected(status: 400, error: error) }

        /// (what it shows, the package's arguments, the image's path at the origin, expected). The origin has
        /// q.png (the quadrants, 64x48), g.png (the grid, 300x300), rgba.png, b.png (the quadrants in an 8 px white
        /// frame, 80x64), o6.jpg (the quadrants stored turned, EXIF orientation 6), c.jpg (EXIF copyright),
        /// p3.png (a Display P3 profile) and m.png (the quadrants, a watermark).
        static func cases(markURL: String) -> [(String, Sign, String, Expected)] {
            let wmu =
                "wmu:"
                + Data(markURL.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            return [
                // Resizing types, sizes, enlarge
                (
                    "rs:fit", rs("fit", 32, 32), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "rs:fill", rs("fill", 32, 32), "q.png",
                    .init(width: 32, height: 32, probes: quadrants(32, 32, upright))
                ),
                (
                    "rs:force", rs("force", 32, 32), "q.png",
                    .init(width: 32, height: 32, probes: quadrants(32, 32, upright))
                ),
                (
                    "rs:force without enlarge: the box shrinks, keeping its aspect, until no side is upscaled",
                    rs("force", 128, 128), "q.png", .init(width: 48, height: 48, probes: quadrants(48, 48, upright))
                ),
                (
                    "rs:auto with one side", rs("auto", 32, 0), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "rs:fill-down with enlarge", rs("fill-down", 128, 128, el: true), "q.png",
                    .init(width: 128, height: 128, probes: quadrants(128, 128, upright))
                ),
                (
                    "rs:fill without enlarge: never above the source", rs("fill", 128, 128), "q.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                ("rs:fit never enlarges", rs("fit", 128, 96), "q.png", .init(width: 64, height: 48)),
                (
                    "enlarge", rs("fit", 128, 96, el: true), "q.png",
                    .init(width: 128, height: 96, probes: quadrants(128, 96, upright))
                ),
                (
                    "el, then the package's rs:…:0 replaces it", rs("fit", 128, 96, "el:1"), "q.png",
                    .init(width: 64, height: 48)
                ),
                (
                    "height only", rs("fit", 0, 12), "q.png",
                    .init(width: 16, height: 12, probes: quadrants(16, 12, upright))
                ),
                (
                    "no size: the source's own size", rs("fit", 0, 0), "q.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "s (fit by default)", free("s:32:32"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "size (full name), enlarged", free(el: true, "size:128:96"), "q.png",
                    .init(width: 128, height: 96, probes: quadrants(128, 96, upright))
                ),
                (
                    "resize (full name)", free(g: "ea", "resize:fill:16:48"), "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, green), (8, 36, yellow)])
                ),
                (
                    "width, height, resizing_type (full names)", free("width:32", "height:32", "resizing_type:force"),
                    "q.png", .init(width: 32, height: 32, probes: quadrants(32, 32, upright))
                ),
                (
                    "w, h, rt", free(g: "no", "rt:fill", "w:64", "h:16"), "q.png",
                    .init(width: 64, height: 16, probes: [(16, 8, red), (48, 8, green)])
                ),
                // Gravity
                (
                    "g:so", rs("fill", 64, 16, g: "so"), "q.png",
                    .init(width: 64, height: 16, probes: [(16, 8, blue), (48, 8, yellow)])
                ),
                (
                    "g:we", rs("fill", 16, 48, g: "we"), "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, red), (8, 36, blue)])
                ),
                (
                    "g:soea", rs("fill", 32, 48, g: "soea"), "q.png",
                    .init(width: 32, height: 48, probes: [(16, 12, green), (16, 36, yellow)])
                ),
                (
                    "g:nowe", rs("fill", 48, 12, g: "nowe"), "q.png",
                    .init(width: 48, height: 12, probes: [(12, 6, red), (36, 6, green)])
                ),
                ("g:sm", rs("fill", 32, 32, g: "sm"), "q.png", .init(width: 32, height: 32)),
                (
                    "g:fp", rs("fill", 16, 48, g: "fp:0.25:0.5"), "q.png",
                    .init(width: 16, height: 48, probes: [(2, 12, red), (13, 12, red), (8, 36, blue)])
                ),
                (
                    "g on the flipped picture", rs("fill", 16, 48, g: "we", "fl:1"), "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, green), (8, 36, yellow)])
                ),
                (
                    "g on the turned picture", rs("fill", 48, 16, g: "no", "rot:90"), "q.png",
                    .init(width: 48, height: 16, probes: [(12, 8, blue), (36, 8, red)])
                ),
                (
                    "a later g replaces gravity (full name)", rs("fill", 16, 48, g: "ea", "gravity:we"), "q.png",
                    .init(width: 16, height: 48, probes: [(8, 12, green), (8, 36, yellow)])
                ),
                // dpr, zoom
                (
                    "dpr", rs("fit", 16, 16, "dpr:2"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "zoom (full name)", rs("fit", 16, 12, "zoom:2"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "z:x:y with force", rs("force", 16, 24, "z:2:1"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                // extend, extend_aspect_ratio
                (
                    "ex: centred on the box", rs("fit", 64, 64, ext: "png", "ex:1", "bg:ff00ff"), "q.png",
                    .init(
                        width: 64, height: 64, mime: "image/png",
                        probes: [(32, 3, magenta), (16, 20, red), (48, 44, yellow), (32, 60, magenta)])
                ),
                (
                    "extend (full name) to the north", rs("fit", 64, 64, ext: "png", "extend:1:no", "bg:000000"),
                    "q.png",
                    .init(width: 64, height: 64, mime: "image/png", probes: [(16, 12, red), (32, 60, black)])
                ),
                (
                    "size's extend, to the south", free(ext: "png", "s:64:64:0:1:so", "bg:255:255:255"), "q.png",
                    .init(
                        width: 64, height: 64, mime: "image/png",
                        probes: [(32, 4, white), (16, 28, red), (48, 52, yellow)])
                ),
                (
                    "ex on a fill with enlarge changes nothing", rs("fill", 64, 64, el: true, "ex:1"), "q.png",
                    .init(width: 64, height: 64, probes: quadrants(64, 64, upright))
                ),
                (
                    "exar with enlarge", rs("fit", 64, 32, el: true, ext: "png", "exar:1", "bg:000000"), "q.png",
                    .init(
                        width: 64, height: 32, mime: "image/png",
                        probes: [(2, 16, black), (20, 8, red), (44, 24, yellow), (62, 16, black)])
                ),
                // crop
                (
                    "c: pixels from the top-left", rs("fit", 16, 12, "c:32:24:nowe"), "q.png",
                    .init(width: 16, height: 12, probes: [(2, 2, red), (8, 6, red), (14, 10, red)])
                ),
                (
                    "crop (full name): fractions to the south-east", rs("fit", 16, 12, "crop:0.5:0.5:soea"), "q.png",
                    .init(width: 16, height: 12, probes: [(2, 2, yellow), (8, 6, yellow), (14, 10, yellow)])
                ),
                (
                    "c: placed by g", rs("fit", 16, 24, g: "ea", "c:0.5:0"), "q.png",
                    .init(width: 16, height: 24, probes: [(8, 6, green), (8, 18, yellow)])
                ),
                (
                    "c: fractions of the turned picture", rs("fit", 12, 16, "rot:90", "c:0.5:0.5:nowe"), "q.png",
                    .init(width: 12, height: 16, probes: [(2, 2, blue), (6, 8, blue), (10, 14, blue)])
                ),
                (
                    "c: pixels of the turned picture", rs("fit", 12, 16, "rot:90", "c:24:32:nowe"), "q.png",
                    .init(width: 12, height: 16, probes: [(2, 2, blue), (6, 8, blue), (10, 14, blue)])
                ),
                (
                    "c: of the flipped picture", rs("fit", 16, 12, "fl:1", "c:0.5:0.5:nowe"), "q.png",
                    .init(width: 16, height: 12, probes: [(2, 2, green), (8, 6, green), (14, 10, green)])
                ),
                // trim
                (
                    "t", rs("fit", 64, 48, "t:10"), "b.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "trim (full name) with a colour, no size", rs("fit", 0, 0, "trim:10:ffffff"), "b.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                // padding, background
                (
                    "pd with background (full name)", rs("fit", 32, 24, ext: "png", "pd:8", "background:ff00ff"),
                    "q.png",
                    .init(
                        width: 48, height: 40, mime: "image/png",
                        probes: [(2, 2, magenta), (46, 38, magenta), (16, 14, red), (32, 26, yellow)])
                ),
                (
                    "pd: an unwritten side copies another", rs("fit", 32, 24, ext: "png", "pd:4::8", "bg:000"), "q.png",
                    .init(
                        width: 40, height: 36, mime: "image/png",
                        probes: [
                            (2, 18, black), (38, 18, black), (20, 2, black), (20, 32, black), (12, 10, red),
                            (28, 22, yellow),
                        ])
                ),
                (
                    "padding (full name), two sides, times dpr",
                    rs("fit", 16, 12, ext: "png", "padding:4:8", "dpr:2", "bg:000"),
                    "q.png",
                    .init(
                        width: 64, height: 40, mime: "image/png",
                        probes: [(4, 20, black), (32, 3, black), (24, 14, red), (40, 26, yellow)])
                ),
                (
                    // The negotiated format of a source with transparency is PNG (imgproxy keeps the source's)
                    "bg R:G:B flattens transparency", rs("fit", 64, 48, "bg:0:0:0"), "rgba.png",
                    .init(width: 64, height: 48, mime: "image/png", probes: [(16, 12, red), (16, 36, black)])
                ),
                // rotate, flip, auto_rotate
                (
                    "rot:90 is clockwise", rs("fit", 24, 32, "rot:90"), "q.png",
                    .init(width: 24, height: 32, probes: quadrants(24, 32, [blue, red, yellow, green]))
                ),
                (
                    "rotate:180 (full name)", rs("fit", 32, 24, "rotate:180"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [yellow, blue, green, red]))
                ),
                (
                    "rot:270", rs("fit", 24, 32, "rot:270"), "q.png",
                    .init(width: 24, height: 32, probes: quadrants(24, 32, [green, yellow, red, blue]))
                ),
                (
                    "fl:1, horizontal", rs("fit", 32, 24, "fl:1"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [green, red, yellow, blue]))
                ),
                (
                    "fl::1, vertical", rs("fit", 32, 24, "fl::1"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [blue, yellow, red, green]))
                ),
                (
                    "flip:1:1 (full name)", rs("fit", 32, 24, "flip:1:1"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, [yellow, blue, green, red]))
                ),
                (
                    "rot, then fl", rs("fit", 24, 32, "fl:1", "rot:90"), "q.png",
                    .init(width: 24, height: 32, probes: quadrants(24, 32, [red, blue, green, yellow]))
                ),
                (
                    "ar:0: the pixels as stored", rs("fit", 0, 0, "ar:0"), "o6.jpg",
                    .init(width: 48, height: 64, probes: quadrants(48, 64, [green, yellow, red, blue]))
                ),
                (
                    "ar:0, then rot:90 turns the stored pixels upright", rs("fit", 0, 0, "ar:0", "rot:90"), "o6.jpg",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                (
                    "t with a colour, flipped", rs("fit", 64, 48, "t:10:ffffff", "fl:1"), "b.png",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, [green, red, yellow, blue]))
                ),
                (
                    "auto_rotate (full name)", rs("fit", 0, 0, "auto_rotate:1"), "o6.jpg",
                    .init(width: 64, height: 48, probes: quadrants(64, 48, upright))
                ),
                // Effects
                (
                    "blur (full name)", rs("fit", 64, 48, "blur:4"), "q.png",
                    .init(width: 64, height: 48, probes: [(8, 6, red)], blend: (32, 12, [red, green]))
                ),
                (
                    "sharpen (full name)", rs("fit", 32, 24, "sharpen:2"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "pix: blocks averaged", rs("fit", 64, 48, ext: "png", "pix:20"), "q.png",
                    .init(
                        width: 64, height: 48, mime: "image/png", probes: [(5, 5, red)], blend: (30, 10, [red, green]))
                ),
                ("sa:0 is grey", rs("fit", 64, 48, "sa:0"), "q.png", .init(width: 64, height: 48, grey: (16, 12))),
                (
                    "brightness (full name) is added", rs("fit", 300, 300, ext: "png", "brightness:40"), "g.png",
                    .init(width: 300, height: 300, mime: "image/png", probes: [(150, 250, RGB(40, 40, 40))])
                ),
                (
                    "contrast (full name) doubles the distance from mid-grey",
                    rs("fit", 64, 48, ext: "png", "contrast:2"), "q.png",
                    .init(
                        width: 64, height: 48, mime: "image/png",
                        probes: [(16, 12, RGB(255, 0, 0)), (48, 12, RGB(0, 255, 0))])
                ),
                (
                    "adjust (full name: brightness, contrast, saturation)", rs("fit", 64, 48, "adjust:0:1:0"), "q.png",
                    .init(width: 64, height: 48, grey: (16, 12))
                ),
                // Watermarks
                (
                    "wm: the named mark in the corner", rs("fit", 150, 150, ext: "png", "wm:1:soea"), "g.png",
                    .init(width: 150, height: 150, mime: "image/png", probes: [(134, 138, yellow), (102, 114, red)])
                ),
                (
                    "watermark (full name) at half opacity with offsets",
                    rs("fit", 150, 150, ext: "png", "watermark:0.5:nowe:10:10"), "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png", probes: [(5, 5, Fixtures.grid[0][0])],
                        blend: (26, 46, [blue, Fixtures.grid[0][0]]))
                ),
                (
                    "wmu: a mark from a URL, centred at half the width",
                    rs("fit", 150, 150, ext: "png", "wm:1:ce:0:0:0.5", wmu), "g.png",
                    .init(width: 150, height: 150, mime: "image/png", probes: [(55, 61, red), (94, 89, yellow)])
                ),
                (
                    "wm: offsets times dpr, the mark at its own size",
                    rs("fit", 75, 75, ext: "png", "wm:1:nowe:10:10", "dpr:2"), "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png",
                        probes: [(36, 32, red), (68, 56, yellow), (10, 10, Fixtures.grid[0][0])])
                ),
                (
                    "watermark_url (full name), over the padding",
                    rs(
                        "fit", 130, 130, ext: "png", "pd:10", "bg:000", "wm:1:soea", "watermark_url:" + wmu.dropFirst(4)
                    ),
                    "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png",
                        probes: [(5, 5, black), (134, 138, yellow), (102, 114, red), (60, 60, Fixtures.grid[1][1])])
                ),
                (
                    // thumbd tiles from the top-left corner; imgproxy centres the tiling (docs/compatibility.md)
                    "wm:…:re tiles", rs("fit", 150, 150, ext: "png", "wm:1:re"), "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png",
                        probes: [(16, 12, red), (80, 12, red), (16, 60, red), (112, 84, yellow)])
                ),
                (
                    // The offsets with `re` are the space between the tiles (74x58 each, the mark 5 px in)
                    "wm:…:re with spacing", rs("fit", 150, 150, ext: "png", "wm:1:re:10:10"), "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png",
                        probes: [(21, 17, red), (95, 17, red), (53, 41, yellow), (100, 57, Fixtures.grid[1][2])])
                ),
                (
                    // Offsets below 1 are fractions of the output's side: 15 and 30 px here
                    "wm: relative offsets", rs("fit", 150, 150, ext: "png", "wm:1:nowe:0.1:0.2"), "g.png",
                    .init(
                        width: 150, height: 150, mime: "image/png",
                        probes: [(31, 42, red), (63, 66, yellow), (5, 5, Fixtures.grid[0][0])])
                ),
                // Metadata
                ("sm", rs("fit", 0, 0, ext: "jpg", "sm:1"), "c.jpg", .init(width: 64, height: 48, exif: false)),
                (
                    "kcr keeps the copyright", rs("fit", 0, 0, ext: "jpg", "kcr:1"), "c.jpg",
                    .init(width: 64, height: 48, exif: true)
                ),
                (
                    "strip_metadata, keep_copyright:0 (full names)",
                    rs("fit", 0, 0, ext: "jpg", "strip_metadata:true", "keep_copyright:0"), "c.jpg",
                    .init(width: 64, height: 48, exif: false)
                ),
                (
                    "scp:0 keeps the profile", rs("fit", 0, 0, ext: "png", "scp:0"), "p3.png",
                    .init(width: 64, height: 48, mime: "image/png", icc: true)
                ),
                (
                    "strip_color_profile (full name) converts to sRGB",
                    rs("fit", 0, 0, ext: "png", "strip_color_profile:1"),
                    "p3.png",
                    .init(width: 64, height: 48, mime: "image/png", probes: quadrants(64, 48, upright), icc: false)
                ),
                // Quality, size, format
                (
                    "quality (full name)", rs("fit", 300, 300, ext: "jpg", "quality:95"), "g.png",
                    .init(width: 300, height: 300)
                ),
                ("q", rs("fit", 300, 300, ext: "jpg", "q:10"), "g.png", .init(width: 300, height: 300)),
                (
                    "format_quality (full name), the extension's format",
                    rs("fit", 300, 300, ext: "jpg", "format_quality:png:100:jpg:10"), "g.png",
                    .init(width: 300, height: 300)
                ),
                (
                    "max_bytes (full name)", rs("fit", 300, 300, ext: "jpg", "max_bytes:4000"), "g.png",
                    .init(width: 300, height: 300)
                ),
                (
                    "the extension .png", rs("fit", 32, 24, ext: "png"), "q.png",
                    .init(width: 32, height: 24, mime: "image/png", probes: quadrants(32, 24, upright))
                ),
                (
                    "the extension .webp", rs("fit", 32, 24, ext: "webp"), "q.png",
                    .init(width: 32, height: 24, mime: "image/webp", probes: quadrants(32, 24, upright))
                ),
                (
                    "the extension .avif", rs("fit", 32, 24, ext: "avif"), "q.png",
                    .init(width: 32, height: 24, mime: "image/avif", probes: quadrants(32, 24, upright))
                ),
                (
                    "the extension .gif", rs("fit", 32, 24, ext: "gif"), "q.png",
                    .init(width: 32, height: 24, mime: "image/gif", probes: quadrants(32, 24, upright))
                ),
                (
                    "the extension .jpeg", rs("fit", 32, 24, ext: "jpeg"), "rgba.png",
                    .init(width: 32, height: 24, probes: [(8, 6, red), (8, 18, white)])
                ),
                (
                    "f", rs("fit", 32, 24, "f:webp"), "q.png",
                    .init(width: 32, height: 24, mime: "image/webp", probes: quadrants(32, 24, upright))
                ),
                (
                    "format (full name)", rs("fit", 32, 24, "format:png"), "q.png",
                    .init(width: 32, height: 24, mime: "image/png", probes: quadrants(32, 24, upright))
                ),
                (
                    "ext", rs("fit", 32, 24, "ext:avif"), "q.png",
                    .init(width: 32, height: 24, mime: "image/avif", probes: quadrants(32, 24, upright))
                ),
                (
                    "the extension has the last word over f", rs("fit", 32, 24, ext: "png", "f:webp"), "q.png",
                    .init(width: 32, height: 24, mime: "image/png", probes: quadrants(32, 24, upright))
                ),
                // Presets, cache busters
                (
                    "pr", free("pr:card"), "q.png",
                    .init(width: 40, height: 30, mime: "image/png", probes: quadrants(40, 30, upright))
                ),
                (
                    "preset (full name), a width over it", free("preset:card", "w:20"), "q.png",
                    .init(
                        width: 20, height: 30, mime: "image/png",
                        probes: [(5, 7, red), (15, 7, green), (5, 22, blue), (15, 22, yellow)])
                ),
                (
                    "cb", rs("fit", 32, 24, "cb:abc"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "cachebuster (full name), expires:0", rs("fit", 32, 24, "cachebuster:2", "expires:0"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                // Refused, by name
                ("rt:force with one side", free("rt:force", "w:32"), "q.png", refused("unsupported option: rt:force")),
                ("kcr with PNG", rs("fit", 32, 24, ext: "png", "kcr:1"), "c.jpg", refused("kcr")),
                (
                    "rs:auto, both landscape: fill", rs("auto", 32, 16), "q.png",
                    .init(
                        width: 32, height: 16, probes: [(8, 2, red), (24, 2, green), (8, 13, blue), (24, 13, yellow)])
                ),
                (
                    "rs:auto, landscape into portrait: fit", rs("auto", 24, 40), "q.png",
                    .init(width: 24, height: 18, probes: quadrants(24, 18, upright))
                ),
                (
                    "rs:fill-down without enlarge, a box larger than the picture", rs("fill-down", 128, 128), "q.png",
                    .init(width: 48, height: 48, probes: quadrants(48, 48, upright))
                ),
                (
                    "ex on a fill without enlarge: the picture's own size, the canvas extended to the box",
                    rs("fill", 64, 64, "ex:1"), "q.png",
                    .init(
                        width: 64, height: 64, mime: "image/png",
                        probes: [(16, 20, red), (48, 20, green), (16, 44, blue), (48, 44, yellow)])
                ),
                (
                    "c: pixels from the centre (placed once the size is known)", rs("fit", 16, 12, "c:32:24"), "q.png",
                    .init(width: 16, height: 12, probes: quadrants(16, 12, upright))
                ),
                (
                    "t without a colour, turned: the corner goes with the turn", rs("fit", 48, 64, "t:10", "rot:90"),
                    "b.png", .init(width: 48, height: 64, probes: quadrants(48, 64, [blue, red, yellow, green]))
                ),
                ("sm:0", rs("fit", 32, 24, "sm:0"), "q.png", refused("unsupported option: sm:0")),
                ("wm:…:ch", rs("fit", 150, 150, "wm:1:ch"), "g.png", refused("unsupported option: wm:ch")),
                (
                    "fq without a format: the negotiated format's quality", rs("fit", 32, 24, "fq:jpg:10"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                ("g:obj", rs("fill", 32, 32, g: "obj"), "q.png", refused("unsupported option: obj")),
                (
                    "mw: the scale raised until the width is 100, enlarging without el", rs("fit", 32, 24, "mw:100"),
                    "q.png", .init(width: 100, height: 75, probes: quadrants(100, 75, upright))
                ),
                (
                    "exp in the future", rs("fit", 32, 24, "exp:4102444800"), "q.png",
                    .init(width: 32, height: 24, probes: quadrants(32, 24, upright))
                ),
                (
                    "exp in the past: 404", rs("fit", 32, 24, "exp:1000000000"), "q.png",
                    Expected(status: 404, error: "expired URL")
                ),
                ("an unknown option", rs("fit", 32, 24, "nope:1"), "q.png", refused("unknown parameter: nope")),
                ("rot:45", rs("fit", 32, 24, "rot:45"), "q.png", refused("rot")),
                ("wmu without wm", rs("fit", 32, 24, wmu), "q.png", refused("wmu")),
                ("mb with PNG", rs("fit", 32, 24, ext: "png", "mb:4000"), "q.png", refused("invalid mb")),
                ("the extension .heic", rs("fit", 32, 24, ext: "heic"), "q.png", refused("heic")),
                ("an unknown preset", free("pr:nope"), "q.png", refused("nope")),
                ("a gs:// source", rs("fit", 32, 24), "gs://bucket/q.png", refused("unsupported option: gs://")),
            ]
        }

        /// `/plain/` sources, which the package does not make: (what it shows, options, the source as it goes in the
        /// path, its extension, expected).
        static func plainCases(source: String) -> [(String, [String], String, String, Expected)] {
            [
                (
                    "plain/…@png", ["rs:fit:32:32"], source, "png",
                    .init(width: 32, height: 24, mime: "image/png", probes: quadrants(32, 24, upright))
                ),
                (
                    "plain/, percent-encoded, @webp", ["rs:fill:16:48", "g:ea"], Harness.percentEncoded(source), "webp",
                    .init(width: 16, height: 48, mime: "image/webp", probes: [(8, 12, green), (8, 36, yellow)])
                ),
                (
                    "plain/ without an extension", ["s:16:12"], source, "",
                    .init(width: 16, height: 12, probes: quadrants(16, 12, upright))
                ),
            ]
        }

        @Test func theImgproxyPackagesSignedURLsAreAnsweredAsImgproxyWould() async throws {
            // Given thumbd with imgproxy's form at / (signed with imgproxy's documented pair), a watermark named
            // imgproxy, a card preset, and the pictures at the origin
            let directory = try TempDirectory(prefix: "thumbd-imgproxy")
            let markPath = directory.appending("mark.png")
            try Data(Fixtures.bytes("quadrants.png")).write(to: URL(fileURLWithPath: markPath))
            let harness = try Harness(
                [
                    "imgproxy.enabled": "true", "imgproxy.prefix": "/", "imgproxy.keys": "[\"\(Self.key)\"]",
                    "imgproxy.salts": "[\"\(Self.salt)\"]", "image.watermarks": "[\"imgproxy=\(markPath)\"]",
                    "presets.card": "\"w=40&h=30&fit=cover&format=png\"",
                ], directory: directory)
            for (path, fixture) in [
                ("q.png", "quadrants.png"), ("g.png", "grid.png"), ("rgba.png", "rgba.png"), ("m.png", "quadrants.png"),
                ("p3.png", "display-p3.png"),
            ] {
                harness.origin.route("/" + path, .ok(Fixtures.bytes(fixture), contentType: "image/png"))
            }
            for (path, fixture) in [("o6.jpg", "orientation-6.jpg"), ("c.jpg", "copyright.jpg")] {
                harness.origin.route("/" + path, .ok(Fixtures.bytes(fixture), contentType: "image/jpeg"))
            }
            // The quadrants in an 8 px white frame, made by thumbd itself (PNG: the frame is exactly white)
            let framed = try await harness.request(
                harness.thumbTarget("/q.png", "w=64&h=48&padding=8&bg=ffffff&format=png"))
            #expect(framed.status == 200)
            harness.origin.route("/b.png", .ok(framed.body, contentType: "image/png"))

            // When the package signs every case (the source with its scheme, as imgproxy needs), and the script
            // signs the plain sources
            let cases = Self.cases(markURL: harness.origin.url("/m.png"))
            let plainCases = Self.plainCases(source: harness.origin.url("/q.png"))
            let specs =
                cases.map { $0.1.json(imageURL: $0.2.contains("://") ? $0.2 : harness.origin.url("/" + $0.2)) }
                + plainCases.map { name, options, source, ext, _ in
                    let plain: [String: Any] = ["options": options, "source": source, "extension": ext]
                    let data = try? JSONSerialization.data(withJSONObject: ["plain": plain], options: [.sortedKeys])
                    return String(decoding: data ?? Data(), as: UTF8.self)
                }
            let urls = try URLBuilders.run(
                "imgproxy_urls.py",
                spec:
                    "{\"key\": \"\(Self.key)\", \"salt\": \"\(Self.salt)\", \"cases\": [\(specs.joined(separator: ", "))]}"
            )
            #expect(urls.count == cases.count + plainCases.count)
            #expect(cases.count >= 40)

            // Then each answer is what imgproxy's URL asks
            var sizes: [String: Int] = [:]
            for ((name, _, _, expected), url) in zip(cases, urls) {
                let response = try await harness.request(url)
                try expected.check(name, url, response)
                sizes[name] = response.body.count
                if name == "max_bytes (full name)" { #expect(response.header("x-thumbd-quality") != nil) }
            }
            for ((name, _, _, _, expected), url) in zip(plainCases, urls.dropFirst(cases.count)) {
                #expect(url.contains("/plain/"))
                try expected.check(name, url, try await harness.request(url))
            }
            // Quality 10 is a smaller body than 95; fq's entry for the extension's format is the quality
            let (high, low, perFormat) = (
                sizes["quality (full name)"] ?? 0, sizes["q"] ?? 0,
                sizes["format_quality (full name), the extension's format"] ?? 0
            )
            #expect(low < high && perFormat == low, "q:95 \(high), q:10 \(low), fq:jpg:10 \(perFormat)")

            // A tampered byte anywhere is a 403, and so are another signature, another key's, and none
            let signed = try #require(urls.first)
            #expect(signed.contains("/rs:fit:32:32:0/"))
            let tampered = signed.replacingOccurrences(of: "rs:fit:32:32:0", with: "rs:fit:32:33:0")
            expectJSONError(try await harness.request(tampered), status: 403, mentioning: "invalid signature")
            let path = signed.split(separator: "/", maxSplits: 1)[1]
            expectJSONError(
                try await harness.request("/insecure/" + path), status: 403, mentioning: "invalid signature")
            let foreign = try URLBuilders.run(
                "imgproxy_urls.py",
                spec: "{\"key\": \"6f74686572\", \"salt\": \"\(Self.salt)\", \"cases\": [\(specs[0])]}")
            #expect(foreign.count == 1 && foreign.first?.hasSuffix("/" + path) == true)
            expectJSONError(try await harness.request(foreign[0]), status: 403, mentioning: "invalid signature")
            // Without its signature segment the first option is read as one (imgproxy reads `//` after its prefix
            // as `/` too)
            expectJSONError(try await harness.request("/" + path), status: 403, mentioning: "invalid signature")
            expectJSONError(try await harness.request("//" + path), status: 403, mentioning: "invalid signature")
        }
    }
}
