// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

extension Integration {
    /// thumbd on many nodes behind Varnish (issue 18), the twin of ``ClusterTests`` and ``ClusterNginxTests`` with a
    /// cache in front: the shipped `deploy/cluster/varnish.vcl` (``VarnishChild``) in front of three, then four, real
    /// `thumbd` processes (``ThumbdChild``), each on its own cache directory, with a counting origin. Varnish's
    /// `shard` director hashes the `url` parameter on a consistent ring, so every size of a source meets the one node
    /// that holds the source, and Varnish answers what it has served before without asking any node.
    ///
    /// Who answered what: every answer names the node that made it (`X-Thumbd-Node`, which the VCL sets from
    /// `beresp.backend.name` and keeps with the cached copy) and says when Varnish's cache answered
    /// (`X-Cache: HIT-VARNISH`); each node's access log must count exactly the answers Varnish fetched from it, and
    /// varnishd's own counter of requests to the nodes (`MAIN.backend_req`) all of them; the origin counts fetches per
    /// source. One request at a time (``ClusterTests/send(_:port:)``), as in the other two.
    @Suite(.timeLimit(.minutes(3))) struct ClusterVarnishTests {
        typealias Shared = ClusterTests
        /// Widths of the rounds after a node is killed and after the fourth node joins: answers Varnish does not
        /// hold yet, so that the requests reach the nodes.
        static let widthsAfterTheLoss = [40, 48, 56]
        static let widthsOfFour = [64, 72, 80]

        @Test func shippedConfigurationIsValidAsItIs() async throws {
            // Given deploy/cluster/varnish.vcl unchanged, when varnishd compiles it, then it is valid
            let work = try TempDirectory(prefix: "thumbd-varnish-check")
            let check = try ChildProcess(
                executable: VarnishChild.executable(),
                arguments: ["-C", "-n", work.appending("work"), "-f", VarnishChild.shippedConfigurationPath])
            let ended = try await blocking { check.wait(timeout: .seconds(30)) }
            #expect(ended == .exited(0), "\(check.standardError.suffix(2_000))")
        }

        @Test func everySizeOfASourceMeetsOneNodeThenVarnishAnswersThroughANodeLossAndAFourthNodeMovesAQuarter()
            async throws
        {
            let started = ContinuousClock.now
            // Given a counting origin with 300 sources (one small PNG at distinct paths) and 1,700 more keys
            let (origin, sources) = try ClusterTests.countingOrigin(sources: Shared.sourceCount)
            let probes = (0..<Shared.probeCount).map { Harness.percentEncoded(origin.url("/probe/\($0).png")) }
            let thumbTargets = Self.targets(sources, Shared.widths)
            let probeTargets = probes.map { "/thumb?url=\($0)&w=0" }

            // and three thumbd processes, each on its own cache directory, behind Varnish with the shipped VCL
            let directory = try TempDirectory(prefix: "thumbd-cluster-varnish")
            let startNode = try Self.nodeStarter(in: directory)
            var nodes = Cluster()
            for id in 1...3 { nodes.add(id, try await blocking { try startNode(id) }) }
            let threeNodes = nodes
            let varnish = try await blocking { try VarnishChild(servers: threeNodes.servers) }
            let healthy = try await blocking { varnish.waitForStates(threeNodes.states("healthy")) }
            #expect(healthy == threeNodes.states("healthy"))

            // When every size of every source is asked through Varnish, and the probe keys (`w=0`: refused at once
            // with a 400 and `no-store` by the node the ring chose, with no fetch)
            let first = try await blocking { Self.ask(thumbTargets + probeTargets, through: varnish, of: threeNodes) }
            let firstSeconds = Shared.seconds(since: started)

            // Then every answer is a 200 (every probe a 400) made by a node, the sizes of each source came from one
            // node, each source was fetched once, and the nodes' logs and Varnish's counter agree with the answers
            #expect(first.round.failures.isEmpty, "\(first.round.failures.prefix(3))")
            let thumbStatuses = first.round.statuses.prefix(thumbTargets.count)
            #expect(thumbStatuses.allSatisfy { $0 == 200 }, "\(first.round.statusCounts)")
            #expect(first.round.statuses.dropFirst(thumbTargets.count).allSatisfy { $0 == 400 })
            #expect(first.hits == 0)
            #expect(first.round.proxyCounts == first.round.nodeCounts, "the answers and the nodes' logs disagree")
            #expect(first.backendRequests == thumbTargets.count + probeTargets.count)
            let split = sources.filter {
                first.round.nodesByKey[$0].map { Set($0).count != 1 || $0.count != 3 } ?? true
            }
            #expect(split.isEmpty, "\(split.count) sources not answered 3 times by one node: \(split.prefix(3))")
            #expect(origin.requests.count == Shared.sourceCount)
            let refetched = ClusterTests.sourcesNotFetchedOnce(by: origin, sources: Shared.sourceCount)
            #expect(refetched.isEmpty, "sources not fetched exactly once: \(refetched.prefix(5))")
            let ringOfThree = first.round.nodesByKey.compactMapValues { $0.first }
            print("ClusterVarnishTests: 3 nodes, sources per node \(Shared.shares(ringOfThree, sources))")

            // When the same 900 requests are sent again
            let fetchesBeforeHits = origin.requests.count
            let again = try await blocking { Self.ask(thumbTargets, through: varnish, of: threeNodes) }

            // Then Varnish answers every one from its cache, naming the node that made it: no node is asked
            #expect(again.round.statuses.allSatisfy { $0 == 200 }, "\(again.round.statusCounts)")
            #expect(again.hits == thumbTargets.count)
            #expect(again.round.nodeCounts.isEmpty && again.backendRequests == 0, "\(again.round.nodeCounts)")
            #expect(origin.requests.count == fetchesBeforeHits)
            let renamed = sources.filter { again.round.nodesByKey[$0] != first.round.nodesByKey[$0] }
            #expect(renamed.isEmpty, "\(renamed.count) sources' cached answers name another node")
            print(
                "ClusterVarnishTests: second pass \(again.hits) of \(thumbTargets.count) answered by Varnish, "
                    + "\(again.round.nodeCounts.values.reduce(0, +)) node requests, \(again.backendRequests) "
                    + "backend requests (varnishstat)")

            // When node 2 is killed (SIGKILL), Varnish's probes mark it sick, and every source is asked in three
            // new widths (not in Varnish's cache)
            nodes[2].process.kill(SIGKILL)
            let killed = try await blocking { threeNodes[2].process.wait(timeout: .seconds(10)) }
            #expect(killed == .signalled(SIGKILL))
            let killedAt = ContinuousClock.now
            let expected = threeNodes.states("healthy").merging(["thumbd-2": "sick"]) { _, sick in sick }
            let sickStates = try await blocking { varnish.waitForStates(expected) }
            #expect(sickStates == expected)
            let detection = Shared.seconds(since: killedAt)
            let fetchesBefore = origin.requests.count
            let lossTargets = Self.targets(sources, Self.widthsAfterTheLoss)
            let second = try await blocking { Self.ask(lossTargets, through: varnish, of: threeNodes) }

            // Then none of them fails, node 2's sources are each answered by one other node (fetched once more
            // there), and every other source stays on its node and is not fetched again
            #expect(second.round.failures.isEmpty, "\(second.round.failures.prefix(3))")
            let nonSuccess = second.round.statuses.count { !(200..<300).contains($0) }
            #expect(nonSuccess == 0, "\(second.round.statusCounts)")
            #expect(second.hits == 0)
            #expect(second.round.proxyCounts == second.round.nodeCounts, "the answers and the nodes' logs disagree")
            let ofNodeTwo = sources.filter { ringOfThree[$0] == 2 }
            let notOnOneLiveNode = sources.filter { source in
                let answeredBy = Set(second.round.nodesByKey[source] ?? [])
                return answeredBy.count != 1 || answeredBy.contains(2)
            }
            #expect(notOnOneLiveNode.isEmpty, "\(notOnOneLiveNode.count) sources not answered by one live node")
            let leftTheirNode = sources.filter {
                ringOfThree[$0] != 2 && second.round.nodesByKey[$0]?.first != ringOfThree[$0]
            }
            #expect(leftTheirNode.isEmpty, "\(leftTheirNode.count) sources of nodes 1 and 3 changed node")
            let secondFetches = origin.requests.count - fetchesBefore
            #expect(secondFetches == ofNodeTwo.count)
            print(
                "ClusterVarnishTests: node 2 marked sick \(detection) s after SIGKILL (interval 200ms, window 3, "
                    + "threshold 2); its \(ofNodeTwo.count) sources fetched again by nodes 1 and 3 (\(secondFetches) "
                    + "origin fetches); \(nonSuccess) non-2xx in \(second.round.statuses.count)")

            // When node 2 comes back (same id, same cache directory, another port), a fourth node joins, and the VCL
            // with four nodes is loaded and put in use (what varnishreload does: Varnish's cache is kept)
            nodes.add(2, try await blocking { try startNode(2) })
            nodes.add(4, try await blocking { try startNode(4) })
            let fourNodes = nodes
            try await blocking { try varnish.reload(servers: fourNodes.servers, name: "four") }
            let fourHealthy = try await blocking { varnish.waitForStates(fourNodes.states("healthy")) }
            #expect(fourHealthy == fourNodes.states("healthy"))
            let kept = try await blocking { Self.ask(thumbTargets, through: varnish, of: fourNodes) }

            // Then the first round's answers still come from Varnish's cache
            #expect(kept.hits == thumbTargets.count && kept.round.nodeCounts.isEmpty, "\(kept.round.nodeCounts)")

            // When every source is asked in three more new widths, and the probe keys again
            let fetchesBeforeFour = origin.requests.count
            let fourTargets = Self.targets(sources, Self.widthsOfFour)
            let third = try await blocking { Self.ask(fourTargets + probeTargets, through: varnish, of: fourNodes) }

            // Then the sizes of each source still meet one node, only keys that moved to node 4 changed node (node 2
            // has its own back: the ring places it by its ident, not its address), and at most 1.2 / 4 moved
            #expect(third.round.failures.isEmpty, "\(third.round.failures.prefix(3))")
            #expect(third.round.statuses.prefix(fourTargets.count).allSatisfy { $0 == 200 })
            #expect(third.round.statuses.dropFirst(fourTargets.count).allSatisfy { $0 == 400 })
            #expect(third.hits == 0)
            #expect(third.round.proxyCounts == third.round.nodeCounts, "the answers and the nodes' logs disagree")
            let splitOfFour = sources.filter { third.round.nodesByKey[$0].map { Set($0).count != 1 } ?? true }
            #expect(splitOfFour.isEmpty, "\(splitOfFour.count) sources answered by several nodes")
            let ringOfFour = third.round.nodesByKey.compactMapValues { $0.first }
            let keys = sources + probes
            #expect(ringOfFour.count == keys.count && ringOfThree.count == keys.count)
            let changed = keys.filter { ringOfFour[$0] != ringOfThree[$0] }
            let notToNodeFour = changed.filter { ringOfFour[$0] != 4 }
            #expect(notToNodeFour.isEmpty, "\(notToNodeFour.count) keys moved between old nodes")
            let movedShare = Double(changed.count) / Double(keys.count)
            let movedSources = sources.filter { ringOfFour[$0] != ringOfThree[$0] }.count
            #expect(movedShare <= 1.2 / 4, "\(changed.count) of \(keys.count) keys moved")
            print(
                "ClusterVarnishTests: 4 nodes, sources per node \(Shared.shares(ringOfFour, sources)); moved to node "
                    + "4: \(changed.count) of \(keys.count) keys (\(Shared.percent(movedShare))), \(movedSources) of "
                    + "\(sources.count) sources (\(Shared.percent(Double(movedSources) / Double(sources.count)))); "
                    + "\(origin.requests.count - fetchesBeforeFour) origin fetches")
            print(
                "ClusterVarnishTests: first round \(firstSeconds) s (3 nodes and Varnish started, "
                    + "\(thumbTargets.count + probeTargets.count) requests); whole test "
                    + "\(Shared.seconds(since: started)) s")
            _ = try await blocking { varnish.stop() }
        }

        @Test func requestsForAKilledNodeAreRetriedOnTheNextNodeBeforeTheProbesNoticeIt() async throws {
            // Given three nodes behind Varnish whose probes would take minutes to notice a dead node, and every size
            // of every source asked once
            let (origin, sources) = try ClusterTests.countingOrigin(sources: Shared.sourceCount)
            defer { origin.stop() }  // it must serve until the test ends
            let directory = try TempDirectory(prefix: "thumbd-cluster-varnish")
            let startNode = try Self.nodeStarter(in: directory)
            var nodes = Cluster()
            for id in 1...3 { nodes.add(id, try await blocking { try startNode(id) }) }
            let cluster = nodes
            let varnish = try await blocking { try VarnishChild(servers: cluster.servers, probeInterval: "1m") }
            let first = try await blocking {
                Self.ask(Self.targets(sources, Shared.widths), through: varnish, of: cluster)
            }
            #expect(first.round.statuses.allSatisfy { $0 == 200 }, "\(first.round.statusCounts)")
            let ringOfThree = first.round.nodesByKey.compactMapValues { $0.first }
            let ofNodeTwo = sources.filter { ringOfThree[$0] == 2 }

            // When node 2 is killed and every source is asked in three new widths at once, while Varnish still
            // counts node 2 healthy
            cluster[2].process.kill(SIGKILL)
            let killed = try await blocking { cluster[2].process.wait(timeout: .seconds(10)) }
            #expect(killed == .signalled(SIGKILL))
            let failedBefore = try await blocking { try varnish.counter("MAIN.backend_fail") }
            let second = try await blocking {
                Self.ask(Self.targets(sources, Self.widthsAfterTheLoss), through: varnish, of: cluster)
            }
            let failed = try await blocking { try varnish.counter("MAIN.backend_fail") } - failedBefore
            let states = try await blocking { try varnish.serverStates() }

            // Then every request is answered: each one whose connection node 2 refused was retried on the next node
            // of the ring (vcl_backend_error), so each of node 2's sources went to one other node, and the other
            // sources stayed where they were
            #expect(states["thumbd-2"] == "healthy", "the probes noticed too early: \(states)")
            #expect(second.round.failures.isEmpty, "\(second.round.failures.prefix(3))")
            let nonSuccess = second.round.statuses.count { !(200..<300).contains($0) }
            #expect(nonSuccess == 0, "\(second.round.statusCounts)")
            #expect(second.round.proxyCounts[2] == nil && second.round.nodeCounts[2] == nil)
            #expect(failed >= ofNodeTwo.count, "\(failed) failed connections for \(ofNodeTwo.count) sources")
            let notOnOneLiveNode = ofNodeTwo.filter { source in
                let answeredBy = Set(second.round.nodesByKey[source] ?? [])
                return answeredBy.count != 1 || answeredBy.contains(2)
            }
            #expect(notOnOneLiveNode.isEmpty, "\(notOnOneLiveNode.count) sources not answered by one live node")
            let leftTheirNode = sources.filter {
                ringOfThree[$0] != 2 && second.round.nodesByKey[$0]?.first != ringOfThree[$0]
            }
            #expect(leftTheirNode.isEmpty, "\(leftTheirNode.count) sources of nodes 1 and 3 changed node")
            print(
                "ClusterVarnishTests: node 2 killed, still healthy to Varnish: \(nonSuccess) non-2xx in "
                    + "\(second.round.statuses.count); \(failed) refused connections retried on the next node; its "
                    + "\(ofNodeTwo.count) sources answered by nodes 1 and 3")
            _ = try await blocking { varnish.stop() }
        }

        @Test func acceptIsCutToWhatThumbdReadsErrorsAreNotKeptAndAPurgeReachesVarnish() async throws {
            // Given one node with the admin routes on, behind Varnish, and an origin with a source and a missing one
            let origin = try LoopbackOrigin(host: originHost)
            origin.route("/a.png", .ok(Fixtures.bytes("quadrants.png"), contentType: "image/png"))
            origin.route("/missing.png", .status(404))
            let source = Harness.percentEncoded(origin.url("/a.png"))
            let thumb = "/thumb?url=\(source)&w=20"
            let token = "varnish-cluster-test-token"
            let directory = try TempDirectory(prefix: "thumbd-cluster-varnish")
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(
                to: configuration, accessLog: true, extraYAML: "admin:\n  token: \(token)\n")
            var nodes = Cluster()
            nodes.add(
                1,
                try await blocking {
                    try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("node-1"))
                })
            let cluster = nodes
            let varnish = try await blocking { try VarnishChild(servers: cluster.servers) }
            let port = varnish.port
            let get: @Sendable (String, [(String, String)]) async throws -> RawHTTPClient.Response = {
                target, headers in
                try await blocking { try Self.request(target, headers: headers, port: port) }
            }
            let marks = cluster.accessLogCounts()

            // When the thumbnail is asked with several spellings of Accept, one of them with a cookie
            let webp = try await get(thumb, [("Accept", "image/webp,*/*")])
            let browser = try await get(
                thumb, [("Accept", "text/html,application/xhtml+xml,image/webp;q=0.9,*/*;q=0.8"), ("Cookie", "a=1")])
            let refused = try await get(thumb, [("Accept", "image/webp;q=0,*/*")])
            let none = try await get(thumb, [])
            let both = try await get(thumb, [("Accept", "image/avif,image/webp,*/*")])
            let bothAgain = try await get(thumb, [("Accept", "image/webp, image/AVIF;q=0.5")])
            let jxl = try await get(thumb, [("Accept", "image/jxl,*/*")])
            let jxlAgain = try await get(thumb, [("Accept", "text/html, image/JXL;q=0.9, image/webp;q=0")])

            // Then the answers vary with Accept as thumbd says (Vary: Accept), and Varnish keeps one copy for each
            // thing thumbd reads from Accept: WebP, neither, both, JPEG XL; a second spelling of one is a hit
            #expect([webp, browser, refused, none, both, bothAgain, jxl, jxlAgain].allSatisfy { $0.status == 200 })
            #expect(jxl.header("Content-Type") == "image/jxl" && jxlAgain.header("Content-Type") == "image/jxl")
            #expect(jxl.header("X-Cache") != "HIT-VARNISH" && jxlAgain.header("X-Cache") == "HIT-VARNISH")
            #expect(webp.header("Vary")?.contains("Accept") == true)
            #expect(webp.header("Content-Type") == "image/webp" && browser.header("Content-Type") == "image/webp")
            #expect(refused.header("Content-Type") != "image/webp")
            #expect(none.header("Content-Type") == refused.header("Content-Type"))
            #expect(bothAgain.header("Content-Type") == both.header("Content-Type"))
            #expect([webp, refused, both].allSatisfy { $0.header("X-Cache") != "HIT-VARNISH" })
            #expect([browser, none, bothAgain].allSatisfy { $0.header("X-Cache") == "HIT-VARNISH" })
            #expect(webp.header("X-Thumbd-Node") == "thumbd_1" && webp.header("X-Thumbd-Source") == nil)

            // When a missing source is asked twice, and /health twice
            let missing = "/thumb?url=\(Harness.percentEncoded(origin.url("/missing.png")))&w=20"
            let notFound = [try await get(missing, []), try await get(missing, [])]
            let health = [try await get("/health", []), try await get("/health", [])]

            // Then both 404s come from the node (thumbd sends them with `no-store`), and /health is never cached
            #expect(notFound.map(\.status) == [404, 404])
            #expect(health.map(\.status) == [200, 200])
            #expect((notFound + health).allSatisfy { $0.header("X-Cache") != "HIT-VARNISH" })

            // When the source is purged through Varnish, first without the admin token, then with it
            let purge = "/cache?url=\(source)"
            let unauthorised = try await blocking { try Self.request(purge, method: "DELETE", port: port) }
            let stillCached = try await get(thumb, [("Accept", "image/webp")])
            let purged = try await blocking {
                try Self.request(purge, method: "DELETE", headers: [("Authorization", "Bearer \(token)")], port: port)
            }
            let afterPurge = try await get(thumb, [("Accept", "image/webp")])

            // Then the refused purge leaves Varnish's copy, and the node's 200 drops it: the next request is made
            // by the node again, from the origin (the node purged its own tiers too)
            #expect(unauthorised.status == 403, "\(unauthorised.status) \(unauthorised.text)")
            #expect(stillCached.header("X-Cache") == "HIT-VARNISH")
            #expect(purged.status == 200, "\(purged.status) \(purged.text)")
            #expect(afterPurge.status == 200 && afterPurge.header("X-Cache") != "HIT-VARNISH")
            #expect(origin.hits("/a.png") == 2)

            // and the node's access log holds exactly the /thumb requests Varnish did not answer itself
            let nodeRequests = try await blocking {
                Self.waitForNodeRequests(atLeast: 7, of: cluster, since: marks)
            }
            #expect(nodeRequests == [1: 7], "webp, neither, both, jxl, two 404s, after the purge")
            _ = try await blocking { varnish.stop() }
        }

