// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import OriginFetch
import Testing
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// How long the texts built per miss take: the variant key (every miss) and the canonical query (prefetch, the
/// playground, redirects). It prints its figures rather than asserting a bound, since the machine is shared; it
/// exists so that a change to how these texts are written can be compared before and after (issue 26). It counts the
/// thread's CPU time, not the wall clock, and runs its cases one at a time, so that other work on a shared machine
/// moves the figures less. A benchmark, not a check: it runs only when asked, `THUMBD_TIMINGS=1 swift test --filter
/// VariantKeyTimingTests`, so that `make test` does not spend its 100,000 rounds per case.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["THUMBD_TIMINGS"] == "1"))
struct VariantKeyTimingTests {
    /// Nanoseconds of CPU time `body` takes on this thread.
    static func cpuNanoseconds(_ body: () -> Void) -> Int {
        var start = timespec()
        var end = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start)
        body()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end)
        return (end.tv_sec - start.tv_sec) * 1_000_000_000 + (end.tv_nsec - start.tv_nsec)
    }

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
        let keyTime = Self.cpuNanoseconds {
            for _ in 0..<rounds { bytes &+= VariantKey.description(source: request.source, spec: spec).utf8.count }
        }
        let queryTime = Self.cpuNanoseconds {
            for _ in 0..<rounds {
                bytes &+= ThumbnailRequest.canonicalQuery(source: request.source, spec: spec).utf8.count
            }
        }
        let parseTime = Self.cpuNanoseconds {
            for _ in 0..<rounds / 10 {
                bytes &+= (try? ThumbnailRequest(rawQuery: query, accept: "image/webp"))?.spec.width ?? 0
            }
        }
        print(
            "timing \(name): key \(keyTime / rounds) ns, canonical query \(queryTime / rounds) ns,"
                + " parse \(parseTime / (rounds / 10)) ns of CPU per call (\(bytes) bytes)")
        #expect(bytes > 0)
    }
}
