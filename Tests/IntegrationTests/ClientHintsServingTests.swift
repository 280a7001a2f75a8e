// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

extension Integration {
    /// Client hints through the whole service (`image.client_hints`): off by default (nothing read, nothing sent);
    /// when on, `Accept-CH` on every thumbnail answer, `Sec-CH-DPR` and the width hints filling in what the plan
    /// leaves out, `Vary` naming the hints used, and the hints part of the request's identity, so the hot sets and
    /// the alias table never answer a URL from one screen with the picture made for another.
    @Suite(.timeLimit(.minutes(2))) struct ClientHintsServingTests {
        static let acceptCH = "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width"

        /// A service with client hints on (unless `on` is false), and a 320x240 picture on its origin.
        static func harness(on: Bool = true, _ overrides: [String: String] = [:]) throws -> Harness {
            let harness = try Harness(overrides.merging(["image.client_hints": "\(on)"]) { _, new in new })
            harness.origin.route("/p.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            return harness
        }

        static func dpr(_ value: String) -> [(String, String)] { [("Sec-CH-DPR", value)] }

        @Test func offByDefaultHintsAreNeitherAskedForNorRead() async throws {
            // Given client hints off (the default)
            let harness = try Self.harness(on: false)
            // When a 2x screen asks for a 40 px thumbnail, and for one without a size
            let sized = try await harness.request(
                harness.thumbTarget("/p.jpg", "w=40&format=png"), headers: Self.dpr("2"))
            let unsized = try await harness.request(
                harness.thumbTarget("/p.jpg", "format=png"), headers: [("Sec-CH-Width", "100")])
            // Then the hint changes nothing: 40 px, no Accept-CH, no Vary; and no size is still a 400
            #expect(sized.status == 200)
            #expect(try sized.image().width == 40)
            #expect(sized.header("accept-ch") == nil && sized.header("vary") == nil)
            expectJSONError(unsized, status: 400, mentioning: "w or h")
        }

        @Test func hintsFillInDprAndWidthAndVaryNamesTheOnesUsed() async throws {
            // Given client hints on
            let harness = try Self.harness()

            // When a 2x screen asks for 40 px
            let retina = try await harness.request(
                harness.thumbTarget("/p.jpg", "w=40&format=png"), headers: Self.dpr("2"))
            // Then it gets 80 physical pixels, asks for the hints, and varies on the DPR only
            #expect(retina.status == 200)
            #expect(try retina.image().width == 80)
            #expect(retina.header("accept-ch") == Self.acceptCH)
            #expect(retina.header("vary") == "Sec-CH-DPR")

            // When an <img sizes> asks without a size: Sec-CH-Width is physical pixels, not multiplied again
            let layout = try await harness.request(
                harness.thumbTarget("/p.jpg", "format=png"), headers: Self.dpr("2") + [("Sec-CH-Width", "120")])
            #expect(layout.status == 200)
            #expect(try layout.image().width == 120)
            #expect(layout.header("vary") == "Sec-CH-DPR, Sec-CH-Width")

            // When only the viewport is known: its CSS pixels times the DPR
            let viewport = try await harness.request(
                harness.thumbTarget("/p.jpg", "format=png"),
                headers: Self.dpr("1.5") + [("Sec-CH-Viewport-Width", "100")])
            #expect(viewport.status == 200)
            #expect(try viewport.image().width == 150)
            #expect(viewport.header("vary") == "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width")

            // When the format is negotiated too, Accept comes first
            let auto = try await harness.request(
                harness.thumbTarget("/p.jpg", "w=40"), headers: Self.dpr("2") + [("Accept", "image/webp,*/*")])
            #expect(auto.header("content-type") == "image/webp")
            #expect(auto.header("vary") == "Accept, Sec-CH-DPR")

            // When the request sets dpr itself, the hint is not used and not varied on
            let own = try await harness.request(
                harness.thumbTarget("/p.jpg", "w=40&dpr=1&format=png"), headers: Self.dpr("3"))
            #expect(try own.image().width == 40)
            #expect(own.header("vary") == nil && own.header("accept-ch") == Self.acceptCH)
        }

        @Test func theKeyHoldsTheEffectiveValuesSoAHintAndTheParameterShareOneEntry() async throws {
            // Given client hints on, and a thumbnail made for a 2x screen through its hint
            let harness = try Self.harness()
            let hinted = try await harness.request(
                harness.thumbTarget("/p.jpg", "w=40&format=png"), headers: Self.dpr("2"))
            #expect(hinted.header("x-cache") == "MISS")

            // When the same picture is asked with dpr=2 written out, by a client that sends no hints
            let written = try await harness.request(harness.thumbTarget("/p.jpg", "w=40&dpr=2&format=png"))

            // Then it is the same entry: from memory, the same bytes, one render
            #expect(written.header("x-cache") == "HIT-MEMORY")
            #expect(written.body == hinted.body)
            #expect(harness.service.renderCounters.rendersStarted == 1)
        }

        @Test func aRepeatedURLFromAnotherDPRNeverGetsTheOtherScreensCachedAnswer() async throws {
            // Given client hints on, and a URL that the loops answer from their hot copies for a 1x screen
            let harness = try Self.harness()
            let target = harness.thumbTarget("/p.jpg", "w=40&format=png")
            #expect(try await harness.request(target, headers: Self.dpr("1")).image().width == 40)
            let hot1x = try await HotSetTests.hotHit(harness, target, headers: Self.dpr("1"))
            #expect(try hot1x.image().width == 40)
            #expect(hot1x.header("vary") == "Sec-CH-DPR" && hot1x.header("accept-ch") == Self.acceptCH)

            // When the very same URL comes from a 2x screen, again and again (alias path, then hot copies)
            var widths: [Int] = []
            for _ in 0..<6 {
                widths.append(try await harness.request(target, headers: Self.dpr("2")).image().width)
            }
            let hot2x = try await HotSetTests.hotHit(harness, target, headers: Self.dpr("2"))

            // Then every answer is the 2x picture, never the 1x copy
            #expect(widths == Array(repeating: 80, count: 6))
            #expect(try hot2x.image().width == 80)
            #expect(hot2x.header("vary") == "Sec-CH-DPR")
            // And the 1x screen and a client without hints still get the 1x picture, from memory
            let again1x = try await harness.request(target, headers: Self.dpr("1"))
            let none = try await harness.request(target)
            #expect(try again1x.image().width == 40)
            #expect(try none.image().width == 40)
            #expect(again1x.header("x-cache") == "HIT-MEMORY" && none.header("x-cache") == "HIT-MEMORY")
            #expect(harness.service.renderCounters.rendersStarted == 2)
            #expect(harness.origin.hits("/p.jpg") == 1)
        }

        @Test func turningHintsOnAndOffByReloadAppliesToTheNextRequestEvenAHotOne() async throws {
            // Given hints off, and a URL the loops answer from their copies for a client that sends a 2x hint
            let harness = try Self.harness(on: false)
            let target = harness.thumbTarget("/p.jpg", "w=40&format=png")
            _ = try await harness.request(target, headers: Self.dpr("2"))
            let hot = try await HotSetTests.hotHit(harness, target, headers: Self.dpr("2"))
            #expect(try hot.image().width == 40)
            #expect(hot.header("accept-ch") == nil)

            // When a reload turns hints on
            var settings = harness.service.settings
            settings.image.readsClientHints = true
            #expect(try harness.service.apply(settings).changedKeys == ["image.client_hints"])

            // Then the same request is read with its hint at once
            let on = try await harness.request(target, headers: Self.dpr("2"))
            #expect(try on.image().width == 80)
            #expect(on.header("accept-ch") == Self.acceptCH)

            // When a reload turns them off again, after the loops copied the 2x answer
            _ = try await HotSetTests.hotHit(harness, target, headers: Self.dpr("2"))
            settings.image.readsClientHints = false
            _ = try harness.service.apply(settings)

            // Then the hint is ignored again, and no answer advertises hints
            for _ in 0..<4 {
                let off = try await harness.request(target, headers: Self.dpr("2"))
                #expect(try off.image().width == 40)
                #expect(off.header("accept-ch") == nil)
            }
        }

        @Test func theFallbackImageFollowsTheHintsToo() async throws {
            // Given hints on and a fallback image, and a missing source
            let directory = try TempDirectory(prefix: "thumbd-hints-fallback")
            let fallback = directory.appending("fallback.png")
            try Data(Fixtures.bytes("grey.png")).write(to: URL(fileURLWithPath: fallback))
            let harness = try Harness(
                ["image.client_hints": "true", "image.fallback": fallback, "cache.negative_ttl": "0"],
                directory: directory)
            harness.origin.route("/missing.png", .status(404))

            // When a 2x screen asks for 32 px
            let response = try await harness.request(
                harness.thumbTarget("/missing.png", "w=32&format=png"), headers: Self.dpr("2"))

            // Then the fallback is 64 px wide, with the hints' headers
            #expect(response.status == 404 && response.header("x-cache") == "FALLBACK")
            #expect(try response.image().width == 64)
            #expect(response.header("vary") == "Sec-CH-DPR" && response.header("accept-ch") == Self.acceptCH)
        }
    }
}
