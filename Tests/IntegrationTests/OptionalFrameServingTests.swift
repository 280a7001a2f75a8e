// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `frame_optional=1`, which thumbor's form sets for `frame(url)` (issue 27): a frame image that is no usable
    /// nine-patch is left out of the render instead of failing it, and every answer of that variant, from every tier,
    /// says so in `X-Thumbd-Skipped-Filters: frame`; without the parameter (and with `thumbor.skipped_filters:
    /// refuse`) it stays a 422.
    @Suite(.timeLimit(.minutes(1))) struct OptionalFrameServingTests {
        /// thumbor's form at /t/ with the quadrants at /q.png and, at /plain.png, a picture with no nine-patch
        /// markers (the quadrants again).
        static func harness(directory: TempDirectory? = nil, origin: LoopbackOrigin? = nil) throws -> Harness {
            let harness = try Harness(
                ["thumbor.enabled": "true", "thumbor.prefix": "/t/", "thumbor.allow_unsafe": "true"],
                directory: directory, origin: origin)
            harness.origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            harness.origin.route("/plain.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            return harness
        }

        static func framed(_ harness: Harness, filters: String = "format(png)") -> String {
            ThumborFilterServingTests.thumbor(
                harness, "64x48/filters:\(filters):frame(\(originHost):\(harness.origin.port)/plain.png)")
        }

        static func thumb(_ harness: Harness, optional: Bool) -> String {
            harness.thumbTarget(
                "/q.png",
                "w=64&h=48&fit=cover&enlarge=1&format=png&frame_url="
                    + Harness.percentEncoded(harness.origin.url("/plain.png")) + (optional ? "&frame_optional=1" : ""))
        }

        static func skippedFilters(_ response: RawHTTPClient.Response) -> [String] {
            response.headers.filter { $0.name.lowercased() == "x-thumbd-skipped-filters" }.map(\.value)
        }

        @Test func aPictureWithoutMarkersIsLeftOutNamedCountedAndOneEntryWithFrameOptional() async throws {
            // Given thumbor's form and a frame image without stretch markers
            let harness = try Self.harness()
            let framed = Self.framed(harness)

            // When thumbor's frame() is asked, then /thumb with frame_optional=1, then the URL without the frame
            let first = try await harness.request(framed)
            let twin = try await harness.request(Self.thumb(harness, optional: true))
            let unframed = try await harness.request(
                ThumborFilterServingTests.thumbor(harness, "64x48/filters:format(png)"))

            // Then the rest of the URL is rendered, the picture of the URL without the frame, and the answer says so
            #expect(first.status == 200 && first.header("x-cache") == "MISS", "\(first.text.prefix(200))")
            #expect(Self.skippedFilters(first) == ["frame"])
            #expect(first.header("etag")?.hasSuffix("-noframe\"") == true)
            let image = try DecodedImage(decoding: first.body)
            let plain = try DecodedImage(decoding: unframed.body)
            #expect(image.width == 64 && image.height == 48)
            #expect(image.pixels == plain.pixels && image.bands == plain.bands)
            #expect(Self.skippedFilters(unframed).isEmpty)
            // And /thumb with the parameter is the same entry, its hit named too
            #expect(twin.status == 200 && twin.header("x-cache") == "HIT-MEMORY")
            #expect(twin.body == first.body)
            #expect(Self.skippedFilters(twin) == ["frame"])
            // And the skip is counted once, by the one render
            let scrape = try await harness.scrape(until: { $0["thumbd_thumbor_skipped_filters_total"] == 1 })
            #expect(scrape["thumbd_thumbor_skipped_filters_total"] == 1)

            // And a hot set's answer and a conditional one that does not match name it
            let hot = try await HotSetTests.hotHit(harness, framed)
            #expect(Self.skippedFilters(hot) == ["frame"])
            #expect(hot.body == first.body)
            let conditional = try await harness.request(framed, headers: [("If-None-Match", "\"other\"")])
            #expect(conditional.status == 200 && Self.skippedFilters(conditional) == ["frame"])
            #expect(
                try await harness.request(framed, headers: [("If-None-Match", first.header("etag") ?? "")]).status
                    == 304)
            #expect(try await harness.scrape()["thumbd_thumbor_skipped_filters_total"] == 1)

            // When /thumb asks the same frame without the parameter, then it is refused as before
            let strict = try await harness.request(Self.thumb(harness, optional: false))
            expectJSONError(strict, status: 422, mentioning: "frame image is not a usable nine-patch")
        }

        @Test func aFilterThumborSkipsBesideTheFrameGivesTwoLines() async throws {
            // Given a URL whose parse skips sharpen(1,2) and whose render leaves the frame out
            let harness = try Self.harness()
            let framed = Self.framed(harness, filters: "sharpen(1,2):format(png)")

            // When it is asked, then answered from memory and from a hot set
            let first = try await harness.request(framed)
            let again = try await harness.request(framed)
            let hot = try await HotSetTests.hotHit(harness, framed)

            // Then each answer has two lines of the list field: the render's, then the parse's
            #expect(first.status == 200, "\(first.text.prefix(200))")
            #expect(Self.skippedFilters(first) == ["frame", "sharpen"])
            #expect(again.header("x-cache") == "HIT-MEMORY" && Self.skippedFilters(again) == ["frame", "sharpen"])
            #expect(Self.skippedFilters(hot) == ["frame", "sharpen"])
            let scrape = try await harness.scrape(until: { $0["thumbd_thumbor_skipped_filters_total"] == 2 })
            #expect(scrape["thumbd_thumbor_skipped_filters_total"] == 2)
        }

        @Test func aNinePatchIsStillDrawnAndNamesNothing() async throws {
            // Given a real nine-patch (12x12: a magenta-cornered cyan ring; margins 4, 3, 3, 4)
            let harness = try Self.harness()
            harness.origin.route("/nine.png", .ok(Fixtures.bytes("nine-patch.png"), contentType: "image/png"))
            let framed = ThumborFilterServingTests.thumbor(
                harness, "64x48/filters:format(png):frame(\(originHost):\(harness.origin.port)/nine.png)")

            // When thumbor's frame() is asked
            let response = try await harness.request(framed)

            // Then the frame is drawn and nothing is named
            #expect(response.status == 200, "\(response.text.prefix(200))")
            let image = try DecodedImage(decoding: response.body)
            #expect(image.width == 71 && image.height == 55)
            #expect(image.mismatch(in: [(1, 1, RGB(200, 40, 200)), (20, 15, Fixtures.red)], tolerance: 4) == nil)
            #expect(Self.skippedFilters(response).isEmpty)
            #expect(response.header("etag")?.contains("-noframe") == false)
            #expect(try await harness.scrape()["thumbd_thumbor_skipped_filters_total"] == 0)
        }

        @Test func refusingSkippedFiltersRefusesTheFrame() async throws {
            // Given thumbor.skipped_filters: refuse
            let harness = try Self.harness()
            var settings = harness.service.settings
            settings.thumbor.skippedFilters = .refuse
            _ = try harness.service.apply(settings)

            // When thumbor's frame() names a picture without markers
            let refused = try await harness.request(Self.framed(harness))

            // Then it is the render's 422, as /thumb without frame_optional answers
            expectJSONError(refused, status: 422, mentioning: "frame image is not a usable nine-patch")
            #expect(try await harness.scrape()["thumbd_thumbor_skipped_filters_total"] == 0)
        }

        @Test func aDiskHitAfterARestartNamesTheSkippedFrame() async throws {
            // Given the frame left out of a render, stored on disk, and the service stopped
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            let directory = try TempDirectory(prefix: "thumbd-frame")
            var first: Harness? = try Self.harness(directory: directory, origin: origin)
            let framed = Self.framed(try #require(first))
            let rendered = try await #require(first).request(framed)
            #expect(Self.skippedFilters(rendered) == ["frame"])
            // (the disk tier stores after the answer, on its own thread: wait until it has; the cache is not held
            // past this, its lock would keep the next process out)
            do {
                let disk = try #require(first?.service.cache.variants)
                #expect(await eventually { disk.statistics.currentEntries == 1 })
            }
            try await first?.stop()
            first = nil

            // When a new process on the same cache answers it from disk, then from memory
            let second = try Self.harness(directory: directory, origin: origin)
            let fromDisk = try await second.request(framed)
            let fromMemory = try await second.request(framed)

            // Then both name the frame, with the same bytes and ETag, and nothing was fetched again
            #expect(fromDisk.header("x-cache") == "HIT-DISK")
            #expect(Self.skippedFilters(fromDisk) == ["frame"])
            #expect(fromDisk.body == rendered.body && fromDisk.header("etag") == rendered.header("etag"))
            #expect(fromMemory.header("x-cache") == "HIT-MEMORY")
            #expect(Self.skippedFilters(fromMemory) == ["frame"])
            #expect(origin.hits("/q.png") == 1 && origin.hits("/plain.png") == 1)
        }
    }
}

