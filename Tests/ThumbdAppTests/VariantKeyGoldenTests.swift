// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// The variant key's text, byte for byte. The disk index and the shared tier's object names are derived from it,
/// so a change here leaves every node's cache cold and lets two plans share an entry if a field is forgotten.
/// These texts must only change together with the `v1` prefix (VariantKey.description); a restructuring of how
/// the key is written must leave every line below as it is.
@Suite struct VariantKeyGoldenTests {
    static let url = "url=http%3A%2F%2Fexample.com%2Fa.jpg"

    /// The key of `/thumb?<url>&<query>`'s normalised plan, as the service computes it.
    static func key(_ query: String, accept: String? = nil) throws -> String {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let request = try ThumbnailRequest(rawQuery: "\(url)&\(query)", accept: accept)
        return VariantKey.description(source: request.source, spec: thumbnailer.normalized(request.spec))
    }

    static let source = " http://example.com/a.jpg"

    /// Plain resizes of every fit, and the box and output fields.
    static let plain: [(query: String, accept: String?, key: String)] = [
        ("w=256&h=256", nil, "v1 w=256 h=256 fit=contain g=centre q=80 up=0 f=auto"),
        ("w=256&h=256&fit=contain", nil, "v1 w=256 h=256 fit=contain g=centre q=80 up=0 f=auto"),
        ("w=256&h=128&fit=cover", nil, "v1 w=256 h=128 fit=cover g=centre q=80 up=0 f=auto"),
        ("w=256&h=128&fit=fill", nil, "v1 w=256 h=128 fit=fill g=centre q=80 up=0 f=auto"),
        ("w=256&h=128&fit=pad", nil, "v1 w=256 h=128 fit=pad g=centre q=80 up=0 f=auto"),
        ("w=256&h=128&fit=outside", nil, "v1 w=256 h=128 fit=outside g=centre q=80 up=0 f=auto"),
        ("w=256&h=128&fit=auto", nil, "v1 w=256 h=128 fit=auto g=centre q=80 up=0 f=auto"),
        ("w=300", nil, "v1 w=300 h=- fit=contain g=centre q=80 up=0 f=auto"),
        ("h=300&fit=cover&gravity=north", nil, "v1 w=- h=300 fit=contain g=centre q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=attention", nil, "v1 w=64 h=64 fit=cover g=attention q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=entropy", nil, "v1 w=64 h=64 fit=cover g=entropy q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=fp:0.30,0.6", nil, "v1 w=64 h=64 fit=cover g=fp:0.3,0.6 q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=fpx:10,20", nil, "v1 w=64 h=64 fit=cover g=fpx:10,20 q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=fpx:10,20,se", nil, "v1 w=64 h=64 fit=cover g=fpx:10,20,se q=80 up=0 f=auto"),
        // From the top-left corner of a picture nothing trims: the plain spelling
        ("w=64&h=64&fit=cover&gravity=fpx:10,20,nw", nil, "v1 w=64 h=64 fit=cover g=fpx:10,20 q=80 up=0 f=auto"),
        ("w=64&h=64&fit=pad&gravity=southwest", nil, "v1 w=64 h=64 fit=pad g=southwest q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=face", nil, "v1 w=64 h=64 fit=cover g=face q=80 up=0 f=auto"),
        ("w=64&h=64&fit=cover&gravity=smart", nil, "v1 w=64 h=64 fit=cover g=smart q=80 up=0 f=auto"),
        (
            "w=64&h=36&fit=cover&gravity=face&face_zoom=0.50", nil,
            "v1 w=64 h=36 fit=cover g=face q=80 up=0 f=auto fzoom=0.5"
        ),
        ("w=64&h=64&fit=cover&gravity=face&face_pad=2", nil, "v1 w=64 h=64 fit=cover g=face q=80 up=0 f=auto fpad=2"),
        // Nothing to crop closer without gravity=face's cover
        ("w=64&h=64&fit=pad&gravity=face&face_pad=2", nil, "v1 w=64 h=64 fit=pad g=centre q=80 up=0 f=auto"),
        ("w=64&format=jpeg&q=75", nil, "v1 w=64 h=- fit=contain g=centre q=75 up=0 f=jpg"),
        ("w=64&format=png", nil, "v1 w=64 h=- fit=contain g=centre q=80 up=0 f=png"),
        ("w=64&format=webp&q=60", nil, "v1 w=64 h=- fit=contain g=centre q=60 up=0 f=webp"),
        ("w=64&format=avif", nil, "v1 w=64 h=- fit=contain g=centre q=80 up=0 f=avif"),
        ("w=64&format=gif", nil, "v1 w=64 h=- fit=contain g=centre q=80 up=0 f=gif"),
        ("w=64&enlarge=1", nil, "v1 w=64 h=- fit=contain g=centre q=80 up=1 f=auto"),
        ("w=64", "image/webp", "v1 w=64 h=- fit=contain g=centre q=80 up=0 f=auto+webp"),
        ("w=64", "image/avif,image/webp", "v1 w=64 h=- fit=contain g=centre q=80 up=0 f=auto+webp+avif"),
        ("w=33&h=20&dpr=1.5", nil, "v1 w=50 h=30 fit=contain g=centre q=80 up=0 f=auto"),
    ]

