// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Synchronization
import Testing
import ThumbdTestSupport

extension Integration {
    /// What HAProxy's bounded loads (`hash-balance-factor`) cost thumbd: a request moved off its node is fetched
    /// and rendered again on another. Three thumbd processes behind the shipped configuration with the factor
    /// replaced by each of ``factors``; for each, 300 new sources × 3 widths sent by 8 and by 32 clients at once
    /// (cold: every source fetched at least once), then the same requests again (warm: each answer is cached on
    /// the source's own node, so every fetch is a request that was moved). Prints the origin fetches.
    ///
    /// A measurement for deploy/cluster/README.md, not a check: it runs only with `THUMBD_MEASURE_BOUNDED_LOADS=1`
    /// (about 40 s), e.g. `THUMBD_MEASURE_BOUNDED_LOADS=1 swift test --skip-build --filter ClusterBoundedLoads`.
    @Suite(
        .timeLimit(.minutes(5)),
        .enabled(if: ProcessInfo.processInfo.environment["THUMBD_MEASURE_BOUNDED_LOADS"] == "1"))
    struct ClusterBoundedLoadsMeasurement {
        /// `hash-balance-factor` values; 0 turns bounded loads off.
        static let factors = [0, 125, 150, 200]
        static let clientCounts = [8, 32]

        @Test func originFetchesPerFactor() async throws {
            // Given three thumbd nodes and a counting origin
            let origin = try LoopbackOrigin(host: originHost)
            let png = Fixtures.bytes("quadrants.png")
            let directory = try TempDirectory(prefix: "thumbd-bounded-loads")
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(to: configuration)
            var nodes = Cluster()
            for id in 1...3 {
                nodes.add(
                    id,
                    try await blocking {
                        try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("node-\(id)"))
                    })
            }
            let cluster = nodes
            var round = 0
            for clients in Self.clientCounts {
                for factor in Self.factors {
                    // When HAProxy runs with this factor, and 900 requests on new sources are sent twice
                    round += 1
                    for index in 0..<300 { origin.route("/r\(round)/\(index).png", .ok(png, contentType: "image/png")) }
                    let targets = (0..<300).flatMap { index in
                        let source = Harness.percentEncoded(origin.url("/r\(round)/\(index).png"))
                        return [16, 24, 32].map { "/thumb?url=\(source)&w=\($0)" }
                    }
                    let haproxy = try await blocking {
                        try HAProxyChild(servers: cluster.servers) { try Self.replacingFactor(in: $0, with: factor) }
                    }
                    let states = try await blocking { haproxy.waitForStates(cluster.states("UP")) }
                    #expect(states == cluster.states("UP"))
                    let before = origin.requests.count
                    let coldFailures = try await blocking { Self.send(targets, port: haproxy.port, clients: clients) }
                    let cold = origin.requests.count - before
                    let warmFailures = try await blocking { Self.send(targets, port: haproxy.port, clients: clients) }
                    let warm = origin.requests.count - before - cold
                    _ = try await blocking { haproxy.stop() }

                    // Then (printed) the origin fetches beyond one per source
                    #expect(coldFailures + warmFailures == 0)
                    print(
                        "ClusterBoundedLoads: \(clients) clients, hash-balance-factor \(factor): cold round "
                            + "\(cold) origin fetches for 300 sources (+\(cold - 300)), warm round \(warm) more")
                }
            }
        }

        /// The generated configuration with its one `hash-balance-factor` line set to `factor` (removed for 0).
        static func replacingFactor(in text: String, with factor: Int) throws -> String {
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            let indexes = lines.indices.filter { lines[$0].hasPrefix("    hash-balance-factor ") }
            guard indexes.count == 1 else {
                throw HAProxyChild.Failure(description: "expected one `hash-balance-factor` line")
            }
            lines[indexes[0]] = factor == 0 ? "" : "    hash-balance-factor \(factor)"
            return lines.joined(separator: "\n")
        }

        /// Sends every target once, `clients` at a time (each on its own keep-alive connection, on its own
        /// thread); returns how many got no answer or a non-2xx one. Blocks the calling thread.
        static func send(_ targets: [String], port: Int, clients: Int) -> Int {
            let next = Atomic<Int>(0)
            let failures = Atomic<Int>(0)
            runOnThreads(clients) { _ in
                var client: RawHTTPClient?
                while true {
                    let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                    guard index < targets.count else { return }
                    do {
                        let connection = try client ?? RawHTTPClient(host: "127.0.0.1", port: port)
                        client = connection
                        try connection.send(ThumbdChild.requestText(targets[index]))
                        let status = try connection.readResponse(timeout: .seconds(30)).status
                        if !(200..<300).contains(status) { failures.add(1, ordering: .relaxed) }
                    } catch {
                        client = nil
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }
            return failures.load(ordering: .relaxed)
        }
    }
}
