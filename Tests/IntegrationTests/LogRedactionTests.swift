// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// No URL signature, and no secret of a source's own query, reaches the access log, the diagnostics or `/status`,
    /// for any route a URL form answers: thumbnails (miss and hit), thumbor's `meta/`, imgproxy's `info/`, and
    /// errors. The built thumbd runs as a child process, so the test reads the very lines it writes.
    @Suite(.serialized, .timeLimit(.minutes(2))) struct LogRedactionTests {
        static let thumborKey = "thumbor-key-for-logs"
        static let imgproxyKey = ImgproxyForm.Keys.Pair(
            key: URLSignature.SharedKey(bytes: Array("imgproxy-key".utf8)), salt: Array("imgproxy-salt".utf8))

        /// `/thumbor/<signature>/<signedPart>`.
        static func thumbor(_ signedPart: String, _ status: Int) -> (target: String, signature: String, status: Int) {
            let signature = ThumborForm.signature(of: signedPart, key: thumborKey)
            return ("/thumbor/\(signature)/\(signedPart)", signature, status)
        }

        /// `/imgproxy/[info/]<signature><path>`.
        static func imgproxy(_ path: String, info: Bool = false, _ status: Int) -> (
            target: String, signature: String, status: Int
        ) {
            let signature = ImgproxySignature.signature(path: path.utf8, pair: imgproxyKey, size: 32)
            return ("/imgproxy/" + (info ? "info/" : "") + signature + path, signature, status)
        }

        static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }

        @Test func noSignatureOrSourceSecretIsLoggedOrShown() async throws {
            // Given thumbd with both forms signed, its access log on, and an origin with one picture
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            origin.route("/a.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let directory = try TempDirectory(prefix: "thumbd-log-redaction")
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(
                to: configuration, accessLog: true,
                extraYAML: """
                    thumbor:
                      enabled: true
                      security_keys: ["\(Self.thumborKey)"]
                    imgproxy:
                      enabled: true
                      keys: ["\(Self.hex("imgproxy-key"))"]
                      salts: ["\(Self.hex("imgproxy-salt"))"]

                    """)
            let child = try await blocking {
                try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("cache"))
            }
            defer { _ = child.stop() }

            // Sources whose own queries carry secrets (a presigned URL's signature, thumbd's sig, a token)
            let secrets = ["SRCSECRET1", "SRCSECRET2", "SRCSECRET3", "SRCSECRET4", "SRCSECRET5"]
            let picture = origin.url("/a.png")
            let missing = origin.url("/none.png")
            let encoded1 = Harness.percentEncoded(picture + "?w=1&sig=\(secrets[0])")
            let encoded2 = Harness.percentEncoded(missing + "?X-Amz-Signature=\(secrets[1])")
            let base64Secret = URLSignature.base64URLEncoded(Array((picture + "?token=\(secrets[2])").utf8))
            let encoded4 = Harness.percentEncoded(picture + "?X-Goog-Signature=\(secrets[3])")
            let wmu = URLSignature.base64URLEncoded(Array((picture + "?sig=\(secrets[4])").utf8))
            let requests: [(target: String, signature: String, status: Int)] = [
                Self.thumbor("fit-in/32x32/\(encoded1)", 200),
                Self.thumbor("fit-in/32x32/\(encoded1)", 200),  // a memory hit
                Self.thumbor("meta/fit-in/32x32/\(encoded1)", 200),
                Self.thumbor("fit-in/32x32/\(encoded2)", 404),
                Self.thumbor("fit-in/32x32/filters:blur(1):blur(2)/\(encoded1)", 400),
                Self.thumbor("fit-in/32x32/filters:watermark(\(encoded4),0,0,50)/\(encoded1)", 200),
                Self.imgproxy("/rs:fit:32:32/plain/\(encoded1)@png", 200),
                Self.imgproxy("/rs:fit:32:32/plain/\(encoded1)@png", 200),
                Self.imgproxy("/rs:fit:32:32/\(base64Secret).png", 200),
                Self.imgproxy("/plain/\(encoded1)", info: true, 200),
                Self.imgproxy("/\(base64Secret)", info: true, 200),
                Self.imgproxy("/rs:fit:32:32/plain/\(encoded2)", 404),
                Self.imgproxy("/rs:nonsense/plain/\(encoded1)", 400),
                Self.imgproxy("/rs:fit:32:32/wm:0.5/wmu:\(wmu)/plain/\(encoded1)@png", 200),
            ]

            // When each is asked
            for (target, _, status) in requests {
                let response = try await blocking { try child.get(target) }
                // Then it answers as the form does (so each path reaches the log through its own route)
                #expect(response.status == status, "\(target): \(String(decoding: response.body, as: UTF8.self))")
            }
            let status = try await blocking { try child.get("/status.json") }
            #expect(status.status == 200)
            let statusText = String(decoding: status.body, as: UTF8.self)

            // Then the access log has one line per answer, each signature and each secret replaced
            #expect(
                waitUntil(timeout: .seconds(10)) {
                    child.process.standardOutput.components(separatedBy: "status=").count > requests.count
                })
            let accessLog = child.process.standardOutput
            let diagnostics = child.process.standardError
            let signatures = Set(requests.map(\.signature))
            for secret in Array(signatures) + secrets {
                #expect(!accessLog.contains(secret), "access log shows \(secret)")
                #expect(!diagnostics.contains(secret), "stderr shows \(secret)")
                #expect(!statusText.contains(secret), "/status.json shows \(secret)")
            }
            let formLines = accessLog.split(separator: "\n").filter {
                $0.contains("/thumbor/") || $0.contains("/imgproxy/")
            }
            #expect(formLines.count == requests.count, "\(formLines)")
            #expect(formLines.allSatisfy { $0.contains("REDACTED") }, "\(formLines)")
            // and /status lists the errors, redacted too
            #expect(statusText.contains("/thumbor/REDACTED/") && statusText.contains("/imgproxy/REDACTED/"))
        }
    }
}
