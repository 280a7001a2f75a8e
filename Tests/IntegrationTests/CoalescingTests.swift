// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// Coalescing proved by counting (origin hits, renders, X-Cache), through real sockets end to end.
    ///
    /// The origin holds its answer behind a gate until every request has been admitted (the coordinator's
    /// counters say so), so "concurrent" is certain rather than likely, however slow the machine.
    @Suite(.timeLimit(.minutes(2))) struct CoalescingTests {
        @Test func twoHundredIdenticalRequestsMakeOneFetchOneRenderAndTwoHundredIdenticalBodies() async throws {
            // Given an origin that answers only once the gate opens
            let harness = try Harness()
            harness.origin.route("/stampede.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let target = harness.thumbTarget("/stampede.jpg", "w=100&h=100&fit=cover&format=webp")

            // When 200 clients ask for the same thumbnail at the same time
            let clients = try (0..<200).map { _ in try harness.client() }
            for client in clients { try client.send(Harness.requestText(target)) }
            #expect(await eventually { harness.service.renderCounters.coalescedJoins == 199 })
            harness.origin.openGate("go")
            let responses = try await responses(of: clients, timeout: .seconds(60))

            // Then the origin was asked once, libvips rendered once, and everyone got the same 200
            #expect(harness.origin.hits("/stampede.jpg") == 1)
            let counters = harness.service.renderCounters
            #expect(counters.flightsStarted == 1)
            #expect(counters.rendersStarted == 1)
            #expect(counters.rendersFinished == 1)
            #expect(responses.allSatisfy { $0.status == 200 })
            let first = try #require(responses.first)
            #expect(responses.allSatisfy { $0.body == first.body })
            #expect(responses.allSatisfy { $0.header("etag") == first.header("etag") })
            #expect(responses.filter { $0.header("x-cache") == "MISS" }.count == 1)
            #expect(responses.filter { $0.header("x-cache") == "COALESCED" }.count == 199)
            let image = try first.image()
            #expect(image.mimeType == "image/webp" && image.width == 100 && image.height == 100)
        }

        @Test func fiftyRequestsForFiveSizesOfOneSourceMakeOneFetchAndFiveRenders() async throws {
            // Given one gated source (320x240) and five widths, ten requests each, interleaved
            let harness = try Harness()
            harness.origin.route("/sizes.jpg", .gate("go", then: .ok(Fixtures.bytes("progressive.jpg"))))
            let widths = [40, 60, 80, 100, 120]
            let requests = (0..<50).map { widths[$0 % widths.count] }
            let clients = try requests.map { _ in try harness.client() }

            // When they all wait at once and the source then arrives
            for (client, width) in zip(clients, requests) {
                try client.send(Harness.requestText(harness.thumbTarget("/sizes.jpg", "w=\(width)&format=png")))
            }
            #expect(
                await eventually {
                    let counters = harness.service.renderCounters
                    return counters.flightsStarted == 5 && counters.coalescedJoins == 45
                })
            #expect(await eventually { harness.origin.hits("/sizes.jpg") == 1 })
            harness.origin.openGate("go")
            let responses = try await responses(of: clients, timeout: .seconds(60))

            // Then one transfer fed five renders, and each request got its own size
            #expect(harness.origin.hits("/sizes.jpg") == 1)
            #expect(harness.service.renderCounters.rendersStarted == 5)
            for (response, width) in zip(responses, requests) {
                #expect(response.status == 200)
                let image = try response.image()
                #expect(image.width == width && image.height == width * 3 / 4)
            }
            #expect(responses.filter { $0.header("x-cache") == "MISS" }.count == 5)
            #expect(responses.filter { $0.header("x-cache") == "COALESCED" }.count == 45)
        }

        /// A source the wrong-requester test can recognise: its aspect ratio and the colours at known points.
        struct Source: Sendable {
            let fixture: String
            let width: Int
            let height: Int
            let probes: @Sendable (_ width: Int, _ height: Int) -> [(x: Int, y: Int, colour: RGB)]
        }

        static let recognisableSources: [Source] = [
            Source(fixture: "quadrants.png", width: 64, height: 48) { Fixtures.quadrantProbes(width: $0, height: $1) },
            Source(fixture: "orientation-6.jpg", width: 64, height: 48) {
                Fixtures.quadrantProbes(width: $0, height: $1)
            },
            Source(fixture: "grid.png", width: 300, height: 300) { w, h in
                [
                    (w / 6, h / 6, Fixtures.grid[0][0]), (w / 2, h / 2, Fixtures.grid[1][1]),
                    (w * 5 / 6, h * 5 / 6, Fixtures.grid[2][2]),
                ]
            },
            Source(fixture: "cmyk.jpg", width: 64, height: 48) { w, h in
                zip(Fixtures.quadrantProbes(width: w, height: h), Fixtures.cmykQuadrants).map { ($0.x, $0.y, $1) }
            },
            Source(fixture: "animated.gif", width: 48, height: 32) { w, h in [(w / 2, h / 2, Fixtures.red)] },
            Source(fixture: "grey.png", width: 64, height: 48) { w, h in
                [
                    (w / 4, h / 2, RGB(Fixtures.greyDark, Fixtures.greyDark, Fixtures.greyDark)),
                    (w * 3 / 4, h / 2, RGB(Fixtures.greyLight, Fixtures.greyLight, Fixtures.greyLight)),
                ]
            },
        ]

        @Test func manyConcurrentRequestsForDifferentThumbnailsEachGetTheirOwn() async throws {
            // Given six recognisable sources behind different delays, and 96 requests for them in three widths
            // (chosen so that every source's height comes out whole), spread over 24 keep-alive connections with
            // four pipelined requests per connection
            let harness = try Harness()
            let sources = Self.recognisableSources
            for (index, source) in sources.enumerated() {
                let body = Fixtures.bytes(source.fixture)
                harness.origin.route("/mix-\(index)", .delay(.milliseconds(30 * (index % 3)), then: .ok(body)))
            }
            let widths = [24, 36, 48]
            var random = SplitMix64(seed: 42)
            let plan = (0..<96).map { _ in (source: Int(random.next() % 6), width: widths[Int(random.next() % 3)]) }
            let clients = try (0..<24).map { _ in try harness.client() }

            // When every connection sends its four requests in one write
            for (index, client) in clients.enumerated() {
                let text = plan[index * 4..<index * 4 + 4].map { item in
                    Harness.requestText(harness.thumbTarget("/mix-\(item.source)", "w=\(item.width)&format=png"))
                }.joined()
                try client.send(text)
            }

            // Then each response, in request order, is the thumbnail of its own source at its own width
            for (index, client) in clients.enumerated() {
                for item in plan[index * 4..<index * 4 + 4] {
                    let response = try await client.response(timeout: .seconds(60))
                    let source = sources[item.source]
                    #expect(response.status == 200)
                    let image = try response.image()
                    let height = item.width * source.height / source.width
                    #expect(image.width == item.width && image.height == height, "\(source.fixture) at \(item.width)")
                    #expect(
                        image.mismatch(in: source.probes(image.width, image.height), tolerance: 40) == nil,
                        "\(source.fixture) at \(item.width)")
                }
            }
        }
    }
}

/// A small deterministic generator (SplitMix64) so that the request mix is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
