// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// imgproxy's `raw` and `skip_processing` (`/thumb`'s `raw=1` and `skip=`): the source's own bytes, after the
    /// checks every source passes, decided by the render so that the picture is one variant key and one cache entry in
    /// every form.
    @Suite(.timeLimit(.minutes(1))) struct PassThroughServingTests {
        static let forms = ["imgproxy.enabled": "true"]

        /// The answer carries the marks of the source's own bytes.
        static func expectSourceBytes(
            _ response: RawHTTPClient.Response, _ bytes: [UInt8], type: String,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
            #expect(response.body == bytes, sourceLocation: sourceLocation)
            #expect(response.header("content-type") == type, sourceLocation: sourceLocation)
            #expect(response.header("x-content-type-options") == "nosniff", sourceLocation: sourceLocation)
            #expect(response.header("etag")?.hasSuffix("-src\"") == true, sourceLocation: sourceLocation)
        }

        @Test func rawIsTheSourcesBytesInEveryFormAndOneCacheEntry() async throws {
            // Given sources served without an image Content-Type (the format is found from the bytes)
            let harness = try Harness(Self.forms)
            let png = Fixtures.bytes("quadrants.png")
            let tiff = Fixtures.bytes("quadrants.tiff")
            harness.origin.route("/q.png", .ok(png, contentType: "application/octet-stream"))
            harness.origin.route("/q.tiff", .ok(tiff, contentType: "application/octet-stream"))
            let source = Harness.percentEncoded(harness.origin.url("/q.png"))

            // When imgproxy's form asks it raw, as an attachment named photo
            let imgproxy = "/imgproxy/unsafe/raw:1/fn:photo/att:1/plain/\(source)"
            let first = try await harness.request(imgproxy, headers: [("Accept", "image/webp")])
            // Then the answer is the origin's bytes, its type the detected one, not sniffable, and an attachment
            Self.expectSourceBytes(first, png, type: "image/png")
            #expect(first.header("x-cache") == "MISS")
            #expect(first.header("content-disposition") == "attachment; filename=\"photo.png\"")
            #expect(first.header("vary")?.lowercased().contains("accept") != true)

            // And /thumb's raw=1 is the same cache entry, without a disposition it did not ask for
            let thumb = try await harness.request(harness.thumbTarget("/q.png", "raw=1"))
            Self.expectSourceBytes(thumb, png, type: "image/png")
            #expect(thumb.header("x-cache") == "HIT-MEMORY")
            #expect(thumb.header("etag") == first.header("etag"))
            #expect(thumb.header("content-disposition") == nil)
            // And a loop's hot copy answers with the same marks and the request's own disposition
            let hot = try await HotSetTests.hotHit(harness, imgproxy)
            Self.expectSourceBytes(hot, png, type: "image/png")
            #expect(hot.header("content-disposition") == "attachment; filename=\"photo.png\"")
            #expect(harness.origin.hits("/q.png") == 1)

            // And a TIFF, which thumbd never writes, is answered as the TIFF it is, inline under the source's name
            let tiffAnswer = try await harness.request(harness.thumbTarget("/q.tiff", "raw=1&attachment=0"))
            Self.expectSourceBytes(tiffAnswer, tiff, type: "image/tiff")
            #expect(tiffAnswer.header("content-disposition") == "inline; filename=\"q.tif\"")

            // And what would change the picture beside raw is refused by name, without a fetch
            let resized = try await harness.request("/imgproxy/unsafe/raw:1/rs:fit:32:32/plain/\(source)")
            expectJSONError(resized, status: 400, mentioning: "rs")
            let blurred = try await harness.request(harness.thumbTarget("/q.png", "raw=1&blur=2"))
            expectJSONError(blurred, status: 400, mentioning: "blur")
            #expect(harness.origin.hits("/q.png") == 1)
        }

        @Test func aDiskHitOfTheSourcesBytesKeepsItsMarks() async throws {
            // Given no memory tier, and a TIFF asked raw once (rendered, written to disk)
            let harness = try Harness(Self.forms.merging(["cache.memory.max_bytes": "0"]) { $1 })
            let tiff = Fixtures.bytes("quadrants.tiff")
            harness.origin.route("/q.tiff", .ok(tiff, contentType: "image/tiff"))
            let target = harness.thumbTarget("/q.tiff", "raw=1")
            let first = try await harness.request(target)
            Self.expectSourceBytes(first, tiff, type: "image/tiff")
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 1 })
            // When it is asked again, and again with a filename
            let fromDisk = try await harness.request(target)
            let named = try await harness.request(harness.thumbTarget("/q.tiff", "raw=1&filename=scan"))
            // Then both come from the disk tier with the format, nosniff and ETag the first answer had
            for response in [fromDisk, named] {
                #expect(response.header("x-cache") == "HIT-DISK")
                Self.expectSourceBytes(response, tiff, type: "image/tiff")
                #expect(response.header("etag") == first.header("etag"))
            }
            #expect(named.header("content-disposition") == "inline; filename=\"scan.tif\"")
            #expect(harness.origin.hits("/q.tiff") == 1)
        }

        @Test func rawRefusesWhatARenderRefusesWithItsStatus() async throws {
            // Given sources a render refuses: HTML served as a JPEG, a pixel bomb, a frame bomb
            let harness = try Harness(Self.forms)
            let refused: [(path: String, bytes: [UInt8])] = [
                ("/page.jpg", Fixtures.bytes("page.html")),
                ("/bomb.png", Fixtures.bytes("bomb.png")), ("/frames.gif", Fixtures.bytes("frame-bomb.gif")),
            ]
            for source in refused { harness.origin.route(source.path, .ok(source.bytes, contentType: "image/jpeg")) }
            for source in refused {
                // When each is asked raw, and rendered
                let raw = try await harness.request(harness.thumbTarget(source.path, "raw=1"))
                let rendered = try await harness.request(harness.thumbTarget(source.path, "w=32"))
                // Then raw is refused as the render is (422 for each), and never with the source's bytes
                #expect(raw.status == 422, "\(source.path): \(raw.text)")
                #expect(rendered.status == raw.status, "\(source.path)")
                #expect(raw.body != source.bytes)
            }
        }

        @Test func rawNeverServesAnSVGTheSandboxRendered() async throws {
            // Given an SVG source, which the decoder sandbox rasterises
            let harness = try Harness(Self.forms)
            let svg = Fixtures.bytes("image.svg")
            harness.origin.route("/a.svg", .ok(svg, contentType: "image/svg+xml"))
            // When it is asked raw, and rendered
            let raw = try await harness.request(harness.thumbTarget("/a.svg", "raw=1"))
            let rendered = try await harness.request(harness.thumbTarget("/a.svg", "w=32"))
            // Then raw is refused (an SVG is never served back as SVG); the render is a raster
            expectJSONError(raw, status: 422)
            #expect(raw.body != svg)
            #expect(rendered.status == 200, "\(rendered.text)")
            #expect(rendered.header("content-type") == "image/jpeg")
        }

        @Test func rawHonoursThePixelLimitFromTheHeader() async throws {
            // Given a pixel limit below the quadrants' 64x48
            let harness = try Harness(Self.forms.merging(["image.max_source_pixels": "3000"]) { $1 })
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            harness.origin.route("/a.gif", .ok(Fixtures.bytes("animated.gif"), contentType: "image/gif"))
            // When it is asked raw
            let big = try await harness.request(harness.thumbTarget("/q.png", "raw=1"))
            // Then it is refused as a render is; a 48x32 still fits, but three frames of it do not
            expectJSONError(big, status: 422, mentioning: "pixel")
            let frames = try await harness.request(harness.thumbTarget("/a.gif", "raw=1"))
            #expect(frames.status == 422, "\(frames.text)")
        }

        @Test func skipPassesAListedSourceThroughAndRendersTheRest() async throws {
            // Given a PNG and an animated GIF
            let harness = try Harness(Self.forms)
            let png = Fixtures.bytes("quadrants.png")
            let gif = Fixtures.bytes("animated.gif")
            harness.origin.route("/q.png", .ok(png, contentType: "image/png"))
            harness.origin.route("/a.gif", .ok(gif, contentType: "image/gif"))
            let source = Harness.percentEncoded(harness.origin.url("/q.png"))

            // When PNG is listed and the format is negotiated, or PNG by name
            let listed = try await harness.request(harness.thumbTarget("/q.png", "w=16&h=16&skip=jpeg,png"))
            let named = try await harness.request(harness.thumbTarget("/q.png", "w=16&format=png&skip=png"))
            // Then both are the source's bytes
            Self.expectSourceBytes(listed, png, type: "image/png")
            Self.expectSourceBytes(named, png, type: "image/png")
            #expect(listed.header("x-cache") == "MISS")
            // And imgproxy's skp of the same picture is the same cache entry
            let imgproxy = try await harness.request("/imgproxy/unsafe/rs:fit:16:16/skp:png:jpg/plain/\(source)")
            Self.expectSourceBytes(imgproxy, png, type: "image/png")
            #expect(imgproxy.header("x-cache") == "HIT-MEMORY")

            // When the source's format is not listed, or another format is asked by name
            let unlisted = try await harness.request(harness.thumbTarget("/q.png", "w=16&skip=jpeg,gif"))
            let otherFormat = try await harness.request(harness.thumbTarget("/q.png", "w=16&format=webp&skip=png"))
            // Then each is rendered: 16 px wide (64x48 → 16x12), thumbd's own bytes without the marks
            for response in [unlisted, otherFormat] {
                #expect(response.status == 200, "\(response.text)")
                #expect(response.body != png)
                let image = try response.image()
                #expect(image.width == 16 && image.height == 12)
                #expect(response.header("x-content-type-options") == nil)
            }
            #expect(try otherFormat.image().mimeType == "image/webp")

            // And an animation listed is passed through with every frame
            let animation = try await harness.request(harness.thumbTarget("/a.gif", "w=16&skip=gif"))
            Self.expectSourceBytes(animation, gif, type: "image/gif")
            #expect(try animation.image().pageCount == 3)
            #expect(harness.origin.hits("/q.png") == 1)
        }
    }
}
