// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdSettings

/// The configurations shipped in deploy/ are loaded by the same code as the server's, so a renamed or
/// mistyped key there fails here instead of at somebody's deploy.
@Suite struct DeployFilesTests {
    private let root = ConfigTestFiles.repositoryRoot

    @Test func composeConfigurationLoadsAndListensOnAllInterfacesWithMetricsApart() throws {
        // Given deploy/thumbd.yaml, when it is loaded, then it is valid and sets what the compose file publishes.
        let settings = try ConfigFile(path: root.appendingPathComponent("deploy/thumbd.yaml").path, environment: [:])
            .load()
        #expect(settings.server.listen.description == "0.0.0.0:8080")
        #expect(settings.metrics.listen?.description == "0.0.0.0:9090")
    }

    @Test func kubernetesConfigMapConfigurationLoadsAndMatchesTheDeploymentPorts() throws {
        // Given the ConfigMap in deploy/kubernetes/thumbd.yaml, when its embedded thumbd.yaml is loaded, then it is
        // valid and listens on the ports the Deployment names.
        let manifest = try String(
            contentsOf: root.appendingPathComponent("deploy/kubernetes/thumbd.yaml"), encoding: .utf8)
        let embedded = try #require(Self.literalBlock(named: "thumbd.yaml", in: manifest))
        let files = try ConfigTestFiles()
        let settings = try ConfigFile(path: try files.write(embedded), environment: [:]).load()
        #expect(settings.server.listen.description == "0.0.0.0:8080")
        #expect(settings.metrics.listen?.description == "0.0.0.0:9090")
        #expect(manifest.contains("containerPort: 8080") && manifest.contains("containerPort: 9090"))
        #expect(manifest.contains("kind: ConfigMap") && manifest.contains("kind: Deployment"))
        #expect(manifest.contains("kind: Service") && manifest.contains("path: /health"))
        #expect(manifest.contains("path: /ready"))
    }

    /// The text of a YAML literal block `name: |` (its lines, less their common indentation), up to the first
    /// line indented no deeper than the key.
    private static func literalBlock(named name: String, in yaml: String) -> String? {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "\(name): |" })
        else { return nil }
        let keyIndent = lines[start].prefix { $0 == " " }.count
        var block: [Substring] = []
        for line in lines[(start + 1)...] {
            let indent = line.prefix { $0 == " " }.count
            if !line.trimmingCharacters(in: .whitespaces).isEmpty && indent <= keyIndent { break }
            block.append(line)
        }
        let common =
            block.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return block.map { String($0.dropFirst(min(common, $0.count))) }.joined(separator: "\n")
    }
}
