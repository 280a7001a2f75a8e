// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import ThumbdTestSupport

/// moto's S3 server (`moto_server` from the test virtual environment, `make test-venv`) on an unused loopback
/// port, with its signature checks on: its first requests (no credentials needed) make an IAM user, its access key
/// and the buckets (Tests/Builders/s3_setup.py); every later request must be signed with that key, or moto refuses
/// it (403 `SignatureDoesNotMatch`, or `InvalidAccessKeyId`). Stopped by its pid when released or by ``stop()``.
final class MotoServer: Sendable {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The requests s3_setup.py makes before signatures are checked: the user, its policy, its key, then one
    /// per bucket.
    private static func unsignedRequests(buckets: Int) -> Int { 3 + buckets }

    let port: Int
    let accessKeyID: String
    let secretAccessKey: String
    private let process: ChildProcess

    /// `http://127.0.0.1:<port>`.
    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// Starts the server and makes `buckets`. Blocks the thread (a few seconds: moto imports a lot).
    init(buckets: [String], timeout: Duration = .seconds(60)) throws {
        let python = URLBuilders.packageRoot + "/.venv-test/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "no \(python): run `make test-venv` (`make test` does) to install moto")
        }
        port = try LoopbackSocket.unusedPort()
        process = try ChildProcess(
            executable: URLBuilders.packageRoot + "/.venv-test/bin/moto_server",
            arguments: ["-H", "127.0.0.1", "-p", String(port)],
            environment: ["INITIAL_NO_AUTH_ACTION_COUNT": String(Self.unsignedRequests(buckets: buckets.count))])
        guard process.waitUntilAccepting(port: port, timeout: timeout) else {
            _ = process.kill(SIGKILL)
            throw Failure(description: "moto_server did not start: \(process.standardError.suffix(2000))")
        }
        let output = try Self.script(["http://127.0.0.1:\(port)"] + buckets)
        guard let pair = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: String],
            let id = pair["id"], let secret = pair["secret"]
        else {
            _ = process.kill(SIGKILL)
            throw Failure(description: "s3_setup.py printed \(output)")
        }
        accessKeyID = id
        secretAccessKey = secret
    }

    deinit { stop() }

    /// Stops the server (SIGKILL: nothing of it needs to survive) and waits for it. Idempotent.
    func stop() {
        guard process.exitStatus == nil else { return }
        _ = process.kill(SIGKILL)
        _ = process.wait(timeout: .seconds(10))
    }

    /// The request lines moto has logged so far (werkzeug's `127.0.0.1 - - [date] "GET /bucket/key HTTP/1.1" 200 -`
    /// on its standard error), in order: the witness of what reached the store, whatever thumbd believes it sent.
    var requestLog: [String] {
        process.standardError.split(separator: "\n").filter { $0.contains("\" ") && $0.contains(" HTTP/1.1\"") }
            .map(String.init)
    }

    /// An AWS shared-credentials file with this server's key pair (or `secret` instead of the right one), at
    /// `path`.
    func writeCredentials(to path: String, secret: String? = nil) throws {
        let text =
            "[default]\naws_access_key_id = \(accessKeyID)\naws_secret_access_key = \(secret ?? secretAccessKey)\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    /// Stores the file at `path` as `bucket/key` (signed with the server's key, through boto3); with
    /// `cacheControl`, GETs of the object carry that `Cache-Control` (its lifetime in thumbd's caches).
    func put(bucket: String, key: String, file path: String, contentType: String, cacheControl: String? = nil) throws {
        _ = try Self.script(
            ["put", endpoint, accessKeyID, secretAccessKey, bucket, key, path, contentType]
                + (cacheControl.map { [$0] } ?? []))
    }

    /// Flips the first byte of every object under `prefix` whose key contains `containing`, keeping its metadata;
    /// returns how many.
    func corrupt(bucket: String, prefix: String, containing: String = "") throws -> Int {
        Int(
            try Self.script(["corrupt", endpoint, accessKeyID, secretAccessKey, bucket, prefix, containing])
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Every object under `prefix` (listed through boto3, not thumbd), with the SHA-256 its metadata names.
    func objects(bucket: String, prefix: String) throws -> [String: String] {
        let text = try Self.script(["list", endpoint, accessKeyID, secretAccessKey, bucket, prefix])
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return object as? [String: String] ?? [:]
    }

    private static func script(_ arguments: [String]) throws -> String {
        let child = try ChildProcess(
            executable: URLBuilders.packageRoot + "/.venv-test/bin/python",
            arguments: [URLBuilders.packageRoot + "/Tests/Builders/s3_setup.py"] + arguments)
        guard let termination = child.wait(timeout: .seconds(60)) else {
            _ = child.kill(SIGKILL)
            _ = child.wait(timeout: .seconds(5))
            throw Failure(description: "s3_setup.py \(arguments.first ?? "") did not finish in 60 s")
        }
        guard termination == .exited(0) else {
            throw Failure(
                description: "s3_setup.py \(arguments.first ?? ""): \(termination): \(child.standardError.suffix(2000))"
            )
        }
        return child.standardOutput
    }
}
