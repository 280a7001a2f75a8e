// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Every error answer carries `Cache-Control: no-store`, whoever made it: the HTTP server itself (a request it
    /// cannot parse or route, before any handler), the routes, and the thumbnail front door. A browser, CDN or
    /// Varnish that kept an error would keep answering it after the cause is gone.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct ErrorCachingTests {
        /// Raw requests the server refuses itself, and the status of each.
        static let serverErrors: [(request: String, status: Int)] = [
            ("GET /thumb?url=\u{01} HTTP/1.1\r\nHost: a\r\n\r\n", 400),  // a raw control byte in the target
            ("GET /thumb HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),  // two Host fields
            ("GET /no/such/route HTTP/1.1\r\nHost: a\r\n\r\n", 404),
            ("DELETE /health HTTP/1.1\r\nHost: a\r\n\r\n", 405),
            ("PUT /status HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 405),
            ("POST /prefetch HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n", 413),
            ("GET /" + String(repeating: "a", count: 9 * 1024) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
            ("GET /health HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n", 417),
            ("GET /health HTTP/1.1\r\nHost: a\r\nX-Big: " + String(repeating: "b", count: 40 * 1024) + "\r\n\r\n", 431),
            ("BREW /health HTTP/1.1\r\nHost: a\r\n\r\n", 501),
            ("GET /health HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ]

        @Test func theServersOwnErrorsAreNotStored() async throws {
            // Given a service
            let harness = try Harness.shared()
            for (request, status) in Self.serverErrors {
                // When a request the server refuses itself is sent
                let response = try await blocking {
                    let client = try harness.client()
                    defer { client.close() }
                    try client.send(request)
                    return try client.readResponse()
                }
                // Then it is that status, with a JSON body and Cache-Control: no-store
                let shown = request.prefix(40).debugDescription
                #expect(response.status == status, "\(shown)")
                #expect(response.header("cache-control") == "no-store", "\(shown): \(response.status)")
                #expect(response.header("content-type") == "application/json", "\(shown)")
                #expect(String(decoding: response.body, as: UTF8.self).hasPrefix("{\"status\": \(status),"), "\(shown)")
            }
        }

        @Test func aRequestHeadThatNeverEndsIs408AndNotStored() async throws {
            // Given a service with a short head timeout
            let harness = try Harness(["server.header_timeout": "200ms"])
            // When a head starts and never ends
            let response = try await blocking {
                let client = try harness.client()
                defer { client.close() }
                try client.send("GET /health HTTP/1.1\r\nHost: a\r\n")
                return try client.readResponse(timeout: .seconds(10))
            }
            // Then the server answers 408 with no-store
            #expect(response.status == 408)
            #expect(response.header("cache-control") == "no-store")
        }

        @Test func theRoutesErrorsAreNotStored() async throws {
            // Given a service with an admin token, and an origin that fails in each way
            let harness = try Harness(["admin.token": "s3cr3t-token-0123456789"])
            harness.origin.route("/missing.jpg", .status(404))
            harness.origin.route("/broken.jpg", .status(500))
            harness.origin.route("/junk.jpg", .ok(Array("not an image".utf8), contentType: "image/jpeg"))
            let cases: [(target: String, method: String, status: Int)] = [
                ("/thumb?w=32", "GET", 400),
                (harness.thumbTarget("/missing.jpg"), "GET", 404),
                (harness.thumbTarget("/broken.jpg"), "GET", 502),
                (harness.thumbTarget("/junk.jpg"), "GET", 422),
                (Harness.thumbTarget(url: "http://10.0.0.1/a.jpg"), "GET", 403),
                ("/info?w=1", "GET", 400),
                ("/cache?url=http%3A%2F%2Fa%2Fb.jpg", "DELETE", 403),
                ("/prefetch/none", "GET", 403),
            ]
            for (target, method, status) in cases {
                // When each error is asked
                let response = try await harness.request(target, method: method)
                // Then its status comes with no-store
                #expect(response.status == status, "\(method) \(target)")
                #expect(response.header("cache-control") == "no-store", "\(method) \(target): \(response.status)")
            }
        }
    }
}
