// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// What /thumb promises at the HTTP level: validators and 304, HEAD, caching headers, what is (not) forwarded
    /// to the origin, and JSON 404s for unknown paths.
    @Suite(.timeLimit(.minutes(2))) struct HTTPSemanticsTests {
        @Test func thumbnailCarriesTypeLengthStrongETagAndCacheControl() async throws {
            // Given a source
            let harness = try Harness.shared()
            harness.origin.route("/headers.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // When its thumbnail is fetched
            let response = try await harness.request(harness.thumbTarget("/headers.jpg", "w=64&format=jpeg"))
            // Then the answer is fully described and cacheable for a year
            #expect(response.status == 200)
            #expect(response.header("content-type") == "image/jpeg")
            #expect(response.header("content-length") == String(response.body.count))
            #expect(response.header("cache-control") == "public, max-age=31536000")
            #expect(response.header("x-cache") == "MISS")
            let etag = try #require(response.header("etag"))
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 18)  // strong: no W/
        }

        @Test func ifNoneMatchWithTheETagIs304() async throws {
            // Given a thumbnail and its ETag
            let harness = try Harness.shared()
            harness.origin.route("/etag.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/etag.jpg", "w=64&format=webp")
            let first = try await harness.request(target)
            let etag = try #require(first.header("etag"))

            // When it is asked for again with that ETag, its weak form, in a list, or `*`
            for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let response = try await harness.request(target, headers: [("If-None-Match", condition)])
                // Then the answer is 304 without a body, with the same validators and caching headers
                #expect(response.status == 304, "If-None-Match: \(condition)")
                #expect(response.body.isEmpty)
                #expect(response.header("etag") == etag)
                #expect(response.header("cache-control") == "public, max-age=31536000")
            }

            // And If-None-Match split over two lines counts every line
            let split = try await harness.request(
                target, headers: [("If-None-Match", "\"other\""), ("If-None-Match", etag)])
            #expect(split.status == 304)

            // And a different ETag gets the full 200
            let other = try await harness.request(target, headers: [("If-None-Match", "\"0000000000000000\"")])
            #expect(other.status == 200)
            #expect(other.body == first.body)
        }

        @Test func identicalRequestsGetTheSameETagAndDifferentOnesDiffer() async throws {
            let harness = try Harness.shared()
            harness.origin.route("/stable.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let a = try await harness.request(harness.thumbTarget("/stable.jpg", "w=64&format=png"))
            let b = try await harness.request(harness.thumbTarget("/stable.jpg", "w=64&format=png"))
            let c = try await harness.request(harness.thumbTarget("/stable.jpg", "w=65&format=png"))
            #expect(a.header("etag") == b.header("etag"))
            #expect(a.header("etag") != c.header("etag"))
        }

        @Test func headGivesTheHeadersOfGetWithoutTheBody() async throws {
            // Given a thumbnail fetched with GET
            let harness = try Harness.shared()
            harness.origin.route("/head.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/head.jpg", "w=80&format=png")
            let get = try await harness.request(target)
            #expect(get.status == 200)

            // When the same is asked with HEAD, followed by a GET on the same connection
            let client = try harness.client()
            try client.send(Harness.requestText(target, method: "HEAD") + Harness.requestText("/health"))
            let head = try await client.response(forHead: true, timeout: .seconds(30))
            let next = try await client.response(timeout: .seconds(30))

            // Then HEAD has GET's headers (Content-Length of the body it did not send), and no body bytes
            // came before the next response
            #expect(head.status == 200)
            #expect(head.header("content-length") == String(get.body.count))
            #expect(head.header("content-type") == "image/png")
            #expect(head.header("etag") == get.header("etag"))
            #expect(next.status == 200 && next.text == "ok\n")
        }

        @Test func redirectsAreFollowedToTheImage() async throws {
            // Given a chain of a 301, a 302 (relative Location) and a 307 before the image
            let harness = try Harness.shared()
            harness.origin.route("/moved-1", .redirect(to: harness.origin.url("/moved-2"), status: 301))
            harness.origin.route("/moved-2", .redirect(to: "/moved-3"))
            harness.origin.route("/moved-3", .redirect(to: "/moved-final.jpg", status: 307))
            harness.origin.route("/moved-final.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // When the first URL is asked for
            let response = try await harness.request(harness.thumbTarget("/moved-1", "w=40&format=png"))
            // Then the thumbnail is the final image's, fetched once
            #expect(response.status == 200)
            #expect(try response.image().width == 40)
            #expect(harness.origin.hits("/moved-final.jpg") == 1)
        }

        @Test func sourceQueryAndEscapesReachTheOriginUnchanged() async throws {
            // Given a source URL with its own query (with & and =) and a percent-escape in its path
            let harness = try Harness.shared()
            harness.origin.route("/odd%20name.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let source = harness.origin.url("/odd%20name.jpg?v=1&size=large&x=%2F")
            // When it is the url parameter (percent-encoded once, as clients must)
            let response = try await harness.request(Harness.thumbTarget(url: source, "w=40"))
            // Then the origin is asked for exactly that path and query
            #expect(response.status == 200)
            let received = try #require(harness.origin.requests.last { $0.path == "/odd%20name.jpg" })
            #expect(received.target == "/odd%20name.jpg?v=1&size=large&x=%2F")
        }

        @Test func contentTypeOfTheSourceIsNotTrusted() async throws {
            // Given a JPEG that its origin labels text/plain
            let harness = try Harness.shared()
            harness.origin.route("/mislabelled", .ok(Fixtures.bytes("progressive.jpg"), contentType: "text/plain"))
            // When it is asked for
            let response = try await harness.request(harness.thumbTarget("/mislabelled", "w=40&format=png"))
            // Then the bytes decide: it is an image
            #expect(response.status == 200)
            #expect(try response.image().width == 40)
        }

        @Test func configuredMaxAgeAndUserAgentAreUsed() async throws {
            // Given a configuration with its own client max-age and User-Agent
            let harness = try Harness(["cache.client_max_age": "1h", "fetch.user_agent": "thumbd-test-agent"])
            harness.origin.route("/configured.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // When a thumbnail is made
            let response = try await harness.request(harness.thumbTarget("/configured.jpg", "w=40"))
            // Then clients are told the configured lifetime and the origin saw the configured agent
            #expect(response.header("cache-control") == "public, max-age=3600")
            #expect(harness.origin.requests.last?.headers["user-agent"] == "thumbd-test-agent")
        }

        @Test func thumbWithoutAQueryIs400() async throws {
            let harness = try Harness.shared()
            expectJSONError(try await harness.request("/thumb"), status: 400, mentioning: "url")
            expectJSONError(try await harness.request("/thumb?"), status: 400, mentioning: "url")
        }

        @Test func absoluteFormTargetIsServed() async throws {
            // Given a request line in absolute form (as sent to a proxy)
            let harness = try Harness.shared()
            harness.origin.route("/absolute.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let response = try await harness.request(
                "http://thumbd.test" + harness.thumbTarget("/absolute.jpg", "w=40"))
            // Then the route and its query are read as usual
            #expect(response.status == 200)
            #expect(try response.image().width == 40)
        }

        @Test func clientCookiesAndAuthorizationNeverReachTheOrigin() async throws {
            // Given a source
            let harness = try Harness.shared()
            harness.origin.route("/private.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            // When a client sends credentials along
            let response = try await harness.request(
                harness.thumbTarget("/private.jpg", "w=32"),
                headers: [
                    ("Cookie", "session=secret-cookie"), ("Authorization", "Bearer secret-token"),
                    ("Proxy-Authorization", "Basic c2VjcmV0"), ("X-Forwarded-For", "203.0.113.9"),
                ])
            #expect(response.status == 200)
            // Then the origin's request carried none of them, nor any of their values
            let received = try #require(harness.origin.requests.last { $0.path == "/private.jpg" })
            for name in ["cookie", "authorization", "proxy-authorization", "x-forwarded-for"] {
                #expect(received.headers[name] == nil, "\(name) was forwarded")
            }
            #expect(!received.headers.values.contains { $0.contains("secret") || $0.contains("203.0.113.9") })
            #expect(received.headers["user-agent"]?.hasPrefix("thumbd/") == true)
        }

        @Test func credentialsInTheSourceURLAreRefused() async throws {
            // Given a source URL with user:password
            let harness = try Harness.shared()
            harness.origin.route("/userinfo.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let url = "http://user:password@\(originHost):\(harness.origin.port)/userinfo.jpg"
            // When it is asked for
            let response = try await harness.request(Harness.thumbTarget(url: url))
            // Then it is a bad url, and nothing was sent anywhere
            expectJSONError(response, status: 400, mentioning: "url")
            #expect(harness.origin.hits("/userinfo.jpg") == 0)
        }

        // `/` is the gallery (PagesTests).
        @Test(arguments: ["/index.html", "/thumbs", "/thumb/extra", "/favicon.ico", "/THUMB", "/status/"])
        func unknownPathIs404JSON(_ path: String) async throws {
            let harness = try Harness.shared()
            let response = try await harness.request(path)
            expectJSONError(response, status: 404)
        }

        @Test func thumbRefusesOtherMethodsWith405() async throws {
            let harness = try Harness.shared()
            let response = try await harness.request(harness.thumbTarget("/a.jpg"), method: "DELETE")
            expectJSONError(response, status: 405)
        }
    }
}
