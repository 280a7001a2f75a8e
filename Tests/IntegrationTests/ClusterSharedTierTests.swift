// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

extension Integration {
    /// Three real `thumbd` processes behind the shipped HAProxy file, sharing one bucket of moto's S3 server (its
    /// signature checks on) as their shared tier, with a counting origin (issue 18): a node's loss costs no render
    /// and no origin fetch, and a node that comes back with an empty disk gets its keys back from the shared tier.
    /// Who answered what is read as in ``ClusterTests``; renders and shared-tier hits from each node's /metrics.
    @Suite(.timeLimit(.minutes(4))) struct ClusterSharedTierTests {
        typealias Shared = ClusterTests

        @Test func aLostNodesKeysAreServedFromTheSharedTierAndComeBackToItWithAnEmptyDisk() async throws {
            let started = ContinuousClock.now
            let moto = try await blocking { try MotoServer(buckets: ["cluster"]) }
            let (origin, sources) = try ClusterTests.countingOrigin(sources: Shared.sourceCount)
            let thumbTargets = sources.flatMap { source in Shared.widths.map { "/thumb?url=\(source)&w=\($0)" } }

            // Given three nodes on their own disks, one shared bucket, behind HAProxy with the shipped file
            let directory = try TempDirectory(prefix: "thumbd-cluster-shared")
            let credentials = directory.appending("credentials")
            try moto.writeCredentials(to: credentials)
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(
                to: configuration, accessLog: true,
                extraYAML: """
                    s3:
                      endpoint: \(moto.endpoint)
                      credentials_file: \(credentials)
                    cache:
                      shared:
                        enabled: true
                        bucket: cluster
                        prefix: nodes/

                    """)
            let startNode: @Sendable (Int, String) throws -> ThumbdChild = { id, disk in
                try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending(disk))
            }
            var nodes = Cluster()
            for id in 1...3 { nodes.add(id, try await blocking { try startNode(id, "node-\(id)") }) }
            let threeNodes = nodes
            let haproxy = try await blocking {
                try HAProxyChild(servers: threeNodes.servers, checkInterval: Shared.checkInterval)
            }
            #expect(try await blocking { haproxy.waitForStates(threeNodes.states("UP")) } == threeNodes.states("UP"))

            // When every size of every source is asked, and every node has written what it made
            let first = try await blocking { Shared.ask(thumbTargets, through: haproxy, of: threeNodes) }
            #expect(first.statuses.allSatisfy { $0 == 200 }, "\(first.statusCounts)")
            let ring = first.nodesByKey.compactMapValues { $0.first }
            let split = sources.filter { first.nodesByKey[$0].map { Set($0).count != 1 } ?? true }
            #expect(split.isEmpty, "\(split.count) sources answered by several nodes")
            #expect(origin.requests.count == Shared.sourceCount)
            let written = try await blocking {
                try Self.waitForWrites(of: [1, 2, 3].map { threeNodes[$0] }, atLeast: 5 * Shared.sourceCount)
            }
            // (three thumbnails, an original and the analysis record per source, each written once by its one node)
            #expect(written == 5 * Shared.sourceCount)

            // When node 2 is killed and, once HAProxy marks it down, the same 900 requests are sent
            let rendersBefore = try await blocking { try Self.renders(of: [threeNodes[1], threeNodes[3]]) }
            threeNodes[2].process.kill(SIGKILL)
            _ = try await blocking { threeNodes[2].process.wait(timeout: .seconds(10)) }
            let expected = threeNodes.states("UP").merging(["thumbd-2": "DOWN"]) { _, down in down }
            #expect(try await blocking { haproxy.waitForStates(expected) } == expected)
            let second = try await blocking { Shared.ask(thumbTargets, through: haproxy, of: threeNodes) }

            // Then none fails, no node renders and the origin is not asked: node 2's keys come from the shared tier
            let ofNodeTwo = sources.filter { ring[$0] == 2 }
            #expect(second.statuses.allSatisfy { $0 == 200 }, "\(second.statusCounts)")
            #expect(try await blocking { try Self.renders(of: [threeNodes[1], threeNodes[3]]) } == rendersBefore)
            #expect(origin.requests.count == Shared.sourceCount)
            let sharedHits = try await blocking {
                try Self.sharedHits(of: [threeNodes[1], threeNodes[3]])
            }
            #expect(sharedHits == 3 * ofNodeTwo.count)
            print(
                "ClusterSharedTierTests: node 2 lost; its \(ofNodeTwo.count) sources (\(3 * ofNodeTwo.count) "
                    + "thumbnails) answered HIT-SHARED by nodes 1 and 3: \(sharedHits); renders unchanged, "
                    + "\(origin.requests.count) origin fetches; "
                    + "\(second.statuses.count { $0 != 200 }) non-200 in \(second.statuses.count)")

            // When node 2 comes back with an empty disk (another port: HAProxy restarted with it)
            nodes.add(2, try await blocking { try startNode(2, "node-2-empty") })
            let again = nodes
            _ = try await blocking { haproxy.stop() }
            let haproxyAgain = try await blocking {
                try HAProxyChild(servers: again.servers, checkInterval: Shared.checkInterval)
            }
            #expect(try await blocking { haproxyAgain.waitForStates(again.states("UP")) } == again.states("UP"))
            let third = try await blocking { Shared.ask(thumbTargets, through: haproxyAgain, of: again) }

            // Then its keys are its own again, answered from the shared tier: no render, no origin fetch
            #expect(third.statuses.allSatisfy { $0 == 200 }, "\(third.statusCounts)")
            let backOnTwo = ofNodeTwo.filter { third.nodesByKey[$0].map { Set($0) == [2] } ?? false }
            #expect(backOnTwo.count == ofNodeTwo.count)
            #expect(try await blocking { try Self.renders(of: [again[2]]) } == 0)
            #expect(try await blocking { try Self.sharedHits(of: [again[2]]) } == 3 * ofNodeTwo.count)
            #expect(origin.requests.count == Shared.sourceCount)
            print("ClusterSharedTierTests: whole test \(Shared.seconds(since: started)) s")
            _ = try await blocking { haproxyAgain.stop() }
            for id in [1, 2, 3] { _ = try await blocking { again[id].stop() } }
        }

