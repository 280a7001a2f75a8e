// SPDX-License-Identifier: Apache-2.0
import Caching

/// `GET /info` answers made from kept analysis records, kept encoded by the request's raw query: a repeated query is
/// answered without parsing it or encoding JSON again (the two were nine tenths of a warm answer's own CPU: issue 28's
/// `bench/info-rate.sh`), as the thumbnails' aliases do for `/thumb`.
///
/// An answer is used only while it still describes what a new parse would answer: the signing keys of the same
/// generation (a query verified under other keys is parsed again) and the record it was made from still kept, for
/// the same bytes, and fresh (a record replaced, forgotten by a purge or expired makes it a miss). The query's parse
/// is a pure function of its text, the keys and the analysis options (fixed at start), so nothing else can change it.
final class PreparedInfoAnswers: Sendable {
    /// One answer: the record it was made from (source URL, digest), the keys' generation, the JSON body.
    struct Entry: Sendable {
        let source: String
        let digest: String
        let keyGeneration: UInt64
        let body: [UInt8]
    }

    private let memory: MemoryCache<String, String, Entry>

    /// - Parameter maxBytes: the answers' budget (bodies and queries).
    init(maxBytes: Int = 16 << 20, maxEntries: Int = 20_000) throws(Caching.ConfigurationError) {
        memory = try MemoryCache(configuration: .init(maxBytes: maxBytes, maxEntries: maxEntries))
    }

    /// The body prepared for `query` and its canonical source URL, if it still answers it now (see the type's comment).
    func body(
        for query: String, keyGeneration: UInt64, analyses: SourceAnalyses
    ) -> (body: [UInt8], source: String)? {
        guard let entry = memory.value(forKey: query), entry.keyGeneration == keyGeneration,
            let kept = analyses.kept(entry.source), kept.record.digest == entry.digest, kept.isFresh
        else { return nil }
        return (entry.body, entry.source)
    }

    /// Keeps `entry` as the answer to `query`.
    func keep(_ entry: Entry, for query: String) {
        memory.insert(entry, forKey: query, cost: entry.body.count + query.utf8.count + 96, group: entry.source)
    }
}
