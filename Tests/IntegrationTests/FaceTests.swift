// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Faces end to end: `gravity=face` crops keep the astronaut's head where the centre cuts it off (checked by
    /// Debian's python3-opencv finding her face in the answers), one detection serves every size, URL form and `/info`.
    @Suite(.timeLimit(.minutes(2))) struct FaceTests {
        /// `thumbd_face_detections_total{result=…}` from /metrics.
        static func detections(_ harness: Harness, _ result: String) async throws -> Int {
            let sample = "thumbd_face_detections_total{result=\"\(result)\"}"
            return Int(try #require(try await harness.scrape().samples[sample], "no \(sample)"))
        }

        /// How many faces Debian's python3-opencv finds in an encoded picture (thumbor's cascade and parameters).
        static func facesFound(in encoded: [UInt8]) throws -> Int {
            let directory = try TempDirectory(prefix: "thumbd-faces")
            let path = directory.appending("answer")
            try Data(encoded).write(to: URL(fileURLWithPath: path))
            let child = try ChildProcess(
                executable: "/usr/bin/python3",
                arguments: [
                    "-c",
                    "import sys, cv2\n"
                        + "img = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)\n"
                        + "c = cv2.CascadeClassifier('/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml')\n"
                        + "h, w = img.shape\n"
                        + "m = max(20, int(min(w, h) / 15))\n"
                        + "print(len(c.detectMultiScale(img, 1.2, 4, minSize=(m, m))))\n",
                    path,
                ])
            guard let termination = child.wait(timeout: .seconds(60)), termination == .exited(0) else {
                _ = child.kill(SIGKILL)
                throw Photographs.Missing(description: "python3-opencv failed: \(child.standardError.suffix(500))")
            }
            return try #require(Int(child.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)))
        }

        @Test func theFaceIsInEveryFaceCropWhereTheCentreCutsItOff() async throws {
            let harness = try Harness()
            harness.origin.route("/astronaut.png", .ok(try Photographs.bytes("astronaut.png")))
            // 512 x 512, her head in the upper middle: a 16:9 cover at the centre keeps rows 112...400 and cuts it.
            let centre = try await harness.request(
                harness.thumbTarget("/astronaut.png", "w=480&h=270&fit=cover&format=png"))
            #expect(centre.status == 200)
            #expect(try Self.facesFound(in: centre.body) == 0)
            for box in ["w=480&h=270", "w=400&h=400", "w=270&h=480", "w=480&h=200", "w=200&h=480"] {
                let answer = try await harness.request(
                    harness.thumbTarget("/astronaut.png", "\(box)&fit=cover&gravity=face&format=png"))
                #expect(answer.status == 200)
                #expect(try Self.facesFound(in: answer.body) == 1, "no face in the \(box) crop")
            }
            // Five sizes, one detection; the other four read it
            #expect(try await Self.detections(harness, "made") == 1)
            #expect(try await Self.detections(harness, "kept") == 4)
        }

        @Test func infoAnswersTheFacesFromTheKeptDetection() async throws {
            let harness = try Harness()
            harness.origin.route("/astronaut.png", .ok(try Photographs.bytes("astronaut.png")))
            harness.origin.route("/coffee.png", .ok(try Photographs.bytes("coffee.png")))
            for size in [64, 128, 200] {
                let answer = try await harness.request(
                    harness.thumbTarget("/astronaut.png", "w=\(size)&h=\(size)&fit=cover&gravity=face"))
                #expect(answer.status == 200)
            }
            #expect(try await Self.detections(harness, "made") == 1)
            let info = try await harness.request(
                "/info?faces=1&url=" + Harness.percentEncoded(harness.origin.url("/astronaut.png")))
            #expect(info.status == 200)
            struct Faces: Decodable {
                struct Box: Decodable { let x, y, width, height: Int }
                let count: Int
                let boxes: [Box]
            }
            struct Info: Decodable { let faces: Faces }
            let faces = try JSONDecoder().decode(Info.self, from: Data(info.body)).faces
            #expect(faces.count == 1 && faces.boxes.count == 1)
            let box = try #require(faces.boxes.first)
            #expect(box.x >= 150 && box.x + box.width <= 300 && box.y >= 40 && box.y + box.height <= 190)
            // No new detection, and no new origin fetch (the two other sizes read the kept detection; /info reads it too,
            // or the source's analysis record, which holds it once the first render's analysis is made)
            #expect(try await Self.detections(harness, "made") == 1)
            #expect(try await Self.detections(harness, "kept") >= 2)
            #expect(harness.origin.hits("/astronaut.png") == 1)
            // A picture without a face: none, and a face crop is attention's
            let coffee = try await harness.request(
                "/info?faces=1&url=" + Harness.percentEncoded(harness.origin.url("/coffee.png")))
            #expect(try JSONDecoder().decode(Info.self, from: Data(coffee.body)).faces.count == 0)
            let face = try await harness.request(
                harness.thumbTarget("/coffee.png", "w=100&h=300&fit=cover&gravity=face&format=png"))
            let attention = try await harness.request(
                harness.thumbTarget("/coffee.png", "w=100&h=300&fit=cover&gravity=attention&format=png"))
            #expect(face.status == 200 && face.body == attention.body)
            // Without faces=1 there is no faces field; faces=2 is a 400
            let plain = try await harness.request(
                "/info?url=" + Harness.percentEncoded(harness.origin.url("/astronaut.png")))
            #expect(!plain.text.contains("\"faces\""))
            let bad = try await harness.request(
                "/info?faces=2&url=" + Harness.percentEncoded(harness.origin.url("/astronaut.png")))
            #expect(bad.status == 400)
        }

        @Test func redactedFacesAreNoLongerFound() async throws {
            let harness = try Harness(["imgproxy.enabled": "true"])
            harness.origin.route("/astronaut.png", .ok(try Photographs.bytes("astronaut.png")))
            let plain = try await harness.request(harness.thumbTarget("/astronaut.png", "w=400&format=png"))
            #expect(try Self.facesFound(in: plain.body) == 1)
            for mode in ["blur", "pixelate"] {
                let redacted = try await harness.request(
                    harness.thumbTarget("/astronaut.png", "w=400&format=png&redact=faces,\(mode)"))
                #expect(redacted.status == 200)
                #expect(try Self.facesFound(in: redacted.body) == 0, "a face is still found after \(mode)")
            }
            // imgproxy Pro's blur_detections with the face class: the same redaction
            let source = harness.origin.url("/astronaut.png")
            let blurred = try await harness.request("/imgproxy/unsafe/rs:fit:400:400/bd:12:face/plain/\(source)@png")
            #expect(blurred.status == 200)
            #expect(try Self.facesFound(in: blurred.body) == 0)
            #expect(try await Self.detections(harness, "made") == 1)
        }

        @Test func withFacesOffTheGravitiesFallBackAndInfoRefuses() async throws {
            let harness = try Harness(["image.faces": "false"])
            harness.origin.route("/coffee.png", .ok(try Photographs.bytes("coffee.png")))
            let face = try await harness.request(
                harness.thumbTarget("/coffee.png", "w=100&h=300&fit=cover&gravity=face&format=png"))
            let attention = try await harness.request(
                harness.thumbTarget("/coffee.png", "w=100&h=300&fit=cover&gravity=attention&format=png"))
            #expect(face.status == 200 && face.body == attention.body)
            let info = try await harness.request(
                "/info?faces=1&url=" + Harness.percentEncoded(harness.origin.url("/coffee.png")))
            #expect(info.status == 400)
            #expect(!(try await harness.request("/metrics").text.contains("thumbd_face_detections_total")))
            // And a redaction is refused rather than answered unredacted
            let redact = try await harness.request(harness.thumbTarget("/coffee.png", "w=100&redact=faces"))
            #expect(redact.status == 503)
        }
    }
}
