// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// The per-source analysis end to end: made once per source bytes during the first render, from the render's own
    /// intermediate, kept in memory and on disk, answered by `/info` without the source, made again when the origin
    /// changes the bytes.
    @Suite(.timeLimit(.minutes(2))) struct AnalysisTests {
        struct Answer: Decodable {
            let width: Int
            let height: Int
            let analysis: Analysis?

            struct Analysis: Decodable {
                let blurhash: String
                let blurhash_components: [Int]
                let thumbhash: String
                let average_colour: String
                let palette: [Swatch]
                let phash: String
                let dhash: String
                let transparency: Bool
                let lightness: Double
                let tone: String
            }

            struct Swatch: Decodable {
                let colour: String
                let share: Double
            }
        }

        /// `<family>{<labels>}` from /metrics (the harness's scrape, `MetricsTests`).
        static func counter(_ harness: Harness, _ family: String, _ labels: String) async throws -> Int {
            let sample = "\(family){\(labels)}"
            return Int(try #require(try await harness.scrape().samples[sample], "no \(sample)"))
        }

        static func analyses(_ harness: Harness, _ result: String) async throws -> Int {
            try await counter(harness, "thumbd_source_analyses_total", "result=\"\(result)\"")
        }

        static func info(_ harness: Harness, _ path: String, _ extra: String = "&analysis=1") async throws
            -> (RawHTTPClient.Response, Answer)
        {
            let response = try await harness.request(
                "/info?url=" + Harness.percentEncoded(harness.origin.url(path)) + extra)
            #expect(response.status == 200, "\(response.text.prefix(300))")
            return (response, try JSONDecoder().decode(Answer.self, from: Data(response.body)))
        }

        @Test func oneFetchOneDecodeOneAnalysisForEverySizeFormAndInfo() async throws {
            // Given the three URL forms and a photo at the origin
            let harness = try Harness([
                "imgproxy.enabled": "true", "thumbor.enabled": "true", "thumbor.allow_unsafe": "true",
            ])
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let source = Harness.percentEncoded(harness.origin.url("/photo.jpg"))
            let host = "\(originHost):\(harness.origin.port)"

            // When it is asked at five sizes through /thumb, thumbor's and imgproxy's forms
            let targets = [
                "/thumb?url=\(source)&w=40", "/thumb?url=\(source)&w=120&h=90&fit=cover",
                "/thumbor/unsafe/100x100/\(host)/photo.jpg", "/thumbor/unsafe/fit-in/200x150/\(host)/photo.jpg",
                "/imgproxy/_/rs:fit:64:64/plain/\(source)",
            ]
            for target in targets {
                let answer = try await harness.request(target)
                #expect(answer.status == 200, "\(target): \(answer.text.prefix(200))")
            }
            // and then, once the first render's analysis is made (right after its answer: the other four renders found
            // it kept, or waited for it), /info with the analysis
            #expect(
                await eventually {
                    guard let counters = harness.service.analysisCounters else { return false }
                    return counters.made == 1 && counters.kept + counters.joined == 4
                })
            let (response, answer) = try await Self.info(harness, "/photo.jpg")

            // Then /info answers the kept record, no fetch and no decode for it: one of each in all
            #expect(response.header("x-source") == "analysis")
            #expect(answer.width == 320 && answer.height == 240)
            let analysis = try #require(answer.analysis)
            #expect(analysis.blurhash_components == [4, 3] && analysis.blurhash.count == 4 + 2 * 4 * 3)
            #expect(harness.origin.hits("/photo.jpg") == 1)
            #expect(try await Self.analyses(harness, "made") == 1)
            #expect(try await Self.analyses(harness, "kept") + Self.analyses(harness, "joined") == 4)
            #expect(
                try await Self.counter(harness, "thumbd_cache_misses_total", "tier=\"intermediates\"") == 1,
                "one decode")
        }

        @Test func thumborsMetaCarriesTheSameRecordBesideThumborsFields() async throws {
            // Given thumbor's form and a photo at the origin, and a server with the analysis off
            let settings = ["thumbor.enabled": "true", "thumbor.allow_unsafe": "true"]
            let harness = try Harness(settings)
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let host = "\(originHost):\(harness.origin.port)"
            let meta = "/thumbor/unsafe/meta/100x100/\(host)/photo.jpg"
            struct Meta: Decodable {
                let thumbor: Thumbor
                let analysis: Answer.Analysis?
                struct Thumbor: Decodable { let target: [String: Int] }
            }
            // When meta/ is asked first (no render before it, so its answer makes the record)
            let first = try await harness.request(meta)
            #expect(first.status == 200, "\(first.text.prefix(300))")
            let answer = try JSONDecoder().decode(Meta.self, from: Data(first.body))
            // Then thumbor's fields are there, and beside them the analysis, which /info then answers from the record
            #expect(answer.thumbor.target == ["width": 100, "height": 100])
            let analysis = try #require(answer.analysis)
            #expect(analysis.blurhash_components == [4, 3] && analysis.average_colour.hasPrefix("#"))
            let (info, described) = try await Self.info(harness, "/photo.jpg")
            #expect(info.header("x-source") == "analysis")
            #expect(described.analysis?.blurhash == analysis.blurhash)
            #expect(described.analysis?.thumbhash == analysis.thumbhash)
            #expect(described.analysis?.phash == analysis.phash)
            #expect(try await Self.analyses(harness, "made") == 1)
            #expect(harness.origin.hits("/photo.jpg") == 1)
            // and a server with the analysis off answers thumbor's fields alone
            let off = try Harness(settings.merging(["image.analysis": "false"]) { $1 })
            off.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let plain = try await off.request("/thumbor/unsafe/meta/100x100/\(originHost):\(off.origin.port)/photo.jpg")
            #expect(plain.status == 200)
            #expect(try JSONDecoder().decode(Meta.self, from: Data(plain.body)).analysis == nil)
        }

        @Test func aRecordOutlivesARestartOnDisk() async throws {
            // Given a source analysed through /info by a first process
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let directory = try TempDirectory(prefix: "thumbd-analysis")
            var first: Harness? = try Harness(directory: directory, origin: origin)
            let (fetched, made) = try await Self.info(try #require(first), "/photo.jpg")
            #expect(fetched.header("x-source") == "fetched")
            let again = try await Self.info(try #require(first), "/photo.jpg")
            #expect(again.0.header("x-source") == "analysis")
            try await first?.stop()
            first = nil

            // When a new process on the same cache asks for it
            let second = try Harness(directory: directory, origin: origin)
            let (response, kept) = try await Self.info(second, "/photo.jpg")

            // Then the disk's record answers, the same, and the origin is not asked
            #expect(response.header("x-source") == "analysis")
            #expect(kept.analysis?.blurhash == made.analysis?.blurhash)
            #expect(kept.analysis?.phash == made.analysis?.phash)
            #expect(origin.hits("/photo.jpg") == 1)
            #expect(try await Self.analyses(second, "made") == 0)
        }

        @Test func newBytesAtTheOriginGetANewRecord() async throws {
            // Given a source that may be kept one second, rendered and analysed
            let harness = try Harness(["cache.min_ttl": "0s"])
            let maxAge = [LoopbackOrigin.Header("Cache-Control", "max-age=1")]
            harness.origin.route(
                "/swap.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png", headers: maxAge))
            #expect(try await harness.request(harness.thumbTarget("/swap.png", "w=100")).status == 200)
            let (_, before) = try await Self.info(harness, "/swap.png")

            // When the origin answers other bytes once it has expired
            harness.origin.route(
                "/swap.png", .ok(Fixtures.bytes("rgba.png"), contentType: "image/png", headers: maxAge))
            try await Task.sleep(for: .milliseconds(1300))
            let (response, after) = try await Self.info(harness, "/swap.png")

            // Then /info looked at the source again and answers the new bytes' analysis, never the old one
            #expect(response.header("x-source") == "fetched")
            #expect(after.analysis?.blurhash != before.analysis?.blurhash)
            #expect(after.analysis?.transparency == true && before.analysis?.transparency == false)
            #expect(try await Self.analyses(harness, "made") == 2)
        }

        @Test func otherComponentsAreMadeForTheRequestAndBadOnesRefused() async throws {
            let harness = try Harness()
            harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let (_, kept) = try await Self.info(harness, "/photo.jpg")
            let (response, other) = try await Self.info(harness, "/photo.jpg", "&blurhash=6,5&palette=3")
            #expect(response.header("x-source") == "cached")
            #expect(other.analysis?.blurhash_components == [6, 5] && other.analysis?.blurhash.count == 4 + 2 * 30)
            #expect(other.analysis?.phash == kept.analysis?.phash)
            let url = Harness.percentEncoded(harness.origin.url("/photo.jpg"))
            for bad in ["blurhash=0,3", "blurhash=4", "blurhash=10,1", "palette=1", "palette=300", "analysis=2"] {
                expectJSONError(try await harness.request("/info?url=\(url)&\(bad)"), status: 400)
            }
            // Asked without the analysis, the kept record's header answers
            let plain = try await harness.request("/info?url=\(url)")
            #expect(plain.header("x-source") == "analysis")
            #expect(!plain.text.contains("\"analysis\""))
        }
    }
}

