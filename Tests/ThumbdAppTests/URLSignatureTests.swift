// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import OriginFetch
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// The signed-URL scheme: the canonical query, base64url, verification with rotating keys, and the worked example
/// in README.md.
@Suite struct URLSignatureTests {
    static let newestKey = String(repeating: "n", count: 32) + "-newest"
    static let olderKey = String(repeating: "o", count: 32) + "-older"
    static let otherKey = String(repeating: "x", count: 32) + "-not-configured"
    static let query = "url=https%3A%2F%2Fimages.example.com%2Fa.jpg&w=256&h=128&fit=cover"

    // MARK: - Canonical form

    /// Raw query → canonical query.
    static let canonicalCases: [(query: String, canonical: String)] = [
        // ordering by name
        ("w=1&url=x&h=2&fit=cover", "fit=cover&h=2&url=x&w=1"),
        // repeated names: ordered by value; a name that is a prefix of another comes first
        ("a=2&a=10&a=1", "a=1&a=10&a=2"),
        ("ab=1&a=2&a-b=3", "a=2&a-b=3&ab=1"),
        // order by the *encoded* bytes: "%2F" (0x25...) sorts before "-" (0x2D)
        ("k=-&k=/", "k=%2F&k=-"),
        // reserved and other characters, one by one; the unreserved set stays as it is
        ("v=:/?#[]@", "v=%3A%2F%3F%23%5B%5D%40"),
        ("v=!$'()*,;", "v=%21%24%27%28%29%2A%2C%3B"),
        ("v=%26%3D%2B", "v=%26%3D%2B"),
        ("v=a+b", "v=a%2Bb"),  // `+` is a literal plus
        ("v=a%20b", "v=a%20b"),
        ("v=%c3%a9", "v=%C3%A9"),  // lower-case escapes, UTF-8 é
        ("v=é", "v=%C3%A9"),
        ("v=AZaz09-._~", "v=AZaz09-._~"),
        ("na%6De=1", "name=1"),  // names are decoded and re-encoded too
        // empty values, names without `=`, empty pieces
        ("b=&a", "a=&b="),
        ("&&a=1&&b=2&", "a=1&b=2"),
        ("", ""),
        // sig is left out wherever it is, and only sig
        ("sig=AAA&w=1&url=x", "url=x&w=1"),
        ("w=1&sig=AAA&url=x", "url=x&w=1"),
        ("w=1&url=x&sig=AAA", "url=x&w=1"),
        ("w=1&si%67=AAA&url=x", "url=x&w=1"),  // an encoded `sig` is still `sig`
        ("w=1&sigs=AAA&SIG=B", "SIG=B&sigs=AAA&w=1"),
    ]

    @Test(arguments: canonicalCases)
    func canonicalQuery(_ query: String, canonical: String) throws {
        #expect(try URLSignature.canonicalQuery(rawQuery: query) == canonical)
    }

    @Test func everySpellingOfOneRequestHasOneCanonicalForm() throws {
        // Given the same parameters spelt with literal, lower-case and upper-case escapes, in different orders
        let spellings = [
            "url=https://a.example/x.jpg&w=256",
            "w=256&url=https%3a%2f%2fa.example%2fx.jpg",
            "url=https%3A%2F%2Fa.example%2Fx.jpg&&w=256",
            "w=%32%35%36&url=https:%2F/a.example/x%2Ejpg",
        ]
        // Then they have one canonical query, hence one signature
        let forms = try Set(spellings.map { try URLSignature.canonicalQuery(rawQuery: $0) })
        #expect(forms == ["url=https%3A%2F%2Fa.example%2Fx.jpg&w=256"])
    }

