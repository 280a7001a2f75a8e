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

    @Test func kubernetesClusterManifestLoadsWithTheSharedTierItsEnvironmentTurnsOn() throws {
        // Given deploy/kubernetes/cluster.yaml: its ConfigMap's thumbd.yaml and the THUMBD_* values its Deployment
        // sets, when they are loaded together, then they are valid and the shared tier is on, on the named bucket
        let manifest = try String(
            contentsOf: root.appendingPathComponent("deploy/kubernetes/cluster.yaml"), encoding: .utf8)
        let embedded = try #require(Self.literalBlock(named: "thumbd.yaml", in: manifest))
        let environment = Self.environment(in: manifest)
        let files = try ConfigTestFiles()
        let settings = try ConfigFile(path: try files.write(embedded), environment: environment).load()
        #expect(settings.cache.shared.isEnabled && settings.cache.shared.bucket == "thumbd-cache")
        #expect(!settings.s3.endpoint.isEmpty && environment.count >= 5, "\(environment)")
        #expect(manifest.contains("replicas: 3") && manifest.contains("kind: Ingress"))
        #expect(manifest.contains("nginx.ingress.kubernetes.io/upstream-hash-by: \"$arg_url$uri\""))
        #expect(manifest.contains("path: /health") && manifest.contains("path: /ready"))
        #expect(manifest.contains("name: AWS_ACCESS_KEY_ID") && manifest.contains("name: AWS_SECRET_ACCESS_KEY"))
    }

    @Test func composeClusterEnvironmentLoadsWithTheSharedTierOnMinIO() throws {
        // Given deploy/docker-compose-cluster.yml's THUMBD_* values with deploy/thumbd.yaml, when they are loaded
        // together, then they are valid and the shared tier is on, on the MinIO service
        let compose = try String(
            contentsOf: root.appendingPathComponent("deploy/docker-compose-cluster.yml"), encoding: .utf8)
        let environment = Self.environment(in: compose)
        let settings = try ConfigFile(
            path: root.appendingPathComponent("deploy/thumbd.yaml").path, environment: environment
        ).load()
        #expect(settings.cache.shared.isEnabled && settings.cache.shared.bucket == "thumbd-cache")
        #expect(settings.s3.endpoint == "http://minio:9000", "\(environment)")
        #expect(compose.contains("./cluster/haproxy.cfg:") && compose.contains("store/thumbd-cache"))
    }

    /// The `THUMBD_*` values a manifest sets as text: Kubernetes' `- {name: THUMBD_X, value: "v"}` and Compose's
    /// `THUMBD_X: v` (a value taken from the host's environment, `${…}`, is left out).
    private static func environment(in text: String) -> [String: String] {
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            let name: Substring
            let value: Substring
            if let start = trimmed.range(of: "{name: THUMBD_"), let comma = trimmed.range(of: ", value: ") {
                name = trimmed[trimmed.index(start.upperBound, offsetBy: -7)..<comma.lowerBound]
                value = trimmed[comma.upperBound...].dropLast()
            } else if trimmed.hasPrefix("THUMBD_"), let colon = trimmed.range(of: ": ") {
                name = trimmed[..<colon.lowerBound]
                value = trimmed[colon.upperBound...]
            } else {
                continue
            }
            guard !value.contains("${") else { continue }
            environment[String(name)] = value.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        }
        return environment
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
