// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

extension Integration {
    /// thumbd on many nodes behind nginx (issue 18), the twin of ``ClusterTests``: the shipped
    /// `deploy/cluster/nginx.conf` (``NginxChild``) in front of three real `thumbd` processes (``ThumbdChild``),
    /// each on its own cache directory, with a counting origin. nginx hashes the `url` parameter on a ketama ring
    /// (`hash $thumbd_source_key consistent`, `$arg_url` for `/thumb`), so every size of a source meets the one
    /// node that holds the source. ``ClusterPathKeysTests`` does the same through thumbor's and imgproxy's forms.
    ///
    /// Who answered what: nginx's access log (the shipped `thumbd` format) names the upstream address of every
    /// request, the last one when it tried several; each node's own access log must count exactly as many
    /// `/thumb` answers as nginx sent it; the origin counts fetches per source. One request at a time
    /// (``ClusterTests/send(_:port:)``), as in ``ClusterTests``.
    @Suite(.timeLimit(.minutes(3))) struct ClusterNginxTests {
        typealias Shared = ClusterTests

        @Test func shippedConfigurationIsValidAsItIs() async throws {
            // Given deploy/cluster/nginx.conf unchanged under an empty prefix, when nginx checks it, then it is
            // valid
            let prefix = try TempDirectory(prefix: "thumbd-nginx-check")
            for name in ["logs", "temp"] {
                try FileManager.default.createDirectory(
                    atPath: prefix.appending(name), withIntermediateDirectories: true)
            }
            let check = try ChildProcess(
                executable: NginxChild.executable(),
                arguments: ["-t", "-p", prefix.path, "-c", NginxChild.shippedConfigurationPath, "-e", "stderr"])
            let ended = try await blocking { check.wait(timeout: .seconds(10)) }
            #expect(ended == .exited(0), "\(check.standardOutput)\(check.standardError)")
        }

        @Test func everySizeOfASourceMeetsOneNodeANodeLossIsRetriedAndAFourthNodeMovesAQuarterOfTheKeys()
            async throws
        {
            let started = ContinuousClock.now
            // Given a counting origin with 300 sources (one small PNG at distinct paths)
            let (origin, sources) = try ClusterTests.countingOrigin(sources: Shared.sourceCount)
            let thumbTargets = sources.flatMap { source in Shared.widths.map { "/thumb?url=\(source)&w=\($0)" } }

            // and three thumbd processes, each on its own cache directory, behind nginx with the shipped file
            let directory = try TempDirectory(prefix: "thumbd-cluster-nginx")
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(to: configuration, accessLog: true)
            let startNode: @Sendable (Int) throws -> ThumbdChild = { id in
                try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("node-\(id)"))
            }
            var nodes = Cluster()
            for id in 1...3 { nodes.add(id, try await blocking { try startNode(id) }) }
            let threeNodes = nodes
            let nginx = try await blocking { try NginxChild(servers: threeNodes.servers) }

            // When every size of every source is asked through nginx
            let first = try await blocking { Shared.ask(thumbTargets, through: nginx, of: threeNodes) }
            let firstSeconds = Shared.seconds(since: started)

            // Then every answer is a 200, the sizes of each source came from one node, and each source was
            // fetched once
            #expect(first.failures.isEmpty, "\(first.failures.prefix(3))")
            #expect(first.statuses.allSatisfy { $0 == 200 }, "\(first.statusCounts)")
            #expect(first.proxyCounts == first.nodeCounts, "nginx's log and the nodes' access logs disagree")
            let split = sources.filter { first.nodesByKey[$0].map { Set($0).count != 1 || $0.count != 3 } ?? true }
            #expect(split.isEmpty, "\(split.count) sources not answered 3 times by one node: \(split.prefix(3))")
            #expect(origin.requests.count == Shared.sourceCount)
            let refetched = ClusterTests.sourcesNotFetchedOnce(by: origin, sources: Shared.sourceCount)
            #expect(refetched.isEmpty, "sources not fetched exactly once: \(refetched.prefix(5))")
            let ringOfThree = first.nodesByKey.compactMapValues { $0.first }
            print("ClusterNginxTests: 3 nodes, sources per node \(Shared.shares(ringOfThree, sources))")

            // When node 2 is killed (SIGKILL) and the same 900 requests are sent at once (nginx has no active
            // checks: it learns of the loss from the first refused connections)
            nodes[2].process.kill(SIGKILL)
            let killed = try await blocking { threeNodes[2].process.wait(timeout: .seconds(10)) }
            #expect(killed == .signalled(SIGKILL))
            let fetchesBefore = origin.requests.count
            let retriesBefore = nginx.retriedRequests()
            let second = try await blocking { Shared.ask(thumbTargets, through: nginx, of: threeNodes) }
            let retried = nginx.retriedRequests() - retriesBefore

            // Then none of them fails (the requests that met node 2 were retried on the next node of the ring),
            // node 2's sources are each answered by one other node (fetched once more there), and every other
            // source stays on its node and is not fetched again
            #expect(second.failures.isEmpty, "\(second.failures.prefix(3))")
            #expect(second.statuses.allSatisfy { (200..<300).contains($0) }, "\(second.statusCounts)")
            #expect(second.proxyCounts == second.nodeCounts, "nginx's log and the nodes' access logs disagree")
            #expect(retried >= 1, "no request was retried on another node")
            let ofNodeTwo = sources.filter { ringOfThree[$0] == 2 }
            let notOnOneLiveNode = sources.filter { source in
                let answeredBy = Set(second.nodesByKey[source] ?? [])
                return answeredBy.count != 1 || answeredBy.contains(2)
            }
            #expect(notOnOneLiveNode.isEmpty, "\(notOnOneLiveNode.count) sources not answered by one live node")
            let leftTheirNode = sources.filter {
                ringOfThree[$0] != 2 && second.nodesByKey[$0]?.first != ringOfThree[$0]
            }
            #expect(leftTheirNode.isEmpty, "\(leftTheirNode.count) sources of nodes 1 and 3 changed node")
            let secondFetches = origin.requests.count - fetchesBefore
            #expect(secondFetches == ofNodeTwo.count)
            print(
                "ClusterNginxTests: node 2 killed; \(second.statuses.count { !(200..<300).contains($0) }) non-2xx in "
                    + "\(second.statuses.count), \(retried) requests retried on the next node (max_fails=2, "
                    + "shared zone); its \(ofNodeTwo.count) sources fetched again by nodes 1 and 3 "
                    + "(\(secondFetches) origin fetches)")

            // When a source whose origin fails (500) is asked: thumbd answers 502, which nginx must not retry on
            // another node (proxy_next_upstream leaves http_502 and http_504 out)
            origin.route("/broken.png", .status(500))
            let broken = Harness.percentEncoded(origin.url("/broken.png"))
            let retriesBeforeBroken = nginx.retriedRequests()
            let brokenRound = try await blocking {
                Shared.ask(["/thumb?url=\(broken)&w=16"], through: nginx, of: threeNodes)
            }

            // Then the client gets the 502, from one node, and the origin was asked once
            #expect(brokenRound.statuses == [502], "\(brokenRound.failures)")
            #expect(nginx.retriedRequests() == retriesBeforeBroken, "nginx retried a 502 on another node")
            #expect(origin.hits("/broken.png") == 1)
            _ = try await blocking { nginx.stop() }

            // When a new node 2 (another port: a new place on nginx's ring) and node 4 start, and the keys (the
            // sources and 1,700 probes, all with `w=0`, which the chosen node refuses at once with no fetch) are
            // asked through nginx with nodes 1, 2, 3, then with nodes 1, 2, 3, 4
            nodes.add(2, try await blocking { try startNode(2) })
            let renewed = nodes
            nodes.add(4, try await blocking { try startNode(4) })
            let fourNodes = nodes
            let probes = (0..<Shared.probeCount).map { Harness.percentEncoded(origin.url("/probe/\($0).png")) }
            let keys = sources + probes
            let keyTargets = keys.map { "/thumb?url=\($0)&w=0" }
            let nginxOfThree = try await blocking { try NginxChild(servers: renewed.servers) }
            let before = try await blocking { Shared.ask(keyTargets, through: nginxOfThree, of: renewed) }
            _ = try await blocking { nginxOfThree.stop() }
            let nginxOfFour = try await blocking { try NginxChild(servers: fourNodes.servers) }
            let after = try await blocking { Shared.ask(keyTargets, through: nginxOfFour, of: fourNodes) }
            _ = try await blocking { nginxOfFour.stop() }

            // Then only keys that moved to node 4 changed node, and at most 1.2 / 4 of them moved
            #expect(
                before.failures.isEmpty && after.failures.isEmpty, "\((before.failures + after.failures).prefix(3))")
            #expect(before.statuses.allSatisfy { $0 == 400 }, "\(before.statusCounts)")
            #expect(after.statuses.allSatisfy { $0 == 400 }, "\(after.statusCounts)")
            #expect(before.proxyCounts == before.nodeCounts && after.proxyCounts == after.nodeCounts)
            let ringBefore = before.nodesByKey.compactMapValues { $0.first }
            let ringAfter = after.nodesByKey.compactMapValues { $0.first }
            #expect(ringBefore.count == keys.count, "\(keys.count - ringBefore.count) keys not in nginx's log")
            #expect(ringAfter.count == keys.count, "\(keys.count - ringAfter.count) keys not in nginx's log")
            let changed = keys.filter { ringAfter[$0] != ringBefore[$0] }
            let notToNodeFour = changed.filter { ringAfter[$0] != 4 }
            #expect(notToNodeFour.isEmpty, "\(notToNodeFour.count) keys moved between old nodes")
            let movedShare = Double(changed.count) / Double(keys.count)
            #expect(movedShare <= 1.2 / 4, "\(changed.count) of \(keys.count) keys moved")
            print(
                "ClusterNginxTests: 4 nodes, sources per node \(Shared.shares(ringAfter, sources)); moved to node 4: "
                    + "\(changed.count) of \(keys.count) keys (\(Shared.percent(movedShare)))")
            print(
                "ClusterNginxTests: first round \(firstSeconds) s (3 nodes and nginx started, "
                    + "\(thumbTargets.count) requests); whole test \(Shared.seconds(since: started)) s")
        }
    }
}
