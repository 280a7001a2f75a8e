// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// thumbor's filters as a thumbor user's URLs carry them (issue 27): what thumbor itself skips is skipped, named
    /// in `X-Thumbd-Skipped-Filters` on every answer (the hot set's too) and counted; `thumbor.skipped_filters:
    /// refuse` makes it a 400; the filters thumbd renders are the same cache entry as their `/thumb` parameters.
    @Suite(.timeLimit(.minutes(1))) struct ThumborFilterServingTests {
        static func harness() throws -> Harness {
            let harness = try Harness([
                "thumbor.enabled": "true", "thumbor.prefix": "/t/", "thumbor.allow_unsafe": "true",
            ])
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            return harness
        }

        static func thumbor(_ harness: Harness, _ options: String) -> String {
            "/t/unsafe/\(options)/\(originHost):\(harness.origin.port)/q.png"
        }

        @Test func whatThumborSkipsIsSkippedNamedAndCountedOnEveryAnswer() async throws {
            // Given thumbor's form, and a URL whose filters thumbor 7.8 skips: too few arguments, no such builtin
            let harness = try Self.harness()
            let plain = Self.thumbor(harness, "fit-in/32x32/filters:format(png)")
            let skipping = Self.thumbor(
                harness, "fit-in/32x32/filters:sharpen(1,2):format(png):red_eye():rgb(10,10):focal(0.89x0.72)")

            // When it is asked, then the URL without them
            let first = try await harness.request(skipping)
            let without = try await harness.request(plain)

            // Then the rest of the URL is rendered: the same picture, one cache entry
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            #expect(first.header("x-thumbd-skipped-filters") == "sharpen, red_eye, rgb, focal")
            #expect(without.header("x-cache") == "HIT-MEMORY")
            #expect(without.header("x-thumbd-skipped-filters") == nil)
            #expect(without.body == first.body)
            // And each skipped filter is counted once, when the URL was parsed
            let scrape = try await harness.scrape(until: { $0["thumbd_thumbor_skipped_filters_total"] == 4 })
            #expect(scrape["thumbd_thumbor_skipped_filters_total"] == 4)

            // And the alias table's and a hot set's answers name them too
            let again = try await harness.request(skipping)
            #expect(again.header("x-cache") == "HIT-MEMORY")
            #expect(again.header("x-thumbd-skipped-filters") == "sharpen, red_eye, rgb, focal")
            let hot = try await HotSetTests.hotHit(harness, skipping)
            #expect(hot.header("x-thumbd-skipped-filters") == "sharpen, red_eye, rgb, focal")
            #expect(hot.body == first.body)
            let plainHot = try await HotSetTests.hotHit(harness, plain)
            #expect(plainHot.header("x-thumbd-skipped-filters") == nil)

            // When the setting says refuse (a reload), the same URL is a 400 naming the first of them
            var settings = harness.service.settings
            settings.thumbor.skippedFilters = .refuse
            _ = try harness.service.apply(settings)
            expectJSONError(try await harness.request(skipping), status: 400, mentioning: "sharpen")
            let unknown = Self.thumbor(harness, "fit-in/32x32/filters:red_eye()")
            expectJSONError(try await harness.request(unknown), status: 400, mentioning: "filter red_eye")
            #expect(try await harness.request(plain).status == 200)
        }
    }
}
