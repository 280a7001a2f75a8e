// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing
import Thumbnailing

@testable import ThumbdApp

/// How long the texts built per miss take: the variant key (every miss) and the canonical query (prefetch, the
/// playground, redirects). It prints its figures rather than asserting a bound, since the machine is shared; it
/// exists so that a change to how these texts are written can be compared before and after (issue 26).
@Suite struct VariantKeyTimingTests {
    static let everything =
        "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=200&h=100&fit=pad&gravity=south&q=50&enlarge=1&animated=0"
        + "&autorotate=0&rotate=90&flip=h&trim=5,00ff00&crop=1,2,30,40&brightness=10&contrast=0.5&saturation=2"
        + "&grayscale=1&blur=1&sharpen=0.5&pixelate=2&padding=2,3&bg=102030&wm_url=http%3A%2F%2Fa.test%2Fm.png"
        + "&wm_pos=northwest&wm_x=5&wm_y=6&wm_opacity=0.75&wm_scale=0.5&keep_copyright=1&icc=keep&progressive=1"
        + "&chroma=444&avif_effort=3&max_bytes=30000"
    static let plain = "url=http%3A%2F%2Fexample.com%2Fa.jpg&w=200&h=100&fit=cover"

    @Test(arguments: [("plain", plain), ("every operation", everything)])
    func keyAndQueryTexts(_ name: String, query: String) throws {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let request = try ThumbnailRequest(rawQuery: query, accept: "image/webp")
        let spec = thumbnailer.normalized(request.spec)
        let rounds = 100_000
        var bytes = 0
        let clock = ContinuousClock()
        let keyTime = clock.measure {
            for _ in 0..<rounds { bytes &+= VariantKey.description(source: request.source, spec: spec).utf8.count }
        }
        let queryTime = clock.measure {
            for _ in 0..<rounds {
                bytes &+= ThumbnailRequest.canonicalQuery(source: request.source, spec: spec).utf8.count
            }
        }
        let parseTime = clock.measure {
            for _ in 0..<rounds / 10 {
                bytes &+= (try? ThumbnailRequest(rawQuery: query, accept: "image/webp"))?.spec.width ?? 0
            }
        }
        print(
            "timing \(name): key \(keyTime / rounds) per call, canonical query \(queryTime / rounds) per call,"
                + " parse \(parseTime / (rounds / 10)) per call (\(bytes) bytes)")
        #expect(bytes > 0)
    }
}
