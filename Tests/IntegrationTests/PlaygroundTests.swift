// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// The gallery at `GET /` as a playground, in headless Chromium against a whole service with thumbor's and
    /// imgproxy's forms on: with operations in its address, each cell shows its thumbnail (loaded through `/thumb`)
    /// beside the same picture's `/thumb`, thumbor and imgproxy URLs, and those three URLs, asked by the test
    /// itself, are one cache entry (identical bytes, memory hits). With signing on, the page says it cannot sign.
    @Suite(.timeLimit(.minutes(3))) struct PlaygroundTests {
        /// The sources the origin serves: four coloured quadrants (so turns and flips show) and a grey square with
        /// a busy patch left of the middle (so a smart gravity moves the crop); both larger than every box here.
        static let images = [
            ("/pictures/progressive.jpg", "progressive.jpg", "image/jpeg"),
            ("/pictures/interest.png", "interest.png", "image/png"),
        ]

        /// thumbor's form at `/thumbor/` (`unsafe/` allowed) and imgproxy's at `/imgproxy/` (no keys), beside
        /// `/thumb`; `overrides` on top.
        static func harness(_ overrides: [String: String] = [:]) throws -> Harness {
            let forms = [
                "thumbor.enabled": "true", "thumbor.prefix": "/thumbor/", "thumbor.allow_unsafe": "true",
                "imgproxy.enabled": "true", "imgproxy.prefix": "/imgproxy/",
            ]
            let harness = try Harness(forms.merging(overrides) { _, new in new })
            for (path, file, type) in images {
                harness.origin.route(path, .ok(Fixtures.bytes(file), contentType: type))
            }
            return harness
        }

        /// One playground: operations as the page's address carries them, the forms expected to express them,
        /// and the size each thumbnail must have (nil: not checked).
        struct Playground: Sendable, CustomTestStringConvertible {
            var operations: String
            var inexpressible: [String: String] = [:]
            var size: (Int, Int)?
            var testDescription: String { operations }
        }

        static let playgrounds = [
            // A quarter turn of a cover crop, as WebP: thumbor turns after its resize, so its box trades sides.
            Playground(operations: "w=120&h=80&fit=cover&rotate=90&format=webp", size: (120, 80)),
            // A mirrored turn with a compass gravity: thumbor's alignment names the source's side that lands there.
            Playground(
                operations: "w=90&h=60&fit=cover&gravity=northeast&rotate=270&flip=h&sharpen=0.8&q=55&format=jpeg",
                size: (90, 60)),
            // thumbor's smart crop (its detectors) of a picture turned half round by two flips: not imgproxy's.
            Playground(
                operations: "w=100&h=50&fit=cover&gravity=smart&flip=hv&enlarge=1&format=webp",
                inexpressible: ["imgproxy": "not expressible in imgproxy's form: gravity smart"], size: (100, 50)),
            // Faces (imgproxy Pro's g:obj:face): not thumbor's.
            Playground(
                operations: "w=100&h=50&fit=cover&gravity=face&format=png",
                inexpressible: ["thumbor": "not expressible in thumbor's form: gravity face"], size: (100, 50)),
            // Letterboxed onto a colour, enlarged, flipped top-bottom, blurred.
            Playground(
                operations: "w=100&h=70&fit=pad&bg=ff8800&enlarge=1&flip=v&blur=1.5&format=png", size: (100, 70)),
            // One side (every fit is then contain), a smart gravity (then dropped): grayscale is not imgproxy's, and
            // thumbor's grayscale() is another grey (Rec. 601 luma, grayscale=rec601).
            Playground(
                operations: "w=80&h=0&fit=cover&gravity=attention&rotate=180&grayscale=1&format=webp",
                inexpressible: [
                    "imgproxy": "not expressible in imgproxy's form: grayscale",
                    "thumbor": "not expressible in thumbor's form: full-fit-in, upscale() and one-sided sizes",
                ]),
        ]

        @Test(.serialized, arguments: playgrounds)
        func eachCellShowsItsThumbnailBesideThreeURLsOfOneCacheEntry(_ playground: Playground) async throws {
            // Given a service with the three forms on, and the playground's address with two sources
            let harness = try Self.harness()
            let list = Self.images.map { harness.origin.url($0.0) }.joined(separator: "\n")
            let page = "http://127.0.0.1:\(harness.port)/?urls=\(Harness.percentEncoded(list))&\(playground.operations)"

            // When Chromium opens it
            let run = try await blocking { try Chromium.dumpDOM(page) }
            let dom = run.output

            // Then every cell loaded its thumbnail through /thumb, at the asked size
            #expect(dom.attribute("data-loaded", inTagContaining: "id=\"summary\"") == "2", "\(dom)")
            for index in Self.images.indices {
                let cell = try #require(dom.cell(index), "cell \(index)")
                #expect(cell.attribute("data-state", inTagContaining: "<figure") == "loaded", "cell \(index)")
                #expect(cell.attribute("data-status", inTagContaining: "<figure") == "200")
                if let (width, height) = playground.size {
                    #expect(cell.attribute("data-natural-width", inTagContaining: "<figure") == "\(width)")
                    #expect(cell.attribute("data-natural-height", inTagContaining: "<figure") == "\(height)")
                }

                // And beside it a link per form that can say it; the others say why not
                var targets: [String] = []
                for form in ["thumb", "thumbor", "imgproxy"] {
                    let state = cell.attribute("data-state", inTagContaining: "data-form=\"\(form)\"")
                    if let note = playground.inexpressible[form] {
                        #expect(state == "inexpressible", "\(form)")
                        #expect(cell.contains(note), "\(form): \(cell)")
                        #expect(!cell.contains("id=\"cell-\(index)-\(form)\""))
                        continue
                    }
                    #expect(state == "ok", "\(form)")
                    let href = try #require(cell.attribute("href", inTagContaining: "id=\"cell-\(index)-\(form)\""))
                    targets.append(href.replacingOccurrences(of: "&amp;", with: "&"))
                }
                #expect(
                    targets.first
                        == cell.attribute("data-thumb", inTagContaining: "<figure")?
                        .replacingOccurrences(of: "&amp;", with: "&"))
                #expect(targets.count == 3 - playground.inexpressible.count)

                // When the test asks each URL itself
                var answers: [RawHTTPClient.Response] = []
                for target in targets { answers.append(try await harness.request(target)) }

                // Then each answers 200 with the same bytes, from the entry the page's /thumb request made
                for (target, answer) in zip(targets, answers) {
                    #expect(answer.status == 200, "\(target): \(answer.text.prefix(200))")
                    let sameBytes = answer.body == answers[0].body
                    #expect(sameBytes, "\(target): \(answer.body.count) bytes, /thumb's \(answers[0].body.count)")
                    #expect(answer.header("x-cache") == "HIT-MEMORY", "\(target)")
                }
            }
            // And each picture was fetched and rendered once, whichever form asked
            for (path, _, _) in Self.images { #expect(harness.origin.hits(path) == 1, "\(path)") }
            #expect(harness.service.renderCounters.rendersStarted == Self.images.count)
            // And the browser reported nothing (no CSP violation, no console message)
            #expect(run.pageProblems.isEmpty, "\(run.pageProblems)")

            if playground.operations == Self.playgrounds[0].operations {
                // When a screenshot is taken
                let path = try Chromium.artifactDirectory() + "/playground.png"
                let shot = try await blocking { try Chromium.screenshot(page, to: path, windowSize: (1100, 800)) }

                // Then it logs nothing either
                print("playground screenshot: \(path)")
                #expect(shot.pageProblems.isEmpty, "\(shot.pageProblems)")
            }
        }

        @Test func withSigningOnThePageSaysItCannotSignForEachFormConcerned() async throws {
            // Given /thumb, thumbor (no unsafe/) and imgproxy all requiring signatures
            let harness = try Self.harness([
                "security.signing_keys": "[\"k1-0123456789abcdef0123456789abcdef\"]",
                "thumbor.security_keys": "[\"my-security-key\"]", "thumbor.allow_unsafe": "false",
                "imgproxy.keys": "[\"736563726574\"]", "imgproxy.salts": "[\"68656c6c6f\"]",
            ])
            let source = harness.origin.url(Self.images[0].0)
            let page = "http://127.0.0.1:\(harness.port)/?urls=\(Harness.percentEncoded(source))&w=64&format=webp"

            // When Chromium opens the playground
            let run = try await blocking { try Chromium.dumpDOM(page) }
            let dom = run.output

            // Then the three notices show, and the legend says each form takes signed URLs only
            for notice in ["signing-notice", "thumbor-signing-notice", "imgproxy-signing-notice"] {
                #expect(dom.contains("<p id=\"\(notice)\" class=\"notice\">"), "\(notice)")
            }
            for form in ["thumb", "thumbor", "imgproxy"] {
                #expect(dom.attribute("data-signing", inTagContaining: "id=\"form-\(form)\"") == "true", "\(form)")
            }
            // And no unsigned URL is offered as a link: each is greyed text with the reason
            let cell = try #require(dom.cell(0))
            #expect(!cell.contains("<a "))
            for form in ["thumb", "thumbor", "imgproxy"] {
                #expect(cell.attribute("data-state", inTagContaining: "data-form=\"\(form)\"") == "unsigned", "\(form)")
                #expect(cell.contains("<span class=\"url\" id=\"cell-0-\(form)\">"), "\(form)")
            }
            #expect(cell.contains("refused here (security.signing_keys)"))
            #expect(cell.contains("refused here (thumbor.security_keys, no thumbor.allow_unsafe)"))
            #expect(cell.contains("refused here (imgproxy.keys)"))
            // And the thumbnail itself failed with /thumb's 403, as the notice says it would
            #expect(cell.attribute("data-status", inTagContaining: "<figure") == "403")
            #expect(run.pageProblems.isEmpty, "\(run.pageProblems)")
        }

        @Test func theSigningStatesFollowAReloadOfTheFormsKeys() async throws {
            // Given the forms unsigned
            let harness = try Self.harness()
            let before = try await harness.request("/")
            #expect(before.text.contains("<p id=\"thumbor-signing-notice\" class=\"notice\" hidden>"))
            #expect(before.text.contains("<p id=\"imgproxy-signing-notice\" class=\"notice\" hidden>"))

            // When the keys are replaced as a reload replaces them: thumbor keyed without unsafe/, imgproxy keyed
            var thumbor = ThumborForm.Keys()
            thumbor.securityKeys = [URLSignature.SharedKey(bytes: Array("my-security-key".utf8))]
            var imgproxy = ImgproxyForm.Keys()
            imgproxy.pairs = [.init(key: URLSignature.SharedKey(bytes: [1, 2, 3]), salt: [4, 5])]
            harness.service.formKeys(ThumborForm.self)?.update(thumbor)
            harness.service.formKeys(ImgproxyForm.self)?.update(imgproxy)
            let after = try await harness.request("/")

            // Then the next page says both need signatures
            #expect(after.text.contains("<p id=\"thumbor-signing-notice\" class=\"notice\">"))
            #expect(after.text.contains("<p id=\"imgproxy-signing-notice\" class=\"notice\">"))
            #expect(
                after.text.contains(
                    "id=\"form-thumbor\" data-enabled=\"true\" data-prefix=\"/thumbor/\" data-signing=\"true\""))
        }
    }
}

extension String {
    /// The dumped DOM of gallery cell `index`: from its `<figure` to its `</figure>`.
    fileprivate func cell(_ index: Int) -> String? {
        guard let id = range(of: "id=\"cell-\(index)\""),
            let start = self[..<id.lowerBound].range(of: "<figure", options: .backwards),
            let end = self[id.upperBound...].range(of: "</figure>")
        else { return nil }
        return String(self[start.lowerBound..<end.upperBound])
    }
}
