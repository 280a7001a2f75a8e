// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// `GET /` (the gallery) and `GET /status` in headless Chromium against a whole service and a loopback
    /// origin: the pages render, every gallery thumbnail loads through `/thumb`, the status numbers are those of
    /// `/status.json`, and the browser logs no console message, exception or CSP violation. Screenshots are kept
    /// in `.build/test-artifacts/` (or `$THUMBD_TEST_ARTIFACTS`).
    @Suite(.timeLimit(.minutes(3))) struct PagesTests {
        /// Fixture files the origin serves, one per format the gallery should show.
        static let images = [
            ("/photos/progressive.jpg", "progressive.jpg", "image/jpeg"),
            ("/photos/quadrants.png", "quadrants.png", "image/png"),
            ("/photos/quadrants.webp", "quadrants.webp", "image/webp"),
            ("/photos/rgba.png", "rgba.png", "image/png"),
            ("/photos/orientation-6.jpg", "orientation-6.jpg", "image/jpeg"),
            ("/photos/animated.gif", "animated.gif", "image/gif"),
        ]

        /// A harness whose origin serves ``images``.
        static func harness(_ overrides: [String: String] = [:]) throws -> Harness {
            let harness = try Harness(overrides)
            for (path, file, type) in images {
                harness.origin.route(path, .ok(Fixtures.bytes(file), contentType: type))
            }
            return harness
        }

        /// `http://127.0.0.1:<port><target>`.
        static func pageURL(_ harness: Harness, _ target: String) -> String {
            "http://127.0.0.1:\(harness.port)\(target)"
        }

        @Test func theGalleryLoadsEveryThumbnailThroughThumbAndShowsRefusalsPerCell() async throws {
            // Given a service, an origin with six images, and a jsonplaceholder-shaped list of them plus one
            // source the SSRF guard refuses (127.0.0.1 is not in fetch.allowed_networks)
            let harness = try Self.harness()
            var photos: [[String: Any]] = Self.images.enumerated().map { index, image in
                [
                    "albumId": 1, "id": index + 1, "title": "photo \(index + 1)", "url": harness.origin.url(image.0),
                    "thumbnailUrl": "http://unused.invalid/\(index)",
                ]
            }
            photos.append(["albumId": 1, "id": 99, "title": "refused", "url": "http://127.0.0.1:9/private.jpg"])
            let list = String(
                decoding: try JSONSerialization.data(withJSONObject: photos, options: [.withoutEscapingSlashes]),
                as: UTF8.self)
            let url = Self.pageURL(harness, "/?w=96&urls=" + Harness.percentEncoded(list))

            // When Chromium opens the gallery with the list in the URL
            let run = try await blocking { try Chromium.dumpDOM(url) }
            let dom = run.output

            // Then the page rendered one cell per item, and the summary says six loaded and one failed
            #expect(dom.contains("<h1>thumbd gallery</h1>"))
            #expect(dom.occurrences(of: "<figure class=\"cell\"") == 7)
            #expect(dom.attribute("data-total", inTagContaining: "id=\"summary\"") == "7")
            #expect(dom.attribute("data-loaded", inTagContaining: "id=\"summary\"") == "6", "\(dom)")
            #expect(dom.attribute("data-failed", inTagContaining: "id=\"summary\"") == "1")
            #expect(dom.attribute("data-pending", inTagContaining: "id=\"summary\"") == "0")
            // And every image cell is loaded, with a decoded image of the asked size
            for index in 0..<Self.images.count {
                let marker = "id=\"cell-\(index)\""
                #expect(dom.attribute("data-state", inTagContaining: marker) == "loaded", "cell \(index)")
                #expect(dom.attribute("data-status", inTagContaining: marker) == "200")
                #expect(dom.attribute("data-cache", inTagContaining: marker) == "MISS")
                let width = Int(dom.attribute("data-natural-width", inTagContaining: marker) ?? "") ?? 0
                let height = Int(dom.attribute("data-natural-height", inTagContaining: marker) ?? "") ?? 0
                #expect(width > 0 && width <= 96 && height > 0 && height <= 96, "cell \(index): \(width)×\(height)")
            }
            // And beside each thumbnail, its /thumb URL is a link, and the forms this server leaves off are greyed
            #expect(dom.attribute("data-state", inTagContaining: "data-form=\"thumb\"") == "ok")
            #expect(dom.attribute("href", inTagContaining: "id=\"cell-0-thumb\"")?.hasPrefix("/thumb?url=") == true)
            #expect(dom.attribute("data-state", inTagContaining: "data-form=\"thumbor\"") == "off")
            #expect(dom.attribute("data-state", inTagContaining: "data-form=\"imgproxy\"") == "off")
            #expect(dom.contains("thumbor form off: thumbor.enabled"))
            #expect(dom.contains("imgproxy form off: imgproxy.enabled"))
            // And the refused source failed in its own cell with thumbd's 403
            #expect(dom.attribute("data-state", inTagContaining: "id=\"cell-6\"") == "failed")
            #expect(dom.attribute("data-status", inTagContaining: "id=\"cell-6\"") == "403")
            #expect(dom.contains("403 source not allowed"))
            // And each image went through /thumb to the origin exactly once
            for (path, _, _) in Self.images { #expect(harness.origin.hits(path) == 1, "\(path)") }
            #expect(harness.service.renderCounters.flightsStarted == Self.images.count + 1)  // + the refused one
            // And the browser reported nothing
            #expect(run.pageProblems.isEmpty, "\(run.pageProblems)")

            // When the gallery is loaded again for a screenshot
            let path = try Chromium.artifactDirectory() + "/gallery.png"
            let shot = try await blocking { try Chromium.screenshot(url, to: path, windowSize: (1000, 700)) }

            // Then it is served from the memory tier (no new origin fetch) and still logs nothing
            print("gallery screenshot: \(path)")
            for (path, _, _) in Self.images { #expect(harness.origin.hits(path) == 1, "\(path)") }
            #expect(shot.pageProblems.isEmpty, "\(shot.pageProblems)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4) == Data([0x89, 0x50, 0x4E, 0x47]))
        }

        @Test func theGalleryLoadsOnlyTheCellsNearTheViewport() async throws {
            // Given 60 images, as a plain list of URLs, far more than a 800×600 window shows at 128 px
            let harness = try Harness()
            let paths = (0..<60).map { "/many/\($0).png" }
            for path in paths { harness.origin.route(path, .ok(Fixtures.bytes("grid.png"), contentType: "image/png")) }
            let list = paths.map { harness.origin.url($0) }.joined(separator: "\n")
            let url = Self.pageURL(harness, "/?w=128&urls=" + Harness.percentEncoded(list))

            // When Chromium opens the gallery in a small window and nobody scrolls
            let run = try await blocking { try Chromium.dumpDOM(url, windowSize: (800, 600)) }
            let dom = run.output

            // Then the cells near the viewport loaded, the rest are still waiting, and the origin saw only those
            let loaded = Int(dom.attribute("data-loaded", inTagContaining: "id=\"summary\"") ?? "") ?? -1
            let pending = Int(dom.attribute("data-pending", inTagContaining: "id=\"summary\"") ?? "") ?? -1
            #expect(dom.attribute("data-total", inTagContaining: "id=\"summary\"") == "60")
            #expect(loaded > 0 && pending > 0 && loaded + pending == 60, "loaded \(loaded), pending \(pending)")
            let fetched = paths.reduce(0) { $0 + harness.origin.hits($1) }
            #expect(fetched >= loaded && fetched < 60, "fetched \(fetched), loaded \(loaded)")
            #expect(dom.attribute("data-state", inTagContaining: "id=\"cell-0\"") == "loaded")
            #expect(dom.attribute("data-state", inTagContaining: "id=\"cell-59\"") == "pending")
            #expect(run.pageProblems.isEmpty, "\(run.pageProblems)")
        }

        @Test func theGalleryExplainsThatItCannotSignWhenSigningIsOn() async throws {
            // Given a service that requires signed URLs
            let harness = try Self.harness(["security.signing_keys": "[\"k1-0123456789abcdef0123456789abcdef\"]"])

            // When the gallery page is asked
            let response = try await harness.request("/")

            // Then it shows the signing notice (not hidden) and says so on the body
            #expect(response.status == 200)
            #expect(response.text.contains("<body data-signing=\"true\">"))
            #expect(response.text.contains("<p id=\"signing-notice\" class=\"notice\">"))
        }

        @Test func theStatusPageShowsTheNumbersOfStatusJSON() async throws {
            // Given a service (no admin token: open status, hosts only) that has served three thumbnails, one
            // of them twice, and answered a 404 and a 400 carrying a signature in its query
            let harness = try Self.harness()
            for (path, _, _) in Self.images.prefix(3) {
                #expect(try await harness.request(harness.thumbTarget(path, "w=64")).status == 200)
            }
            #expect(try await harness.request(harness.thumbTarget(Self.images[0].0, "w=64")).status == 200)
            #expect(try await harness.request("/nowhere").status == 404)
            #expect(try await harness.request("/thumb?url=x&sig=SECRETSIG").status == 400)

            // When Chromium opens /status for 12 s of page time (one auto-refresh, at 10 s), and /status.json is
            // read after it
            let run = try await blocking {
                try Chromium.dumpDOM(Self.pageURL(harness, "/status"), virtualTimeBudget: .seconds(12))
            }
            let dom = run.output
            let json = try await harness.request("/status.json")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.body)) as? [String: Any])

            // Then every section rendered
            for section in ["hit-ratio", "tiers", "requests", "in-flight", "top-sources", "errors"] {
                #expect(dom.contains("<section id=\"\(section)\">"), "\(section)")
            }
            #expect(dom.contains("<svg id=\"chart\""))
            #expect(dom.occurrences(of: "<rect class=\"bar\"") == ActivityRecorder.bucketCount)
            // And the tier and hit numbers are those of /status.json (nothing changed them in between)
            let tiers = try #require(report["tiers"] as? [[String: Any]])
            for tier in tiers where tier["enabled"] as? Bool == true {
                let name = try #require(tier["name"] as? String)
                let row = try #require(dom.range(of: "<tr id=\"tier-\(name)\">")).upperBound
                let rowText = String(dom[row...].prefix(400))
                #expect(rowText.attribute("data-value", inTagContaining: "class=\"entries\"") == "\(tier["entries"]!)")
                #expect(rowText.attribute("data-value", inTagContaining: "class=\"bytes\"") == "\(tier["bytes"]!)")
            }
            let memory = try #require(tiers.first { $0["name"] as? String == "memory" })
            #expect(memory["entries"] as? Int == 3)
            let hits = try #require(report["hit_ratio"] as? [String: Any])
            #expect(hits["memory_hits"] as? Int == 1)
            for (name, key) in [("memory", "memory_hits"), ("disk", "disk_hits"), ("miss", "misses")] {
                let row = try #require(dom.range(of: "<tr id=\"hit-\(name)\">")).upperBound
                #expect(
                    String(dom[row...].prefix(300)).attribute("data-value", inTagContaining: "<td") == "\(hits[key]!)")
            }
            // And the errors list the 404 and the 400 without the signature, newest first
            let errors = try #require(report["recent_errors"] as? [[String: Any]])
            #expect(errors.map { $0["status"] as? Int } == [400, 404])
            #expect(errors.map { $0["route"] as? String } == ["/thumb", "/nowhere"])
            #expect(!json.text.contains("SECRETSIG") && !dom.contains("SECRETSIG"))
            #expect(dom.contains("GET /nowhere"))
            // And the top sources name the origin's host only
            let top = try #require(report["top_sources"] as? [String: Any])
            #expect(top["kind"] as? String == "host")
            let items = try #require(top["items"] as? [[String: Any]])
            #expect(items.first?["name"] as? String == originHost)
            #expect(!dom.contains("/photos/"))
            // And the page refreshed itself once: its count includes the first page load (6 requests before it),
            // and /status.json's both loads
            let requests = try #require(report["requests"] as? [String: Any])
            #expect(dom.attribute("data-value", inTagContaining: "id=\"requests-total\"") == "7")
            #expect(dom.attribute("data-refreshes", inTagContaining: "<body") == "1")
            #expect(requests["total"] as? Int == 8)
            // And the browser reported nothing
            #expect(run.pageProblems.isEmpty, "\(run.pageProblems)")

            // When a screenshot is taken
            let path = try Chromium.artifactDirectory() + "/status.png"
            let shot = try await blocking {
                try Chromium.screenshot(
                    Self.pageURL(harness, "/status"), to: path, windowSize: (1000, 1300),
                    virtualTimeBudget: .seconds(2))
            }
            print("status screenshot: \(path)")
            #expect(shot.pageProblems.isEmpty, "\(shot.pageProblems)")
        }

        @Test func theStatusNamesTheCPUsWhereTheyCameFromAndTheThreadsInUse() async throws {
            // Given a service with 2 event loops and the default render threads (one per CPU plus a quarter)
            let harness = try Self.harness(["image.render_threads": "0"])

            // When /status.json and /status are asked
            let json = try await harness.request("/status.json")
            let page = try await harness.request("/status")

            // Then both show this process's CPUs, where the number came from, and the threads that run
            let report = try #require(try JSONSerialization.jsonObject(with: Data(json.body)) as? [String: Any])
            let cpus = try #require(report["cpus"] as? [String: Any])
            let current = CPUAllowance.current
            #expect(cpus["count"] as? Int == current.count)
            #expect(cpus["affinity"] as? Int == current.affinity)
            #expect(cpus["origin"] as? String == current.origin)
            #expect(cpus["http_threads"] as? Int == 2)
            #expect(cpus["render_threads"] as? Int == current.count + (current.count + 3) / 4)
            #expect(harness.service.renderPool.configuration.threads == cpus["render_threads"] as? Int)
            #expect(page.text.contains("CPUs: <b data-value=\"\(current.count)\">\(current.count)</b> ("))
        }

        @Test func withAnAdminTokenTheStatusNeedsItAndShowsRedactedURLs() async throws {
            // Given a service with an admin token that served a source whose query carries a key
            let token = "pages-admin-token-0123"
            let harness = try Self.harness(["admin.token": token])
            harness.origin.route("/photos/signed.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let source = harness.origin.url("/photos/signed.png?id=7&X-Amz-Signature=AMZSECRET")
            #expect(try await harness.request(Harness.thumbTarget(url: source, "w=32")).status == 200)

            // When /status.json is asked without, with a wrong, a Bearer and a Basic token
            let anonymous = try await harness.request("/status.json")
            let wrong = try await harness.request("/status.json", headers: [("Authorization", "Bearer nope")])
            let bearer = try await harness.request("/status.json", headers: [("Authorization", "Bearer \(token)")])
            let basic = try await harness.request(
                "/status", headers: [("Authorization", "Basic " + Data("ops:\(token)".utf8).base64EncodedString())])

            // Then without it the answer is a 401 Basic challenge, with it the report
            #expect(anonymous.status == 401)
            #expect(anonymous.header("www-authenticate")?.hasPrefix("Basic realm=") == true)
            #expect(wrong.status == 401)
            #expect(bearer.status == 200)
            #expect(basic.status == 200)
            #expect(basic.header("content-type") == "text/html; charset=utf-8")
            // And the source URL is shown with its secret parameter redacted
            #expect(bearer.text.contains("\"kind\" : \"url\""))
            #expect(bearer.text.contains("X-Amz-Signature=REDACTED"))
            #expect(!bearer.text.contains("AMZSECRET") && !basic.text.contains("AMZSECRET"))
            #expect(basic.text.contains("/photos/signed.png?id=7&amp;X-Amz-Signature=REDACTED"))

            // When a browser opens the page with the token as its Basic password, for one auto-refresh
            let page = "http://ops:\(token)@127.0.0.1:\(harness.port)/status"
            let run = try await blocking { try Chromium.dumpDOM(page, virtualTimeBudget: .seconds(12)) }

            // Then it shows the redacted URL, refreshed with the same credentials, and the browser reported nothing
            #expect(run.output.contains("<h2>Top source URLs</h2>"))
            #expect(run.output.contains("X-Amz-Signature=REDACTED") && !run.output.contains("AMZSECRET"))
            #expect(run.output.attribute("data-refreshes", inTagContaining: "<body") == "1", "\(run.output)")
            #expect(run.pageProblems.isEmpty, "\(run.pageProblems)")
        }

        @Test func thePagesCarryAStrictContentSecurityPolicy() async throws {
            // Given a service
            let harness = try Harness.shared()

            // When the pages are asked
            for target in ["/", "/status"] {
                let response = try await harness.request(target)

                // Then they are HTML that is never cached or sniffed, and scripts and styles run only with the
                // response's nonce, which the page's own script and style carry
                #expect(response.status == 200)
                #expect(response.header("content-type") == "text/html; charset=utf-8")
                #expect(response.header("x-content-type-options") == "nosniff")
                #expect(response.header("cache-control") == "no-store")
                let policy = try #require(response.header("content-security-policy"))
                #expect(policy.hasPrefix("default-src 'none'; script-src 'nonce-"))
                let nonce = try #require(
                    policy.split(separator: "'nonce-").dropFirst().first?.split(separator: "'").first)
                #expect(response.text.contains("<script nonce=\"\(nonce)\">"))
                #expect(response.text.contains("<style nonce=\"\(nonce)\">"))
                // And nothing is loaded from elsewhere
                for external in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "@import", "url("] {
                    #expect(!response.text.contains(external), "\(target): \(external)")
                }
            }
        }
    }
}
