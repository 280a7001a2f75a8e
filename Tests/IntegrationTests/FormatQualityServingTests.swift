// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// imgproxy's `format_quality` and `/thumb`'s `fq` with a negotiated format: the quality is the entry of the
    /// format `Accept` negotiates, chosen when the variant key is made, so the key is the one `q` gives.
    @Suite(.timeLimit(.minutes(1))) struct FormatQualityServingTests {
        @Test func theNegotiatedFormatsQualityIsOneEntryWithQ() async throws {
            // Given imgproxy's form and a photo
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/fq.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let source = Harness.percentEncoded(harness.origin.url("/fq.jpg"))
            let imgproxy = "/imgproxy/unsafe/rs:fit:64:64/fq:webp:20:jpeg:90:avif:30/plain/\(source)"
            let webp = [("Accept", "image/webp")]

            // When it is asked with WebP accepted and without, then /thumb with the qualities written as q
            let negotiatedWebP = try await harness.request(imgproxy, headers: webp)
            let thumbWebP = try await harness.request(harness.thumbTarget("/fq.jpg", "w=64&h=64&q=20"), headers: webp)
            let negotiatedJPEG = try await harness.request(imgproxy)
            let thumbJPEG = try await harness.request(harness.thumbTarget("/fq.jpg", "w=64&h=64&q=90"))
            let thumbFQ = try await harness.request(
                harness.thumbTarget("/fq.jpg", "w=64&h=64&fq=jpeg:90,webp:20"), headers: webp)
            let finer = try await harness.request(harness.thumbTarget("/fq.jpg", "w=64&h=64&fq=webp:95"), headers: webp)

            // Then each negotiated answer is the variant `q` names: one render each, then memory hits
            #expect(negotiatedWebP.header("x-cache") == "MISS")
            #expect(negotiatedWebP.header("content-type") == "image/webp")
            #expect(thumbWebP.header("x-cache") == "HIT-MEMORY" && thumbWebP.body == negotiatedWebP.body)
            #expect(thumbFQ.header("x-cache") == "HIT-MEMORY" && thumbFQ.body == negotiatedWebP.body)
            #expect(negotiatedJPEG.header("x-cache") == "MISS")
            #expect(negotiatedJPEG.header("content-type") == "image/jpeg")
            #expect(thumbJPEG.header("x-cache") == "HIT-MEMORY" && thumbJPEG.body == negotiatedJPEG.body)
            // And the quality is the format's: WebP at 95 is another render, larger than at 20, same size
            #expect(finer.header("x-cache") == "MISS")
            #expect(finer.body.count > negotiatedWebP.body.count)
            #expect(try finer.image().width == negotiatedWebP.image().width)
            #expect(harness.origin.hits("/fq.jpg") == 1)
            // And a bad pair is a 400 naming the parameter
            let bad = try await harness.request(harness.thumbTarget("/fq.jpg", "w=64&fq=webp:101"))
            expectJSONError(bad, status: 400, mentioning: "fq")
            let unknown = try await harness.request("/imgproxy/unsafe/rs:fit:64:64/fq:xyz:20/plain/\(source)")
            expectJSONError(unknown, status: 400, mentioning: "fq")
        }
    }
}