extension Integration.SharedTierTests {
    @Test func aSharedHitNamesASkippedFrame() async throws {
        let moto = try await blocking { try MotoServer(buckets: [Self.bucket, Self.sourceBucket]) }
        let (keep, credentials) = try Self.credentials(moto)
        defer { _ = keep }
        // Given node A and node B on their own disks, one bucket, one counting origin with a frame image that has no
        // nine-patch markers
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        origin.route("/q.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
        origin.route("/plain.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
        let nodeA = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
        let nodeB = try Harness(Self.overrides(moto, credentials: credentials), origin: origin)
        let target = Integration.OptionalFrameServingTests.thumb(nodeA, optional: true)
        let skipped = Integration.OptionalFrameServingTests.skippedFilters

        // When node A renders it without the frame and has written it (and its original) to the shared tier
        let first = try await nodeA.request(target)
        #expect(first.status == 200 && skipped(first) == ["frame"], "\(first.text.prefix(200))")
        #expect(Self.settled(nodeA, stored: 2))

        // Then node B's shared hit names the frame, and so does its memory hit after it, with no render of its own
        let second = try await nodeB.request(target)
        #expect(second.header("x-cache") == "HIT-SHARED")
        #expect(second.body == first.body && second.header("etag") == first.header("etag"))
        #expect(skipped(second) == ["frame"])
        #expect(nodeB.service.renderCounters.rendersStarted == 0)
        let third = try await nodeB.request(target)
        #expect(third.header("x-cache") == "HIT-MEMORY" && skipped(third) == ["frame"])
    }
}
