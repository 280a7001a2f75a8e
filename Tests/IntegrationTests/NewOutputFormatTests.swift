// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp

extension Integration {
    /// JPEG XL and HEIC output (issue 29): round trips through two decoders outside thumbd (Debian's libvips command
    /// line, and libjxl's `djxl` or libheif's `heif-convert`), negotiation by `Accept` in `image.auto_formats`'s
    /// order, and HEIC's opt-in.
    @Suite(.timeLimit(.minutes(2))) struct NewOutputFormatTests {
        /// The photograph rendered: scikit-image's coffee.png, 600 x 400 px (a real photograph, not flat colours).
        static let source = "coffee.png"

        /// Decodes `bytes` (written to a file with `suffix`) with `command` (arguments around the two paths) into a
        /// PNG, and that PNG in process.
        static func decodedOutside(
            _ bytes: [UInt8], suffix: String, _ command: String, _ arguments: (String, String) -> [String]
        ) throws -> DecodedImage {
            guard FileManager.default.isExecutableFile(atPath: command) else {
                throw Failure("no \(command): `make test-deps` installs it (Makefile, APT_TEST_PACKAGES)")
            }
            let directory = try TempDirectory(prefix: "thumbd-decode")
            let input = directory.appending("in.\(suffix)")
            let output = directory.appending("out.png")
            try Data(bytes).write(to: URL(fileURLWithPath: input))
            let child = try ChildProcess(executable: command, arguments: arguments(input, output))
            guard let termination = child.wait(timeout: .seconds(60)) else {
                _ = child.kill(SIGKILL)
                _ = child.wait(timeout: .seconds(5))
                throw Failure("\(command) did not finish in 60 s")
            }
            guard termination == .exited(0) else {
                throw Failure("\(command) \(termination): \(child.standardError.suffix(2000))")
            }
            let png = try Data(contentsOf: URL(fileURLWithPath: output))
            return try DecodedImage(decoding: [UInt8](png))
        }

        /// The mean absolute difference of two images' RGB samples, 0...255.
        static func meanDistance(_ a: DecodedImage, _ b: DecodedImage) -> Double {
            var total = 0
            for y in 0..<a.height {
                for x in 0..<a.width {
                    let (p, q) = (a.colour(x: x, y: y), b.colour(x: x, y: y))
                    total +=
                        abs(Int(p.red) - Int(q.red)) + abs(Int(p.green) - Int(q.green)) + abs(Int(p.blue) - Int(q.blue))
                }
            }
            return Double(total) / Double(a.width * a.height * 3)
        }

        struct Failure: Error, CustomStringConvertible {
            let description: String
            init(_ description: String) { self.description = description }
        }

        /// What each format's round trip decodes with: libvips's command line, then the format's own tool.
        static let decoders: [(format: String, suffix: String, command: String, arguments: [String])] = [
            ("jxl", "jxl", "/usr/bin/vips", ["copy"]),
            ("jxl", "jxl", "/usr/bin/djxl", []),
            ("heic", "heic", "/usr/bin/vips", ["copy"]),
            ("heic", "heic", "/usr/bin/heif-convert", []),
        ]

        static let heicHarness = Result { try Harness(["image.heic_output": "true"]) }

        @Test(arguments: decoders)
        func outputDecodesToTheSizeAndNearlyThePixelsOfTheJPEG(
            _ format: String, suffix: String, command: String, arguments: [String]
        ) async throws {
            let vips = try Vips.initialize()
            try #require(format != "jxl" || vips.canSaveJXL, "this libvips cannot write JPEG XL")
            try #require(format != "heic" || vips.canSaveHEIC, "this libvips cannot write HEIC")
            // Given a 600x400 photograph on a service that writes HEIC
            let harness = try Self.heicHarness.get()
            harness.origin.route("/formats/\(Self.source)", .ok(try Photographs.bytes(Self.source)))
            let path = "/formats/\(Self.source)"
            // When it is asked as 160 px JPEG and in the format
            let jpeg = try await harness.request(harness.thumbTarget(path, "w=160&q=90&format=jpeg"))
            let response = try await harness.request(harness.thumbTarget(path, "w=160&q=90&format=\(format)"))
            // Then the format comes back labelled, without Vary, and decodes outside thumbd to the same size and
            // within a few levels of the JPEG's pixels
            #expect(jpeg.status == 200)
            #expect(response.status == 200, "body: \(response.text)")
            let mime = format == "jxl" ? "image/jxl" : "image/heif"
            #expect(response.header("content-type") == mime)
            #expect(response.header("vary") == nil)
            let decoded = try await blocking {
                try Self.decodedOutside(response.body, suffix: suffix, command) { input, output in
                    arguments + [input, output]
                }
            }
            let reference = try jpeg.image()
            #expect(decoded.width == 160 && decoded.height == 107)
            #expect(reference.width == 160 && reference.height == 107)
            let distance = Self.meanDistance(decoded, reference)
            // Measured: JPEG XL 4.3, HEIC 3.2 (and, the same way, WebP 4.2, AVIF 3.3) of 255 at q=90; a wrong colour
            // space or a shifted picture is tens.
            #expect(distance < 6, "mean distance \(distance) from the JPEG")
        }

        @Test func jxlIsNegotiatedWhenAcceptedAndAVIFFirstByDefault() async throws {
            let vips = try Vips.initialize()
            try #require(vips.canSaveJXL && vips.canSaveAVIF, "this libvips cannot write JPEG XL and AVIF")
            // Given a source on a service with the default image.auto_formats (avif, jxl, webp)
            let harness = try Harness.shared()
            harness.origin.route("/formats/auto.png", .ok(Fixtures.bytes("quadrants.png")))
            let target = harness.thumbTarget("/formats/auto.png", "w=64&format=auto")
            // When clients accept JPEG XL and WebP, or all three
            let jxl = try await harness.request(target, headers: [("Accept", "image/jxl,image/webp,*/*")])
            let all = try await harness.request(target, headers: [("Accept", "image/webp,image/jxl,image/avif")])
            // Then the first gets JPEG XL, the second AVIF, both with Vary: Accept and the right pixels
            #expect(jxl.status == 200 && jxl.header("content-type") == "image/jxl")
            #expect(jxl.header("vary") == "Accept")
            #expect(all.status == 200 && all.header("content-type") == "image/avif")
            #expect(all.header("vary") == "Accept")
            // A JPEG XL codestream (FF 0A) or container (the JXL box)
            #expect(
                jxl.body.starts(with: [0xFF, 0x0A]) || jxl.body.starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20]))
            let decoded = try await blocking {
                try Self.decodedOutside(jxl.body, suffix: "jxl", "/usr/bin/djxl") { [$0, $1] }
            }
            #expect(decoded.mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 32) == nil)
        }

        @Test func autoFormatsSetsTheOrderOfNegotiation() async throws {
            let vips = try Vips.initialize()
            try #require(vips.canSaveJXL && vips.canSaveAVIF, "this libvips cannot write JPEG XL and AVIF")
            // Given a service that prefers WebP, then JPEG XL, and never answers AVIF under auto
            let harness = try Harness(["image.auto_formats": "[webp, jxl]"])
            harness.origin.route("/order.png", .ok(Fixtures.bytes("quadrants.png")))
            let target = harness.thumbTarget("/order.png", "w=64&format=auto")
            // When clients accept all three, JPEG XL and AVIF, or AVIF only
            let all = try await harness.request(target, headers: [("Accept", "image/avif,image/jxl,image/webp")])
            let noWebP = try await harness.request(target, headers: [("Accept", "image/avif,image/jxl")])
            let avifOnly = try await harness.request(target, headers: [("Accept", "image/avif")])
            let explicit = try await harness.request(harness.thumbTarget("/order.png", "w=64&format=avif"))
            // Then they get WebP, JPEG XL and JPEG, and AVIF stays available by name
            #expect(all.header("content-type") == "image/webp")
            #expect(noWebP.header("content-type") == "image/jxl")
            #expect(avifOnly.header("content-type") == "image/jpeg")
            #expect([all, noWebP, avifOnly].allSatisfy { $0.status == 200 && $0.header("vary") == "Accept" })
            #expect(explicit.status == 200 && explicit.header("content-type") == "image/avif")
            for response in [all, noWebP, avifOnly] where response.header("content-type") != "image/jxl" {
                #expect(
                    try response.image().mismatch(in: Fixtures.quadrantProbes(width: 64, height: 48), tolerance: 32)
                        == nil)
            }
        }

        @Test func heicIsRefusedNamingTheSettingUntilTurnedOn() async throws {
            // Given a service with the default configuration (image.heic_output: false)
            let harness = try Harness.shared()
            harness.origin.route("/formats/off.png", .ok(Fixtures.bytes("quadrants.png")))
            // When HEIC is asked by name, in /thumb's spelling and its alias
            let heic = try await harness.request(harness.thumbTarget("/formats/off.png", "w=64&format=heic"))
            let heif = try await harness.request(harness.thumbTarget("/formats/off.png", "w=64&format=heif"))
            // Then both are a 400 whose JSON body names the setting, and no origin fetch was made for them
            expectJSONError(heic, status: 400, mentioning: "image.heic_output")
            expectJSONError(heif, status: 400, mentioning: "image.heic_output")
            #expect(harness.origin.hits("/formats/off.png") == 0)
            // And a client that accepts HEIC never gets it under auto
            let auto = try await harness.request(
                harness.thumbTarget("/formats/off.png", "w=64&format=auto"), headers: [("Accept", "image/heic")])
            #expect(auto.status == 200 && auto.header("content-type") == "image/jpeg")
        }
    }
}
