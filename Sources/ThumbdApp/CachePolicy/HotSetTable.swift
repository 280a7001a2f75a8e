// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import Synchronization
import URLForms

/// One thread's hot set (see ``HotSet``). Not thread-safe: only its thread uses it, apart from the two
/// counters other threads read.
final class HotSetTable: @unchecked Sendable {
    /// A copy of one memory hit's answer.
    final class Entry {
        /// The request bytes it answers.
        let requestKey: HotSetKey
        /// The request's alias in the memory tier, to touch it there.
        let alias: CacheKey
        /// The variant's key, to touch the memory LRU and to note the source.
        let key: VariantKey
        /// Signing keys under which the request was verified.
        let keyGeneration: UInt64
        /// The answer but its `Age`: `Content-Type`, `ETag`, `Cache-Control`, `X-Cache: HIT-MEMORY` (and
        /// `Vary: Accept` under `format=auto`; `Accept-CH` and the hints in `Vary` with client hints) serialised, and the thumbnail, both this thread's copies. Copying
        /// it costs a few retains; making a response (an initializer in another module) copies every field
        /// once more.
        let template: HTTPResponse
        /// Bytes it holds (the table's budget).
        let size: Int
        /// When the origin last confirmed the content (`Age` counts from it) and when it stops being fresh;
        /// without the validators, whose strings the other loops share.
        let freshness: DiskCache.Freshness
        /// When the memory tier was last told this entry is in use (milliseconds since the epoch).
        var lastTouched: Int64

        init(
            requestKey: HotSetKey, alias: CacheKey, key: VariantKey, keyGeneration: UInt64, fields: PreparedFields,
            body: [UInt8], validatedAt: Timestamp, expiresAt: Timestamp?, lastTouched: Int64
        ) {
            self.requestKey = requestKey
            self.alias = alias
            self.key = key
            self.keyGeneration = keyGeneration
            template = HTTPResponse(
                status: .ok, preparedFields: fields, body: .bytes(body), accessLogNote: CacheOutcome.hitMemory.rawValue)
            size = body.count + fields.bytes.count + requestKey.target.count + (requestKey.accept?.count ?? 0) + 160
            freshness = DiskCache.Freshness(validatedAt: validatedAt, expiresAt: expiresAt)
            self.lastTouched = lastTouched
        }

        /// Whether it may be served as it is at `now` (a stale one goes the shared way, which revalidates).
        @inline(__always)
        func isFresh(at now: Timestamp) -> Bool {
            freshness.state(at: now) == .fresh
        }

        /// The answer at `now`: the copied lines, then `Age`.
        @inline(__always)
        func response(at now: Timestamp) -> HTTPResponse {
            var response = template
            response.age = freshness.age(at: now)
            return response
        }
    }

    private let limits: HotSet.Limits
    /// Open addressing with linear probing, keyed by ``HotSetKey/hash``: at least twice as many slots as
    /// entries, and nothing is removed one by one (a key copied again replaces its entry in place; the table
    /// empties all at once), so a probe ends at the first empty slot.
    private var slots: [Entry?]
    private let mask: Int
    private(set) var count = 0
    private var bytes = 0
    /// ``MemoryCache/removalCount`` and ``HotSet`` generation the entries were copied under.
    private(set) var removals = -1
    private(set) var generation: UInt64 = .max
    /// Hits served from this table (written by its thread only).
    let hits = Atomic<Int>(0)
    /// ``bytes`` for other threads.
    let publishedBytes = Atomic<Int>(0)

    init(limits: HotSet.Limits) {
        self.limits = limits
        var capacity = 16
        while capacity < 2 * limits.maxEntries { capacity *= 2 }
        slots = [Entry?](repeating: nil, count: capacity)
        mask = capacity - 1
    }

    /// The entry for the request bytes `target` and `accept` (``HTTPRequest/withRawTarget(andOnlyValueOf:_:)``)
    /// if it was copied under the signing keys of `keyGeneration`.
    @inline(__always)
    func entry(target: UnsafeRawBufferPointer, accept: UnsafeRawBufferPointer?, keyGeneration: UInt64) -> Entry? {
        guard let entry = probe(HotSetKey.hash(target: target, accept: accept), target: target, accept: accept).entry
        else { return nil }
        return entry.keyGeneration == keyGeneration ? entry : nil
    }