    @Test func malformedQueryCannotBeCanonicalised() {
        #expect(throws: RequestError.malformedQuery(parameter: "w")) {
            try URLSignature.canonicalQuery(rawQuery: "url=x&w=%2")
        }
    }

    // MARK: - base64url

    @Test func base64URLRoundTripsEveryLength() throws {
        for count in 0...40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
            let text = URLSignature.base64URLEncoded(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(text.utf8.count == (count * 4 + 2) / 3)
            #expect(URLSignature.base64URLDecoded(text.utf8) == bytes)
            // and it is Foundation's base64 with the URL alphabet and no padding
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(text == foundation)
        }
    }

    @Test func base64URLDecodingIsStrict() {
        #expect(URLSignature.base64URLDecoded("AA==".utf8) == nil)  // padding
        #expect(URLSignature.base64URLDecoded("+/8".utf8) == nil)  // standard alphabet
        #expect(URLSignature.base64URLDecoded("A".utf8) == nil)  // impossible length
        #expect(URLSignature.base64URLDecoded("AB".utf8) == nil)  // unused bits not zero
        #expect(URLSignature.base64URLDecoded("AAB".utf8) == nil)
        #expect(URLSignature.base64URLDecoded("AA".utf8) == [0])
        #expect(URLSignature.base64URLDecoded("-_8".utf8) == [0xFB, 0xFF])
    }

    // MARK: - Verification

    private static func signed(_ query: String, key: String) throws -> String {
        try URLSignature.signedQuery(query, key: key)
    }

    private static func verify(_ query: String, _ verifier: URLSignatureVerifier) throws(RequestError) -> UInt64 {
        try verifier.verify(try QueryParameters(parsing: query))
    }

    @Test func newestAndOlderKeysBothVerify() throws {
        // Given two configured keys, newest first
        let verifier = URLSignatureVerifier(keys: [Self.newestKey, Self.olderKey])
        // Then a query signed with either verifies (rotation: old links keep working)
        _ = try Self.verify(try Self.signed(Self.query, key: Self.newestKey), verifier)
        _ = try Self.verify(try Self.signed(Self.query, key: Self.olderKey), verifier)
        #expect(verifier.requiresSignature)
    }

    /// A signed query changed in one way, and the error that gives.
    static let refusals: [(name: String, change: @Sendable (String) -> String, error: RequestError)] = [
        ("wrong key", { _ in try! signed(query, key: otherKey) }, .invalidSignature),
        ("tampered w", { $0.replacingOccurrences(of: "w=256", with: "w=257") }, .invalidSignature),
        ("tampered url", { $0.replacingOccurrences(of: "a.jpg", with: "b.jpg") }, .invalidSignature),
        ("added parameter", { $0 + "&q=90" }, .invalidSignature),
        ("removed parameter", { $0.replacingOccurrences(of: "&fit=cover", with: "") }, .invalidSignature),
        ("missing sig", { _ in query }, .missingSignature),
        ("empty sig", { _ in query + "&sig=" }, .missingSignature),
        ("malformed base64", { String($0.dropLast()) + "!" }, .invalidSignature),
        ("one character short", { String($0.dropLast()) }, .invalidSignature),
        ("padded", { $0 + "=" }, .invalidSignature),
        ("padded, escaped", { $0 + "%3D" }, .invalidSignature),
        ("standard alphabet", { standardAlphabet($0) }, .invalidSignature),
        ("unused bits set", { flipUnusedBits($0) }, .invalidSignature),
        ("sig twice", { $0 + "&" + ($0.split(separator: "&").last.map(String.init) ?? "") }, .invalidSignature),
    ]

    @Test(arguments: refusals.indices)
    func refusedSignatures(_ index: Int) throws {
        let (name, change, expected) = Self.refusals[index]
        // Given a verifier with both keys and a correctly signed query
        let verifier = URLSignatureVerifier(keys: [Self.newestKey, Self.olderKey])
        let good = try Self.signed(Self.query, key: Self.newestKey)
        _ = try Self.verify(good, verifier)
        // When it is changed, then it is refused with the expected error
        let bad = change(good)
        #expect(bad != good, "\(name) changed nothing")
        #expect(throws: expected, "\(name)") { try Self.verify(bad, verifier) }
    }

    /// The signature in the standard base64 alphabet (`-` → `+`, `_` → `/`); one without either character gets
    /// a `+` for its first character, which is outside the URL alphabet all the same.
    private static func standardAlphabet(_ signedQuery: String) -> String {
        let sig = signedQuery.components(separatedBy: "sig=").last ?? ""
        let swapped = sig.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let changed = swapped == sig ? "+" + sig.dropFirst() : swapped
        return signedQuery.replacingOccurrences(of: "sig=" + sig, with: "sig=" + changed)
    }

    /// The last character with its two unused low bits set: decodes to the same 32 bytes with a lax decoder.
    private static func flipUnusedBits(_ signedQuery: String) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = signedQuery.last!
        let value = alphabet.firstIndex(of: last)!
        return String(signedQuery.dropLast()) + String(alphabet[value | 0b11])
    }

    @Test func withoutKeysNoSignatureIsNeeded() throws {
        let verifier = URLSignatureVerifier(keys: [])
        _ = try Self.verify(Self.query, verifier)
        _ = try Self.verify(Self.query + "&sig=whatever", verifier)
        #expect(!verifier.requiresSignature)
    }

    @Test func updateSwapsTheKeysAtOnceAndStartsANewGeneration() throws {
        // Given a verifier with one key and a query signed with it
        let verifier = URLSignatureVerifier(keys: [Self.olderKey])
        let old = try Self.signed(Self.query, key: Self.olderKey)
        let first = try Self.verify(old, verifier)
        #expect(first == verifier.keyGeneration)
        let counter = ObserverCount()
        verifier.onUpdate { counter.increment() }

        // When a new key replaces it
        verifier.update(keys: [Self.newestKey])

        // Then the old signature fails, the new one verifies under a new generation, and observers ran
        #expect(throws: RequestError.invalidSignature) { try Self.verify(old, verifier) }
        let second = try Self.verify(try Self.signed(Self.query, key: Self.newestKey), verifier)
        #expect(second != first)
        #expect(second == verifier.keyGeneration)
        #expect(counter.value == 1)

        // And an empty list turns signing off
        verifier.update(keys: [])
        #expect(try Self.verify(Self.query, verifier) == verifier.keyGeneration)
        #expect(!verifier.requiresSignature)
    }

    @Test func anAliasRememberedUnderOldKeysNeverHits() throws {
        // Given a cache (memory tier only) and a verifier, and an alias remembered after a verification
        let cache = try ThumbnailCache(
            configuration: .init(memory: .init(), variantsDisk: nil, sourcesDisk: nil),
            logger: Logger(label: "test"))
        let verifier = URLSignatureVerifier(keys: [Self.olderKey])
        verifier.onUpdate { cache.forgetAliases() }
        let key = VariantKey(
            source: try SourceURL("http://images.example.com/a.jpg"), spec: try ThumbnailSpec(width: 64, height: nil))
        let alias = ThumbnailCache.aliasKey(target: "url=x&w=64&sig=s", accept: nil)
        let verified = try Self.verify(try Self.signed(Self.query, key: Self.olderKey), verifier)
        cache.rememberAlias(alias, key, keyGeneration: verified)
        #expect(cache.aliasHit(alias, keyGeneration: verifier.keyGeneration) == key)

        // When the keys change, and a request verified just before the change remembers its alias only after it
        // (a race the eager forgetting alone would lose)
        verifier.update(keys: [Self.newestKey])
        #expect(cache.aliasHit(alias, keyGeneration: verifier.keyGeneration) == nil)
        cache.rememberAlias(alias, key, keyGeneration: verified)

        // Then that alias still never hits under the new keys; one remembered under them does
        #expect(cache.aliasHit(alias, keyGeneration: verifier.keyGeneration) == nil)
        cache.rememberAlias(alias, key, keyGeneration: verifier.keyGeneration)
        #expect(cache.aliasHit(alias, keyGeneration: verifier.keyGeneration) == key)
    }

    @Test func signedQueryKeepsTheSpellingAndReplacesAnOldSig() throws {
        let once = try URLSignature.signedQuery("w=1&url=a%2fb", key: Self.newestKey)
        #expect(once.hasPrefix("w=1&url=a%2fb&sig="))
        #expect(once.utf8.count == "w=1&url=a%2fb&sig=".utf8.count + 43)
        let again = try URLSignature.signedQuery("sig=old&" + once, key: Self.newestKey)
        #expect(again == once)
    }

    // MARK: - README

    /// The worked example's values, as README.md states them.
    static let example = (
        key: "thumbd-example-key-0123456789abcdef",
        query: "w=256&h=256&fit=cover&url=https://images.example.com/photos/cat%20%26%20dog.jpg",
        canonical: "fit=cover&h=256&url=https%3A%2F%2Fimages.example.com%2Fphotos%2Fcat%20%26%20dog.jpg&w=256",
        // Computed with `openssl dgst -sha256 -hmac` (the README's one-liner) and with Python's hmac module.
        signature: "4sIfnJMZF604Auqnr7n0UvJHU_o6XSqg6SbWRX3JsPs"
    )

    @Test func workedExampleInTheReadmeIsExact() throws {
        // Given README.md's "Signed URLs" section
        let url = ConfigTestFiles.repositoryRoot.appendingPathComponent("README.md")
        let readme = try String(contentsOf: url, encoding: .utf8)
        let section =
            try #require(readme.components(separatedBy: "## Signed URLs").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        func row(_ name: String) -> String? {
            for line in section.split(separator: "\n") where line.hasPrefix("| \(name) | `") {
                return line.dropFirst("| \(name) | `".count).components(separatedBy: "` |").first
            }
            return nil
        }
        let example = Self.example
        // Then its table states exactly these values
        #expect(row("key") == example.key)
        #expect(row("query") == example.query)
        #expect(row("canonical query") == example.canonical)
        #expect(row("signature") == example.signature)
        #expect(row("URL") == "/thumb?\(example.query)&sig=\(example.signature)")
        // and the openssl one-liner uses the same key and canonical query, and prints the same signature
        #expect(section.contains("key='\(example.key)'"))
        #expect(section.contains("canonical='\(example.canonical)'"))
        #expect(section.contains("# \(example.signature)\n"))
        #expect(section.contains("# \(example.query)&sig=\(example.signature)\n"))

        // And thumbd's own code gives these values byte for byte
        #expect(try URLSignature.canonicalQuery(rawQuery: example.query) == example.canonical)
        #expect(URLSignature.signature(canonicalQuery: example.canonical, key: example.key) == example.signature)
        #expect(
            try URLSignature.signedQuery(example.query, key: example.key) == "\(example.query)&sig=\(example.signature)"
        )
        let verifier = URLSignatureVerifier(keys: [example.key])
        _ = try Self.verify("\(example.query)&sig=\(example.signature)", verifier)
    }

    // MARK: - Whole-batch signature (POST /info)

    @Test func aWholeBatchSignatureIsTheHMACOfThePrefixedBody() throws {
        // Given docs/api.md's example body and key
        let key = Self.example.key
        let body = Array(
            #"["https://images.example.com/a.jpg",{"url":"https://images.example.com/b.jpg","faces":true}]"#.utf8)
        // Then the signature is the one openssl and Python's hmac give for "POST /info\n" + body:
        // printf 'POST /info\n%s' "$body" | openssl dgst -sha256 -hmac "$key" -binary | basenc --base64url
        let signature = "mCSmpWuKBh6Cq7O5wTFhwuFuiIRdiiXUCPn11UCvbE0"
        #expect(URLSignature.batchSignature(body: body, key: key) == signature)
        let verifier = URLSignatureVerifier(keys: [Self.otherKey, key])
        _ = try verifier.verifyBatch(try QueryParameters(parsing: "sig=" + signature), body: body)
        // And any other body, key, or query is refused
        #expect(throws: RequestError.invalidSignature) {
            try verifier.verifyBatch(try QueryParameters(parsing: "sig=" + signature), body: body + [0x20])
        }
        #expect(throws: RequestError.invalidSignature) {
            try URLSignatureVerifier(keys: [Self.otherKey]).verifyBatch(
                try QueryParameters(parsing: "sig=" + signature), body: body)
        }
        #expect(throws: RequestError.missingSignature) {
            try verifier.verifyBatch(try QueryParameters(parsing: "sig="), body: body)
        }
        #expect(throws: RequestError.unknownParameter("url")) {
            try verifier.verifyBatch(try QueryParameters(parsing: "sig=\(signature)&url=x"), body: body)
        }
        // With no keys, the sig is not looked at (but the query still holds nothing else)
        _ = try URLSignatureVerifier(keys: []).verifyBatch(try QueryParameters(parsing: "sig=x"), body: body)
    }

    @Test func aBatchSignatureAndAQuerySignatureNeverStandForEachOther() throws {
        // Given a body and a query with the same text (what a client could try to replay one as the other)
        let key = Self.newestKey
        let verifier = URLSignatureVerifier(keys: [key])
        let text = "url=https%3A%2F%2Fimages.example.com%2Fa.jpg"
        let querySignature = URLSignature.signature(canonicalQuery: text, key: key)
        let batchSignature = URLSignature.batchSignature(body: Array(text.utf8), key: key)
        // Then each verifies only its own kind
        _ = try verifier.verify(try QueryParameters(parsing: "\(text)&sig=\(querySignature)"))
        _ = try verifier.verifyBatch(try QueryParameters(parsing: "sig=" + batchSignature), body: Array(text.utf8))
        #expect(throws: RequestError.invalidSignature) {
            try verifier.verify(try QueryParameters(parsing: "\(text)&sig=\(batchSignature)"))
        }
        #expect(throws: RequestError.invalidSignature) {
            try verifier.verifyBatch(try QueryParameters(parsing: "sig=" + querySignature), body: Array(text.utf8))
        }
        // because no canonical query holds the prefix's space or line feed (they are always percent-encoded)
        let canonical = try URLSignature.canonicalQuery(rawQuery: "a=POST%20/info%0A&b=%20")
        #expect(!canonical.utf8.contains(0x20) && !canonical.utf8.contains(0x0A))
    }
}

/// Counts observer calls (they may run on any thread).
private final class ObserverCount: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
