// SPDX-License-Identifier: Apache-2.0
import Crypto
import Synchronization

/// Checks the `sig` of `/thumb` requests against `security.signing_keys` (newest first; any of them verifies),
/// with keys that can be replaced while the service runs (``update(keys:)``, for a configuration reload).
///
/// With no keys, every request passes and `sig` is ignored. The MAC comparison is constant-time
/// (swift-crypto's `HMAC.isValidAuthenticationCode`); which key matched may show in the timing, the
/// signature's bytes do not.
///
/// Every key set has a *generation*. A verification reports the generation it used, and whatever is derived
/// from a verified request (the service's remembered aliases: raw target → variant) is kept with it and trusted
/// only while ``keyGeneration`` is still the same. So a change of keys takes effect for the very next request,
/// even one that a request verified under the old keys just before the change would otherwise have answered
/// from memory.
///
/// ```swift
/// let verifier = URLSignatureVerifier(keys: settings.security.signingKeys)
/// let generation = try verifier.verify(try QueryParameters(parsing: rawQuery))  // throws .invalidSignature
/// verifier.update(keys: reloaded.security.signingKeys)  // on reload: the next request sees the new keys
/// ```
package final class URLSignatureVerifier: Sendable {
    /// One set of keys and its generation, read together under the lock.
    private struct KeySet: Sendable {
        var keys: [URLSignature.SharedKey]
        var generation: UInt64
    }

    private let keySet: Mutex<KeySet>
    /// A copy of the current generation, for the alias hit path: one atomic load, no lock. Stored (releasing)
    /// under `keySet`'s lock after the keys are swapped, so a reader that sees the new generation also sees
    /// every later verification use the new keys.
    private let currentGeneration = Atomic<UInt64>(0)
    /// Runs after every ``update(keys:)`` (the service forgets its aliases then, to free their memory).
    private let observers = Mutex<[@Sendable () -> Void]>([])

    /// A verifier for `keys` (secrets whose UTF-8 bytes are the HMAC keys, newest first; empty: no signature
    /// required).
    package init(keys: [String]) {
        keySet = Mutex(KeySet(keys: keys.map(URLSignature.SharedKey.init), generation: 0))
    }

    /// Replaces the keys at once, atomically: requests verified from now on use `keys` (empty turns signing
    /// off), and nothing verified under the previous keys is trusted any longer. Any thread.
    package func update(keys: [String]) {
        let symmetricKeys = keys.map(URLSignature.SharedKey.init)
        keySet.withLock { keySet in
            keySet.keys = symmetricKeys
            keySet.generation &+= 1
            currentGeneration.store(keySet.generation, ordering: .releasing)
        }
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// Registers `observer` to run (on the updating thread) after each ``update(keys:)``.
    package func onUpdate(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    /// The generation of the current keys: results of verifications that reported another one are outdated.
    /// Lock-free (the alias hit path reads it on every request).
    @inline(__always)
    package var keyGeneration: UInt64 { currentGeneration.load(ordering: .acquiring) }

    /// Whether `/thumb` currently requires `sig`.
    package var requiresSignature: Bool { keySet.withLock { !$0.keys.isEmpty } }

    /// Checks the `sig` of a request's decoded parameters; returns the generation of the keys that verified it.
    ///
    /// With no keys, returns at once without looking at the parameters. Else exactly one non-empty `sig` must
    /// be the unpadded base64url (43 characters) of HMAC-SHA256 of the canonical query under one of the keys.
    /// - Throws: `RequestError.missingSignature` (no `sig`, or an empty one), `.invalidSignature` (anything
    ///   else that does not verify: malformed, padded, repeated, wrong key, tampered parameters).
    package func verify(_ parameters: QueryParameters) throws(RequestError) -> UInt64 {
        let (keys, generation) = keySet.withLock { ($0.keys, $0.generation) }
        guard !keys.isEmpty else { return generation }
        var signature: String?
        var signatureCount = 0
        for (name, value) in parameters.pairs where name == URLSignature.parameterName {
            signature = value
            signatureCount += 1
        }
        guard let signature, !signature.isEmpty else { throw .missingSignature }
        guard signatureCount == 1, signature.utf8.count == URLSignature.signatureLength,
            let code = URLSignature.base64URLDecoded(signature.utf8)
        else { throw .invalidSignature }
        let canonical = URLSignature.canonicalBytes(parameters)
        for key in keys where HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: canonical, using: key.key) {
            return generation
        }
        throw .invalidSignature
    }

    /// Checks the whole-batch signature of `POST /info` (its query's `sig`) over the exact body bytes
    /// (``URLSignature/batchMessage(body:)``); returns the generation of the keys that verified it.
    ///
    /// With no keys, returns at once. Else `parameters` must hold exactly one non-empty `sig` and nothing else.
    /// - Throws: `RequestError.missingSignature` (no `sig`, or an empty one), `.invalidSignature` (anything else
    ///   that does not verify), `.unknownParameter` for any other parameter.
    package func verifyBatch(_ parameters: QueryParameters, body: [UInt8]) throws(RequestError) -> UInt64 {
        let (keys, generation) = keySet.withLock { ($0.keys, $0.generation) }
        var signature: String?
        var signatureCount = 0
        for (name, value) in parameters.pairs {
            guard name == URLSignature.parameterName else { throw .unknownParameter(name) }
            signature = value
            signatureCount += 1
        }
        guard !keys.isEmpty else { return generation }
        guard let signature, !signature.isEmpty else { throw .missingSignature }
        guard signatureCount == 1, signature.utf8.count == URLSignature.signatureLength,
            let code = URLSignature.base64URLDecoded(signature.utf8)
        else { throw .invalidSignature }
        let message = URLSignature.batchMessage(body: body)
        for key in keys where HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: message, using: key.key) {
            return generation
        }
        throw .invalidSignature
    }
}
