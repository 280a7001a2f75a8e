// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

/// `thumbd sign`: which key it takes, what it prints, and that the serving command line is unchanged.
@Suite struct SignCommandTests {
    static let key = String(repeating: "k", count: 40)
    static let olderKey = String(repeating: "o", count: 40)
    static let query = "url=https://images.example.com/a.jpg&w=256"

    /// Parses `arguments` as the `thumbd` command line and returns the `sign` command it selects.
    private func sign(_ arguments: [String]) throws -> SignCommand {
        try #require(try ThumbdCommand.parseAsRoot(["sign"] + arguments) as? SignCommand)
    }

    /// Checks that `output` is `query` plus a `sig` that the server, configured with `keys`, accepts.
    private func expectVerifies(_ output: String, keys: [String], sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        #expect(output.hasSuffix("\n"), sourceLocation: sourceLocation)
        let signed = String(output.dropLast())
        #expect(signed.hasPrefix(Self.query + "&sig="), sourceLocation: sourceLocation)
        let verifier = URLSignatureVerifier(keys: keys)
        _ = try verifier.verify(try QueryParameters(parsing: signed))
    }

    @Test func signsWithTheKeyFlag() throws {
        let result = try sign(["--key", Self.key, Self.query]).signedOutput(environment: [:])
        #expect(result.status == 0)
        try expectVerifies(result.output, keys: [Self.key])
    }

    @Test func signsWithTheNewestConfiguredKey() throws {
        // Given a config file listing two keys, newest first
        let files = try ConfigTestFiles()
        let path = try files.write("security:\n  signing_keys: [\(Self.key), \(Self.olderKey)]\n")
        // When sign reads it
        let result = try sign(["--config", path, Self.query]).signedOutput(environment: [:])
        // Then the signature is made with the first key (the older one alone would not verify it)
        #expect(result.status == 0)
        try expectVerifies(result.output, keys: [Self.key])
        #expect(throws: RequestError.invalidSignature) {
            try expectVerifies(result.output, keys: [Self.olderKey])
        }
    }

    @Test func takesTheKeyFromTheEnvironmentLikeTheServer() throws {
        let environment = ["THUMBD_SECURITY_SIGNING_KEYS": "\(Self.key),\(Self.olderKey)"]
        let result = try sign([Self.query]).signedOutput(environment: environment)
        #expect(result.status == 0)
        try expectVerifies(result.output, keys: [Self.key])
    }

    @Test func keepsAPathOrURLBeforeTheQuery() throws {
        let result = try sign(["--key", Self.key, "http://127.0.0.1:8080/thumb?" + Self.query])
            .signedOutput(environment: [:])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("http://127.0.0.1:8080/thumb?" + Self.query + "&sig="))
        try expectVerifies(String(result.output.dropFirst("http://127.0.0.1:8080/thumb?".count)), keys: [Self.key])
    }

    @Test func withoutAKeyItFails() throws {
        // Given no key anywhere (no file, no variable, no flag)
        let result = try sign([Self.query]).signedOutput(environment: [:])
        // Then it exits non-zero and says how to give one
        #expect(result.status == ThumbdCommand.configurationErrorStatus)
        #expect(result.output.contains("no signing key"))
        #expect(result.output.contains("--key"))
    }

    @Test func refusesAKeyTheServerWouldRefuse() throws {
        let result = try sign(["--key", "short", Self.query]).signedOutput(environment: [:])
        #expect(result.status == ThumbdCommand.configurationErrorStatus)
        #expect(result.output.contains("--key"))
    }

    @Test func refusesAnInvalidConfiguration() throws {
        let files = try ConfigTestFiles()
        let path = try files.write("security:\n  signing_keys: [short]\n")
        let result = try sign(["--config", path, Self.query]).signedOutput(environment: [:])
        #expect(result.status == ThumbdCommand.configurationErrorStatus)
        #expect(result.output.contains("security.signing_keys"))
    }

    @Test func refusesAQueryThatCannotBeDecoded() throws {
        let result = try sign(["--key", Self.key, "url=x&w=%2"]).signedOutput(environment: [:])
        #expect(result.status != 0)
        #expect(result.output.contains("malformed"))
    }

    @Test func signsAPostInfoBodyAsAWhole() throws {
        // Given a body in a file
        let files = try ConfigTestFiles()
        let body = #"["https://images.example.com/a.jpg",{"url":"https://images.example.com/b.jpg","faces":true}]"#
        let path = try files.write(body, named: "body.json")
        // When sign --batch reads it
        let result = try sign(["--key", Self.key, "--batch", path]).signedOutput(environment: [:])
        // Then it prints sig= with the whole-batch signature the server accepts for those exact bytes
        #expect(result.status == 0)
        #expect(result.output == "sig=\(URLSignature.batchSignature(body: Array(body.utf8), key: Self.key))\n")
        let parameters = try QueryParameters(parsing: String(result.output.dropLast()))
        _ = try URLSignatureVerifier(keys: [Self.key]).verifyBatch(parameters, body: Array(body.utf8))
        // And a query with --batch, or neither, is a usage error
        #expect(throws: (any Error).self) { try sign(["--key", Self.key, "--batch", path, Self.query]) }
        #expect(throws: (any Error).self) { try sign(["--key", Self.key]) }
        let missing = try sign(["--key", Self.key, "--batch", path + ".absent"]).signedOutput(environment: [:])
        #expect(missing.status != 0 && missing.output.contains("cannot read"))
    }

    @Test func servingFlagsStillParseAsTheRootCommand() throws {
        // Given the sign subcommand, the serving command line means what it meant before
        let command = try #require(
            try ThumbdCommand.parseAsRoot(["--port", "8081", "--log-level", "debug"]) as? ThumbdCommand)
        let settings = try command.configFile(environment: [:]).load()
        #expect(settings.server.listen.port == 8081)
        #expect(try ThumbdCommand.parseAsRoot([]) is ThumbdCommand)
        #expect(try ThumbdCommand.parseAsRoot(["--check-config"]) is ThumbdCommand)
    }
}
