// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `DELETE /cache?url=` and `POST /cache/trim` through the whole service: absent without `admin.token`,
    /// 403 without the right bearer token, and with it they purge one source from both tiers or empty the
    /// memory tier while the disk tier keeps everything.
    @Suite(.timeLimit(.minutes(1))) struct AdminRoutesTests {
        static let token = "integration-admin-token-0123"

        /// The admin routes' requests with the right token.
        static var authorized: [(String, String)] { [("Authorization", "Bearer \(token)")] }

        /// A JSON object body.
        static func json(_ response: RawHTTPClient.Response) -> [String: Any]? {
            try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        }

        @Test func withoutATokenConfiguredTheAdminRoutesDoNotExist() async throws {
            // Given a service without admin.token
            let harness = try Harness.shared()
            let purge = "/cache?url=" + Harness.percentEncoded(harness.origin.url("/any.jpg"))

            // When the admin routes are asked, even with a bearer token
            let deleted = try await harness.request(purge, method: "DELETE", headers: Self.authorized)
            let trimmed = try await harness.request(
                "/cache/trim", method: "POST", headers: Self.authorized, body: "{\"memory_bytes\": 0}")

            // Then they answer 404, as any unknown route
            expectJSONError(deleted, status: 404)
            expectJSONError(trimmed, status: 404)
        }

        @Test func theAdminRoutesRefuseAMissingOrWrongToken() async throws {
            // Given a service with an admin token and one thumbnail in memory
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/kept.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/kept.jpg", "w=40&format=png")
            #expect(try await harness.request(target).header("x-cache") == "MISS")
            let purge = "/cache?url=" + Harness.percentEncoded(harness.origin.url("/kept.jpg"))
            let wrongTokens: [[(String, String)]] = [
                [],
                [("Authorization", "Bearer")],
                [("Authorization", "Bearer ")],
                [("Authorization", "Bearer " + String(Self.token.reversed()))],  // same length
                [("Authorization", "Bearer " + Self.token.dropLast())],  // a prefix
                [("Authorization", "Bearer " + Self.token + "x")],  // longer
                [("Authorization", "Basic " + Data("admin:\(Self.token)".utf8).base64EncodedString())],
                [("Authorization", Self.token)],
                [("X-Admin-Token", Self.token)],
            ]

            // When both routes are asked with each of them
            for headers in wrongTokens {
                let deleted = try await harness.request(purge, method: "DELETE", headers: headers)
                let trimmed = try await harness.request(
                    "/cache/trim", method: "POST", headers: headers, body: "{\"memory_bytes\": 0}")

                // Then each answer is 403 JSON
                expectJSONError(deleted, status: 403)
                expectJSONError(trimmed, status: 403)
            }

            // And nothing was purged or trimmed
            #expect(harness.service.cache.memory?.statistics.currentEntries == 1)
            #expect(try await harness.request(target).header("x-cache") == "HIT-MEMORY")
            #expect(harness.origin.hits("/kept.jpg") == 1)
        }

        @Test func theBearerSchemeIsCaseInsensitive() async throws {
            // Given a service with an admin token (RFC 9110 §11.1: the scheme is a case-insensitive token)
            let harness = try Harness(["admin.token": Self.token])

            // When trim is asked with the scheme spelled in other cases
            for scheme in ["bearer", "BEARER", "bEaReR"] {
                let response = try await harness.request(
                    "/cache/trim", method: "POST", headers: [("Authorization", "\(scheme) \(Self.token)")],
                    body: "{\"memory_bytes\": 0}")

                // Then it is authorized; the token itself stays case-sensitive
                #expect(response.status == 200, "\(scheme): \(response.text)")
                let upper = try await harness.request(
                    "/cache/trim", method: "POST", headers: [("Authorization", "\(scheme) \(Self.token.uppercased())")],
                    body: "{\"memory_bytes\": 0}")
                expectJSONError(upper, status: 403)
            }
        }

        @Test func purgeRemovesEveryVariantOfOneSourceFromBothTiersAndKeepsOtherSources() async throws {
            // Given two variants of one source and one of another, each rendered once
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/purged.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            harness.origin.route("/other.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let purgedTargets = [40, 64].map { harness.thumbTarget("/purged.jpg", "w=\($0)&format=png") }
            let otherTarget = harness.thumbTarget("/other.jpg", "w=40&format=png")
            for target in purgedTargets + [otherTarget] {
                #expect(try await harness.request(target).header("x-cache") == "MISS")
            }

            // (the second variant may have fetched the source again: the first one's copy is stored asynchronously)
            let hitsBeforePurge = harness.origin.hits("/purged.jpg")
            // and each source's analysis record, made after its first answer, is on disk
            let analyses = try #require(harness.service.cache.analyses)
            #expect(await eventually { analyses.statistics.currentEntries == 2 })

            // When the first source is purged, named in another spelling of the same URL (canonicalised as
            // /thumb does: scheme lower-cased, fragment dropped)
            let url = harness.origin.url("/purged.jpg")
            #expect(url.hasPrefix("http://"))
            let purge = "/cache?url=" + Harness.percentEncoded("HTTP://" + url.dropFirst("http://".count) + "#top")
            let response = try await harness.request(purge, method: "DELETE", headers: Self.authorized)

            // Then the answer counts what went: two variants from memory and disk, and the original
            #expect(response.status == 200, "body: \(response.text)")
            #expect(response.header("content-type") == "application/json")
            let counts = Self.json(response)?["purged"] as? [String: Int]
            #expect(
                counts == ["memory": 2, "disk": 2, "sources": 1, "analyses": 1, "shared": 0, "shared_errors": 0],
                "body: \(response.text)")

            // And every variant of that source is rendered again from a new fetch
            let first = try await harness.request(purgedTargets[0])
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            #expect(harness.origin.hits("/purged.jpg") == hitsBeforePurge + 1)
            let second = try await harness.request(purgedTargets[1])
            #expect(second.status == 200 && second.header("x-cache") == "MISS")

            // While the other source is still in memory, untouched
            #expect(try await harness.request(otherTarget).header("x-cache") == "HIT-MEMORY")
            #expect(harness.origin.hits("/other.jpg") == 1)
        }

        @Test func purgeNeedsAnAbsoluteHTTPURL() async throws {
            let harness = try Harness(["admin.token": Self.token])
            for target in ["/cache", "/cache?w=32", "/cache?url=", "/cache?url=ftp%3A%2F%2Fexample.com%2Fa.jpg"] {
                let response = try await harness.request(target, method: "DELETE", headers: Self.authorized)
                expectJSONError(response, status: 400)
            }
        }

        @Test func trimEmptiesTheMemoryTierAndKeepsTheDiskTier() async throws {
            // Given two thumbnails in memory and on disk
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/trimmed.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let targets = [40, 64].map { harness.thumbTarget("/trimmed.jpg", "w=\($0)&format=png") }
            var originals: [RawHTTPClient.Response] = []
            for target in targets { originals.append(try await harness.request(target)) }
            let variants = try #require(harness.service.cache.variants)
            #expect(await eventually { variants.statistics.currentEntries == 2 })
            let hitsBeforeTrim = harness.origin.hits("/trimmed.jpg")

            // When the memory tier is trimmed to nothing
            let response = try await harness.request(
                "/cache/trim", method: "POST", headers: Self.authorized + [("Content-Type", "application/json")],
                body: "{\"memory_bytes\": 0}")

            // Then the answer says what was evicted and what is left
            #expect(response.status == 200, "body: \(response.text)")
            #expect(response.header("content-type") == "application/json")
            let body = Self.json(response)
            #expect(body?["evicted"] as? Int == 2, "body: \(response.text)")
            #expect(body?["memory_bytes"] as? Int == 0)
            #expect(body?["memory_entries"] as? Int == 0)
            #expect(harness.service.cache.memory?.statistics.currentBytes == 0)

            // And the next requests come from disk with the same bytes, then from memory again (promoted)
            for (target, original) in zip(targets, originals) {
                let fromDisk = try await harness.request(target)
                #expect(fromDisk.header("x-cache") == "HIT-DISK")
                #expect(fromDisk.body == original.body)
                #expect(try await harness.request(target).header("x-cache") == "HIT-MEMORY")
            }
            #expect(harness.origin.hits("/trimmed.jpg") == hitsBeforeTrim)
        }

        @Test func trimNeedsANonNegativeByteCount() async throws {
            // Given a thumbnail in memory
            let harness = try Harness(["admin.token": Self.token])
            harness.origin.route("/kept.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let target = harness.thumbTarget("/kept.jpg", "w=40&format=png")
            #expect(try await harness.request(target).status == 200)

            // When trim is asked with bodies that do not say how many bytes to keep
            let bodies: [String?] = [
                nil, "", "not json", "{}", "[]", "{\"memory_bytes\": -1}", "{\"memory_bytes\": \"0\"}",
                "{\"memory_bytes\": 1.5}", "{\"memory_bytes\": null}", "{\"memory\": 0}",
            ]
            for body in bodies {
                let response = try await harness.request(
                    "/cache/trim", method: "POST", headers: Self.authorized, body: body)

                // Then each is 400 JSON
                expectJSONError(response, status: 400)
            }

            // And the memory tier still holds the thumbnail
            #expect(try await harness.request(target).header("x-cache") == "HIT-MEMORY")
        }
    }
}