    /// The slot holding the entry for these request bytes (and the entry), or the empty slot where it goes.
    @inline(__always)
    private func probe(
        _ hash: UInt64, target: UnsafeRawBufferPointer, accept: UnsafeRawBufferPointer?
    ) -> (index: Int, entry: Entry?) {
        var index = Int(truncatingIfNeeded: hash) & mask
        while let entry = slots[index] {
            if entry.requestKey.hash == hash && entry.requestKey.matches(target: target, accept: accept) {
                return (index, entry)
            }
            index = (index + 1) & mask
        }
        return (index, nil)
    }

    /// The slot holding `key`, or the empty one where it goes.
    private func slot(for key: HotSetKey) -> Int {
        key.withBytes { probe(key.hash, target: $0, accept: $1).index }
    }

    /// Counts a hit served from this table. Only this thread writes the counter: no atomic add needed.
    @inline(__always)
    func countHit() {
        hits.store(hits.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
    }

    /// Copies the answer of `variant` (a fresh memory hit for the request `requestKey`, whose alias is
    /// `alias`, looked up after ``HotSet/table()`` returned this table) into the table. If the memory tier
    /// removed anything since, the table's counters are behind and its next ``HotSet/table()`` empties it.
    /// Skipped when the copy is too big; a full table is emptied first.
    func insert(
        _ requestKey: HotSetKey, alias: CacheKey, key: VariantKey, keyGeneration: UInt64, variant: RenderedVariant,
        freshness: DiskCache.Freshness, cacheControl: String, variesOnAccept: Bool,
        clientHints: ClientHints.Used? = nil, extraFields: [HTTPField] = [], now: Timestamp
    ) {
        // (The entry's own `size` adds a few dozen bytes of lines to this estimate.)
        let estimate = variant.bytes.count + variant.preparedFields.bytes.count + 160
        guard estimate <= limits.maxBytes / 8 else { return }
        var lines = [
            HTTPField(name: "Cache-Control", value: cacheControl),
            HTTPField(name: "X-Cache", value: CacheOutcome.hitMemory.rawValue),
        ]
        lines += ClientHints.responseFields(variesOnAccept: variesOnAccept, used: clientHints)
        lines += extraFields
        let entry = Entry(
            requestKey: requestKey, alias: alias, key: key, keyGeneration: keyGeneration,
            fields: PreparedFields(variant.preparedFields, then: lines), body: Self.copy(variant.bytes),
            validatedAt: freshness.validatedAt, expiresAt: freshness.expiresAt, lastTouched: now.millisecondsSinceEpoch)
        var index = slot(for: requestKey)
        if let previous = slots[index] {
            bytes -= previous.size
            count -= 1
        }
        if count >= limits.maxEntries || bytes + entry.size > limits.maxBytes {
            removeAll()
            index = slot(for: requestKey)
        }
        slots[index] = entry
        count += 1
        bytes += entry.size
        publishedBytes.store(bytes, ordering: .relaxed)
    }

    /// Drops every entry and notes the counters the next copies are made under.
    func empty(removals: Int, generation: UInt64) {
        removeAll()
        publishedBytes.store(0, ordering: .relaxed)
        self.removals = removals
        self.generation = generation
    }

    private func removeAll() {
        guard count > 0 else { return }
        for index in slots.indices { slots[index] = nil }
        count = 0
        bytes = 0
    }

    /// The request keys of the entries held (for tests).
    var requestKeys: [HotSetKey] {
        slots.compactMap { $0?.requestKey }
    }

    /// A copy in a new buffer (`Array(bytes)` would share the buffer, and its reference count, with the other
    /// loops).
    private static func copy(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: bytes.count) { buffer, count in
            _ = buffer.initialize(from: bytes)
            count = bytes.count
        }
    }
}
