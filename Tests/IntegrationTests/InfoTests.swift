// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// `GET /info`: a source's header as JSON, from the source cache when it is there (no origin fetch), else
    /// through the same guarded fetcher as thumbnails, signed like `/thumb`.
    @Suite(.timeLimit(.minutes(2))) struct InfoTests {
        struct Info: Decodable, Equatable {
            let url: String
            let format: String
            let width: Int
            let height: Int
            let frames: Int
            let orientation: Int
            let alpha: Bool
            let colour_space: String
            let bits_per_channel: Int
            let icc_profile: Bool
            let bytes: Int
            let exif: EXIF
            struct EXIF: Decodable, Equatable {
                let make: String?
                let model: String?
                let taken_at: String?
            }
        }

        static func info(_ harness: Harness, _ path: String, headers: [(String, String)] = []) async throws
            -> (RawHTTPClient.Response, Info?)
        {
            let response = try await harness.request(
                "/info?url=" + Harness.percentEncoded(harness.origin.url(path)), headers: headers)
            return (response, try? JSONDecoder().decode(Info.self, from: Data(response.body)))
        }

        @Test func describesTheSourceFromItsHeader() async throws {
            let harness = try Harness()
            for name in ["copyright.jpg", "animated.gif", "orientation-6.jpg", "display-p3.png", "rgb16.png"] {
                harness.origin.route("/" + name, .ok(Fixtures.bytes(name)))
            }
            let (response, photo) = try await Self.info(harness, "/copyright.jpg")
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json")
            #expect(response.header("x-source") == "fetched")
            #expect(
                photo
                    == Info(
                        url: harness.origin.url("/copyright.jpg"), format: "jpeg", width: 64, height: 48, frames: 1,
                        orientation: 1, alpha: false, colour_space: "srgb", bits_per_channel: 8, icc_profile: true,
                        bytes: Fixtures.bytes("copyright.jpg").count,
                        exif: .init(make: "thumbd", model: "fixture", taken_at: nil)))
            let animation = try #require(try await Self.info(harness, "/animated.gif").1)
            #expect(animation.format == "gif" && animation.frames == 3 && animation.alpha && animation.width == 48)
            // Sizes are upright: orientation 6 is stored 48x64
            let turned = try #require(try await Self.info(harness, "/orientation-6.jpg").1)
            #expect(turned.orientation == 6 && turned.width == 64 && turned.height == 48)
            let p3 = try #require(try await Self.info(harness, "/display-p3.png").1)
            #expect(p3.icc_profile && p3.format == "png")
            let deep = try #require(try await Self.info(harness, "/rgb16.png").1)
            #expect(deep.bits_per_channel == 16 && deep.colour_space == "rgb16")
        }

        @Test func aCachedSourceIsDescribedWithoutAnOriginFetch() async throws {
            let harness = try Harness()
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            harness.origin.route("/b.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // A thumbnail first: its source is kept, and its analysis record (made right after the answer), which answers
            #expect(try await harness.request(harness.thumbTarget("/a.jpg", "w=40")).status == 200)
            #expect(await eventually { harness.service.analysisCounters?.made == 1 })
            let (cached, info) = try await Self.info(harness, "/a.jpg")
            #expect(cached.header("x-source") == "analysis")
            #expect(info?.width == 320 && info?.height == 240)
            #expect(harness.origin.hits("/a.jpg") == 1)
            // Info first: its source is kept for the thumbnail that follows
            #expect(try await Self.info(harness, "/b.jpg").0.header("x-source") == "fetched")
            #expect(try await harness.request(harness.thumbTarget("/b.jpg", "w=40")).status == 200)
            #expect(harness.origin.hits("/b.jpg") == 1)
        }

        @Test func aRecordMadeByARenderDescribesTheSourceAsItsHeaderDoes() async throws {
            // Given sources whose headers differ from their intermediates (EXIF, a turn, a profile, 16 bits), each
            // described first from its header alone
            let names = ["copyright.jpg", "orientation-6.jpg", "display-p3.png", "rgb16.png"]
            let fresh = try Harness()
            for name in names { fresh.origin.route("/" + name, .ok(Fixtures.bytes(name))) }
            var fromHeaders: [String: Info] = [:]
            for name in names { fromHeaders[name] = try await Self.info(fresh, "/" + name).1 }
            // When another node renders each first, so that its record takes the header the render's intermediate
            // remembers (no second reading of the source)
            let harness = try Harness()
            for name in names { harness.origin.route("/" + name, .ok(Fixtures.bytes(name))) }
            for name in names {
                #expect(try await harness.request(harness.thumbTarget("/" + name, "w=40")).status == 200)
            }
            #expect(await eventually { harness.service.analysisCounters?.made == names.count })
            // Then /info, answered from those records, says what the headers said, field for field (the URL aside)
            for name in names {
                let (response, info) = try await Self.info(harness, "/" + name)
                #expect(response.header("x-source") == "analysis", "\(name)")
                let header = try #require(fromHeaders[name])
                #expect(
                    info.map {
                        Info(
                            url: header.url, format: $0.format, width: $0.width, height: $0.height, frames: $0.frames,
                            orientation: $0.orientation, alpha: $0.alpha, colour_space: $0.colour_space,
                            bits_per_channel: $0.bits_per_channel, icc_profile: $0.icc_profile, bytes: $0.bytes,
                            exif: $0.exif)
                    } == header, "\(name)")
            }
        }

        @Test func errorsAreThoseOfThumbnails() async throws {
            let harness = try Harness()
            harness.origin.route("/page.html", .ok(Fixtures.bytes("page.html"), contentType: "text/html"))
            harness.origin.route("/gone.jpg", .status(404))
            expectJSONError(try await harness.request("/info"), status: 400, mentioning: "url")
            expectJSONError(try await harness.request("/info?url=a.jpg"), status: 400, mentioning: "url")
            let url = Harness.percentEncoded(harness.origin.url("/gone.jpg"))
            expectJSONError(try await harness.request("/info?url=\(url)&w=5"), status: 400, mentioning: "w")
            expectJSONError(try await Self.info(harness, "/gone.jpg").0, status: 404)
            expectJSONError(try await Self.info(harness, "/page.html").0, status: 422)
            let forbidden = Harness.percentEncoded("http://127.0.0.1:\(harness.port)/x.jpg")
            expectJSONError(try await harness.request("/info?url=\(forbidden)"), status: 403)
        }

        @Test func signingCoversInfo() async throws {
            let key = "info-signing-key-0123456789abcdef0123"
            let harness = try Harness(["security.signing_keys": "[\(key)]"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let query = "url=" + Harness.percentEncoded(harness.origin.url("/a.jpg"))
            expectJSONError(try await harness.request("/info?" + query), status: 403, mentioning: "signature")
            let signed = try await harness.request("/info?" + (try URLSignature.signedQuery(query, key: key)))
            #expect(signed.status == 200)
        }
    }
}
