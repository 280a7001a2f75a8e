// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// `POST /info`: a JSON array of sources answered as one array in the same order, each element what
    /// `GET /info` answers for that entry (its object or its error), never a failed batch for a bad entry.
    @Suite(.timeLimit(.minutes(3))) struct InfoBatchTests {
        /// Sends `body` to `POST /info[?query]`.
        static func batch(_ harness: Harness, _ body: String, query: String = "") async throws
            -> RawHTTPClient.Response
        {
            try await harness.request(
                "/info" + (query.isEmpty ? "" : "?" + query), method: "POST",
                headers: [("Content-Type", "application/json")], body: body)
        }

        /// The answer's elements, each re-serialised with sorted keys (so two equal objects compare equal).
        static func elements(_ response: RawHTTPClient.Response) throws -> [String] {
            let array = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [Any])
            return try array.map { try canonical($0) }
        }

        static func canonical(_ object: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }

        /// What the batch's element for a failed entry must be: `GET /info`'s status and message for it.
        static func errorElement(url: String?, of single: RawHTTPClient.Response) throws -> String {
            let error = try #require(single.jsonError)
            return try canonical(
                ["url": url.map { $0 as Any } ?? NSNull(), "error": ["status": error.status, "message": error.error]])
        }

        /// A JSON string literal.
        static func quoted(_ text: String) throws -> String {
            String(
                decoding: try JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed]), as: UTF8.self)
        }

        @Test func answersEveryEntryInOrderWithGetsObjectsAndErrors() async throws {
            // Given a cached source, a fresh one, one the origin does not have, a page that is no image
            let harness = try Harness()
            harness.origin.route("/cached.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            harness.origin.route("/fresh.png", .ok(Fixtures.bytes("display-p3.png"), contentType: "image/png"))
            harness.origin.route("/gone.jpg", .status(404))
            harness.origin.route("/page.html", .ok(Fixtures.bytes("page.html"), contentType: "text/html"))
            #expect(try await harness.request(harness.thumbTarget("/cached.jpg", "w=40")).status == 200)
            let cached = harness.origin.url("/cached.jpg")
            let fresh = harness.origin.url("/fresh.png")
            let gone = harness.origin.url("/gone.jpg")
            let page = harness.origin.url("/page.html")

            // When one batch asks them, a malformed URL, the fresh one again (twice as a string, once as an
            // object), an entry with a parameter /info does not take, and an entry that is no entry
            let body = """
                [\(try Self.quoted(cached)), \(try Self.quoted(fresh)), \(try Self.quoted(gone)), "a.jpg",
                 \(try Self.quoted(fresh)), {"url": \(try Self.quoted(fresh))}, {"url": \(try Self.quoted(fresh)), "w": 5},
                 42, \(try Self.quoted(page))]
                """
            let response = try await Self.batch(harness, body)

            // Then one 200 array, in order, each element what GET /info answers for the same entry
            #expect(response.status == 200)
            #expect(response.header("content-type") == "application/json")
            #expect(response.header("cache-control") == "no-store")
            let elements = try Self.elements(response)
            try #require(elements.count == 9)
            let single = { (query: String) in try await harness.request("/info?" + query) }
            let getCached = try await single("url=" + Harness.percentEncoded(cached))
            // (from the source cache, or the source's kept analysis record: never the origin)
            #expect(getCached.header("x-source") != "fetched")
            #expect(elements[0] == (try Self.canonical(try JSONSerialization.jsonObject(with: Data(getCached.body)))))
            let getFresh = try await single("url=" + Harness.percentEncoded(fresh))
            #expect(elements[1] == (try Self.canonical(try JSONSerialization.jsonObject(with: Data(getFresh.body)))))
            #expect(elements[1].contains("\"format\":\"png\"") && elements[1].contains("\"icc_profile\":true"))
            let getGone = try await single("url=" + Harness.percentEncoded(gone))
            #expect(getGone.status == 404)
            #expect(elements[2] == (try Self.errorElement(url: gone, of: getGone)))
            let getMalformed = try await single("url=a.jpg")
            #expect(getMalformed.status == 400)
            #expect(elements[3] == (try Self.errorElement(url: "a.jpg", of: getMalformed)))
            // The same source asked three ways: three equal objects
            #expect(elements[4] == elements[1] && elements[5] == elements[1])
            let getWithW = try await single("url=" + Harness.percentEncoded(fresh) + "&w=5")
            #expect(getWithW.status == 400)
            #expect(elements[6] == (try Self.errorElement(url: fresh, of: getWithW)))
            #expect(elements[7].contains("\"status\":400") && elements[7].contains("\"url\":null"))
            let getPage = try await single("url=" + Harness.percentEncoded(page))
            #expect(getPage.status == 422)
            #expect(elements[8] == (try Self.errorElement(url: page, of: getPage)))
            // And the origin was asked once per source: the cached one not at all by the batch, the fresh one once
            // for its four entries (and then kept: GET /info found it cached)
            #expect(harness.origin.hits("/cached.jpg") == 1)
            #expect(harness.origin.hits("/fresh.png") == 1)
            #expect(getFresh.header("x-source") != "fetched")
        }

        @Test func analysisEntriesAreAnsweredAsGetAnswersThem() async throws {
            // Given a source rendered once (its analysis record made and kept)
            let harness = try Harness()
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            #expect(try await harness.request(harness.thumbTarget("/a.jpg", "w=40")).status == 200)
            let a = harness.origin.url("/a.jpg")
            let encoded = Harness.percentEncoded(a)
            let queries = ["analysis=1&url=\(encoded)", "blurhash=5%2C4&url=\(encoded)", "palette=1&url=\(encoded)"]
            var singles: [RawHTTPClient.Response] = []
            for query in queries { singles.append(try await harness.request("/info?" + query)) }
            #expect(singles[0].status == 200 && singles[1].status == 200 && singles[2].status == 400)

            // When a batch asks the same with JSON values
            let url = try Self.quoted(a)
            let response = try await Self.batch(
                harness,
                "[{\"url\": \(url), \"analysis\": true}, {\"url\": \(url), \"blurhash\": \"5,4\"}, {\"url\": \(url), \"palette\": 1}]"
            )

            // Then each element is GET /info's answer, the refused one its error
            let elements = try Self.elements(response)
            try #require(elements.count == 3)
            #expect(elements[0] == (try Self.canonical(try JSONSerialization.jsonObject(with: Data(singles[0].body)))))
            #expect(elements[0].contains("\"analysis\":{"))
            #expect(elements[1] == (try Self.canonical(try JSONSerialization.jsonObject(with: Data(singles[1].body)))))
            #expect(elements[2] == (try Self.errorElement(url: a, of: singles[2])))
            #expect(harness.origin.hits("/a.jpg") == 1)
        }

        @Test func duplicatesOfAnUncachedSourceCostOneFetch() async throws {
            // Given a source nobody asked yet, slow enough that every entry waits for the same transfer
            let harness = try Harness()
            harness.origin.route("/slow.jpg", .delay(.milliseconds(300), then: .ok(Fixtures.bytes("progressive.jpg"))))
            harness.origin.route("/other.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            let slow = try Self.quoted(harness.origin.url("/slow.jpg"))
            let other = try Self.quoted(harness.origin.url("/other.jpg"))

            // When a batch names it five times, interleaved with another source, two ways
            let response = try await Self.batch(
                harness,
                "[\(slow), \(other), {\"url\": \(slow)}, \(slow), \(other), {\"url\": \(slow), \"faces\": false}]")

            // Then every entry has its object and the origin served each source once
            #expect(response.status == 200)
            let elements = try Self.elements(response)
            try #require(elements.count == 6)
            #expect(elements[0].contains("\"width\":320") && elements[0].contains("\"height\":240"))
            #expect(elements[2] == elements[0] && elements[3] == elements[0] && elements[5] == elements[0])
            #expect(elements[1].contains("\"width\":64") && elements[4] == elements[1])
            #expect(harness.origin.hits("/slow.jpg") == 1)
            #expect(harness.origin.hits("/other.jpg") == 1)
        }

        @Test func facesArePerEntryAndOneSourceIsOneFetchWhateverItsEntriesAsk() async throws {
            // Given a photograph with one face and one without
            let harness = try Harness()
            harness.origin.route("/astronaut.png", .ok(try Photographs.bytes("astronaut.png")))
            harness.origin.route("/coffee.png", .ok(try Photographs.bytes("coffee.png")))
            let astronaut = harness.origin.url("/astronaut.png")
            let coffee = harness.origin.url("/coffee.png")

            // When one batch asks the first with faces, without, with faces=2, and the second with faces
            let body = """
                [{"url": \(try Self.quoted(astronaut)), "faces": true}, \(try Self.quoted(astronaut)),
                 {"url": \(try Self.quoted(astronaut)), "faces": 2}, {"faces": 1, "url": \(try Self.quoted(coffee))}]
                """
            let response = try await Self.batch(harness, body)

            // Then each element is GET /info's for the same parameters
            #expect(response.status == 200)
            let elements = try Self.elements(response)
            try #require(elements.count == 4)
            let encoded = Harness.percentEncoded(astronaut)
            for (index, query) in [
                (0, "faces=1&url=\(encoded)"), (1, "url=\(encoded)"),
                (3, "faces=1&url=\(Harness.percentEncoded(coffee))"),
            ] {
                let single = try await harness.request("/info?" + query)
                #expect(single.status == 200)
                #expect(
                    elements[index] == (try Self.canonical(try JSONSerialization.jsonObject(with: Data(single.body)))))
            }
            let array = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [[String: Any]])
            let faces = try #require(array[0]["faces"] as? [String: Any])
            #expect(faces["count"] as? Int == 1)
            let box = try #require((faces["boxes"] as? [[String: Int]])?.first)
            #expect(
                box["x"]! >= 150 && box["x"]! + box["width"]! <= 300 && box["y"]! >= 40
                    && box["y"]! + box["height"]! <= 190)
            #expect(array[1]["faces"] == nil)
            let badFaces = try await harness.request("/info?faces=2&url=\(encoded)")
            #expect(elements[2] == (try Self.errorElement(url: astronaut, of: badFaces)))
            #expect((array[3]["faces"] as? [String: Any])?["count"] as? Int == 0)
            // And the photograph was fetched once for its three entries
            #expect(harness.origin.hits("/astronaut.png") == 1)
            #expect(harness.origin.hits("/coffee.png") == 1)
        }

        @Test func aMalformedOrTooLargeBatchIsRefusedWhole() async throws {
            // Given batches of at most 3 entries and 300 bytes
            let harness = try Harness(["info.batch_max": "3", "info.batch_max_bytes": "300"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            let a = try Self.quoted(harness.origin.url("/a.jpg"))
            #expect(try await Self.batch(harness, "[\(a), \(a), \(a)]").status == 200)
            // Then too many entries, none, a body that is no array, a body too large: one JSON error each
            expectJSONError(try await Self.batch(harness, "[\(a), \(a), \(a), \(a)]"), status: 400, mentioning: "1...3")
            expectJSONError(try await Self.batch(harness, "[]"), status: 400, mentioning: "1...3")
            expectJSONError(try await Self.batch(harness, "{\"url\": \(a)}"), status: 400, mentioning: "JSON array")
            expectJSONError(try await Self.batch(harness, "[\(a), "), status: 400, mentioning: "JSON array")
            expectJSONError(try await Self.batch(harness, ""), status: 400, mentioning: "JSON array")
            let padded = "[\(a)" + String(repeating: " ", count: 300) + "]"
            expectJSONError(try await Self.batch(harness, padded), status: 413, mentioning: "info.batch_max_bytes")
            // And a query parameter other than the batch's sig
            expectJSONError(try await Self.batch(harness, "[\(a)]", query: "url=x"), status: 400, mentioning: "url")
            #expect(harness.origin.hits("/a.jpg") == 1)
        }

        @Test func aReloadChangesTheBoundsForTheNextBatch() async throws {
            // Given batches of at most 2 entries
            let harness = try Harness(["info.batch_max": "2"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            let a = try Self.quoted(harness.origin.url("/a.jpg"))
            expectJSONError(try await Self.batch(harness, "[\(a), \(a), \(a)]"), status: 400, mentioning: "1...2")

            // When a reload raises it to 3 and lowers the body bound to 200 bytes
            var settings = harness.service.settings
            settings.info.batchMax = 3
            settings.info.batchMaxBytes = 200
            let outcome = try harness.service.apply(settings)

            // Then the next batch of 3 is answered, and a longer body is a 413
            #expect(outcome.changedKeys.sorted() == ["info.batch_max", "info.batch_max_bytes"])
            #expect(try await Self.batch(harness, "[\(a), \(a), \(a)]").status == 200)
            expectJSONError(
                try await Self.batch(harness, "[\(a)" + String(repeating: " ", count: 200) + "]"), status: 413)
        }

        @Test func perEntrySignaturesAreCheckedEntryByEntry() async throws {
            // Given signing on
            let key = "info-batch-signing-key-0123456789abcdef"
            let harness = try Harness(["security.signing_keys": "[\(key)]"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            harness.origin.route("/b.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let a = harness.origin.url("/a.jpg")
            let b = harness.origin.url("/b.jpg")
            let signature = { (url: String) throws -> String in
                URLSignature.signature(
                    canonicalQuery: try URLSignature.canonicalQuery(rawQuery: "url=" + Harness.percentEncoded(url)),
                    key: key)
            }
            // When entries carry their own GET /info signature, one a signature of another URL, one none
            let body = """
                [{"url": \(try Self.quoted(a)), "sig": "\(try signature(a))"},
                 {"url": \(try Self.quoted(b)), "sig": "\(try signature(a))"},
                 \(try Self.quoted(b)),
                 {"url": \(try Self.quoted(b)), "sig": "\(try signature(b))"}]
                """
            let response = try await Self.batch(harness, body)

            // Then the signed ones are answered, the others are 403 each, the batch 200
            #expect(response.status == 200)
            let elements = try Self.elements(response)
            try #require(elements.count == 4)
            #expect(elements[0].contains("\"width\":64"))
            #expect(elements[1].contains("\"status\":403") && elements[1].contains("invalid signature"))
            #expect(elements[2].contains("\"status\":403") && elements[2].contains("missing signature"))
            #expect(elements[3].contains("\"width\":320"))
        }

        @Test func aWholeBatchSignatureCoversTheExactBody() async throws {
            // Given signing on and a body signed as a whole
            let key = "info-batch-signing-key-0123456789abcdef"
            let harness = try Harness(["security.signing_keys": "[\(key)]"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            harness.origin.route("/b.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let a = harness.origin.url("/a.jpg")
            let body = "[\(try Self.quoted(a)), {\"url\": \(try Self.quoted(harness.origin.url("/b.jpg")))}]"
            let sig = URLSignature.batchSignature(body: Array(body.utf8), key: key)

            // Then it is answered without the entries' own signatures
            let signed = try await Self.batch(harness, body, query: "sig=" + sig)
            #expect(signed.status == 200)
            let elements = try Self.elements(signed)
            #expect(
                elements.count == 2 && elements[0].contains("\"width\":64") && elements[1].contains("\"width\":320"))
            // A tampered body (one more space), a wrong or repeated sig: 403 for the whole request
            expectJSONError(
                try await Self.batch(harness, body + " ", query: "sig=" + sig), status: 403, mentioning: "signature")
            expectJSONError(
                try await Self.batch(harness, body, query: "sig=" + URLSignature.batchSignature(body: [], key: key)),
                status: 403, mentioning: "signature")
            expectJSONError(
                try await Self.batch(harness, body, query: "sig=\(sig)&sig=\(sig)"), status: 403,
                mentioning: "signature")
            // Neither kind of signature stands for the other: a URL's sig does not sign a batch of that URL,
            // and a batch's sig does not sign GET /info of its entry
            let urlQuery = "url=" + Harness.percentEncoded(a)
            let urlSig = URLSignature.signature(
                canonicalQuery: try URLSignature.canonicalQuery(rawQuery: urlQuery), key: key)
            let one = "[\(try Self.quoted(a))]"
            expectJSONError(try await Self.batch(harness, one, query: "sig=" + urlSig), status: 403)
            let oneSig = URLSignature.batchSignature(body: Array(one.utf8), key: key)
            expectJSONError(try await harness.request("/info?\(urlQuery)&sig=\(oneSig)"), status: 403)
            #expect(try await harness.request("/info?\(urlQuery)&sig=\(urlSig)").status == 200)
            #expect(try await Self.batch(harness, one, query: "sig=" + oneSig).status == 200)
        }

        @Test func aBatchLargerThanTheRenderQueueDoesNotRefuseItself() async throws {
            // Given one render thread and a render queue of one
            let harness = try Harness(["image.render_threads": "1", "image.queue_limit": "1"])
            var entries: [String] = []
            for index in 0..<12 {
                harness.origin.route("/\(index).jpg", .ok(Fixtures.bytes("copyright.jpg")))
                entries.append(try Self.quoted(harness.origin.url("/\(index).jpg")))
            }
            // When a batch of twelve sources arrives (twelve header reads at once, were they all queued)
            let response = try await Self.batch(harness, "[" + entries.joined(separator: ",") + "]")

            // Then every entry is answered: the batch queues one read at a time, behind the others
            #expect(response.status == 200)
            let elements = try Self.elements(response)
            #expect(elements.count == 12)
            #expect(elements.allSatisfy { $0.contains("\"width\":64") && !$0.contains("\"error\"") })
            #expect(harness.service.renderPool.queueDepth.interactive == 0)
        }

        @Test func aFullRenderQueueIsEachEntrysOwn503() async throws {
            // Given one render thread that is busy and a queue of one that is full
            let harness = try Harness(["image.render_threads": "1", "image.queue_limit": "1"])
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            harness.origin.route("/b.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            let release = DispatchSemaphore(value: 0)
            defer {
                release.signal()
                release.signal()
            }
            let pool = harness.service.renderPool
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            #expect(await eventually { pool.runningCount == 1 })
            try pool.submit { _ = release.wait(timeout: .now() + 30) }
            let body =
                "[\(try Self.quoted(harness.origin.url("/a.jpg"))), \(try Self.quoted(harness.origin.url("/b.jpg"))), \"x\"]"

            // When a batch arrives
            let refused = try await Self.batch(harness, body)

            // Then the batch is answered, the entries that needed a render thread with the 503 GET /info gets
            #expect(refused.status == 200)
            let elements = try Self.elements(refused)
            try #require(elements.count == 3)
            let busy = try Self.canonical([
                "url": harness.origin.url("/a.jpg"), "error": ["status": 503, "message": "too busy, retry shortly"],
            ])
            #expect(elements[0] == busy)
            #expect(elements[1].contains("\"status\":503"))
            #expect(elements[2].contains("\"status\":400"))

            // And once the pool is free the same batch is answered whole
            release.signal()
            release.signal()
            #expect(await eventually { pool.runningCount == 0 && pool.queueDepth.interactive == 0 })
            let answered = try Self.elements(try await Self.batch(harness, body))
            #expect(answered[0].contains("\"width\":64") && answered[1].contains("\"width\":320"))
        }

        @Test func theClientLeavingCancelsTheBatchsFetches() async throws {
            // Given a batch waiting for a source the origin never sends
            let harness = try Harness(["fetch.timeout": "60s"])
            harness.origin.route("/hang.jpg", .hang)
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("copyright.jpg")))
            let body =
                "[\(try Self.quoted(harness.origin.url("/a.jpg"))), \(try Self.quoted(harness.origin.url("/hang.jpg")))]"
            let client = try harness.client()
            try client.send(
                Harness.requestText(
                    "/info", method: "POST", headers: [("Content-Type", "application/json")], body: body))
            #expect(await eventually { harness.origin.hits("/hang.jpg") == 1 })

            // When the client hangs up
            client.close()

            // Then the transfer no one else waits for is stopped: the origin sees the close
            #expect(await eventually(timeout: .seconds(10)) { harness.origin.clientCloses("/hang.jpg") == 1 })
        }

        @Test func aWarmBatchOfAHundredIsAnsweredWhole() async throws {
            // Given 100 sources, fetched and kept by a first batch
            let harness = try Harness()
            let names = ["copyright.jpg", "progressive.jpg", "display-p3.png", "orientation-6.jpg"]
            var urls: [String] = []
            for index in 0..<100 {
                let name = names[index % names.count]
                harness.origin.route("/\(index)-\(name)", .ok(Fixtures.bytes(name)))
                urls.append(harness.origin.url("/\(index)-\(name)"))
            }
            let body = "[" + (try urls.map { try Self.quoted($0) }).joined(separator: ",") + "]"
            let cold = try await Self.batch(harness, body)
            #expect(cold.status == 200)

            // When the same batch is asked again
            let started = ContinuousClock.now
            let warm = try await Self.batch(harness, body)
            let elapsed = ContinuousClock.now - started

            // Then every element is its source's object, in order, and the origin was asked each source once
            #expect(warm.status == 200)
            let array = try #require(try JSONSerialization.jsonObject(with: Data(warm.body)) as? [[String: Any]])
            try #require(array.count == 100)
            for (index, element) in array.enumerated() {
                #expect(element["url"] as? String == urls[index])
                let name = names[index % names.count]
                let width = [
                    "copyright.jpg": 64, "progressive.jpg": 320, "display-p3.png": 64, "orientation-6.jpg": 64,
                ]
                #expect(element["width"] as? Int == width[name], "\(name)")
                #expect(element["error"] == nil)
            }
            for index in 0..<100 {
                #expect(harness.origin.hits("/\(index)-\(names[index % names.count])") == 1)
            }
            // (a debug build on a shared machine: the release figure is bench/info-batch.sh's)
            print("warm POST /info of 100 sources: \(elapsed) (debug build, one request on a new connection)")
        }
    }
}
