// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// `ThumbnailRequest.canonicalQuery(source:spec:)`: one spelling per plan, which parses back to the same plan (the
/// property fuzz/FuzzThumbParameters checks on random queries, here on a table with every /thumb parameter).
@Suite struct CanonicalQueryTests {
    /// `url=http://example.com/a.jpg`, encoded as the canonical query writes it.
    static let url = "url=http%3A%2F%2Fexample.com%2Fa.jpg"
    static let box = "\(url)&w=64&h=64"

    /// A query (after `url`, `w` and `h`) and its canonical spelling (after the same three).
    static let spellings: [(query: String, canonical: String)] = [
        // Source, box and output.
        ("", ""),
        ("fit=cover&gravity=attention", "fit=cover&gravity=attention"),
        ("gravity=center&fit=cover", "fit=cover"),
        ("fit=cover&gravity=fp:0.30,0.6000", "fit=cover&gravity=fp:0.3,0.6"),
        ("fit=cover&gravity=fp:0,1.0", "fit=cover&gravity=fp:0,1"),
        ("fit=pad&gravity=northwest", "fit=pad&gravity=northwest"),
        ("fit=fill", "fit=fill"),
        ("q=75&format=jpg", "format=jpeg&q=75"),
        ("format=png", "format=png"),
        ("format=webp", "format=webp"),
        ("format=avif", "format=avif"),
        ("format=auto", ""),
        ("enlarge=true", "enlarge=1"),
        ("enlarge=false", ""),
        ("sig=abc", ""),
        // Orientation: one rotation and at most one mirror.
        ("autorotate=false", "autorotate=0"),
        ("autorotate=1", ""),
        ("rotate=270", "rotate=270"),
        ("rotate=0", ""),
        ("flip=h", "flip=h"),
        ("flip=v", "rotate=180&flip=h"),
        ("flip=vh&rotate=90", "rotate=270"),
        ("rotate=180&flip=hv", ""),
        // Region.
        ("trim=", "trim=10"),
        ("trim=20,FFFFFF", "trim=20,ffffff"),
        ("trim=0", "trim=0"),
        ("crop=100,50,800,600", "crop=100,50,800,600"),
        ("crop=0100,0,1,1", "crop=100,0,1,1"),
        ("crop=0.25,0.0,0.50,1.0000", "crop=0.25,0.0,0.5,1.0"),
        ("crop=0.0,0.0,1.0,1.0", "crop=0.0,0.0,1.0,1.0"),
        // Effects.
        ("brightness=-020", "brightness=-20"),
        ("brightness=-0", ""),
        ("brightness=255", "brightness=255"),
        ("contrast=1.50", "contrast=1.5"),
        ("contrast=1.0", ""),
        ("saturation=0", "saturation=0"),
        ("grayscale=true", "grayscale=1"),
        ("grayscale=rec601", "grayscale=rec601"),
        ("saturation_model=hsp&saturation=2.50", "saturation=2.5&saturation_model=hsp"),
        ("saturation_model=hsp", ""),
        ("blur=01.5000", "blur=1.5"),
        ("blur=0.0001", "blur=0.0001"),
        ("sharpen=10", "sharpen=10"),
        ("pixelate=8", "pixelate=8"),
        ("pixelate=1", "pixelate=1"),
        ("redact=faces", "redact=faces,blur"),
        ("redact_margin=0.50&redact=faces,pixelate,08", "redact=faces,pixelate,8&redact_margin=0.5"),
        ("redact=faces,box,2.0", "redact=faces,box,2"),
        ("redact=faces,blur,2.50&redact_margin=0.2", "redact=faces,blur,2.5"),
        // Canvas and background: padding in its shortest CSS form.
        ("padding=5,5,5,5", "padding=5"),
        ("padding=1,2", "padding=1,2"),
        ("padding=1,2,1,2", "padding=1,2"),
        ("padding=1,2,3", "padding=1,2,3"),
        ("padding=1,2,3,2", "padding=1,2,3"),
        ("padding=1,2,3,4", "padding=1,2,3,4"),
        ("padding=0,0,0,1", "padding=0,0,0,1"),
        ("bg=FF00FFFF", "bg=ff00ff"),
        ("bg=FF00FF80", "bg=ff00ff80"),
        // A PDF's page: 1 is the default and drops out.
        ("page=1", ""),
        ("page=003", "page=3"),
        ("page=2&animated=0", "page=2&animated=0"),
        // Animation.
        ("animated=false", "animated=0"),
        ("animated=1", ""),
        ("format=gif", "format=gif"),
        // Watermark from a URL (the canonical URL, percent-encoded; defaults left out).
        ("wm_url=http://A.test/m.png", "wm_url=http%3A%2F%2Fa.test%2Fm.png"),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=southeast&wm_x=0&wm_opacity=1.0&wm_scale=0",
            "wm_url=http%3A%2F%2Fa.test%2Fm.png"
        ),
        (
            "wm_scale=0.250&wm_opacity=0.50&wm_url=http%3A%2F%2Fa.test%2Fm.png",
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_opacity=0.5&wm_scale=0.25"
        ),
        ("wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=tile", "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=tile"),
        (
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=center&wm_y=4&wm_x=3",
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm_pos=centre&wm_x=3&wm_y=4"
        ),
        // Several watermarks: each slot's fields in order.
        (
            "wm2_url=http%3A%2F%2Fa.test%2Fn.png&wm2_pos=north&wm_url=http%3A%2F%2Fa.test%2Fm.png",
            "wm_url=http%3A%2F%2Fa.test%2Fm.png&wm2_url=http%3A%2F%2Fa.test%2Fn.png&wm2_pos=north"
        ),
        // Encoder and metadata.
        ("progressive=true", "progressive=1"),
        ("progressive=0", "progressive=0"),
        ("format=jpeg&chroma=444&max_bytes=020000", "format=jpeg&chroma=444&max_bytes=20000"),
        ("lossless=1&format=webp", "format=webp&lossless=1"),
        ("avif_effort=7", "avif_effort=7"),
        ("jxl_effort=7", "jxl_effort=7"),
        ("keep_copyright=true&icc=keep", "keep_copyright=1&icc=keep"),
        ("icc=srgb&keep_copyright=0&lossless=0", ""),
        // Everything at once, in another order.
        (
            "bg=000000&padding=2&pixelate=2&sharpen=0.5&blur=1&grayscale=1&saturation=2&contrast=0.5&brightness=10"
                + "&crop=1,2,30,40&trim=5&flip=h&rotate=90&autorotate=0&enlarge=1&q=50&format=webp&gravity=south"
                + "&fit=pad",
            "fit=pad&gravity=south&format=webp&q=50&enlarge=1&autorotate=0&rotate=90&flip=h&trim=5&crop=1,2,30,40"
                + "&brightness=10&contrast=0.5&saturation=2&grayscale=1&blur=1&sharpen=0.5&pixelate=2&padding=2"
                + "&bg=000000"
        ),
    ]

    static func request(_ query: String, accept: String? = nil) throws(RequestError) -> ThumbnailRequest {
        try ThumbnailRequest(rawQuery: query, accept: accept)
    }

    static func canonical(_ request: ThumbnailRequest) -> String {
        ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec)
    }

    @Test(arguments: spellings)
    func eachParameterHasOneSpelling(_ query: String, canonical: String) throws {
        // When a query is parsed and written back
        let written = Self.canonical(try Self.request(query.isEmpty ? Self.box : "\(Self.box)&\(query)"))
        // Then it is in canonical order and spelling
        #expect(written == (canonical.isEmpty ? Self.box : "\(Self.box)&\(canonical)"))
    }

    /// Queries whose canonical form must parse back to the very same request, with the `Accept` they were sent with.
    static let roundTrips: [(query: String, accept: String?)] =
        spellings.map { (query: $0.query.isEmpty ? box : "\(box)&\($0.query)", accept: nil) } + [
            ("\(url)&w=300", nil),
            ("\(url)&h=300&fit=cover&gravity=north", nil),
            ("\(url)&w=100&format=auto", "image/avif,image/webp"),
            ("\(url)&w=100", "image/webp;q=0.5, image/avif;q=0"),
            ("\(url)&w=100&format=png", "image/webp"),
            ("\(url)&w=33&h=21&dpr=1.5&padding=3,1&fit=pad", nil),
            ("\(url)&w=1024&dpr=4&padding=256", nil),
            // dpr_limit keeps the dpr the sides were multiplied by (fuzz/FailCases: it was written as 1 and lost)
            ("\(url)&w=300&h=200&fit=pad&dpr=2&dpr_limit=1", nil),
            ("\(url)&w=300&h=200&fit=cover&dpr=1.5&dpr_limit=true", nil),
            ("url=HTTP%3A%2F%2FExample.COM%3A80%2Fx%2F..%2Fa%2520b.jpg%3Fv%3D1%26s%3D2%23top&w=10", nil),
            ("url=http://example.com/a+b.jpg&w=10", nil),
            ("url=https%3A%2F%2F%5B2001%3Adb8%3A%3A1%5D%3A8443%2Fa.jpg&w=10", nil),
            ("url=http%3A%2F%2Fexample.com%2F%C3%A9t%C3%A9.jpg&w=10", nil),
        ]

    @Test(arguments: roundTrips)
    func canonicalQueryParsesBackToTheSameRequest(_ query: String, accept: String?) throws {
        // Given a request
        let request = try Self.request(query, accept: accept)
        // When its canonical query is parsed with the same Accept
        let canonical = Self.canonical(request)
        let again = try Self.request(canonical, accept: accept)
        // Then it is the same source and spec, and its own canonical query
        #expect(again.source == request.source)
        #expect(again.spec == request.spec)
        #expect(Self.canonical(again) == canonical)
        #expect(!canonical.contains("dpr="))
    }

    @Test(arguments: roundTrips)
    func canonicalQueryOfTheNormalisedPlanHasTheSameKey(_ query: String, accept: String?) throws {
        // Given a request's normalised plan and its variant key
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let request = try Self.request(query, accept: accept)
        let normalized = thumbnailer.normalized(request.spec)
        let key = VariantKey.description(source: request.source, spec: normalized)
        // When the normalised plan is written as a query and parsed again
        let again = try Self.request(
            ThumbnailRequest.canonicalQuery(source: request.source, spec: normalized), accept: accept)
        // Then the plan and the key are the same
        #expect(thumbnailer.normalized(again.spec) == normalized)
        #expect(VariantKey.description(source: again.source, spec: thumbnailer.normalized(again.spec)) == key)
        #expect(key.hasSuffix(" " + request.source.string))
    }

    @Test func dprIsWrittenAsTheScaledValues() throws {
        let request = try Self.request("\(Self.url)&w=33&h=20&dpr=1.5&padding=4,1")
        #expect(Self.canonical(request) == "\(Self.url)&w=50&h=30&padding=6,2")
    }

    @Test func theSourceIsWrittenCanonicalAndEncoded() throws {
        let request = try Self.request(
            "url=HTTP%3A%2F%2FExample.COM%3A80%2Fx%2F..%2Fa%2520b.jpg%3Fv%3D1%26s%3D2%23top&w=10")
        #expect(request.source.string == "http://example.com/a%20b.jpg?v=1&s=2")
        #expect(Self.canonical(request) == "url=http%3A%2F%2Fexample.com%2Fa%2520b.jpg%3Fv%3D1%26s%3D2&w=10")
    }

    /// Spellings of one plan (PipelineParameterTests.sameKeys and more): one canonical query of the normalised plan.
    static let samePlans: [[String]] = [
        [
            "", "rotate=0", "autorotate=1", "rotate=180&flip=hv", "blur=0", "contrast=1.00", "pixelate=1", "padding=0",
            "crop=0.0,0.0,1.0,1.0", "brightness=0&saturation=1", "format=auto&enlarge=0", "q=80",
        ],
        ["flip=v", "rotate=180&flip=h"],
        ["rotate=90&flip=h", "rotate=270&flip=v"],
        ["blur=1.5", "blur=1.50", "blur=01.5000"],
        ["padding=5", "padding=5,5", "padding=5,5,5", "padding=5,5,5,5"],
        ["bg=FF00FF", "bg=ff00ff", "bg=ff00ffff"],
        ["fit=cover&gravity=center&sharpen=1", "sharpen=1.0&gravity=centre&fit=cover"],
        ["fit=pad&gravity=attention", "fit=pad"],
        ["fit=contain&gravity=fp:0.2,0.2", "fit=contain"],
        ["format=png&q=10", "format=png"],
    ]

    @Test(arguments: samePlans)
    func spellingsOfOnePlanShareACanonicalQuery(_ spellings: [String]) throws {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let queries = try spellings.map { query in
            let request = try Self.request(query.isEmpty ? Self.box : "\(Self.box)&\(query)")
            return ThumbnailRequest.canonicalQuery(source: request.source, spec: thumbnailer.normalized(request.spec))
        }
        #expect(Set(queries).count == 1, "\(queries)")
    }
}