        @Test func everyFormOfASourceMeetsOneNodeAndVarnishKeepsEveryForm() async throws {
            typealias Keys = ClusterPathKeysTests
            // Given 100 sources, and three nodes mounting thumbor's and imgproxy's forms behind Varnish
            let (origin, urls) = try Keys.origin(folders: ["src"])
            let directory = try TempDirectory(prefix: "thumbd-cluster-varnish-keys")
            let cluster = try await Keys.startNodes(in: directory)
            let varnish = try await blocking { try VarnishChild(servers: cluster.servers) }
            let healthy = try await blocking { varnish.waitForStates(cluster.states("healthy")) }
            #expect(healthy == cluster.states("healthy"))

            // When every size of every source is asked as /thumb, thumbor (the gallery's spelling, no scheme),
            // imgproxy plain and imgproxy base64 (one key for the four, as with HAProxy)
            let grouped = Keys.requests(urls[0], forms: [.thumb, .thumbor, .imgproxyPlain, .imgproxyBase64])
            let first = try await blocking { Self.ask(grouped.map(\.target), through: varnish, of: cluster) }

            // Then every answer is a 200 made by a node, all twelve requests of a source were answered by one node,
            // which fetched it once
            #expect(first.round.failures.isEmpty, "\(first.round.failures.prefix(3))")
            #expect(first.round.statuses.allSatisfy { $0 == 200 }, "\(first.round.statusCounts)")
            #expect(first.hits == 0)
            #expect(first.round.proxyCounts == first.round.nodeCounts, "the answers and the nodes' logs disagree")
            let placement = Keys.placement(first.round, grouped)
            #expect(
                placement.splitForms.isEmpty,
                "\(placement.splitForms.count) forms split: \(placement.splitForms.prefix(3))")
            #expect(
                placement.sourcesOnSeveralNodes.isEmpty,
                "sources on several nodes: \(placement.sourcesOnSeveralNodes.prefix(5))")
            #expect(origin.requests.count == Keys.sourceCount)

            // When the same requests are sent again
            let again = try await blocking { Self.ask(grouped.map(\.target), through: varnish, of: cluster) }

            // Then Varnish answers every form from its cache
            #expect(again.round.statuses.allSatisfy { $0 == 200 }, "\(again.round.statusCounts)")
            #expect(again.hits == grouped.count && again.round.nodeCounts.isEmpty, "\(again.round.nodeCounts)")
            let ring = placement.nodesBySource.compactMapValues(\.first)
            print(
                "ClusterVarnishTests: \(grouped.count) requests (4 forms x 3 widths x \(Keys.sourceCount) sources): "
                    + "\(origin.requests.count) origin fetches, sources per node \(Keys.shares(ring)); again: "
                    + "\(again.hits) Varnish hits")
            _ = try await blocking { varnish.stop() }
        }

        // MARK: - Helpers

        /// A round through Varnish: the shared ``ClusterTests/Round`` (who answered each key, by `X-Thumbd-Node`;
        /// `proxyCounts`: the answers Varnish fetched from each node, its hits left out), how many answers were
        /// Varnish's hits, and how many requests varnishd counts as sent to the nodes meanwhile.
        struct VarnishRound: Sendable {
            var round: Shared.Round
            var hits: Int
            var backendRequests: Int
        }

        /// `/thumb?url=<source>&w=<width>` for every source and width, the widths of a source together.
        static func targets(_ sources: [String], _ widths: [Int]) -> [String] {
            sources.flatMap { source in widths.map { "/thumb?url=\(source)&w=\($0)" } }
        }

        /// Starts node `id` on `directory/node-<id>` with the access log on (one `/thumb` line per request).
        static func nodeStarter(in directory: TempDirectory) throws -> @Sendable (Int) throws -> ThumbdChild {
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(to: configuration, accessLog: true)
            return { id in
                try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("node-\(id)"))
            }
        }

        /// Sends `targets` through `varnish` one at a time, then reads who answered each from the answers (by
        /// target, and by `url` value for `/thumb?url=…` targets), and waits (up to 10 s) until the nodes' access logs and varnishd's `MAIN.backend_req` hold
        /// every answer Varnish fetched, then 200 ms more for any they should not hold. Blocks the calling thread.
        static func ask(_ targets: [String], through varnish: VarnishChild, of cluster: Cluster) -> VarnishRound {
            let nodeMarks = cluster.accessLogCounts()
            let backendMark = (try? varnish.counter("MAIN.backend_req")) ?? 0
            var result = VarnishRound(round: Shared.send(targets, port: varnish.port), hits: 0, backendRequests: 0)
            for (target, response) in zip(targets, result.round.responses) {
                guard let response, let name = response.header("X-Thumbd-Node"),
                    let node = Int(name.dropFirst("thumbd_".count))
                else { continue }
                if target.hasPrefix("/thumb?url=") {
                    let key = String(target.dropFirst("/thumb?url=".count).prefix { $0 != "&" })
                    result.round.nodesByKey[key, default: []].append(node)
                }
                result.round.nodesByTarget[target, default: []].append(node)
                if response.header("X-Cache") == "HIT-VARNISH" {
                    result.hits += 1
                } else {
                    result.round.proxyCounts[node, default: 0] += 1
                }
            }
            let fetched = result.round.proxyCounts.values.reduce(0, +)
            let deadline = ContinuousClock.now + .seconds(10)
            var settled = false
            while true {
                result.round.nodeCounts = cluster.accessLogCounts(since: nodeMarks)
                result.backendRequests = ((try? varnish.counter("MAIN.backend_req")) ?? 0) - backendMark
                let complete =
                    result.round.nodeCounts.values.reduce(0, +) >= fetched && result.backendRequests >= fetched
                if settled || (!complete && ContinuousClock.now >= deadline) { return result }
                if complete { settled = true }
                usleep(complete ? 200_000 : 20_000)
            }
        }

        /// Sends one request to 127.0.0.1:`port` on a new connection and reads the answer. Blocks the thread.
        static func request(
            _ target: String, method: String = "GET", headers: [(String, String)] = [], port: Int
        ) throws -> RawHTTPClient.Response {
            let client = try RawHTTPClient(host: "127.0.0.1", port: port)
            defer { client.close() }
            try client.send(Harness.requestText(target, method: method, headers: headers))
            return try client.readResponse(timeout: .seconds(30))
        }

        /// `/thumb` requests in the nodes' access logs since `marks`, by node, once they reach `count` (or after 10 s).
        static func waitForNodeRequests(atLeast count: Int, of cluster: Cluster, since marks: [Int]) -> [Int: Int] {
            let deadline = ContinuousClock.now + .seconds(10)
            var counts = cluster.accessLogCounts(since: marks)
            while counts.values.reduce(0, +) < count && ContinuousClock.now < deadline {
                usleep(20_000)
                counts = cluster.accessLogCounts(since: marks)
            }
            usleep(200_000)
            return cluster.accessLogCounts(since: marks)
        }
    }
}
