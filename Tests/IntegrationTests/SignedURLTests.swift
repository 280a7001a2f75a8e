// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import URLForms

extension Integration {
    /// Signed URLs through the whole service (`security.signing_keys`): signed requests are served, unsigned or
    /// wrongly signed ones are 403 JSON, and a change of keys on the running service applies to the very next
    /// request, including one the alias path answered from memory a moment before.
    @Suite(.timeLimit(.minutes(1))) struct SignedURLTests {
        static let key = "integration-signing-key-0123456789abcdef"
        static let olderKey = "integration-older-signing-key-0123456789"
        static let otherKey = "integration-other-signing-key-0123456789"

        /// A service requiring signatures made with `keys`, and an image on its origin.
        private func harness(keys: [String] = [key, olderKey], _ overrides: [String: String] = [:]) throws -> Harness {
            let harness = try Harness(
                overrides.merging(["security.signing_keys": "[\(keys.joined(separator: ", "))]"]) { _, new in new })
            harness.origin.route("/a.jpg", .ok(Fixtures.bytes("progressive.jpg")))
            return harness
        }

        /// `target` (`/thumb?query`) with `&sig=` for `key` appended.
        private func signed(_ target: String, key: String = key) throws -> String {
            let query = String(try #require(target.split(separator: "?", maxSplits: 1).last))
            return "/thumb?" + (try URLSignature.signedQuery(query, key: key))
        }

        @Test func signedRequestsAreServedWithEitherKey() async throws {
            // Given a service with two keys, newest first
            let harness = try harness()
            let target = harness.thumbTarget("/a.jpg", "w=40&format=png")

            // When the same thumbnail is asked with a signature by each key, and by HEAD
            let byNewest = try await harness.request(try signed(target))
            let byOlder = try await harness.request(try signed(target, key: Self.olderKey))
            let head = try await harness.request(try signed(target), method: "HEAD")

            // Then each is served
            #expect(byNewest.status == 200)
            #expect(try byNewest.image().width == 40)
            #expect(byNewest.header("x-cache") == "MISS")
            #expect(byOlder.status == 200)
            #expect(byOlder.header("x-cache") == "HIT-MEMORY")
            #expect(head.status == 200)
            #expect(harness.origin.hits("/a.jpg") == 1)
        }

        @Test func unsignedAndWronglySignedRequestsAre403JSON() async throws {
            // Given a service with keys, and the thumbnail already in memory through a signed request
            let harness = try harness()
            let target = harness.thumbTarget("/a.jpg", "w=40&format=png")
            #expect(try await harness.request(try signed(target)).status == 200)

            // When it is asked without sig, with another key's sig, with a changed parameter, or by HEAD unsigned
            let unsigned = try await harness.request(target)
            let wrongKey = try await harness.request(try signed(target, key: Self.otherKey))
            let tampered = try await harness.request(try signed(target).replacingOccurrences(of: "w=40", with: "w=41"))
            let head = try await harness.request(target, method: "HEAD")
            // and with parameters that would be a 400 if signed: the signature is checked first
            let badAndUnsigned = try await harness.request("/thumb?w=0&url=nothing")

            // Then each is 403 with the JSON reason, the /thumb headers, and nothing fetched again
            expectJSONError(unsigned, status: 403, mentioning: "missing signature")
            expectJSONError(wrongKey, status: 403, mentioning: "invalid signature")
            expectJSONError(tampered, status: 403, mentioning: "invalid signature")
            expectJSONError(badAndUnsigned, status: 403, mentioning: "missing signature")
            #expect(head.status == 403)
            for response in [unsigned, wrongKey, tampered, head] {
                #expect(response.header("x-cache") == "MISS")
                #expect(response.header("age") == "0")
                #expect(response.header("cache-control") == "no-store")
            }
            #expect(harness.origin.hits("/a.jpg") == 1)
        }

        @Test(arguments: [false, true])
        func updatedKeysApplyAtOnceEvenToARequestAnsweredFromMemoryBefore(memoryTierOff: Bool) async throws {
            // Given a running service whose memory (or, tier off, open-blob) hit path has answered a signed URL
            // without parsing it (the alias path)
            let harness = try harness(keys: [Self.key], memoryTierOff ? ["cache.memory.max_bytes": "0"] : [:])
            let target = try signed(harness.thumbTarget("/a.jpg", "w=40&format=png"))
            let hit = memoryTierOff ? "HIT-DISK" : "HIT-MEMORY"
            #expect(try await harness.request(target).status == 200)
            var outcome = ""
            for _ in 0..<50 where outcome != hit {  // the disk write behind a miss may still be queued
                outcome = try await harness.request(target).header("x-cache") ?? ""
                if outcome != hit { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(outcome == hit)
            let onceMore = try await harness.request(target)
            #expect(onceMore.status == 200 && onceMore.header("x-cache") == hit)

            // When the key it was signed with is replaced while the service runs
            harness.service.signatureVerifier.update(keys: [Self.otherKey])

            // Then the very same URL is refused at once, and a URL signed with the new key is served from cache
            expectJSONError(try await harness.request(target), status: 403, mentioning: "invalid signature")
            expectJSONError(try await harness.request(target), status: 403, mentioning: "invalid signature")
            let renewed = try await harness.request(
                try signed(harness.thumbTarget("/a.jpg", "w=40&format=png"), key: Self.otherKey))
            #expect(renewed.status == 200)
            #expect(renewed.header("x-cache") == hit)

            // And putting the old key back (as an older one) makes the old URL valid again
            harness.service.signatureVerifier.update(keys: [Self.otherKey, Self.key])
            #expect(try await harness.request(target).status == 200)
            #expect(harness.origin.hits("/a.jpg") == 1)

            // And an empty key list turns signing off
            harness.service.signatureVerifier.update(keys: [])
            #expect(try await harness.request(harness.thumbTarget("/a.jpg", "w=40&format=png")).status == 200)
        }

        @Test func aReloadThatRotatesTheKeysAppliesToTheNextRequest() async throws {
            // Given a service with one key, and a thumbnail in memory through a request signed with it
            let harness = try harness(keys: [Self.key])
            let target = harness.thumbTarget("/a.jpg", "w=40&format=png")
            let signedByOld = try signed(target)
            #expect(try await harness.request(signedByOld).status == 200)
            #expect(try await harness.request(signedByOld).header("x-cache") == "HIT-MEMORY")

            // When a reload replaces the key with another one
            var settings = harness.service.settings
            settings.security.signingKeys = [Self.otherKey]
            let outcome = try harness.service.apply(settings)

            // Then the reload names the key, the old signature is refused at once (even for the URL the alias path
            // answered a moment ago), and a signature by the new key is served from memory
            #expect(outcome.changedKeys == ["security.signing_keys"])
            let refused = try await harness.request(signedByOld)
            #expect(refused.status == 403)
            let byNew = try await harness.request(try signed(target, key: Self.otherKey))
            #expect(byNew.status == 200)
            #expect(byNew.header("x-cache") == "HIT-MEMORY")
            #expect(harness.origin.hits("/a.jpg") == 1)
        }

        @Test func theSignSubcommandsOutputIsAccepted() async throws {
            // Given a service with keys and the built thumbd executable
            let harness = try harness()
            let executable = try ChildProcess.builtExecutable(named: "thumbd")
            let target = harness.thumbTarget("/a.jpg", "w=40&format=png")

            // When `thumbd sign` signs the target, with the key from the environment as the server would read it
            let output = try await blocking {
                let child = try ChildProcess(
                    executable: executable, arguments: ["sign", target],
                    environment: ["THUMBD_SECURITY_SIGNING_KEYS": "\(Self.key),\(Self.olderKey)"],
                    inheritsEnvironment: false)
                let ended = child.wait(timeout: .seconds(30))
                return (ended, child.standardOutput, child.standardError)
            }

            // Then it exits 0 and prints the target with a sig that the service accepts
            #expect(output.0 == .exited(0), "stderr: \(output.2)")
            let printed = output.1.trimmingCharacters(in: .newlines)
            #expect(printed.hasPrefix(target + "&sig="))
            let response = try await harness.request(printed)
            #expect(response.status == 200)
            #expect(try response.image().width == 40)
        }

        @Test func theSignSubcommandFailsWithoutAKey() async throws {
            let executable = try ChildProcess.builtExecutable(named: "thumbd")
            let output = try await blocking {
                let child = try ChildProcess(
                    executable: executable, arguments: ["sign", "url=https://example.com/a.jpg&w=1"],
                    inheritsEnvironment: false)
                return (child.wait(timeout: .seconds(30)), child.standardOutput, child.standardError)
            }
            #expect(output.0 == .exited(ThumbdCommand.configurationErrorStatus))
            #expect(output.1.isEmpty)
            #expect(output.2.contains("no signing key"))
        }
    }
}
