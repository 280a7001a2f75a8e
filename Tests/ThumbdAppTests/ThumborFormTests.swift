// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Testing
import ThumbdSettings
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// thumbor's URL form: its signature, its grammar compiled into `/thumb`'s plan (the same variant key as the
/// equivalent `/thumb` query), what it refuses, and one cache with `/thumb` through a real server.
@Suite struct ThumborFormTests {
    static let source = "http://img.test/a.jpg"

    /// The variant key of a thumbor path (after the signature segment), compiled with no presets.
    static func key(thumbor signedPart: String) throws -> String {
        let path = try ThumborPath(afterPrefix: Substring("unsafe/" + signedPart))
        let request = try path.plan().request(accept: nil, rules: .none, hints: nil, watermarks: .none)
        return VariantKey.description(source: request.source, spec: request.spec)
    }

    /// The variant key of a `/thumb` query.
    static func key(thumb query: String) throws -> String {
        let request = try ThumbnailRequest(rawQuery: query, accept: nil)
        return VariantKey.description(source: request.source, spec: request.spec)
    }

    /// The error a thumbor path (after the signature segment) is refused with, nil when it compiles.
    static func error(_ signedPart: String) -> RequestError? {
        do {
            let path = try ThumborPath(afterPrefix: Substring("unsafe/" + signedPart))
            _ = try path.plan().request(accept: nil, rules: .none, hints: nil, watermarks: .none)
            return nil
        } catch {
            return error
        }
    }

