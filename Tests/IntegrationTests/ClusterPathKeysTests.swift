// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

extension Integration {
    /// The source as the balancer's key through thumbor's and imgproxy's URL forms (issue 18), with the shipped
    /// `deploy/cluster/haproxy.cfg` and `nginx.conf` in front of three real `thumbd` processes that mount both
    /// forms (unsigned URLs allowed), and a counting origin. The helpers are ``ClusterTests``'s: one request at a
    /// time, who answered read from the balancer's log and checked against the nodes' access logs.
    ///
    /// Each test has two parts. First, every size of every source in every form the balancer can give one key:
    /// all of a source's answers from one node, and one origin fetch per source. Then the spellings it cannot
    /// group (HAProxy: a `/thumb` `url` not percent-encoded as its key is; nginx, which can neither decode nor
    /// encode: a thumbor image written without its scheme, a base64 imgproxy source): each spelling's sizes still
    /// meet one node, and the cost is measured: a source is fetched once by every node one of its spellings
    /// meets, about N(1 − (1 − 1/N)^k) fetches for k keys on N nodes (1.67 for two keys on three nodes, 2.11 for
    /// three).
    @Suite(.timeLimit(.minutes(3))) struct ClusterPathKeysTests {
        typealias Shared = ClusterTests

        /// Sources in each part.
        static let sourceCount = 100
        /// Both forms mounted at their default prefixes; no keys, so unsigned URLs (`unsafe/`, `insecure/`).
        static let formsYAML = """
            thumbor:
              enabled: true
              allow_unsafe: true
            imgproxy:
              enabled: true

            """

        /// One way of writing a source's URL.
        enum Form: String, CaseIterable, Sendable {
            /// `/thumb?url=<URL percent-encoded but RFC 3986's unreserved characters>&w=W`, as thumbd's builders
            /// write it.
            case thumb
            /// `/thumb?url=<URL as it is>&w=W` (`:` and `/` are allowed in a query).
            case thumbUnencoded
            /// `/thumbor/unsafe/Wx0/<image>`, the image as thumbd's gallery writes it: `http://` left out (thumbor
            /// puts it back when the host has a dot).
            case thumbor
            /// `/thumbor/unsafe/Wx0/<URL percent-encoded as for /thumb>` (thumbor decodes the image once).
            case thumborEncoded
            /// `/imgproxy/insecure/rs:fit:W:0/plain/<URL percent-encoded as for /thumb>`.
            case imgproxyPlain
            /// `/imgproxy/insecure/rs:fit:W:0/<base64url of the URL, split in two by a slash>.png`.
            case imgproxyBase64

            func target(_ url: String, width: Int) -> String {
                switch self {
                case .thumb: "/thumb?url=\(Harness.percentEncoded(url))&w=\(width)"
                case .thumbUnencoded: "/thumb?url=\(url)&w=\(width)"
                case .thumbor: "/thumbor/unsafe/\(width)x0/\(url.dropFirst("http://".count))"
                case .thumborEncoded: "/thumbor/unsafe/\(width)x0/\(Harness.percentEncoded(url))"
                case .imgproxyPlain: "/imgproxy/insecure/rs:fit:\(width):0/plain/\(Harness.percentEncoded(url))"
                case .imgproxyBase64:
                    "/imgproxy/insecure/rs:fit:\(width):0/\(Self.base64Split(url)).png"
                }
            }

            /// URL-safe base64 without padding, with a `/` in the middle (imgproxy lets a builder split it).
            private static func base64Split(_ text: String) -> String {
                let encoded = Data(text.utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                let middle = encoded.index(encoded.startIndex, offsetBy: encoded.count / 2)
                return String(encoded[..<middle]) + "/" + String(encoded[middle...])
            }
        }

        /// One request of a part: its target, for which source, in which form.
        struct Request: Sendable {
            var target: String
            var source: Int
            var form: Form
        }

        /// Every width of ``ClusterTests/widths`` of every source in every form, source by source.
        static func requests(_ urls: [String], forms: [Form]) -> [Request] {
            urls.indices.flatMap { source in
                forms.flatMap { form in
                    Shared.widths.map {
                        Request(target: form.target(urls[source], width: $0), source: source, form: form)
                    }
                }
            }
        }

        /// Where a part's answers came from.
        struct Placement {
            /// The nodes that answered each source, over all its forms.
            var nodesBySource: [Int: Set<Int>] = [:]
            /// `source/form` pairs whose sizes were not all answered, each once, by one node.
            var splitForms: [String] = []
            /// Sources whose forms met more than one node.
            var sourcesOnSeveralNodes: [Int] { nodesBySource.keys.sorted().filter { nodesBySource[$0]!.count > 1 } }
            /// A source is fetched once by every node that gets one of its requests.
            var expectedFetches: Int { nodesBySource.values.reduce(0) { $0 + $1.count } }
        }

        static func placement(_ round: Shared.Round, _ requests: [Request]) -> Placement {
            var placement = Placement()
            var byForm: [String: [Int]] = [:]
            for request in requests {
                let nodes = round.nodesByTarget[request.target] ?? []
                byForm["\(request.source)/\(request.form)", default: []] += nodes
                placement.nodesBySource[request.source, default: []].formUnion(nodes)
            }
            placement.splitForms = byForm.keys.sorted().filter { key in
                let nodes = byForm[key]!
                return Set(nodes).count != 1 || nodes.count != Shared.widths.count
            }
            return placement
        }

        /// Three nodes mounting both forms, on cache directories under `directory`.
        static func startNodes(in directory: TempDirectory) async throws -> Cluster {
            let configuration = directory.appending("thumbd.yaml")
            try ThumbdChild.writeConfiguration(to: configuration, accessLog: true, extraYAML: formsYAML)
            var nodes = Cluster()
            for id in 1...3 {
                nodes.add(
                    id,
                    try await blocking {
                        try ThumbdChild(configuration: configuration, cacheDirectory: directory.appending("node-\(id)"))
                    })
            }
            return nodes
        }

        /// A counting origin with `sourceCount` sources under each of `folders` (one small PNG at distinct paths),
        /// and their URLs by folder.
        static func origin(folders: [String]) throws -> (LoopbackOrigin, [[String]]) {
            let origin = try LoopbackOrigin(host: originHost)
            let png = Fixtures.bytes("quadrants.png")
            let urls = folders.map { folder in
                (0..<sourceCount).map { index in
                    origin.route("/\(folder)/\(index).png", .ok(png, contentType: "image/png"))
                    return origin.url("/\(folder)/\(index).png")
                }
            }
            return (origin, urls)
        }

        @Test func haproxyGivesEveryFormOfASourceOneKey() async throws {
            // Given 100 sources, 100 more, and three nodes mounting both forms behind HAProxy with the shipped file
            let (origin, urls) = try Self.origin(folders: ["src", "other"])
            let directory = try TempDirectory(prefix: "thumbd-cluster-keys")
            let cluster = try await Self.startNodes(in: directory)
            let haproxy = try await blocking { try HAProxyChild(servers: cluster.servers) }
            let upStates = try await blocking { haproxy.waitForStates(cluster.states("UP")) }
            #expect(upStates == cluster.states("UP"))

            // When every size of each of the first sources is asked as /thumb, thumbor (the gallery's spelling,
            // no scheme), imgproxy plain and imgproxy base64
            let grouped = Self.requests(urls[0], forms: [.thumb, .thumbor, .imgproxyPlain, .imgproxyBase64])
            let first = try await blocking { Shared.ask(grouped.map(\.target), through: haproxy, of: cluster) }

            // Then every answer is a 200, and all twelve requests of a source were answered by one node, which
            // fetched it once
            #expect(first.failures.isEmpty, "\(first.failures.prefix(3))")
            #expect(first.statuses.allSatisfy { $0 == 200 }, "\(first.statusCounts)")
            #expect(first.proxyCounts == first.nodeCounts, "HAProxy's log and the nodes' access logs disagree")
            let placement = Self.placement(first, grouped)
            #expect(
                placement.splitForms.isEmpty,
                "\(placement.splitForms.count) forms split: \(placement.splitForms.prefix(3))")
            #expect(
                placement.sourcesOnSeveralNodes.isEmpty,
                "sources on several nodes: \(placement.sourcesOnSeveralNodes.prefix(5))")
            #expect(origin.requests.count == Self.sourceCount)
            let refetched = ClusterTests.sourcesNotFetchedOnce(by: origin, sources: Self.sourceCount)
            #expect(refetched.isEmpty, "sources not fetched exactly once: \(refetched.prefix(5))")
            let ring = placement.nodesBySource.compactMapValues(\.first)
            print(
                "ClusterPathKeysTests: HAProxy, \(grouped.count) requests (4 forms x 3 widths x \(Self.sourceCount) "
                    + "sources): \(origin.requests.count) origin fetches, sources per node "
                    + "\(Self.shares(ring))")

            // When each of the other sources is asked as /thumb with its url percent-encoded, and not encoded
            let fetchesBefore = origin.requests.count
            let spellings = Self.requests(urls[1], forms: [.thumb, .thumbUnencoded])
            let second = try await blocking { Shared.ask(spellings.map(\.target), through: haproxy, of: cluster) }

            // Then each spelling's sizes meet one node, and a source is fetched once by each node its spellings meet
            #expect(second.failures.isEmpty, "\(second.failures.prefix(3))")
            #expect(second.statuses.allSatisfy { $0 == 200 }, "\(second.statusCounts)")
            #expect(second.proxyCounts == second.nodeCounts, "HAProxy's log and the nodes' access logs disagree")
            let costly = Self.placement(second, spellings)
            #expect(
                costly.splitForms.isEmpty, "\(costly.splitForms.count) spellings split: \(costly.splitForms.prefix(3))")
            let fetches = origin.requests.count - fetchesBefore
            #expect(fetches == costly.expectedFetches)
            print(
                "ClusterPathKeysTests: HAProxy, /thumb url encoded and not (2 keys, \(Self.sourceCount) sources): "
                    + "\(costly.sourcesOnSeveralNodes.count) sources on two nodes, \(fetches) origin fetches "
                    + "(\(Self.perSource(fetches)) per source)")
            _ = try await blocking { haproxy.stop() }
        }

        @Test func nginxGivesASourceWrittenAlikeInEveryFormOneKey() async throws {
            // Given 100 sources, 100 more, and three nodes mounting both forms behind nginx with the shipped file
            let (origin, urls) = try Self.origin(folders: ["src", "other"])
            let directory = try TempDirectory(prefix: "thumbd-cluster-keys-nginx")
            let cluster = try await Self.startNodes(in: directory)
            let nginx = try await blocking { try NginxChild(servers: cluster.servers) }

            // When every size of each of the first sources is asked as /thumb, thumbor and imgproxy plain, the URL
            // percent-encoded alike in the three
            let grouped = Self.requests(urls[0], forms: [.thumb, .thumborEncoded, .imgproxyPlain])
            let first = try await blocking { Shared.ask(grouped.map(\.target), through: nginx, of: cluster) }

            // Then every answer is a 200, and all nine requests of a source were answered by one node, which
            // fetched it once
            #expect(first.failures.isEmpty, "\(first.failures.prefix(3))")
            #expect(first.statuses.allSatisfy { $0 == 200 }, "\(first.statusCounts)")
            #expect(first.proxyCounts == first.nodeCounts, "nginx's log and the nodes' access logs disagree")
            let placement = Self.placement(first, grouped)
            #expect(
                placement.splitForms.isEmpty,
                "\(placement.splitForms.count) forms split: \(placement.splitForms.prefix(3))")
            #expect(
                placement.sourcesOnSeveralNodes.isEmpty,
                "sources on several nodes: \(placement.sourcesOnSeveralNodes.prefix(5))")
            #expect(origin.requests.count == Self.sourceCount)
            let refetched = ClusterTests.sourcesNotFetchedOnce(by: origin, sources: Self.sourceCount)
            #expect(refetched.isEmpty, "sources not fetched exactly once: \(refetched.prefix(5))")
            let ring = placement.nodesBySource.compactMapValues(\.first)
            print(
                "ClusterPathKeysTests: nginx, \(grouped.count) requests (3 forms x 3 widths x \(Self.sourceCount) "
                    + "sources): \(origin.requests.count) origin fetches, sources per node \(Self.shares(ring))")

            // When each of the other sources is asked as /thumb, as thumbor in the gallery's spelling (no scheme,
            // not encoded) and as imgproxy base64: three keys nginx cannot make one
            let fetchesBefore = origin.requests.count
            let spellings = Self.requests(urls[1], forms: [.thumb, .thumbor, .imgproxyBase64])
            let second = try await blocking { Shared.ask(spellings.map(\.target), through: nginx, of: cluster) }

            // Then each form's sizes still meet one node, and a source is fetched once by each node its forms meet
            #expect(second.failures.isEmpty, "\(second.failures.prefix(3))")
            #expect(second.statuses.allSatisfy { $0 == 200 }, "\(second.statusCounts)")
            #expect(second.proxyCounts == second.nodeCounts, "nginx's log and the nodes' access logs disagree")
            let costly = Self.placement(second, spellings)
            #expect(costly.splitForms.isEmpty, "\(costly.splitForms.count) forms split: \(costly.splitForms.prefix(3))")
            let fetches = origin.requests.count - fetchesBefore
            #expect(fetches == costly.expectedFetches)
            let onThree = costly.nodesBySource.values.count { $0.count == 3 }
            print(
                "ClusterPathKeysTests: nginx, /thumb, thumbor without scheme, imgproxy base64 (3 keys, "
                    + "\(Self.sourceCount) sources): \(costly.sourcesOnSeveralNodes.count) sources on several nodes "
                    + "(\(onThree) on three), \(fetches) origin fetches (\(Self.perSource(fetches)) per source)")
            _ = try await blocking { nginx.stop() }
        }

        /// `node: sources, …`, by node id.
        static func shares(_ ring: [Int: Int]) -> String {
            let counts = ring.values.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
            return counts.keys.sorted().map { "\($0): \(counts[$0]!)" }.joined(separator: ", ")
        }

        static func perSource(_ fetches: Int) -> String {
            String(format: "%.2f", Double(fetches) / Double(sourceCount))
        }
    }
}