extension Integration.AnalysisTests {
    @Test func imgproxysInfoOptionsAnswerTheSameRecord() async throws {
        // Given imgproxy's form and a photo whose record a render made
        let harness = try Harness(["imgproxy.enabled": "true"])
        harness.origin.route("/photo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
        #expect(try await harness.request(harness.thumbTarget("/photo.jpg", "w=100")).status == 200)
        #expect(await eventually { harness.service.analysisCounters?.made == 1 })
        let (_, mine) = try await Self.info(harness, "/photo.jpg")
        let analysis = try #require(mine.analysis)
        let source = Harness.percentEncoded(harness.origin.url("/photo.jpg"))

        // When imgproxy's info asks every analysis option (its defaults: 4x3 BlurHash; the palette's size is ours)
        let response = try await harness.request(
            "/imgproxy/info/_/bh:4:3/th:1/avg:1/dc:1:1/p:8/ph:1/cs:1/pn:1/plain/\(source)")

        // Then imgproxy's names and forms of the same record, answered without the source
        #expect(response.status == 200, "\(response.text.prefix(300))")
        #expect(response.header("x-source") == "analysis")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        #expect(json["blurhash"] as? String == analysis.blurhash)
        #expect(json["perceptual_hash"] as? String == analysis.phash)
        let thumbHash = try #require(json["thumb_hash"] as? String)
        let bytes = try #require(Data(base64Encoded: analysis.thumbhash))
        #expect(thumbHash == bytes.map { String(format: "%02X", $0) }.joined())
        let average = try #require(json["average"] as? [String: Int])
        #expect(String(format: "#%02x%02x%02x", average["R"]!, average["G"]!, average["B"]!) == analysis.average_colour)
        #expect(average["A"] == 255)
        #expect((json["palette"] as? [[String: Int]])?.count == analysis.palette.count)
        // Built missed colours: all six roles
        #expect((json["dominant_colors"] as? [String: [String: Int]])?.count == 6)
        #expect(json["colorspace"] as? String == "srgb" && json["pages_number"] as? Int == 1)
        #expect(json["mime_type"] as? String == "image/jpeg")
        #expect(harness.origin.hits("/photo.jpg") == 1)

        // What thumbd cannot honour is refused by name
        for bad in ["avg:1:0", "bh:10:1", "p:1", "dc:x"] {
            let refused = try await harness.request("/imgproxy/info/_/\(bad)/plain/\(source)")
            expectJSONError(refused, status: 400)
        }
    }
}

extension Integration.AnalysisTests {
    @Test func aRevalidationThatFindsNewBytesMakesTheirRecord() async throws {
        // Given a source with an ETag that may be kept one second, rendered and analysed
        let harness = try Harness(["cache.min_ttl": "0s"])
        func version(_ etag: String, _ fixture: String) -> LoopbackOrigin.Script {
            .conditional(
                etag: etag, lastModified: nil, headers: [LoopbackOrigin.Header("Cache-Control", "max-age=1")],
                body: Fixtures.bytes(fixture), contentType: "image/png")
        }
        harness.origin.route("/swap.png", version("\"v1\"", "grid.png"))
        let target = harness.thumbTarget("/swap.png", "w=100")
        #expect(try await harness.request(target).status == 200)
        let (_, before) = try await Self.info(harness, "/swap.png")

        // When the origin answers other bytes with a new ETag, and a request of the expired thumbnail revalidates it
        harness.origin.route("/swap.png", version("\"v2\"", "rgba.png"))
        try await Task.sleep(for: .milliseconds(1300))
        #expect(try await harness.request(target).status == 200)

        // Then the revalidator's render makes the new bytes' record, which /info answers without a fetch
        #expect(await eventually(timeout: .seconds(20)) { harness.service.analysisCounters?.made == 2 })
        let fetches = harness.origin.hits("/swap.png")
        let (response, after) = try await Self.info(harness, "/swap.png")
        #expect(response.header("x-source") == "analysis")
        #expect(after.analysis?.blurhash != before.analysis?.blurhash)
        #expect(after.analysis?.transparency == true)
        #expect(harness.origin.hits("/swap.png") == fetches)
    }
}

extension Integration.AnalysisTests {
    @Test func theSameBytesConfirmAnExpiredRecordWithoutAnalysingAgain() async throws {
        // Given a source that may be kept one second, analysed through /info
        let harness = try Harness(["cache.min_ttl": "0s"])
        let maxAge = [LoopbackOrigin.Header("Cache-Control", "max-age=1")]
        harness.origin.route("/same.png", .ok(Fixtures.bytes("grid.png"), contentType: "image/png", headers: maxAge))
        let (first, made) = try await Self.info(harness, "/same.png")
        #expect(first.header("x-source") == "fetched")

        // When it has expired and is asked again
        try await Task.sleep(for: .milliseconds(1300))
        let (second, confirmed) = try await Self.info(harness, "/same.png")
        let (third, _) = try await Self.info(harness, "/same.png")

        // Then the source is fetched again, its bytes are the record's: confirmed for as long as the source now is,
        // and answered from the record next, with no second analysis
        #expect(second.header("x-source") == "fetched")
        #expect(confirmed.analysis?.blurhash == made.analysis?.blurhash)
        #expect(third.header("x-source") == "analysis")
        #expect(harness.service.analysisCounters?.made == 1)
        #expect(harness.origin.hits("/same.png") == 2)
    }
}

extension Integration.AnalysisTests {
    @Test func facesJoinTheRecordAndOutliveARestart() async throws {
        // Given the astronaut rendered with gravity=face by a first process (one quick search, then her record)
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        origin.route("/astronaut.png", .ok(try Photographs.bytes("astronaut.png"), contentType: "image/png"))
        let directory = try TempDirectory(prefix: "thumbd-analysis-faces")
        let faces = "/info?faces=1&url=" + Harness.percentEncoded(origin.url("/astronaut.png"))
        let before: RawHTTPClient.Response
        do {
            let first = try Harness(directory: directory, origin: origin)
            let crop = try await first.request(
                first.thumbTarget("/astronaut.png", "w=200&h=200&fit=cover&gravity=face"))
            #expect(crop.status == 200)
            before = try await first.request(faces)
            #expect(await eventually { first.service.cache.analyses?.statistics.currentEntries == 1 })
            try await first.stop()
        }

        // When a new process on the same cache asks /info for her faces
        let second = try Harness(directory: directory, origin: origin)
        let after = try await second.request(faces)

        // Then the record on disk answers them: no fetch, no detection
        #expect(after.status == 200 && after.header("x-source") == "analysis", "\(after.text.prefix(200))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(after.body)) as? [String: Any])
        let found = try #require(json["faces"] as? [String: Any])
        #expect(found["count"] as? Int == 1)
        let earlier = try #require(try JSONSerialization.jsonObject(with: Data(before.body)) as? [String: Any])
        #expect((earlier["faces"] as? [String: Any])?["count"] as? Int == 1)
        #expect(origin.hits("/astronaut.png") == 1)
        #expect(try await Integration.FaceTests.detections(second, "made") == 0)
    }
}

extension Integration.AnalysisTests {
    @Test func aRepeatedQueryIsAnsweredPreparedOnlyWhileItsKeysAndRecordHold() async throws {
        // Given signed /info, and a source whose record a render made
        let key = "analysis-signing-key-0123456789abcdef"
        let harness = try Harness(["security.signing_keys": "[\(key)]", "cache.min_ttl": "0s"])
        harness.origin.route(
            "/photo.png",
            .ok(
                Fixtures.bytes("grid.png"), contentType: "image/png",
                headers: [LoopbackOrigin.Header("Cache-Control", "max-age=3")]))
        let source = Harness.percentEncoded(harness.origin.url("/photo.png"))
        let thumb = try URLSignature.signedQuery("url=\(source)&w=100", key: key)
        #expect(try await harness.request("/thumb?" + thumb).status == 200)
        #expect(await eventually { harness.service.analysisCounters?.made == 1 })
        let query = try URLSignature.signedQuery("url=\(source)&analysis=1", key: key)

        // When the same query is asked twice
        let first = try await harness.request("/info?" + query)
        let second = try await harness.request("/info?" + query)

        // Then both are the record's answer, the same bytes
        #expect(first.status == 200 && first.header("x-source") == "analysis")
        #expect(second.body == first.body && second.header("x-source") == "analysis")

        // And once the keys change, the same query is refused, not answered from before
        harness.service.signatureVerifier.update(keys: ["another-key-0123456789abcdef0123456"])
        expectJSONError(try await harness.request("/info?" + query), status: 403)
        harness.service.signatureVerifier.update(keys: [key])
        #expect(try await harness.request("/info?" + query).body == first.body)

        // And once the record has expired, the query looks at the source again
        try await Task.sleep(for: .milliseconds(3300))
        let expired = try await harness.request("/info?" + query)
        #expect(expired.status == 200 && expired.header("x-source") != "analysis")
        #expect(expired.body == first.body)
    }
}
