// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// What a request asks of its answer's headers, not of the picture (URLForms' `AnswerOptions`): imgproxy's
    /// `expires`, `filename` and `return_attachment`, thumbor's `max_age`, and `/thumb`'s `expires`, `max_age`,
    /// `filename` and `attachment`. The picture is one cache entry whichever of them a URL carries, and an answer
    /// from the alias table or a loop's hot set carries them as a parsed one does.
    @Suite(.timeLimit(.minutes(1))) struct AnswerOptionsServingTests {
        static let forms = [
            "thumbor.enabled": "true", "thumbor.allow_unsafe": "true", "imgproxy.enabled": "true",
        ]

        static func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

        /// The `max-age` of a `Cache-Control` value, nil without one.
        static func maxAge(_ response: RawHTTPClient.Response) -> Int? {
            guard let value = response.header("cache-control"), let range = value.range(of: "max-age=") else {
                return nil
            }
            return Int(value[range.upperBound...].prefix { $0.isNumber })
        }

        @Test func aURLPastItsDeadlineIs404EvenRightAfterAHotSetAnswer() async throws {
            // Given imgproxy's form and a deadline 2-3 s ahead (whole seconds, as imgproxy writes it)
            let harness = try Harness(Self.forms)
            harness.origin.route("/e.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/e.png"))
            let deadline = Self.nowMilliseconds() / 1000 + 3
            let target = "/imgproxy/unsafe/rs:fit:32:32/exp:\(deadline)/plain/\(source)@png"
            let hotSet = try #require(harness.service.cache.hotSet)

            // When it is rendered, then asked until a loop answers it from its hot set
            let rendered = try await harness.request(target)
            #expect(rendered.status == 200 && rendered.header("x-cache") == "MISS")
            let hot = try await HotSetTests.hotHit(harness, target)

            // Then both answers are the thumbnail, their max-age no longer than the seconds left
            #expect(hot.status == 200 && hot.header("x-cache") == "HIT-MEMORY")
            #expect(hot.body == rendered.body)
            #expect(try hot.image().width == 32)
            for response in [rendered, hot] {
                let left = Int((deadline * 1000 - Self.nowMilliseconds()) / 1000) + 1
                let maxAge = try #require(Self.maxAge(response))
                #expect(maxAge >= 0 && maxAge <= left, "\(response.header("cache-control") ?? "")")
                #expect(response.header("cache-control")?.hasPrefix("public, ") == true)
            }
            // And the same picture through /thumb with the same deadline is the same cache entry
            let thumb = try await harness.request(
                harness.thumbTarget("/e.png", "w=32&h=32&format=png&expires=\(deadline)"))
            #expect(thumb.header("x-cache") == "HIT-MEMORY" && thumb.body == rendered.body)

            // When the deadline passes (waited for, bounded by the deadline itself)
            let wait = deadline * 1000 - Self.nowMilliseconds() + 20
            #expect(wait < 3100)
            if wait > 0 { try await Task.sleep(for: .milliseconds(wait)) }
            let hitsBefore = hotSet.hits
            let expired = try await harness.request(target)
            let again = try await harness.request(target)
            let thumbExpired = try await harness.request(
                harness.thumbTarget("/e.png", "w=32&h=32&format=png&expires=\(deadline)"))

            // Then every answer is imgproxy's 404 with a JSON body, none from a hot set, the picture never rendered
            // again; the same picture without a deadline is still the cache entry it was
            for response in [expired, again, thumbExpired] {
                expectJSONError(response, status: 404, mentioning: "expired URL")
            }
            #expect(hotSet.hits == hitsBefore)
            let plain = try await harness.request("/imgproxy/unsafe/rs:fit:32:32/plain/\(source)@png")
            #expect(plain.status == 200 && plain.header("x-cache") == "HIT-MEMORY" && plain.body == rendered.body)
            #expect(harness.origin.hits("/e.png") == 1)
        }

        @Test func aBadOrPastDeadlineIsRefusedWithoutAFetch() async throws {
            // Given imgproxy's form
            let harness = try Harness(Self.forms)
            harness.origin.route("/e.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/e.png"))
            // When a deadline is past, not a number, or 0 (imgproxy: none)
            let past = try await harness.request("/imgproxy/unsafe/rs:fit:32:32/exp:1000/plain/\(source)@png")
            let junk = try await harness.request("/imgproxy/unsafe/rs:fit:32:32/exp:soon/plain/\(source)@png")
            let none = try await harness.request("/imgproxy/unsafe/rs:fit:32:32/exp:0/plain/\(source)@png")
            let thumbJunk = try await harness.request(harness.thumbTarget("/e.png", "w=32&expires=-5"))
            // Then 404, 400 naming it, a thumbnail without a deadline, 400 naming /thumb's parameter
            expectJSONError(past, status: 404, mentioning: "expired URL")
            expectJSONError(junk, status: 400, mentioning: "exp")
            #expect(none.status == 200 && Self.maxAge(none) == 31_536_000)
            expectJSONError(thumbJunk, status: 400, mentioning: "expires")
            #expect(harness.origin.hits("/e.png") == 1)
        }

        @Test func maxAgeSetsCacheControlInEveryFormAndTheHotSet() async throws {
            // Given thumbor's form and /thumb, one picture asked with max_age(60), max_age(0) and without
            let harness = try Harness(Self.forms)
            harness.origin.route("/m.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = "\(originHost):\(harness.origin.port)/m.png"
            let thumbor = "/thumbor/unsafe/fit-in/32x32/filters:format(png):max_age(60)/\(source)"
            let thumb = harness.thumbTarget("/m.png", "w=32&h=32&format=png&max_age=60")

            // When each is asked
            let first = try await harness.request(thumbor)
            let second = try await harness.request(thumb)
            let zero = try await harness.request(
                "/thumbor/unsafe/fit-in/32x32/filters:format(png):max_age(0)/\(source)")
            let usual = try await harness.request("/thumbor/unsafe/fit-in/32x32/filters:format(png)/\(source)")
            let hot = try await HotSetTests.hotHit(harness, thumbor)

            // Then one render, one cache entry, and each answer's own Cache-Control, the hot set's included
            #expect(first.header("x-cache") == "MISS")
            for response in [second, zero, usual] {
                #expect(response.header("x-cache") == "HIT-MEMORY", "\(response.text)")
                #expect(response.body == first.body)
            }
            #expect(harness.origin.hits("/m.png") == 1)
            #expect(first.header("cache-control") == "public, max-age=60")
            #expect(second.header("cache-control") == "public, max-age=60")
            #expect(hot.header("cache-control") == "public, max-age=60" && hot.body == first.body)
            #expect(zero.header("cache-control") == "no-cache")
            #expect(usual.header("cache-control") == "public, max-age=31536000")
            // And a value thumbor's pattern does not match is skipped as thumbor skips it (and named); one beyond
            // the range, or a bad `/thumb` value, is refused naming the filter or the parameter
            let skipped = try await harness.request("/thumbor/unsafe/32x32/filters:max_age(soon)/\(source)")
            #expect(skipped.status == 200 && skipped.header("x-thumbd-skipped-filters") == "max_age")
            #expect(skipped.header("cache-control") == "public, max-age=31536000")
            let bad = try await harness.request("/thumbor/unsafe/32x32/filters:max_age(99999999)/\(source)")
            expectJSONError(bad, status: 400, mentioning: "max_age")
            let tooLong = try await harness.request(harness.thumbTarget("/m.png", "w=32&max_age=99999999"))
            expectJSONError(tooLong, status: 400, mentioning: "max_age")
        }

        @Test func filenameAndAttachmentSetContentDisposition() async throws {
            // Given imgproxy's form and /thumb, one picture
            let harness = try Harness(Self.forms)
            harness.origin.route("/pics/holiday.jpg", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = Harness.percentEncoded(harness.origin.url("/pics/holiday.jpg"))
            let imgproxy = "/imgproxy/unsafe/rs:fit:32:32/fn:my%20%22pic%22:/att:1/plain/\(source)@png"
            let encodedName = Data("Straße/ü".utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let unicode = "/imgproxy/unsafe/rs:fit:32:32/fn:\(encodedName):1/plain/\(source)@png"

            // When it is asked with a filename and as an attachment, with a name beyond ASCII, and through /thumb
            let named = try await harness.request(imgproxy)
            let wide = try await harness.request(unicode)
            let thumbAttachment = try await harness.request(
                harness.thumbTarget("/pics/holiday.jpg", "w=32&h=32&format=png&attachment=1"))
            let thumbNamed = try await harness.request(
                harness.thumbTarget("/pics/holiday.jpg", "w=32&h=32&format=png&filename=report%0D%0AX%3A1"))
            let hot = try await HotSetTests.hotHit(harness, imgproxy)

            // Then one render, and each answer's own Content-Disposition: quotes, slashes and control characters
            // gone, the extension the answer's format's, the source's name when none is given
            #expect(named.header("x-cache") == "MISS")
            for response in [wide, thumbAttachment, thumbNamed, hot] {
                #expect(response.header("x-cache") == "HIT-MEMORY" && response.body == named.body)
            }
            #expect(harness.origin.hits("/pics/holiday.jpg") == 1)
            #expect(named.header("content-disposition") == "attachment; filename=\"my pic.png\"")
            #expect(hot.header("content-disposition") == "attachment; filename=\"my pic.png\"")
            #expect(
                wide.header("content-disposition")
                    == "inline; filename=\"Stra_e_.png\"; filename*=UTF-8''Stra%C3%9Fe%C3%BC.png")
            #expect(thumbAttachment.header("content-disposition") == "attachment; filename=\"holiday.png\"")
            #expect(thumbNamed.header("content-disposition") == "inline; filename=\"reportX:1.png\"")
            // And an answer that asked nothing has none
            let plain = try await harness.request("/imgproxy/unsafe/rs:fit:32:32/plain/\(source)@png")
            #expect(plain.header("content-disposition") == nil && plain.header("x-cache") == "HIT-MEMORY")
        }
    }
}
