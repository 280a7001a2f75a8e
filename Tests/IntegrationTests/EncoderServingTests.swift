// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `max_bytes` through the service: the body fits, and `X-Thumbd-Quality` says which quality did it, from every
    /// tier (the quality rides in the ETag, which the disk tier keeps).
    @Suite(.timeLimit(.minutes(2))) struct EncoderServingTests {
        static let token = "encoder-serving-token-0123456789"

        @Test func maxBytesAnswersWithTheQualityFromEveryTier() async throws {
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/i.png", .ok(Fixtures.bytes("interest.png"), contentType: "image/png"))
            let target = harness.thumbTarget("/i.png", "w=300&format=jpeg&q=95&max_bytes=6000")

            let rendered = try await harness.request(target)
            #expect(rendered.status == 200)
            #expect(rendered.body.count <= 6000)
            let quality = try #require(rendered.header("x-thumbd-quality").flatMap { Int($0) })
            #expect((10..<95).contains(quality))
            #expect(rendered.header("etag")?.hasSuffix("-q\(quality)\"") == true)

            let fromMemory = try await harness.request(target)
            #expect(fromMemory.header("x-cache") == "HIT-MEMORY")
            #expect(fromMemory.header("x-thumbd-quality") == String(quality))

            // From the disk tier once the memory tier is emptied
            let disk = try #require(harness.service.cache.variants)
            #expect(await eventually { disk.statistics.currentEntries == 1 })
            let trimmed = try await harness.request(
                "/cache/trim", method: "POST", headers: [("Authorization", "Bearer \(Self.token)")],
                body: "{\"memory_bytes\": 0}")
            #expect(trimmed.status == 200)
            let fromDisk = try await harness.request(target)
            #expect(fromDisk.header("x-cache") == "HIT-DISK")
            #expect(fromDisk.header("x-thumbd-quality") == String(quality))
            #expect(fromDisk.body == rendered.body)

            // And an answer whose headers the request shapes (max_age, client hints, If-None-Match) says it too
            let shaped = try await harness.request(target + "&max_age=60")
            #expect(
                shaped.header("x-cache")?.hasPrefix("HIT") == true
                    && shaped.header("cache-control") == "public, max-age=60")
            #expect(shaped.header("x-thumbd-quality") == String(quality))

            // Without max_bytes there is no such header
            let plain = try await harness.request(harness.thumbTarget("/i.png", "w=300&format=jpeg&q=95"))
            #expect(plain.header("x-thumbd-quality") == nil)
        }
    }
}
