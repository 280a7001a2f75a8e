// SPDX-License-Identifier: Apache-2.0
import Caching
import URLForms

/// The alias table: what a request seen before parsed to, so that it skips parsing and verifying.
extension ThumbnailCache {
    /// The key of a request as received (its ``RequestIdentity``), for ``aliasHit(_:keyGeneration:)``: the raw
    /// target, path and query, and the `Accept` value (which decides the format under `format=auto`), or with
    /// client hints read, ``RequestIdentity/variation``. A newline cannot occur in a request line, so the pair is
    /// unambiguous.
    static func aliasKey(target: String, accept: String?) -> CacheKey {
        CacheKey(accept.map { target + "\n" + $0 } ?? target)
    }

    /// The variant key that the request `alias` parsed to the last time, if remembered under the signing keys
    /// of `keyGeneration` (``URLSignatureVerifier/keyGeneration``). Parsing is a pure function of the target and
    /// `Accept` (a target reaches one route, so one URL form), so the answer is the same as parsing again, for a
    /// fraction of the cost (measured: parsing and key building were ~25% of a memory hit's CPU). Verifying the
    /// signature is a pure function of the target and the keys, so an alias remembered after a verification under
    /// the same keys needs none either; one from older keys is ignored. A purge removes a source's aliases too.
    @inline(__always)
    func aliasHit(_ alias: CacheKey, keyGeneration: UInt64) -> VariantKey? {
        guard let entry = aliases.value(forKey: alias), entry.keyGeneration == keyGeneration else { return nil }
        return entry.key
    }

    /// ``aliasHit(_:keyGeneration:)`` with what the request asked of its answer's headers (nil: nothing), which the
    /// answer must carry as the parse's would.
    @inline(__always)
    func aliasHitWithAnswer(_ alias: CacheKey, keyGeneration: UInt64) -> (key: VariantKey, answer: AnswerOptions?)? {
        guard let entry = aliases.value(forKey: alias), entry.keyGeneration == keyGeneration else { return nil }
        return (entry.key, entry.answer)
    }

    /// ``aliasHit(_:keyGeneration:)`` with the client hints the parse consulted (requests read with their hints) and
    /// what it asked of its answer's headers.
    func aliasHitWithHints(
        _ alias: CacheKey, keyGeneration: UInt64
    ) -> (key: VariantKey, hintsUsed: ClientHints.Used, answer: AnswerOptions?)? {
        guard let entry = aliases.value(forKey: alias), entry.keyGeneration == keyGeneration else { return nil }
        return (entry.key, entry.hintsUsed, entry.answer)
    }

    /// Remembers what `alias` parses to (after a hit or a render of `key`), for a request verified under the
    /// signing keys (and rules) of `keyGeneration`, with the client hints its parse consulted and what it asked of
    /// its answer's headers (nil: nothing).
    func rememberAlias(
        _ alias: CacheKey, _ key: VariantKey, keyGeneration: UInt64, hintsUsed: ClientHints.Used = [],
        answer: AnswerOptions? = nil
    ) {
        aliases.insert(
            Alias(key: key, keyGeneration: keyGeneration, hintsUsed: hintsUsed, answer: answer), forKey: alias,
            cost: 104 + alias.variant.utf8.count
                + (answer == nil
                    ? 0 : 64 + (answer?.filename?.utf8.count ?? 0) + (answer?.skippedFilters?.utf8.count ?? 0)),
            group: key.group)
    }

    /// Forgets every alias (the signing keys or `/thumb`'s rules changed: their entries can no longer hit, this
    /// frees their memory).
    func forgetAliases() {
        aliases.removeAll()
        hotSet?.invalidate()
    }
}