    /// `max_age(n)` sets the answer's `Cache-Control`, not the picture: the same key as `/thumb` with and without it.
    @Test func maxAgeIsTheAnswersAndLeavesTheKey() throws {
        let path = try ThumborPath(afterPrefix: Substring("unsafe/300x200/filters:max_age(60)/example.com/a.jpg"))
        let request = try path.plan().request(accept: nil, rules: .none, hints: nil, watermarks: .none)
        #expect(request.answer.maxAge == 60)
        let thumb = try ThumbnailRequest(
            rawQuery: "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=300&h=200&fit=cover&max_age=60", accept: nil)
        #expect(thumb.answer.maxAge == 60)
        #expect(
            try Self.key(thumbor: "300x200/filters:max_age(60)/example.com/a.jpg")
                == Self.key(thumbor: "300x200/example.com/a.jpg"))
        #expect(
            try Self.key(thumbor: "300x200/filters:max_age(0)/example.com/a.jpg")
                == Self.key(thumbor: "300x200/example.com/a.jpg"))
        // max_age(-1) does not match thumbor's pattern (a PositiveNumber): skipped, as thumbor skips it
        #expect(
            try Self.key(thumbor: "300x200/filters:max_age(-1)/example.com/a.jpg")
                == Self.key(thumbor: "300x200/example.com/a.jpg"))
        #expect(
            Self.error("300x200/filters:max_age(40000000)/example.com/a.jpg")
                == .invalidValue("max_age", reason: "must be a whole number of seconds 0...31536000"))
    }

    // MARK: - Signatures

    @Test func libthumborsPublishedExampleSignsByteForByte() {
        // libthumbor's README: key my-security-key, this path.
        #expect(
            ThumborForm.signature(of: "300x200/my.server.com/some/path/to/image.jpg", key: "my-security-key")
                == "8ammJH8D-7tXy6kU3lTvoXlhu4o=")
    }

    @Test func anyConfiguredKeyVerifiesAndATamperedByteDoesNot() throws {
        var settings = Settings()
        settings.thumbor.securityKeys = ["new-key", "my-security-key"]
        let keys = ThumborForm.Keys(settings)
        let signed = "300x200/my.server.com/some/path/to/image.jpg"
        try ThumborForm.verify(ThumborPath(afterPrefix: "8ammJH8D-7tXy6kU3lTvoXlhu4o=/\(signed)"), keys: keys)
        // A percent-escaped `=` is the same signature (thumbor unquotes it).
        try ThumborForm.verify(ThumborPath(afterPrefix: "8ammJH8D-7tXy6kU3lTvoXlhu4o%3D/\(signed)"), keys: keys)
        for tampered in [
            "8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x201/my.server.com/some/path/to/image.jpg",
            "8ammJH8D-7tXy6kU3lTvoXlhu4p=/\(signed)", "8ammJH8D-7tXy6kU3lTvoXlhu4o/\(signed)",
            "8ammJH8D+7tXy6kU3lTvoXlhu4o=/\(signed)",
        ] {
            #expect(throws: RequestError.invalidSignature) {
                try ThumborForm.verify(ThumborPath(afterPrefix: Substring(tampered)), keys: keys)
            }
        }
    }

    @Test func unsafeIsAcceptedOnlyWhenAllowed() throws {
        var settings = Settings()
        settings.thumbor.securityKeys = ["my-security-key"]
        let path = try ThumborPath(afterPrefix: "unsafe/300x200/my.server.com/a.jpg")
        #expect(throws: RequestError.missingSignature) {
            try ThumborForm.verify(path, keys: ThumborForm.Keys(settings))
        }
        settings.thumbor.allowsUnsafe = true
        try ThumborForm.verify(path, keys: ThumborForm.Keys(settings))
    }

    // MARK: - Grammar

    /// Where the image begins is where the grammar stopped: a segment of a size's shape is the size until the size's
    /// place is passed, after which it is the image's (the fuzz target FuzzDialectURLs checks this on every input).
    @Test(arguments: [
        ("300x200/host/a.jpg", ThumborPath.Part.size, "host/a.jpg"),
        ("fit-in/host/a.jpg", .fitIn, "host/a.jpg"),
        ("x/5x5/a.jpg", .size, "5x5/a.jpg"),
        ("10x10/left/5x5/a.jpg", .horizontalAlignment, "5x5/a.jpg"),
        ("filters:quality(80)/5x5/a.jpg", .filters, "5x5/a.jpg"),
        ("x/x:/host/a.jpg", .size, "x:/host/a.jpg"),
    ])
    func theImageBeginsWhereTheGrammarStopped(signedPart: String, last: ThumborPath.Part, image: String) throws {
        let path = try ThumborPath(afterPrefix: Substring("unsafe/" + signedPart))
        #expect(path.lastPart == last)
        #expect(path.image == image[...])
    }

    @Test func anImageWithNoOptionsHasNoLastPart() throws {
        let path = try ThumborPath(afterPrefix: "unsafe/host/a.jpg")
        #expect(path.lastPart == nil)
        #expect(path.image == "host/a.jpg")
    }

    // MARK: - One plan

    @Test(arguments: [
        ("300x200/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1"),
        // thumbor's factors and ranges: contrast (n+100)²/100/100, brightness 255n/100 truncated, quality 0 is 1
        ("fit-in/9x9/filters:contrast(-50):brightness(-3)/img.test/a.jpg", "w=9&h=9&brightness=-7&contrast=0.25"),
        ("fit-in/9x9/filters:quality(0):max_bytes(100)/img.test/a.jpg", "w=9&h=9&q=1&max_bytes=1024"),
        ("fit-in/9x9/filters:quality(500):max_bytes(0)/img.test/a.jpg", "w=9&h=9&q=100"),
        ("fit-in/9x9/filters:rotate(45)/img.test/a.jpg", "w=9&h=9"),
        ("fit-in/9x9/filters:background_color(transparent)/img.test/a.jpg", "w=9&h=9"),
        ("fit-in/300x200/img.test/a.jpg", "w=300&h=200"),
        ("full-fit-in/300x200/img.test/a.jpg", "w=300&h=200&fit=outside&enlarge=1&rounding=thumbor-full-fit-in"),
        ("adaptive-fit-in/300x200/img.test/a.jpg", "w=300&h=200&adaptive=1&rounding=thumbor-fit-in"),
        (
            "adaptive-full-fit-in/300x200/img.test/a.jpg",
            "w=300&h=200&fit=outside&enlarge=1&adaptive=1&rounding=thumbor-full-fit-in"
        ),
        ("300x0/img.test/a.jpg", "w=300&enlarge=1&rounding=thumbor-crop"),
        ("x200/img.test/a.jpg", "h=200&enlarge=1&rounding=thumbor-crop"),
        ("fit-in/300x200/filters:upscale()/img.test/a.jpg", "w=300&h=200&enlarge=1&rounding=thumbor-fit-in"),
        ("300x200/filters:no_upscale()/img.test/a.jpg", "w=300&h=200&fit=cover"),
        ("300x200/filters:stretch()/img.test/a.jpg", "w=300&h=200&fit=fill&enlarge=1"),
        ("-300x200/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&flip=h"),
        ("300x-200/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&flip=v"),
        ("300x200/left/top/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&gravity=northwest"),
        // A flip after the crop: the part kept is the source's left, which the mirror puts on the right.
        ("-300x200/left/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&flip=h&gravity=east"),
        ("300x200/smart/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&gravity=smart"),
        // focal(): the centre of its box, in source pixels; it wins over smart
        ("16x48/smart/filters:focal(50x20:62x28)/img.test/a.jpg", "w=16&h=48&fit=cover&enlarge=1&gravity=fpx:56,24"),
        // several: their centre of mass, each weighted by its box's area, floored (5,5 × 100 and 50,30 × 400)
        (
            "16x48/filters:focal(0x0:10x10):focal(40x20:60x40)/img.test/a.jpg",
            "w=16&h=48&fit=cover&enlarge=1&gravity=fpx:41,25"
        ),
        // beside a manual crop, the points outside it are dropped first (as thumbor's adjust_focal_points does)
        (
            "10x10:40x40/16x48/filters:focal(0x0:4x4):focal(12x12:16x16)/img.test/a.jpg",
            "w=16&h=48&fit=cover&enlarge=1&gravity=fpx:14,14&crop=10,10,30,30"
        ),
        // beside a flip, a rotate or a trim: measured from the corner of the trimmed picture the turn takes the
        // top-left one to (thumbor measures before it turns), offsets swapped by a quarter turn
        (
            "-16x48/filters:focal(50x20:62x28)/img.test/a.jpg",
            "w=16&h=48&fit=cover&enlarge=1&flip=h&gravity=fpx:56,24,ne"
        ),
        (
            "16x48/filters:focal(50x20:62x28):rotate(90)/img.test/a.jpg",
            "w=48&h=16&fit=cover&enlarge=1&rotate=270&gravity=fpx:24,56,sw"
        ),
        (
            "trim/16x48/filters:focal(50x20:62x28)/img.test/a.jpg",
            "w=16&h=48&fit=cover&enlarge=1&gravity=fpx:56,24,nw&trim=0,euclidean"
        ),
        // thumbor turns the resized picture counter-clockwise: the box trades sides, the top goes west.
        ("300x200/top/filters:rotate(90)/img.test/a.jpg", "w=200&h=300&fit=cover&enlarge=1&rotate=270&gravity=west"),
        ("fit-in/300x200/filters:rotate(-90):rotate(360)/img.test/a.jpg", "w=200&h=300&rotate=90"),
        ("fit-in/300x200/filters:fill(red)/img.test/a.jpg", "w=300&h=200&fit=pad&bg=ff0000"),
        ("fit-in/300x200/filters:fill(transparent)/img.test/a.jpg", "w=300&h=200&fit=pad"),
        // no_upscale() beside fill(): the letterbox's box at most the picture, resolved by the render
        (
            "fit-in/300x200/filters:no_upscale():fill(red)/img.test/a.jpg",
            "w=300&h=200&fit=pad&bg=ff0000&rounding=thumbor-fit-in"
        ),
        ("300x200/filters:fill(0f0,true)/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&bg=00ff00"),
        ("10x20:110x220/100x0/img.test/a.jpg", "w=100&enlarge=1&rounding=thumbor-crop&crop=10,20,100,200"),
        ("0.1x0.1:0.9x0.9/fit-in/100x100/img.test/a.jpg", "w=100&h=100&crop=0.1,0.1,0.8,0.8"),
        ("0.0x0.0:0.5x1.0/fit-in/-100x100/img.test/a.jpg", "w=100&h=100&crop=0.5,0.0,0.5,1.0&flip=h"),
        ("0x0:0x0/fit-in/100x100/img.test/a.jpg", "w=100&h=100"),
        ("fit-in/5000x5000/img.test/a.jpg", "w=4096&h=4096"),
        ("fit-in/5000x300/img.test/a.jpg", "w=4096&h=300"),
        // thumbor trims, then moves the crop by the frame's corner: the crop is the untrimmed picture's
        (
            "trim/1x1:5x5/10x10/img.test/a.jpg",
            "w=10&h=10&fit=cover&enlarge=1&trim=0,euclidean&crop=1,1,4,4&crop_frame=source"
        ),
        // beside a flip too: placed from the corner the flip takes the top-left to, before the trim
        (
            "trim/1x2:5x5/-10x10/img.test/a.jpg",
            "w=10&h=10&fit=cover&enlarge=1&flip=h&rounding=thumbor-crop&trim=0,tr,euclidean&crop=4,3&crop_gravity=northeast"
                + "&crop_offset=1,2&crop_frame=source"
        ),
        // a crop whose right or bottom is not beyond its left or top: dropped, as thumbor drops it
        ("5x5:1x1/10x10/img.test/a.jpg", "w=10&h=10&fit=cover&enlarge=1"),
        // A crop in pixels beside a turn: placed from the corner the turn takes the top-left to
        (
            "10x20:110x220/-100x0/img.test/a.jpg",
            "w=100&enlarge=1&flip=h&rounding=thumbor-crop&crop=100,200&crop_gravity=northeast&crop_offset=10,20"
        ),
        (
            "10x20:110x220/fit-in/100x100/filters:rotate(90)/img.test/a.jpg",
            "w=100&h=100&rotate=270&rounding=thumbor-fit-in&crop=200,100&crop_gravity=southwest&crop_offset=20,10"
        ),
        (
            "0x0:50x40/fit-in/100x-100/img.test/a.jpg",
            "w=100&h=100&flip=v&rounding=thumbor-fit-in&crop=50,40&crop_gravity=southwest"
        ),
        (
            "fit-in/100x100/filters:quality(70):format(webp):blur(2):sharpen(1,0.5,true):grayscale():brightness(10)"
                + ":contrast(20):saturation(0.5):background_color(fff):max_bytes(20000):strip_exif():strip_icc()"
                + ":autojpg()/img.test/a.jpg",
            "w=100&h=100&q=70&format=webp&blur=2&sharpen=0.5&grayscale=rec601&brightness=25&contrast=1.44"
                + "&saturation=0.5&saturation_model=hsp&order=blur,sharpen,grayscale,brightness,contrast,saturation"
                + "&bg=ffffff&max_bytes=20000"
        ),
        ("fit-in/100x100/filters:blur(4,1.5)/img.test/a.jpg", "w=100&h=100&blur=1.5"),
        // thumbor's blur kernel stops at 150 px: a larger sigma is thumbd's largest, 100
        ("fit-in/100x100/filters:blur(400)/img.test/a.jpg", "w=100&h=100&blur=100"),
        // thumbor's formula (saturation_model=hsp): a negative factor inverts the colours about the HSP brightness
        (
            "10x10/filters:saturation(-1)/img.test/a.jpg",
            "w=10&h=10&fit=cover&enlarge=1&saturation=-1&saturation_model=hsp"
        ),
        (
            "10x10/filters:saturation(100)/img.test/a.jpg",
            "w=10&h=10&fit=cover&enlarge=1&saturation=100&saturation_model=hsp"
        ),
        // JPEG XL (thumbd's own: thumbor's filter ignores jxl) and HEIC (thumbor's heic and heif)
        ("10x10/filters:format(jxl)/img.test/a.jpg", "w=10&h=10&fit=cover&enlarge=1&format=jxl"),
        ("10x10/filters:format(heic)/img.test/a.jpg", "w=10&h=10&fit=cover&enlarge=1&format=heif"),
        ("10x10/filters:format(heif)/img.test/a.jpg", "w=10&h=10&fit=cover&enlarge=1&format=heif"),
        // max_bytes beside PNG or GIF output: thumbor lowers no quality there, and neither does thumbd
        ("10x10/filters:max_bytes(5000):format(png)/img.test/a.jpg", "w=10&h=10&fit=cover&enlarge=1&format=png"),
        (
            "10x10/filters:format(webp):max_bytes(5000)/img.test/a.jpg",
            "w=10&h=10&fit=cover&enlarge=1&format=webp&max_bytes=5000"
        ),
        // frame(url): a frame image that is no usable nine-patch is left out (thumbor 7.8's own frame draws nothing)
        (
            "fit-in/100x100/filters:frame(img.test/f.png)/img.test/a.jpg",
            "w=100&h=100&frame_url=http%3A%2F%2Fimg.test%2Ff.png&frame_optional=1"
        ),
        ("trim/fit-in/100x100/img.test/a.jpg", "w=100&h=100&trim=0,euclidean"),
        ("trim:top-left:20/fit-in/100x100/img.test/a.jpg", "w=100&h=100&trim=20,euclidean"),
        ("trim:bottom-right/fit-in/100x100/img.test/a.jpg", "w=100&h=100&trim=0,br,euclidean"),
        // thumbor 7.8 reads `trim:N`'s digits as the corner (any but top-left is the bottom right) and trims at 0
        ("trim:10/fit-in/100x100/img.test/a.jpg", "w=100&h=100&trim=0,br,euclidean"),
        ("trim:99999999999999999999/fit-in/100x100/img.test/a.jpg", "w=100&h=100&trim=0,br,euclidean"),
        // The mirror after the trim puts thumbor's top-left corner at the top right of thumbd's turned picture
        ("trim/fit-in/-100x100/img.test/a.jpg", "w=100&h=100&flip=h&trim=0,tr,euclidean"),
        ("img.test/a.jpg", "w=4096&h=4096"),
        ("origxorig/img.test/a.jpg", "w=4096&h=4096"),
        // `orig` beside a number: that side is the picture's, resolved by the render, thumbd's largest side at most
        ("300xorig/img.test/a.jpg", "w=300&h=4096&fit=cover&enlarge=1&orig=h"),
        ("fit-in/origx200/img.test/a.jpg", "w=4096&h=200&orig=w"),
        ("-origx100/img.test/a.jpg", "w=4096&h=100&fit=cover&enlarge=1&flip=h&orig=w"),
        ("fit-in/origx200/filters:rotate(90)/img.test/a.jpg", "w=200&h=4096&rotate=270&orig=h"),
        (
            "0x0:50x40/adaptive-full-fit-in/100xorig/img.test/a.jpg",
            "w=100&h=4096&fit=outside&enlarge=1&adaptive=1&orig=h&rounding=thumbor-full-fit-in&crop=0,0,50,40"
        ),
        ("fit-in/200x200/filters:proportion(0.5)/img.test/a.jpg", "w=200&h=200&scale=0.5"),
        ("filters:proportion(0.25)/img.test/a.jpg", "w=4096&h=4096&scale=0.25"),
        (
            "fit-in/200x200/filters:watermark(img.test/wm.png,-10,-20,50)/img.test/a.jpg",
            "w=200&h=200&wm_url=http%3A%2F%2Fimg.test%2Fwm.png&wm_pos=southeast&wm_x=10&wm_y=20&wm_fade=50"
        ),
        (
            "fit-in/200x200/filters:watermark('http://img.test/wm.png',center,10,0,25)/img.test/a.jpg",
            "w=200&h=200&wm_url=http%3A%2F%2Fimg.test%2Fwm.png&wm_pos=north&wm_y=10&wm_scale=0.25"
        ),
        (
            "fit-in/200x200/filters:watermark(img.test/wm.png,repeat,repeat,30)/img.test/a.jpg",
            "w=200&h=200&wm_url=http%3A%2F%2Fimg.test%2Fwm.png&wm_place=repeat,repeat&wm_fade=30"
        ),
        // percentages, repeat on one axis and h_ratio: thumbor's placement (wm_place) and wm_hscale
        (
            "fit-in/200x200/filters:watermark(img.test/wm.png,20p,-0,0,none,30)/img.test/a.jpg",
            "w=200&h=200&wm_url=http%3A%2F%2Fimg.test%2Fwm.png&wm_place=20p,-0&wm_hscale=0.3"
        ),
        (
            "fit-in/200x200/filters:watermark(img.test/wm.png,-10,repeat,0,25)/img.test/a.jpg",
            "w=200&h=200&wm_url=http%3A%2F%2Fimg.test%2Fwm.png&wm_place=-10,repeat&wm_scale=0.25"
        ),
        // several watermark() filters: each into the next slot, laid in the URL's order
        (
            "fit-in/200x200/filters:watermark(img.test/a.png,0,0,0):watermark(img.test/b.png,-0,-0,50,20)"
                + "/img.test/a.jpg",
            "w=200&h=200&wm_url=http%3A%2F%2Fimg.test%2Fa.png&wm_pos=northwest"
                + "&wm2_url=http%3A%2F%2Fimg.test%2Fb.png&wm2_fade=50&wm2_scale=0.2"
        ),
        // round_corner(a|b, r, g, b[, transparent]): radius and radius_bg (an alpha of 00 when transparent)
        ("fit-in/10x10/filters:round_corner(20,255,255,255)/img.test/a.jpg", "w=10&h=10&radius=20"),
        (
            "fit-in/10x10/filters:round_corner( 20|10 ,255,0,0, True)/img.test/a.jpg",
            "w=10&h=10&radius=20,10&radius_bg=ff000000"
        ),
        ("fit-in/10x10/filters:round_corner(0,1,2,3)/img.test/a.jpg", "w=10&h=10"),
        // The tone filters: rgb adds 255 × v / 100 (truncated, as C divides), colorize and equalize as they are
        ("fit-in/10x10/filters:rgb(10,-20,100)/img.test/a.jpg", "w=10&h=10&rgb=25,-51,255"),
        ("fit-in/10x10/filters:rgb(-3, 0, 500)/img.test/a.jpg", "w=10&h=10&rgb=-7,0,255"),
        ("fit-in/10x10/filters:rgb(0,0,0)/img.test/a.jpg", "w=10&h=10"),
        ("fit-in/10x10/filters:colorize(10,20,30,FF0000)/img.test/a.jpg", "w=10&h=10&colorize=10,20,30,ff0000"),
        ("fit-in/10x10/filters:equalize()/img.test/a.jpg", "w=10&h=10&equalize=1"),
        ("fit-in/10x10/filters:noise(10)/img.test/a.jpg", "w=10&h=10&noise=10"),
        ("fit-in/10x10/filters:noise(10,1)/img.test/a.jpg", "w=10&h=10&noise=10"),
        ("fit-in/10x10/filters:noise(10,42)/img.test/a.jpg", "w=10&h=10&noise=10,42"),
        ("fit-in/10x10/filters:noise(0,42)/img.test/a.jpg", "w=10&h=10"),
        (
            "fit-in/10x10/filters:convolution(1;2;1;2;4;2;1;2;1,3)/img.test/a.jpg",
            "w=10&h=10&convolution=1;2;1;2;4;2;1;2;1,3"
        ),
        (
            "fit-in/10x10/filters:convolution(-1;-1;-1;-1;8;-1;-1;-1;-1.,3,false)/img.test/a.jpg",
            "w=10&h=10&convolution=-1;-1;-1;-1;8;-1;-1;-1;-1,3,0"
        ),
        // a kernel summing to 0 is never divided: normalize or not is one plan
        (
            "fit-in/10x10/filters:convolution(-1;0;1,3)/img.test/a.jpg",
            "w=10&h=10&convolution=-1;0;1,3,0"
        ),
        (
            "fit-in/10x10/filters:curve([(0,0),(255,255)],[(0,0),(128,160),(255,255)],[(0,0),(255,255)],[(0,9)])"
                + "/img.test/a.jpg",
            "w=10&h=10&curve=0:0,255:255%7C0:0,128:160,255:255%7C0:0,255:255%7C0:9"
        ),
        // Filters run in the URL's order: `order` when it is not the table's
        (
            "fit-in/10x10/filters:brightness(10):contrast(30)/img.test/a.jpg",
            "w=10&h=10&brightness=25&contrast=1.69&order=brightness,contrast"
        ),
        ("fit-in/10x10/filters:contrast(30):brightness(10)/img.test/a.jpg", "w=10&h=10&brightness=25&contrast=1.69"),
        ("fit-in/10x10/filters:brightness(0):contrast(30)/img.test/a.jpg", "w=10&h=10&contrast=1.69"),
        // cover(): a GIF's first frame
        ("fit-in/10x10/filters:cover()/img.test/a.jpg", "w=10&h=10&animated=0"),
        // What thumbor 7.8 itself skips: too few or malformed arguments, names it has no builtin filter for
        (
            "fit-in/10x10/filters:sharpen(1,2):sepia():red_eye():proportion():blur(0):rgb(10,10):fill(#fff)"
                + ":round_corner(20,255,255):focal(0.89x0.72):quality(80 junk):cover(1)/img.test/a.jpg",
            "w=10&h=10"
        ),
    ])
    func aThumborURLIsTheSamePlanAsItsThumbQuery(thumbor: String, thumb: String) throws {
        let url = "url=http%3A%2F%2Fimg.test%2Fa.jpg&"
        #expect(try Self.key(thumbor: thumbor) == Self.key(thumb: url + thumb), "\(thumbor)")
    }

    @Test(arguments: [
        "http%3A%2F%2Fimg.test%2Fa.jpg%3Fv%3D1", "http://img.test/a.jpg?v=1".replacingOccurrences(of: "?", with: "%3F"),
    ])
    func anEncodedImageURLKeepsItsQuery(image: String) throws {
        let query = "url=http%3A%2F%2Fimg.test%2Fa.jpg%3Fv%3D1&w=10&h=10"
        #expect(try Self.key(thumbor: "fit-in/10x10/\(image)") == Self.key(thumb: query))
    }

    @Test func theImageGetsThumborsSchemeRules() throws {
        #expect(try ThumborPath.imageURL("img.test/a.jpg") == "http://img.test/a.jpg")
        #expect(try ThumborPath.imageURL("https:/img.test/a.jpg") == "https://img.test/a.jpg")
        #expect(try ThumborPath.imageURL("HTTPS://img.test/a.jpg") == "HTTPS://img.test/a.jpg")
        #expect(try ThumborPath.imageURL("s3://bucket/a.jpg") == "s3://bucket/a.jpg")
        // an s3:// image is an s3:// source, as in /thumb (read only from a bucket in s3.source_buckets)
        #expect(
            try Self.key(thumbor: "fit-in/10x10/s3://bucket/a.jpg")
                == Self.key(thumb: "url=s3%3A%2F%2Fbucket%2Fa.jpg&w=10&h=10"))
        #expect(
            Self.error("fit-in/10x10/ftp://img.test/a.jpg")
                == .invalidValue("image", reason: "must be an absolute http(s) URL or s3://bucket/key"))
    }

    // MARK: - Refusals

    @Test(arguments: [
        (
            "fit-in/10x10/filters:round_corner(20,256,255,255)/img.test/a.jpg",
            RequestError.invalidValue("round_corner", reason: "argument 2 must be a number 0.0…255.0")
        ),
        (
            "fit-in/10x10/filters:colorize(10,20,30,red)/img.test/a.jpg",
            .invalidValue("colorize", reason: "the fill colour must be 6 hexadecimal digits")
        ),
        (
            "fit-in/10x10/filters:convolution(1;2;1;2,2)/img.test/a.jpg",
            .invalidValue("convolution", reason: "a kernel needs an odd number of columns and of rows, at most 11 each")
        ),
        (
            "fit-in/10x10/filters:curve([(0,0)],[(9,0),(5,255)],[(0,0)],[(0,0)])/img.test/a.jpg",
            .invalidValue("curve", reason: "each list needs 1…64 points x:y, 0…255, x increasing")
        ),
        ("debug/10x10/img.test/a.jpg", .unsupportedOption("debug")),
        ("10x10/filters:blur(1):blur(2)/img.test/a.jpg", .duplicateParameter("filters:blur")),
        (
            "10x10/filters:watermark(a.png,0,0,0):watermark(a.png,0,0,0):watermark(a.png,0,0,0)"
                + ":watermark(a.png,0,0,0):watermark(a.png,0,0,0)/img.test/a.jpg",
            .invalidValue("watermark", reason: "at most 4 watermarks")
        ),
        ("fit-in/10x10/filters:fill(blur,true)/img.test/a.jpg", .unsupportedOption("fill(blur) with fill_transparent")),
        ("5000x10/img.test/a.jpg", .invalidValue("width", reason: "must be an integer 1...4096")),
        (
            "10x10/filters:saturation(-1001)/img.test/a.jpg",
            .invalidValue("saturation", reason: "argument 1 must be a number -1000.0…1000.0")
        ),
        (
            "10x10/filters:contrast(217)/img.test/a.jpg",
            .invalidValue("contrast", reason: "argument 1 must be a number -416.0…216.0")
        ),
        // a run of digits of any length is a side in thumbor's grammar: never part of the image's host
        ("99999999999999999999x64/img.test/a.jpg", .invalidValue("size", reason: "a side has more than 9 digits")),
        ("0000000000000000064x64/img.test/a.jpg", .invalidValue("size", reason: "a side has more than 9 digits")),
        ("64x-99999999999999999999/img.test/a.jpg", .invalidValue("size", reason: "a side has more than 9 digits")),
        ("1234567890x/img.test/a.jpg", .invalidValue("size", reason: "a side has more than 9 digits")),
        (
            "meta/fit-in/99999999999999999999x64/img.test/a.jpg",
            .invalidValue("size", reason: "a side has more than 9 digits")
        ),
        (
            "trim:top-left:99999999999999999999/10x10/img.test/a.jpg",
            .invalidValue("trim", reason: "the tolerance has more than 9 digits")
        ),
    ])
    func whatThumbdCannotHonourIsRefusedByName(path: String, expected: RequestError) {
        #expect(Self.error(path) == expected, "\(path)")
    }

    @Test(arguments: [
        ("sharpen(1,2):sepia():quality(70):red_eye():proportion()", ["sharpen", "sepia", "red_eye", "proportion"]),
        ("focal(0.89x0.72):focal(10x10:10x20):focal(1x2:3x4)", ["focal", "focal"]),
        ("watermark(a.png,10,10):watermark(a.png,10p,center,50,none,20)", ["watermark"]),
        ("curve([(0,0), (255,255)],[],[],[]):convolution(1;2;1,3,maybe)", ["curve", "convolution"]),
        ("noise(10):noise(10,2):noise(-1)", ["noise"]),
    ])
    func thumborsSkipRuleIsMirrored(filters: String, skipped: [String]) throws {
        // Only the arguments matter here: what is kept may still be refused later
        let path = try ThumborPath(afterPrefix: Substring("unsafe/fit-in/10x10/filters:\(filters)/img.test/a.jpg"))
        let parsed = path.filters.map { ($0.name, ThumborFilterPatterns.arguments(of: $0.name, $0.arguments)) }
        #expect(parsed.filter { $0.1 == nil }.map(\.0) == skipped, "\(filters)")
    }

    @Test func keptArgumentsAreThumborsGroups() {
        #expect(ThumborFilterPatterns.arguments(of: "round_corner", " 20|10 , 1,2 ,3") == ["20|10", "1", "2", "3"])
        #expect(
            ThumborFilterPatterns.arguments(of: "watermark", "'a,b.png',-10p,center,50") == [
                "a,b.png", "-10p", "center", "50",
            ])
        #expect(ThumborFilterPatterns.arguments(of: "blur", "5") == ["5"])
        #expect(ThumborFilterPatterns.arguments(of: "focal", "1x2:3x4junk") == ["1x2:3x4"])
        #expect(ThumborFilterPatterns.arguments(of: "equalize", "") == [])
        #expect(ThumborFilterPatterns.arguments(of: "equalize", "1") == nil)
        #expect(ThumborFilterPatterns.arguments(of: "red_eye", "") == nil)
    }

    @Test func refusingSkippedFiltersNamesThem() throws {
        let path = try ThumborPath(afterPrefix: "unsafe/fit-in/10x10/filters:quality(80):sharpen(1,2)/img.test/a.jpg")
        #expect(try path.plan(refusingSkipped: false).skipped == ["sharpen"])
        #expect(
            throws: RequestError.invalidValue(
                "sharpen", reason: "its arguments do not match thumbor's (thumbor skips it)")
        ) {
            try path.plan(refusingSkipped: true)
        }
        let unknown = try ThumborPath(afterPrefix: "unsafe/fit-in/10x10/filters:sepia()/img.test/a.jpg")
        #expect(throws: RequestError.unsupportedOption("filter sepia")) { try unknown.plan(refusingSkipped: true) }
        // format() with a name outside thumbor's list: thumbor keeps the default format, so it is a skip
        let bmp = try ThumborPath(afterPrefix: "unsafe/fit-in/10x10/filters:format(bmp):quality(80)/img.test/a.jpg")
        let skipping = try bmp.plan(refusingSkipped: false)
        #expect(skipping.skipped == ["format"])
        #expect(skipping.plan.values.format == nil && skipping.plan.values.quality == 80)
        #expect(
            throws: RequestError.invalidValue("format", reason: "not a format thumbor writes (thumbor ignores it)")
        ) { try bmp.plan(refusingSkipped: true) }
        // frame(url) may be left out by the render, unless skips are refused (then an unusable image is the 422)
        let frame = try ThumborPath(afterPrefix: "unsafe/fit-in/10x10/filters:frame(img.test/f.png)/img.test/a.jpg")
        #expect(try frame.plan(refusingSkipped: false).plan.values.frameOptional == true)
        #expect(try frame.plan(refusingSkipped: true).plan.values.frameOptional == nil)
    }

    @Test func curveTablesAreThumborsSplines() {
        typealias Point = ThumbnailSpec.Curve.Point
        // Two points: a straight line; one point: its y everywhere; before the first x its y, from the last x its y
        #expect(ThumbnailSpec.Curve.table([Point(0, 0), Point(255, 255)]) == (0...255).map { UInt8($0) })
        #expect(ThumbnailSpec.Curve.table([Point(0, 255), Point(255, 0)]) == (0...255).map { UInt8(255 - $0) })
        #expect(ThumbnailSpec.Curve.table([Point(7, 42)]) == [UInt8](repeating: 42, count: 256))
        let middle = ThumbnailSpec.Curve.table([Point(50, 10), Point(100, 200), Point(200, 220)])
        #expect(middle[0] == 10 && middle[49] == 10 && middle[50] == 10 && middle[100] == 200 && middle[255] == 220)
        // A natural spline through three points bends: above the chord on the rising side
        #expect(middle[75] > 105)
    }

    @Test func exactCropMakesTheTwoSidedCropModeThumborsRegion() throws {
        // thumbor.exact_crop: the crop mode with both sides is rounding=thumbor-crop; one side, fit-in and stretch()
        // are what they are without it
        let exact: [(String, String)] = [
            ("300x200/img.test/a.jpg", "w=300&h=200&fit=cover&enlarge=1&rounding=thumbor-crop"),
            (
                "-300x200/left/img.test/a.jpg",
                "w=300&h=200&fit=cover&enlarge=1&flip=h&gravity=east&rounding=thumbor-crop"
            ),
            ("300xorig/img.test/a.jpg", "w=300&h=4096&fit=cover&enlarge=1&orig=h&rounding=thumbor-crop"),
            ("300x0/img.test/a.jpg", "w=300&enlarge=1&rounding=thumbor-crop"),
            ("fit-in/300x200/img.test/a.jpg", "w=300&h=200"),
            ("300x200/filters:stretch()/img.test/a.jpg", "w=300&h=200&fit=fill&enlarge=1"),
        ]
        for (thumbor, thumb) in exact {
            let path = try ThumborPath(afterPrefix: Substring("unsafe/" + thumbor))
            let plan = try path.plan(refusingSkipped: false, exactCrop: true).plan
            let request = try plan.request(accept: nil, rules: .none, hints: nil, watermarks: .none)
            let key = VariantKey.description(source: request.source, spec: request.spec)
            #expect(try key == Self.key(thumb: "url=http%3A%2F%2Fimg.test%2Fa.jpg&" + thumb), "\(thumbor)")
        }
    }

    @Test func extractFocalTakesTheInnerImageAndItsCropsCentre() throws {
        // The image is a thumbor URL with a crop: the inner image is the source, the crop's centre the focal point
        #expect(
            try Self.key(thumbor: "300x200/filters:extract_focal()/img.test/unsafe/100x50:300x250/other.test/b.jpg")
                == Self.key(
                    thumb: "url=http%3A%2F%2Fother.test%2Fb.jpg&w=300&h=200&fit=cover&enlarge=1&gravity=fpx:200,150"))
        // Nested: followed to the crop (a signature of 28 characters counts as thumbor's)
        let signature = String(repeating: "a", count: 27) + "="
        #expect(
            try Self.key(
                thumbor:
                    "300x200/filters:extract_focal()/a.test/unsafe/fit-in/9x9/b.test/\(signature)/0x0:10x20/c.test/d.png"
            )
                == Self.key(thumb: "url=http%3A%2F%2Fc.test%2Fd.png&w=300&h=200&fit=cover&enlarge=1&gravity=fpx:5,10"))
        // Without a crop (or a signature too short), the URL is the source as written
        for image in ["img.test/unsafe/300x200/other.test/b.jpg", "img.test/short/10x10:20x20/other.test/b.jpg"] {
            let url = "url=" + "http://\(image)".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            #expect(
                try Self.key(thumbor: "300x200/filters:extract_focal()/\(image)")
                    == Self.key(thumb: url + "&w=300&h=200&fit=cover&enlarge=1"))
        }
        // Beside a focal() filter: their centre of mass, each weighted by its box's area ((5,5) × 100 and (2,2) × 4)
        #expect(
            try Self.key(
                thumbor: "300x200/filters:focal(0x0:10x10):extract_focal()/img.test/unsafe/1x1:3x3/o.test/b.jpg")
                == Self.key(thumb: "url=http%3A%2F%2Fo.test%2Fb.jpg&w=300&h=200&fit=cover&enlarge=1&gravity=fpx:4,4"))
    }

    @Test func malformedPathsAreRefused() {
        #expect(throws: RequestError.self) { try ThumborPath(afterPrefix: "unsafe") }
        #expect(throws: RequestError.missingSignature) { try ThumborPath(afterPrefix: "/10x10/img.test/a.jpg") }
        #expect(throws: RequestError.malformedPath("no image after the options")) {
            try ThumborPath(afterPrefix: "unsafe/10x10/filters:blur(2)/")
        }
    }

    // MARK: - The access log

    @Test func theSignatureSegmentIsRedactedFromLogs() {
        let redaction = PathSignatureRedaction(
            [.init(prefix: "/", form: ThumborForm.self)],
            otherRoutes: (["/", "/health", "/thumb"], ["/prefetch/"]))
        #expect(redaction.redacted("/8ammJH8D-7tXy6kU3lTvoXlhu4o=/300x200/h/a.jpg") == "/REDACTED/300x200/h/a.jpg")
        #expect(redaction.redacted("/8ammJH8D-7tXy6kU3lTvoXlhu4o=/meta/h/a.jpg") == "/REDACTED/meta/h/a.jpg")
        #expect(redaction.redacted("/unsafe/300x200/h/a.jpg") == "/unsafe/300x200/h/a.jpg")
        // Another route's path stays as it is, whatever its answer; an unknown path is the form's.
        #expect(redaction.redacted("/prefetch/abc/def") == "/prefetch/abc/def")
        #expect(redaction.redacted("/health") == "/health")
        #expect(redaction.redacted("/healthz/x") == "/REDACTED/x")
        let imgproxy = PathSignatureRedaction([.init(prefix: "/i/", form: ImgproxyForm.self)])
        #expect(imgproxy.redacted("/i/info/abc/rs:fit:1:1/plain/x") == "/i/info/REDACTED/rs:fit:1:1/plain/x")
        #expect(imgproxy.redacted("/i/abc/rs:fit:1:1/plain/x") == "/i/REDACTED/rs:fit:1:1/plain/x")
        // Byte-level scanning: non-ASCII after the signature survives, a segment that only starts with
        // "unsafe" is a signature, and paths outside the prefix or without a segment stay as they are.
        #expect(redaction.redacted("/sig/300x200/h/é.jpg") == "/REDACTED/300x200/h/é.jpg")
        #expect(redaction.redacted("/unsafeX/300x200/h/a.jpg") == "/REDACTED/300x200/h/a.jpg")
        #expect(imgproxy.redacted("/x/abc/rs:fit:1:1/plain/x") == "/x/abc/rs:fit:1:1/plain/x")
        #expect(imgproxy.redacted("/i/") == "/i/")
        #expect(imgproxy.redacted("/i") == "/i")
    }

    @Test func secretsInTheQueriesOfURLsInThePathAreRedacted() {
        let thumbor = PathSignatureRedaction([.init(prefix: "/t/", form: ThumborForm.self)])
        let imgproxy = PathSignatureRedaction([.init(prefix: "/i/", form: ImgproxyForm.self)])
        // A percent-encoded image's query: secret values go, the rest stays
        #expect(
            thumbor.redacted("/t/unsafe/10x10/h.test%2Fa.jpg%3Fw%3D1%26sig%3Dabc%26X-Amz-Signature%3Ddef")
                == "/t/unsafe/10x10/h.test%2Fa.jpg%3Fw%3D1%26sig%3DREDACTED%26X-Amz-Signature%3DREDACTED")
        #expect(
            thumbor.redacted("/t/unsafe/10x10/h.test/a.jpg%3Fsig=abc&x=1")
                == "/t/unsafe/10x10/h.test/a.jpg%3Fsig=REDACTED&x=1")
        // watermark()'s URL inside the filters, then the image: each query on its own
        #expect(
            thumbor.redacted("/t/unsafe/filters:watermark(h%2Fw.png%3Ftoken%3Dt,0,0,0)/h.test/a.jpg%3Fid%3D7")
                == "/t/unsafe/filters:watermark(h%2Fw.png%3Ftoken%3DREDACTED,0,0,0)/h.test/a.jpg%3Fid%3D7")
        // an encoded `?` in the source's own path (double-encoded) is not a query
        #expect(thumbor.redacted("/t/unsafe/h.test/a%253Fsig%253Dabc.jpg") == "/t/unsafe/h.test/a%253Fsig%253Dabc.jpg")
        // imgproxy: plain with its @ext, base64url (cut by `/` or not), and wmu:
        #expect(
            imgproxy.redacted("/i/abc/rs:fit:1:1/plain/http%3A%2F%2Fh%2Fa.jpg%3Fsig%3Dxyz@webp")
                == "/i/REDACTED/rs:fit:1:1/plain/http%3A%2F%2Fh%2Fa.jpg%3Fsig%3DREDACTED@webp")
        let secretSource = URLSignature.base64URLEncoded(Array("http://h/a.jpg?sig=xyz".utf8))
        let plainSource = URLSignature.base64URLEncoded(Array("http://h/a.jpg?id=7".utf8))
        #expect(imgproxy.redacted("/i/abc/rs:fit:1:1/\(secretSource).png") == "/i/REDACTED/rs:fit:1:1/REDACTED.png")
        let cut = String(secretSource.prefix(8)) + "/" + secretSource.dropFirst(8)
        #expect(imgproxy.redacted("/i/abc/\(cut)") == "/i/REDACTED/REDACTED")
        #expect(imgproxy.redacted("/i/abc/\(plainSource)") == "/i/REDACTED/\(plainSource)")
        #expect(
            imgproxy.redacted("/i/abc/wm:1/wmu:\(secretSource)/\(plainSource)")
                == "/i/REDACTED/wm:1/wmu:REDACTED/\(plainSource)")
    }

    // MARK: - One cache, through a server

    @Test(.timeLimit(.minutes(1))) func aThumborURLAnImgproxyURLAndAThumbQueryAreOneFetchOneRender() throws {
        // Given thumbor's form at / (unsafe allowed) and imgproxy's at /i/ (unsigned) beside /thumb
        var settings = Settings()
        settings.thumbor.allowsUnsafe = true
        let fixture = try FrontDoorTests.Fixture { router, service in
            let imgproxy = ImgproxyForm(
                prefix: "/i/", keys: FormKeys(ImgproxyForm.Keys(settings)), rules: SharedThumbQueryRules(),
                watermarks: .none)
            router.add(.get, prefix: "/i/", handler: service.handler(for: imgproxy))
            let thumbor = ThumborForm(
                prefix: "/", keys: FormKeys(ThumborForm.Keys(settings)), rules: SharedThumbQueryRules(),
                watermarks: .none)
            router.add(.get, prefix: "/", handler: service.handler(for: thumbor))
        }
        fixture.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png")))
        let origin = fixture.origin.url("/q.png")
        let encoded = FrontDoorTests.percentEncoded(origin)
        let base64 = URLSignature.base64URLEncoded(Array(origin.utf8))

        // When the thumbor URL, then the same picture as imgproxy URLs (plain and base64) and as a /thumb query,
        // then the thumbor URL again, are asked
        let outcomes = try fixture.xCache([
            "/unsafe/fit-in/40x30/filters:format(webp)/\(origin.dropFirst("http://".count))",
            "/i/insecure/rs:fit:40:30/f:webp/plain/\(encoded)",
            "/i/insecure/rs:fit:40:30/\(base64).webp",
            "/thumb?url=\(encoded)&w=40&h=30&format=webp",
            "/unsafe/fit-in/40x30/filters:format(webp)/\(encoded)",
        ])

        // Then one fetch, one render, and every other answer from memory
        #expect(outcomes == ["MISS", "HIT-MEMORY", "HIT-MEMORY", "HIT-MEMORY", "HIT-MEMORY"])
        #expect(fixture.origin.hits("/q.png") == 1)
        #expect(fixture.coordinator.counters.rendersStarted == 1)
    }
}
