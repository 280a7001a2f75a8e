// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import OriginFetch
import Testing
import ThumbdTestSupport

@testable import ThumbdApp

extension Integration {
    /// A source replaced at its origin, through every layer that holds a copy (issue 31): two real `thumbd` processes
    /// with their shared tier on moto's S3 server (signature checks on), behind Varnish with the shipped VCL
    /// (``VarnishChild``), a webhook receiver, and an origin that answers conditional requests. Varnish keeps the
    /// thumbnails an hour (`cache.client_max_age`), so no request reaches a node once they are cached: only the
    /// node's background check of its sources (`cache.source_check_interval`) can see the change, and only its
    /// pushes (`cache.purge.varnish`, `cache.purge.webhook`) can take the copies out of Varnish.
    @Suite(.timeLimit(.minutes(3))) struct PurgePushTests {
        static let widths = [30, 60, 90]
        static let formats = ["png", "webp"]

        /// The 18 targets: 3 widths × 2 formats × `/thumb`, thumbor's and imgproxy's forms.
        static func targets(_ url: String) -> [String] {
            let encoded = Harness.percentEncoded(url)
            return widths.flatMap { width in
                formats.flatMap { format in
                    [
                        "/thumb?url=\(encoded)&w=\(width)&format=\(format)",
                        "/thumbor/unsafe/\(width)x0/filters:format(\(format))/\(url.dropFirst("http://".count))",
                        "/imgproxy/insecure/rs:fit:\(width):0/plain/\(encoded)@\(format)",
                    ]
                }
            }
        }

        @Test func aReplacedSourceLeavesEveryTierAndVarnishAndTheWebhookGetsItsTag() async throws {
            let moto = try await blocking { try MotoServer(buckets: ["cluster"]) }
            let directory = try TempDirectory(prefix: "thumbd-purge-push")
            let credentials = directory.appending("credentials")
            try moto.writeCredentials(to: credentials)
            // Given an origin whose picture (the quadrants, ETag "v1") may be kept an hour, and a webhook receiver
            let origin = try LoopbackOrigin(host: originHost)
            defer { origin.stop() }
            let path = "/replaced.png"
            origin.route(
                path,
                CacheFreshnessTests.conditional(
                    cacheControl: "max-age=3600", body: Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            let url = origin.url(path)
            let tag = SourceTag.of(try SourceURL(url))
            let hooks = try LoopbackOrigin(host: "127.0.0.1")
            defer { hooks.stop() }
            hooks.route("/purged", .ok(Array("{}".utf8), contentType: "application/json"))

            // and two nodes that tag their answers, check their sources every second and push purges to Varnish
            // and the webhook, behind Varnish (its port picked first: the nodes name it)
            let varnishPort = try LoopbackSocket.unusedPort()
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(
                to: configuration, accessLog: true,
                extraYAML: ClusterPathKeysTests.formsYAML + """
                    s3:
                      endpoint: \(moto.endpoint)
                      credentials_file: \(credentials)
                    cache:
                      client_max_age: 1h
                      tag_header: Surrogate-Key
                      source_check_interval: 1s
                      shared:
                        enabled: true
                        bucket: cluster
                        prefix: nodes/
                      purge:
                        varnish: [http://127.0.0.1:\(varnishPort)/]
                        webhook: \(hooks.url("/purged"))

                    """)
            var nodes = Cluster()
            for id in 1...2 {
                nodes.add(
                    id,
                    try await blocking {
                        try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("node-\(id)"))
                    })
            }
            let cluster = nodes
            let varnish = try await blocking { try VarnishChild(servers: cluster.servers, port: varnishPort) }
            #expect(
                try await blocking { varnish.waitForStates(cluster.states("healthy")) } == cluster.states("healthy"))

            // When the 18 URLs are asked through Varnish, twice
            let targets = Self.targets(url)
            let first = try await blocking { ClusterTests.send(targets, port: varnishPort) }
            let again = try await blocking { ClusterTests.send(targets, port: varnishPort) }

            // Then each is the quadrants, tagged with its source, and the second time Varnish answers them all
            #expect(first.statuses.allSatisfy { $0 == 200 }, "\(first.statusCounts) \(first.failures.prefix(2))")
            for (target, response) in zip(targets, first.responses) {
                guard let response else { continue }
                #expect(response.header("Surrogate-Key") == tag, "\(target)")
                #expect(Self.oldPixels(response.body), "\(target): not the quadrants")
            }
            #expect(again.responses.allSatisfy { $0?.header("X-Cache") == "HIT-VARNISH" })
            #expect(Self.fetches(of: path, origin) == 1)
            // and the node that holds the source has shared its original and the 18 answers' thumbnails
            let sourcePrefix = SharedTier.sourcePrefix(try SourceURL(url), prefix: "nodes/")
            let oldDigests = Set(first.responses.compactMap { $0.map { SharedObject.sha256Hex($0.body) } })
                .union([SharedObject.sha256Hex(Fixtures.bytes("quadrants.png"))])
            let stored = try await blocking {
                var objects: [String: String] = [:]
                _ = waitUntil(timeout: .seconds(20)) {
                    objects = (try? moto.objects(bucket: "cluster", prefix: sourcePrefix)) ?? [:]
                    return Set(objects.values).isSuperset(of: oldDigests)
                }
                return objects
            }
            #expect(Set(stored.values).isSuperset(of: oldDigests), "\(stored.count) objects stored")

            // When the origin's picture is replaced (the grid, ETag "v2") and no request reaches a node
            origin.route(path, CacheFreshnessTests.changedSource)

            // Then within a few checks the webhook receives the source's tag and URL, and Varnish a ban it accepts
            let bansBefore = try await blocking { try varnish.counter("MAIN.bans_added") }
            let pushed = try await blocking {
                waitUntil(timeout: .seconds(20)) {
                    let received = hooks.requests.filter { $0.method == "POST" && $0.path == "/purged" }
                    return Self.metrics(of: cluster).contains("thumbd_purge_pushes_total{endpoint=\"varnish\"} 1")
                        && received.contains { Self.hook($0, names: tag, url) }
                }
            }
            #expect(try await blocking { try varnish.counter("MAIN.bans_added") } == bansBefore + 1)
            #expect(pushed, "webhook: \(hooks.requests.map { String(decoding: $0.body, as: UTF8.self) })")
            let hook = try #require(hooks.requests.first { $0.method == "POST" })
            #expect(hook.headers["content-type"] == "application/json")

            // and every one of the 18 URLs through Varnish is the new picture, made again by a node
            let after = try await blocking { ClusterTests.send(targets, port: varnishPort) }
            #expect(after.statuses.allSatisfy { $0 == 200 }, "\(after.statusCounts)")
            for (target, response) in zip(targets, after.responses) {
                guard let response else { continue }
                #expect(response.header("X-Cache") != "HIT-VARNISH", "\(target): Varnish kept the old copy")
                #expect(Self.newPixels(response.body), "\(target): not the grid")
            }
            // (the source fetched once more: the checks are conditional requests)
            #expect(Self.fetches(of: path, origin) == 2)
            #expect(origin.requests.contains { $0.path == path && $0.headers["if-none-match"] == "\"v1\"" })
            // and the shared tier holds no object of the old bytes
            let left = try await blocking { try moto.objects(bucket: "cluster", prefix: sourcePrefix) }
            #expect(Set(left.values).isDisjoint(with: oldDigests), "old objects left: \(left.count)")

            // And a ban with anything but tags is refused by the VCL, not passed on as an expression
            let badBan = try await blocking {
                try ClusterVarnishTests.request(
                    "/", method: "BAN", headers: [("X-Thumbd-Tags", "a\" || obj.status != 0")], port: varnishPort)
            }
            #expect(badBan.status == 400)
            let metrics = try await blocking { Self.metrics(of: cluster) }
            #expect(metrics.contains("thumbd_source_checks_total{result=\"changed\"} 1"))
            #expect(metrics.contains("thumbd_purge_pushes_total{endpoint=\"varnish\"} 1"))
            _ = try await blocking { varnish.stop() }
        }

        /// Every node's /metrics, one after the other.
        static func metrics(of cluster: Cluster) -> String {
            cluster.servers.map { (try? ClusterVarnishTests.request("/metrics", port: $0.port).text) ?? "" }.joined()
        }

        /// The requests for `path` that were not conditional (not a source check).
        static func fetches(of path: String, _ origin: LoopbackOrigin) -> Int {
            origin.requests.count { $0.path == path && $0.headers["if-none-match"] == nil }
        }

        /// The webhook request names `tag` and `url`.
        static func hook(_ request: LoopbackOrigin.ReceivedRequest, names tag: String, _ url: String) -> Bool {
            guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: [String]]
            else { return false }
            return object["tags"]?.contains(tag) == true && object["urls"]?.contains(url) == true
        }

        /// The quadrants (64×48) at the answer's size: 4:3, the four colours.
        static func oldPixels(_ body: [UInt8]) -> Bool {
            guard let image = try? DecodedImage(decoding: body), image.width > image.height else { return false }
            return image.mismatch(in: Fixtures.quadrantProbes(width: image.width, height: image.height)) == nil
        }

        /// The grid (300×300) at the answer's size: square, its nine cells.
        static func newPixels(_ body: [UInt8]) -> Bool {
            guard let image = try? DecodedImage(decoding: body), image.width == image.height else { return false }
            let cell = image.width / 3
            var probes: [(x: Int, y: Int, colour: RGB)] = []
            for (row, colours) in Fixtures.grid.enumerated() {
                for (column, colour) in colours.enumerated() {
                    probes.append((column * cell + cell / 2, row * cell + cell / 2, colour))
                }
            }
            return image.mismatch(in: probes) == nil
        }
    }
}