        /// Waits (up to 20 s) until `nodes` have stored (or found stored) `expected` objects and have no write under
        /// way, and returns how many they stored or found stored.
        static func waitForWrites(of nodes: [ThumbdChild], atLeast expected: Int) throws -> Int {
            let deadline = ContinuousClock.now + .seconds(20)
            while true {
                var underWay = 0
                var done = 0
                for node in nodes {
                    underWay += try node.metric("thumbd_shared_puts_in_flight") ?? 0
                    done += try node.metric("thumbd_shared_puts_total", labels: "result=\"stored\"") ?? 0
                    done += try node.metric("thumbd_shared_puts_total", labels: "result=\"exists\"") ?? 0
                }
                if (underWay == 0 && done >= expected) || ContinuousClock.now >= deadline { return done }
                usleep(50_000)
            }
        }

        /// Renders finished by `nodes`, all results.
        static func renders(of nodes: [ThumbdChild]) throws -> Int {
            try nodes.reduce(0) { total, node in
                total + (try node.metric("thumbd_renders_total", labels: "result=\"success\"") ?? 0)
                    + (try node.metric("thumbd_renders_total", labels: "result=\"failure\"") ?? 0)
            }
        }

        /// `/thumb` answers of `nodes` that came from the shared tier.
        static func sharedHits(of nodes: [ThumbdChild]) throws -> Int {
            try nodes.reduce(0) { total, node in
                total + (try node.metric("thumbd_cache_outcomes_total", labels: "outcome=\"hit_shared\"") ?? 0)
            }
        }
    }
}
