// SPDX-License-Identifier: Apache-2.0

import Foundation
import Logging
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

@Suite struct LoggingTests {
    /// A handler writing to a temporary file, and a way to read what it wrote.
    private final class Capture {
        let files: ConfigTestFiles
        let fd: Int32
        let path: String

        init() throws {
            files = try ConfigTestFiles()
            path = files.path("log.txt")
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        }

        deinit { close(fd) }

        func logger(format: Settings.Log.Format, level: LoggingSetup.LevelControl = .init(.info)) -> Logger {
            let sink = LoggingLineHandler.Sink(fileDescriptor: fd)
            return Logger(label: "thumbd") { label in
                LoggingLineHandler(label: label, sink: sink, format: format, levelControl: level)
            }
        }

        var lines: [String] {
            (try? String(contentsOfFile: path, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        }
    }

    @Test func textLinesHaveTimestampLevelLabelMessageAndSortedMetadata() throws {
        // Given a text logger, when it logs with metadata, then one line has the documented shape.
        let capture = try Capture()
        let logger = capture.logger(format: .text)
        logger.info("listening", metadata: ["port": "8080", "address": "two words"])
        let lines = capture.lines
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(
            line.wholeMatch(
                of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info thumbd: listening address="two words" port=8080/
            ) != nil,
            "\(line)"
        )
    }

    @Test func jsonLinesAreOneObjectEach() throws {
        let capture = try Capture()
        let logger = capture.logger(format: .json)
        logger.warning(
            "slow \"origin\"\nsecond line",
            metadata: ["ms": "1500", "message": "shadowed", "list": ["a", "b"]]
        )
        let lines = capture.lines
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["level"] as? String == "warning")
        #expect(object["logger"] as? String == "thumbd")
        #expect(object["message"] as? String == "slow \"origin\"\nsecond line")
        #expect(object["ms"] as? String == "1500")
        #expect(object["message_"] as? String == "shadowed")
        #expect(object["list"] as? [String] == ["a", "b"])
        #expect((object["time"] as? String)?.hasSuffix("Z") == true)
    }

    @Test func secretsAreRedactedInBothFormats() throws {
        // Given messages and metadata carrying a signature and tokens, then none of them reach the output.
        for format in Settings.Log.Format.allCases {
            let capture = try Capture()
            let logger = capture.logger(format: format)
            logger.error(
                "bad request /thumb?url=a&sig=SECRETSIG&w=1",
                metadata: [
                    "authorization": "Bearer SECRETTOKEN", "Token": "SECRETTOKEN2", "target": "/thumb?sig=SECRETSIG2",
                ]
            )
            let output = capture.lines.joined(separator: "\n")
            #expect(capture.lines.count == 1)
            for secret in ["SECRETSIG", "SECRETTOKEN", "SECRETTOKEN2", "SECRETSIG2"] {
                #expect(!output.contains(secret), "\(format) leaked \(secret): \(output)")
            }
            #expect(output.contains("sig=REDACTED"))
        }
    }

    @Test func textMessagesCannotForgeLines() throws {
        let capture = try Capture()
        capture.logger(format: .text).info(
            "one\n2026-01-01T00:00:00.000Z critical thumbd: forged",
            metadata: ["k": "v\nx"]
        )
        #expect(capture.lines.count == 1)
    }

    @Test func sharedLevelControlChangesEveryLogger() throws {
        // Given two loggers sharing a level control at info, when it becomes debug, then both log debug.
        let capture = try Capture()
        let control = LoggingSetup.LevelControl(.info)
        let first = capture.logger(format: .text, level: control)
        var second = capture.logger(format: .text, level: control)
        first.debug("hidden")
        control.level = .debug
        first.debug("shown one")
        second.debug("shown two")
        second.logLevel = .error  // a logger's own level wins over the shared one
        second.warning("hidden too")
        let lines = capture.lines
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.contains("debug thumbd: shown") })
    }

    @Test func timestampsMatchFoundationsCalendar() {
        // Given many instants (leap days, century years, far future), then the arithmetic date equals Foundation's.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var seconds: Int64 = 0
        var instants: [Int64] = [0, 951_782_400, 951_868_799, 4_107_542_400, 1_795_341_600, 253_402_300_799]
        for _ in 0..<500 {
            seconds = (seconds &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407) & 0xFF_FFFF_FFFF
            instants.append(seconds % 253_402_300_799)
        }
        for instant in instants {
            var line: [UInt8] = []
            LoggingText.appendTimestamp(seconds: instant, milliseconds: 7, to: &line)
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(instant) + 0.007))
            #expect(String(decoding: line, as: UTF8.self) == expected)
        }
    }
}

@Suite struct LoggingRedactionTests {
    @Test(arguments: [
        ("/thumb?url=x&sig=abc", "/thumb?url=x&sig=REDACTED"),
        ("/thumb?sig=abc&url=x", "/thumb?sig=REDACTED&url=x"),
        ("/thumb?SIG=abc", "/thumb?SIG=REDACTED"),
        ("/thumb?%73ig=abc&w=1", "/thumb?%73ig=REDACTED&w=1"),
        ("/thumb?url=x&sig=", "/thumb?url=x&sig=REDACTED"),
        ("/thumb?url=x&sig=abc#frag", "/thumb?url=x&sig=REDACTED#frag"),
        ("/thumb?signature=abc&xsig=1&sigs=2", "/thumb?signature=REDACTED&xsig=1&sigs=2"),
        (
            "/a.jpg?X-Amz-Signature=abc&X-Amz-Credential=def&id=1",
            "/a.jpg?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED&id=1"
        ),
        ("/a.jpg?%74oken=t&keys=1&x-goog-signature=g", "/a.jpg?%74oken=REDACTED&keys=1&x-goog-signature=REDACTED"),
        ("/sig=abc", "/sig=abc"),
        (
            "/thumb?url=https%3A%2F%2Fa%2F%3Fsig%3D1&sig=abc&sig=def",
            "/thumb?url=https%3A%2F%2Fa%2F%3Fsig%3D1&sig=REDACTED&sig=REDACTED"
        ),
    ])
    func redactsSignatureParameters(target: String, redacted: String) {
        #expect(LoggingRedaction.redactingSecrets(in: target) == redacted)
    }

    @Test func redactsAuthorizationCredentialsButKeepsTheScheme() {
        #expect(LoggingRedaction.redactedAuthorization("Bearer abc.def") == "Bearer REDACTED")
        #expect(LoggingRedaction.redactedAuthorization("abcdef") == "REDACTED")
    }
}
