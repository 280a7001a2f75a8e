// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// The event loops' hot sets (HotSet.swift): repeated memory hits answered from a loop's own copy are the
    /// same answers as the shared path's, count as memory hits, and stop at once when the entry leaves memory
    /// (purge, trim), the signing keys change or `Cache-Control` changes.
    @Suite(.timeLimit(.minutes(1))) struct HotSetTests {
        static let token = "integration-admin-token-0123"

        /// Asks `target` until a loop answers it from its hot set (a connection lands on either loop, and each
        /// loop copies an entry on its first shared hit). Returns the answer that came from the copy; `asked`
        /// counts the requests sent.
        static func hotHit(
            _ harness: Harness, _ target: String, headers: [(String, String)] = [], asked: inout Int
        ) async throws -> RawHTTPClient.Response {
            let hotSet = try #require(harness.service.cache.hotSet)
            for _ in 0..<20 {
                let before = hotSet.hits
                let response = try await harness.request(target, headers: headers)
                asked += 1
                if hotSet.hits > before { return response }
                #expect(response.header("x-cache") == "HIT-MEMORY", "\(response.status) \(response.text)")
            }
            Issue.record("no answer came from a hot set")
            throw CancellationError()
        }

        static func hotHit(
            _ harness: Harness, _ target: String, headers: [(String, String)] = []
        ) async throws -> RawHTTPClient.Response {
            var asked = 0
            return try await hotHit(harness, target, headers: headers, asked: &asked)
        }

        @Test func hotHitsAreTheSharedAnswerAndCountAsMemoryHits() async throws {
            // Given a thumbnail rendered once (an explicit format) and one under format=auto
            let harness = try Harness()
            harness.origin.route("/hot.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/hot.jpg", "w=40&format=png")
            let auto = harness.thumbTarget("/hot.jpg", "w=48")
            let rendered = try await harness.request(target)
            #expect(rendered.header("x-cache") == "MISS")
            let shared = try await harness.request(target)
            #expect(shared.header("x-cache") == "HIT-MEMORY")
            let memory = try #require(harness.service.cache.memory)
            let hitsBefore = try #require(harness.service.cache.memoryStatistics).hits

            // When it is asked until a loop answers from its copy, and then five times more
            var asked = 0
            var hot = [try await Self.hotHit(harness, target, asked: &asked)]
            for _ in 0..<5 {
                hot.append(try await harness.request(target))
                asked += 1
            }

            // Then every answer is the shared path's: same bytes, fields and status, no Vary
            for response in hot {
                #expect(response.status == 200)
                #expect(response.body == rendered.body)
                for field in ["content-type", "etag", "cache-control", "x-cache"] {
                    #expect(response.header(field) == shared.header(field), "\(field)")
                }
                #expect(response.header("age") != nil)
                #expect(response.header("vary") == nil)
            }
            // And each request counts as one memory hit, the copies' included (the shared tier counted fewer)
            let counted = try #require(harness.service.cache.memoryStatistics).hits - hitsBefore
            #expect(counted == asked)
            #expect(memory.statistics.hits - hitsBefore < asked)
            // And /metrics shows the copies' bytes
            let metrics = try await harness.request("/metrics").text
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("thumbd_cache_bytes{tier=\"hot_set\"} ") }
            let copied = try #require(line.flatMap { Int($0.split(separator: " ").last ?? "") })
            #expect(copied >= rendered.body.count)

            // And under format=auto each Accept keeps its own answer, with Vary
            let webp = [("Accept", "image/webp")]
            _ = try await harness.request(auto, headers: webp)
            _ = try await harness.request(auto)
            let hotWebP = try await Self.hotHit(harness, auto, headers: webp)
            let hotJPEG = try await Self.hotHit(harness, auto)
            #expect(hotWebP.header("content-type") == "image/webp")
            #expect(hotJPEG.header("content-type") == "image/jpeg")
            #expect(hotWebP.header("vary") == "Accept" && hotJPEG.header("vary") == "Accept")
            #expect(try hotWebP.image().width == 48 && hotJPEG.image().width == 48)
        }

        @Test func acceptOnSeveralLinesIsNeverAnsweredFromACopy() async throws {
            // Given a thumbnail under format=auto, asked with Accept sent on two lines (the second names WebP)
            let harness = try Harness()
            harness.origin.route("/hot.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let auto = harness.thumbTarget("/hot.jpg", "w=48")
            let split = [("Accept", "image/jpeg"), ("Accept", "image/webp")]
            let rendered = try await harness.request(auto, headers: split)
            #expect(rendered.header("content-type") == "image/webp")
            let hotSet = try #require(harness.service.cache.hotSet)

            // When it is asked again and again
            for _ in 0..<6 {
                let response = try await harness.request(auto, headers: split)
                // Then each answer is the joined lines' (WebP), from the shared memory tier, never from a copy
                #expect(response.header("x-cache") == "HIT-MEMORY")
                #expect(response.header("content-type") == "image/webp")
                #expect(response.body == rendered.body)
            }
            #expect(hotSet.hits == 0)
            // And the same request with only the first line is its own answer (JPEG)
            let jpeg = try await harness.request(auto, headers: [("Accept", "image/jpeg")])
            #expect(jpeg.header("content-type") == "image/jpeg")
        }

        @Test func aConditionalRequestForAHotEntryGets304() async throws {
            // Given a thumbnail a loop answers from its copy
            let harness = try Harness()
            harness.origin.route("/hot.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/hot.jpg", "w=40&format=png")
            _ = try await harness.request(target)
            let hot = try await Self.hotHit(harness, target)

            // When its ETag is sent back
            let etag = try #require(hot.header("etag"))
            let conditional = try await harness.request(target, headers: [("If-None-Match", etag)])

            // Then the answer is 304 with no body
            #expect(conditional.status == 304)
            #expect(conditional.body.isEmpty)
            #expect(conditional.header("etag") == etag)
        }

        @Test func aPurgeATrimAndNewSigningKeysEndHotHitsAtOnce() async throws {
            // Given a thumbnail that the loops answer from their copies
            let harness = try Harness(["admin.token": Self.token])
            let admin = [("Authorization", "Bearer \(Self.token)")]
            harness.origin.route("/hot.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/hot.jpg", "w=40&format=png")
            let rendered = try await harness.request(target)
            _ = try await Self.hotHit(harness, target)
            let hotSet = try #require(harness.service.cache.hotSet)
            #expect(hotSet.bytes > 0)
            // (the disk tier stores after the answer, on its own thread: wait until it has)
            let disk = try #require(harness.service.cache.variants)
            #expect(await eventually { disk.statistics.currentEntries == 1 })

            // When the memory tier is trimmed to nothing, the next answer comes from disk, not from a copy
            let trimmed = try await harness.request(
                "/cache/trim", method: "POST", headers: admin, body: "{\"memory_bytes\": 0}")
            #expect(trimmed.status == 200)
            let fromDisk = try await harness.request(target)
            #expect(fromDisk.header("x-cache") == "HIT-DISK")
            #expect(fromDisk.body == rendered.body)

            // When the source is purged after the loops copied it again, the next answer is a new render
            _ = try await Self.hotHit(harness, target)
            let purge = "/cache?url=" + Harness.percentEncoded(harness.origin.url("/hot.jpg"))
            #expect(try await harness.request(purge, method: "DELETE", headers: admin).status == 200)
            let afterPurge = try await harness.request(target)
            #expect(afterPurge.header("x-cache") == "MISS")
            #expect(harness.origin.hits("/hot.jpg") == 2)

            // When signing keys are configured after the loops copied it again, the unsigned request is refused
            _ = try await Self.hotHit(harness, target)
            var settings = harness.service.settings
            settings.security.signingKeys = ["integration-signing-key-0123456789abcdef"]
            _ = try harness.service.apply(settings)
            for _ in 0..<4 {
                expectJSONError(try await harness.request(target), status: 403)
            }
        }

        @Test func aNewClientMaxAgeReachesHotHitsAtOnce() async throws {
            // Given a thumbnail that a loop answers from its copy, with the default Cache-Control
            let harness = try Harness()
            harness.origin.route("/hot.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/hot.jpg", "w=40&format=png")
            _ = try await harness.request(target)
            let before = try await Self.hotHit(harness, target)

            // When a reload sets cache.client_max_age to one hour
            var settings = harness.service.settings
            settings.cache.clientMaxAge = .seconds(3600)
            _ = try harness.service.apply(settings)

            // Then every following hit, from either loop, sends it
            #expect(before.header("cache-control") != "public, max-age=3600")
            for _ in 0..<6 {
                let response = try await harness.request(target)
                #expect(response.header("x-cache") == "HIT-MEMORY")
                #expect(response.header("cache-control") == "public, max-age=3600")
            }
            _ = try await Self.hotHit(harness, target)
        }
    }
}
