// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// No spelling of an `s3://` URL reads outside `s3.source_buckets`, through any route that takes a source or a
    /// watermark URL. The witness is moto's own request log: every request thumbd sent must be in the listed bucket.
    @Suite(.serialized, .timeLimit(.minutes(3))) struct BucketEscapeTests {
        static let listed = "photos"

        /// Spellings of `s3://photos/<something>` that a store, a proxy or libcurl could turn into
        /// `/private/x.png` (the object of a bucket that is not listed), or that are not one key of `photos`.
        static let escapes = [
            "s3://photos/%2e%2e/private/x.png", "s3://photos/.%2e/private/x.png", "s3://photos/%2e./private/x.png",
            "s3://photos/..%2fprivate/x.png", "s3://photos/%2E%2E/private/x.png",
            "s3://photos/%2e%2e%2fprivate%2fx.png",
            "s3://photos/x/%2e%2e/%2e%2e/private/x.png", "s3://photos/a/%2e%2e%2f%2e%2e%2fprivate/x.png",
            "s3://photos/../private/x.png", "s3://photos/./../private/x.png", "s3://photos/x/../../private/x.png",
            "s3://photos/%252e%252e/private/x.png", "s3://photos/%252E%252E%252Fprivate/x.png",
            "s3://photos/..%5cprivate/x.png", "s3://photos/..%5Cprivate%5Cx.png",
            "s3://photos/%c0%ae%c0%ae/private/x.png",
            "s3://photos/%e0%80%ae%e0%80%ae/private/x.png", "s3://photos/..%c0%afprivate/x.png",
            "s3://photos//private/x.png", "s3://photos/%2fprivate/x.png", "s3://photos/%2f%2e%2e/private/x.png",
            "s3://photos/./x.png", "s3://photos/pictures/", "s3://photos/%00/x.png", "s3://photos/a%0d%0a/x.png",
            "s3://photos/%2e%2e", "s3://photos/%2e",
        ]

        /// imgproxy's base64url (no padding) of `text`.
        static func base64URL(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }

        /// Every route that reads a source or watermark URL, for the URL `source` (an `s3://` text as a client
        /// writes it) and a plain picture `image` at the loopback origin for the routes where `source` is the mark.
        static func targets(for source: String, image: String) -> [String] {
            let encoded = Harness.percentEncoded(source)
            let imageEncoded = Harness.percentEncoded(image)
            return [
                "/thumb?url=\(encoded)&w=32",
                "/info?url=\(encoded)",
                "/thumb?url=\(imageEncoded)&w=32&wm_url=\(encoded)",
                "/thumbor/unsafe/32x0/\(encoded)",
                "/thumbor/unsafe/meta/32x0/\(encoded)",
                "/thumbor/unsafe/32x0/filters:watermark(\(encoded),0,0,0)/\(imageEncoded)",
                "/imgproxy/unsafe/rs:fit:32:32/plain/\(encoded)",
                "/imgproxy/unsafe/rs:fit:32:32/\(base64URL(source))",
                "/imgproxy/info/unsafe/plain/\(encoded)",
                "/imgproxy/info/unsafe/\(base64URL(source))",
                "/imgproxy/unsafe/rs:fit:32:32/wm:1/wmu:\(base64URL(source))/plain/\(imageEncoded)",
            ]
        }

        /// The paths of moto's request lines (`"GET /photos/x.png HTTP/1.1" 200`) from `offset` on.
        static func requestedPaths(_ moto: MotoServer, after offset: Int) -> [String] {
            moto.requestLog.dropFirst(offset).compactMap { line in
                guard let quote = line.firstIndex(of: "\"") else { return nil }
                let request = line[line.index(after: quote)...].split(separator: " ")
                return request.count >= 2 ? String(request[1]) : nil
            }
        }

        @Test func noSpellingOfAnS3URLReadsOutsideTheListedBucket() async throws {
            // Given moto with the listed bucket `photos` and an unlisted `private` holding the object an escape aims
            // at, thumbd with every URL form mounted, and a plain picture at the origin (for watermark routes)
            let moto = try await blocking { try MotoServer(buckets: [Self.listed, "private"]) }
            let directory = try TempDirectory(prefix: "thumbd-s3-credentials")
            let credentials = directory.appending("credentials")
            try moto.writeCredentials(to: credentials)
            let fixture = Fixtures.url("quadrants.png").path
            try await blocking {
                try moto.put(bucket: Self.listed, key: "pictures/a.png", file: fixture, contentType: "image/png")
                try moto.put(bucket: "private", key: "x.png", file: fixture, contentType: "image/png")
            }
            let harness = try Harness([
                "s3.endpoint": moto.endpoint, "s3.credentials_file": credentials,
                "s3.source_buckets": "[\(Self.listed)]", "thumbor.enabled": "true", "thumbor.allow_unsafe": "true",
                "imgproxy.enabled": "true",
            ])
            harness.origin.route("/plain.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let image = harness.origin.url("/plain.png")
            let logBefore = moto.requestLog.count

            // When a key of the listed bucket is asked through every route (the control: each route reaches moto)
            for target in Self.targets(for: "s3://photos/pictures/a.png", image: image) {
                let response = try await harness.request(target)
                // Then each answers 200
                #expect(response.status == 200, "\(target): \(String(decoding: response.body, as: UTF8.self))")
            }
            #expect(Self.requestedPaths(moto, after: logBefore).contains("/photos/pictures/a.png"))
            let logAfterControl = moto.requestLog.count

            // When every escaping spelling is asked through every route
            var statuses: [String: Int] = [:]
            for source in Self.escapes {
                for target in Self.targets(for: source, image: image) {
                    let response = try await harness.request(target)
                    statuses[target] = response.status
                    // Then each is refused (400 for the URL, 403 for the bucket) with a JSON reason, and no render
                    #expect(
                        response.status == 400 || response.status == 403,
                        "\(target): \(response.status) \(String(decoding: response.body, as: UTF8.self))")
                    #expect(response.header("content-type")?.hasPrefix("application/json") == true, "\(target)")
                }
            }
            #expect(statuses.count == Self.escapes.count * 11)

            // And moto saw no request for them: nothing outside the listed bucket, ever
            let paths = Self.requestedPaths(moto, after: logBefore)
            #expect(!paths.isEmpty)
            #expect(paths.allSatisfy { $0.hasPrefix("/photos/") }, "\(paths)")
            #expect(Self.requestedPaths(moto, after: logAfterControl).allSatisfy { $0.hasPrefix("/photos/") })
            #expect(!paths.contains { $0.contains("private") })
        }
    }
}