    @Test(arguments: plain)
    func plainResizesKeepTheirKeys(_ query: String, accept: String?, key: String) throws {
        #expect(try Self.key(query, accept: accept) == key + Self.source)
    }

    /// Each step on its own in a 64x64 box: its token where the key gives it.
    static let steps: [(query: String, key: String)] = [
        ("animated=0", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto still"),
        ("autorotate=0", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto ao=0"),
        ("rotate=90", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto o=90"),
        ("orig=wh", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto orig=wh"),
        ("min_w=150&min_h=80", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto min_w=150 min_h=80"),
        ("min_w=150&dpr=2", "v1 w=128 h=128 fit=contain g=centre q=80 up=0 f=auto min_w=300"),
        ("dpr_limit=1&dpr=1.5", "v1 w=96 h=96 fit=contain g=centre q=80 up=0 f=auto dprlim=1.5"),
        ("dpr_limit=1", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto"),
        ("dpr_limit=1.5", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto dprlim=1.5"),
        ("rounding=thumbor-fit-in", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto round=thumbor-fit-in"),
        ("rotate=270&flip=h", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto o=270m"),
        ("flip=v", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto o=180m"),
        ("trim=", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto trim=10"),
        ("trim=20,FFFFFF", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto trim=20,ffffff"),
        ("crop=100,50,800,600", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=px:100,50,800,600"),
        ("crop=0.25,0.0,0.50,1.0000", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=fr:0.25,0,0.5,1"),
        ("crop=800,0.50", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=sz:800,0.5@centre"),
        ("trim=12,br,euclidean", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto trim=12,br,euclidean"),
        (
            "trim=0&crop=1,2,3,4&crop_frame=source",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto trim=0 crop=un:1,2,3,4"
        ),
        ("crop=1,2,3,4&crop_frame=source", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=px:1,2,3,4"),
        (
            "trim=0&crop=4,3&crop_gravity=northeast&crop_offset=1,2&crop_frame=source",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto trim=0 crop=unsz:4,3@northeast+1,2"
        ),
        (
            "crop=4,3&crop_gravity=northeast&crop_frame=source",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=sz:4,3@northeast"
        ),
        (
            "crop=800,600&crop_gravity=east&crop_offset=10,-0.25",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=sz:800,600@east+10,-0.25"
        ),
        (
            "crop=800,600&crop_gravity=fp:0.3,0.6",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=sz:800,600@fp:0.3,0.6"
        ),
        ("crop=1.0,1.0&crop_gravity=centre", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto"),
        (
            "crop=100,50&crop_gravity=attention",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto crop=sz:100,50@attention"
        ),
        ("gravity_offset=10,0.25", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto"),
        ("brightness=-20", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto bri=-20"),
        ("contrast=1.50", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto con=1.5"),
        ("saturation=0", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto sat=0"),
        ("grayscale=1", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto grey"),
        ("grayscale=rec601", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto grey=rec601"),
        (
            "saturation=-1.5&saturation_model=hsp",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto sat=-1.5 sat_model=hsp"
        ),
        ("saturation=1&saturation_model=hsp", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto"),
        ("blur=1.5", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto blur=1.5"),
        ("sharpen=0.5", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto sharpen=0.5"),
        ("pixelate=8", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto pixelate=8"),
        ("rgb=10,-20,0", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto rgb=10,-20,0"),
        ("colorize=50,0,100,0000FF", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto colorize=50,0,100/0000ff"),
        ("equalize=1", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto equalize"),
        (
            "convolution=1;2;1;2;4;2;1;2;1,3",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto conv=3:1;2;1;2;4;2;1;2;1"
        ),
        (
            "convolution=0;-1;0;-1;5;-1;0;-1;0,3,0",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto conv=3:0;-1;0;-1;5;-1;0;-1;0:raw"
        ),
        ("noise=20", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto noise=20,0"),
        ("noise=20,7", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto noise=20,7"),
        ("redact=faces", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto redact=faces,blur"),
        (
            "redact=faces,pixelate,8&redact_margin=0.5",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto redact=faces,pixelate,8 rmargin=0.5"
        ),
        (
            "redact=faces,box,2&redact_margin=0.20",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto redact=faces,box"
        ),
        ("redact_margin=0.5", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto"),
        (
            "brightness=10&contrast=1.5&order=brightness,contrast",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto bri=10 con=1.5 order=brightness,contrast"
        ),
        (
            "brightness=10&contrast=1.5&order=contrast",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto bri=10 con=1.5"
        ),
        (
            "grayscale=1&rgb=10,0,0&noise=5&order=rgb",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto grey rgb=10,0,0 noise=5,0 order=rgb,grayscale,noise"
        ),
        (
            "curve=0:0,255:255%7C0:0,128:160,255:255%7C0:0,255:255%7C0:0,255:255",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto curve=0:0,255:255|0:0,128:160,255:255|0:0,255:255|0:0,255:255"
        ),
        ("radius=12", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto radius=12,12/ffffff"),
        ("radius=12,6&radius_bg=FF000000", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto radius=12,6/ff000000"),
        ("padding=1,2,3,4", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto pad=1,2,3,4"),
        ("padding=5", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto pad=5,5,5,5"),
        ("bg=FF00FF80", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto bg=ff00ff80"),
        ("bg=000000", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto bg=000000"),
        ("fit=pad&bg=auto", "v1 w=64 h=64 fit=pad g=centre q=80 up=0 f=auto bg=auto"),
        ("fit=pad&bg=blur", "v1 w=64 h=64 fit=pad g=centre q=80 up=0 f=auto bg=blur"),
        ("extend=box", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto ext=wh"),
        ("extend=aspect", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto ext=aspect"),
        (
            "frame_url=http%3A%2F%2Fa.test%2Ff.png",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto frame=u:19:http://a.test/f.png"
        ),
        (
            "frame_url=http%3A%2F%2Fa.test%2Ff.png&frame_optional=1",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto frame=u:19:http://a.test/f.png frame_optional"
        ),
        (
            "frame_url=http%3A%2F%2Fa.test%2Ff.png&frame_optional=0",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto frame=u:19:http://a.test/f.png"
        ),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/m.png,southeast,0,0,1,0"
        ),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=tile&wm_opacity=0.5&wm_scale=0.25",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/m.png,tile,0,0,0.5,0.25"
        ),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_place=-20p,repeat&wm_hscale=0.25",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/m.png,southeast,0,0,1,0,h=0.25"
                + ",place=-20p,repeat"
        ),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm2_url=http%3A%2F%2Fa.test%2Fn.png&wm2_pos=north&wm2_opacity=0.5",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/m.png,southeast,0,0,1,0"
                + " wm2=u:19:http://a.test/n.png,north,0,0,0.5,0"
        ),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=northwest&wm_x=0.1&wm_y=0.25",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/m.png,northwest,0,0,1,0"
                + ",rx=0.1,ry=0.25"
        ),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=tile&wm_x=10&wm_y=0.5",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/m.png,tile,10,0,1,0,ry=0.5"
        ),
        // An invisible watermark leaves; the next one moves up a slot
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_opacity=0&wm2_url=http%3A%2F%2Fa.test%2Fn.png&wm2_pos=north",
            "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto wm=u:19:http://a.test/n.png,north,0,0,1,0"
        ),
        ("keep_copyright=1", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto kcr"),
        ("icc=keep", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto icc=keep"),
        ("progressive=1", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto prog=1"),
        ("progressive=0", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto"),
        ("format=jpeg&chroma=444", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=jpg chroma=444"),
        ("format=webp&lossless=1", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=webp lossless"),
        ("avif_effort=7", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto avif_effort=7"),
        ("format=jpeg&max_bytes=20000", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=jpg max_bytes=20000"),
        ("skip=png,jpg,png", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto skip=jpeg,png"),
        ("skip=heic,tif,gif", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=auto skip=gif,tiff,heif"),
        // A format asked by name keeps only itself: another listed format can never skip into it
        ("format=png&skip=jpeg,png", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=png skip=png"),
        ("format=webp&skip=jpeg,png", "v1 w=64 h=64 fit=contain g=centre q=80 up=0 f=webp"),
    ]

    /// `raw=1`: the source's key alone, whatever `Accept` says (its answer is the source's own format) and whatever
    /// the answer's headers ask.
    @Test func rawIsTheSourcesKeyAlone() throws {
        let key = "v1 w=4096 h=4096 fit=contain g=centre q=- up=0 f=auto raw" + Self.source
        #expect(try Self.key("raw=1") == key)
        #expect(try Self.key("raw=true&filename=a&attachment=1", accept: "image/avif,image/webp") == key)
        #expect(try Self.key("raw=0&w=64") == "v1 w=64 h=- fit=contain g=centre q=80 up=0 f=auto" + Self.source)
    }

    @Test(arguments: steps)
    func eachStepHasItsToken(_ query: String, key: String) throws {
        #expect(try Self.key("w=64&h=64&\(query)") == key + Self.source)
    }

    /// Every operation non-neutral at once: the tokens in the order the steps run.
    @Test func everyOperationAtOnceIsPinned() throws {
        let query =
            "w=200&h=100&fit=pad&gravity=south&q=50&enlarge=1&animated=0&autorotate=0&rotate=90&flip=h"
            + "&trim=5,00ff00&crop=1,2,30,40&brightness=10&contrast=0.5&saturation=2&grayscale=1&blur=1&sharpen=0.5"
            + "&pixelate=2&padding=2,3&bg=102030&wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=northwest&wm_x=5&wm_y=6"
            + "&wm_opacity=0.75&wm_scale=0.5&keep_copyright=1&icc=keep&progressive=1&chroma=444&avif_effort=3"
            + "&max_bytes=30000"
        #expect(
            try Self.key(query)
                == "v1 w=200 h=100 fit=pad g=south q=50 up=1 f=auto still ao=0 o=90m trim=5,00ff00 crop=px:1,2,30,40"
                + " bri=10 con=0.5 sat=2 grey blur=1 sharpen=0.5 pixelate=2 pad=2,3,2,3"
                + " wm=u:19:http://a.test/m.png,northwest,5,6,0.75,0.5 bg=102030 kcr icc=keep prog=1 chroma=444"
                + " avif_effort=3 max_bytes=30000" + Self.source)
    }

    /// The adaptive box, the trim corner, lossless and a named watermark (whose digest comes from the catalogue),
    /// set on the plan directly.
    @Test func fieldsWithoutAPlainQueryArePinned() throws {
        var operations = ThumbnailSpec.Operations()
        operations.adaptive = true
        operations.trim = ThumbnailSpec.Trim(threshold: 12, colour: nil, corner: .bottomRight)
        operations.lossless = true
        var watermark = ThumbnailSpec.Watermark(image: .named("logo", digest: 0xabc123))
        watermark.position = .gravity(.east)
        operations.watermarks = [watermark]
        let spec = try ThumbnailSpec(
            width: 64, height: 48, fit: .cover, format: .exactly(.webp), operations: operations)
        let key = VariantKey.description(source: try SourceURL("http://example.com/a.jpg"), spec: spec)
        #expect(
            key
                == "v1 w=64 h=48 fit=cover g=centre q=- up=0 f=webp adaptive trim=12,br wm=n:logo:abc123,east,0,0,1,0"
                + " lossless" + Self.source)
    }
}
