// SPDX-License-Identifier: Apache-2.0
import Caching
import Glibc
import HTTP1
import Synchronization

/// Each event loop's copies of the memory hits it served last, so that a repeated hit touches no memory that
/// another loop writes.
///
/// Why: a memory hit through the shared tier takes two locks (alias and variant LRUs), moves two entries to the
/// front and retains the variant, its bytes and its fields. Two loops serving the same hot thumbnails then
/// bounce those cache lines between the cores on every request: most of what `swift_retain` cost in a HOT
/// profile (BENCHMARKS.md, "Hot set"). A table belongs to one thread and holds that thread's own copies of
/// what the answer sends (head fields, body), so a hit from it retains only objects no other core touches.
///
/// Correctness rests on two counters read without a lock (a load of a word nobody writes while nothing
/// changes): the memory tier's ``MemoryCache/removalCount`` (every eviction, removal, replacement, trim,
/// purge) and ``generation`` (signing keys, `Cache-Control` or the tier's limits changed). A table that sees
/// either move empties itself before answering, so it never sends an entry the memory tier no longer holds
/// as it was copied. Only fresh, storable variants without a conditional request are served from it; the
/// rest takes the shared path. Recency and counting stay exact enough: a table entry tells the memory LRU
/// it is in use at most once a second per loop, and its hits are counted per table (``hits``), summed into
/// the memory tier's hits for /metrics and /status.
///
/// Memory: per loop thread at most ``Limits/maxEntries`` entries and ``Limits/maxBytes`` bytes of copies
/// (an entry above 1/8 of that is not copied); a full table is emptied and refilled. The copies come on top
/// of the memory tier's budget: with the defaults, at most 4 MiB per loop (docs/architecture.md).
final class HotSet: Sendable {
    /// How much one thread's table may hold.
    struct Limits: Sendable {
        var maxEntries = 256
        var maxBytes = 4 << 20
    }

    let limits: Limits
    private let memory: MemoryCache<CacheKey, CacheGroup, RenderedVariant>
    private let aliases: MemoryCache<CacheKey, CacheGroup, ThumbnailCache.Alias>
    /// Bumped when something other than a memory removal makes the copies wrong: a new `Cache-Control`,
    /// forgotten aliases (new signing keys).
    private let generation = Atomic<UInt64>(0)
    /// Every table made, so that their hits can be summed. Tables stay until the set goes (one per thread
    /// that served a memory hit: the event loops).
    private let tables = Mutex<[HotSetTable]>([])
    /// Where each thread finds its table (a pointer to it; ``tables`` keeps it alive).
    private let key: pthread_key_t

    init(
        memory: MemoryCache<CacheKey, CacheGroup, RenderedVariant>,
        aliases: MemoryCache<CacheKey, CacheGroup, ThumbnailCache.Alias>, limits: Limits = Limits()
    ) {
        self.memory = memory
        self.aliases = aliases
        self.limits = limits
        var key = pthread_key_t()
        let result = pthread_key_create(&key, nil)
        precondition(result == 0, "pthread_key_create failed: \(result)")
        self.key = key
    }

    deinit {
        pthread_key_delete(key)
    }

    /// The calling thread's table, emptied first if the memory tier removed anything or ``invalidate()`` ran
    /// since the thread last looked. Only the calling thread may use it.
    @inline(__always)
    func table() -> HotSetTable {
        let table: HotSetTable
        if let stored = pthread_getspecific(key) {
            table = Unmanaged<HotSetTable>.fromOpaque(stored).takeUnretainedValue()
        } else {
            table = makeTable()
        }
        let removals = memory.removalCount
        let generation = generation.load(ordering: .acquiring)
        if table.removals != removals || table.generation != generation {
            table.empty(removals: removals, generation: generation)
        }
        return table
    }

    @inline(never)
    private func makeTable() -> HotSetTable {
        let table = HotSetTable(limits: limits)
        tables.withLock { $0.append(table) }
        pthread_setspecific(key, Unmanaged.passUnretained(table).toOpaque())
        return table
    }

    /// Makes every table empty itself at its next use (the answers they hold changed).
    func invalidate() {
        generation.add(1, ordering: .releasing)
    }

    /// Hits served from the tables so far.
    var hits: Int {
        tables.withLock { $0.reduce(0) { $0 + $1.hits.load(ordering: .relaxed) } }
    }

    /// Bytes of copies the tables hold now (an estimate read from other threads, for /metrics and tests).
    var bytes: Int {
        tables.withLock { $0.reduce(0) { $0 + $1.publishedBytes.load(ordering: .relaxed) } }
    }

    /// Tells the memory tier that `entry` is still in use, at most once a second per table entry (each hit
    /// would put the shared LRU's lock back on the hit path).
    @inline(__always)
    func touchIfDue(_ entry: HotSetTable.Entry, now: Timestamp) {
        guard now.millisecondsSinceEpoch - entry.lastTouched >= 1000 else { return }
        entry.lastTouched = now.millisecondsSinceEpoch
        memory.touch(entry.key.cacheKey)
        aliases.touch(entry.alias)
    }
}

/// What identifies a request to a hot-set table: the request's own bytes, its raw query and its one `Accept`
/// value as sent, so that a hit makes no `String` and no alias key (~740 instructions of a hot hit, measured).
/// Two requests with the same bytes parse to the same variant; requests whose bytes differ but mean the same
/// (percent-encoding, invalid UTF-8 repaired) are different keys that each get their own copy.
struct HotSetKey {
    let query: [UInt8]
    /// `nil` when the request sent no `Accept`; the empty array when it sent an empty one.
    let accept: [UInt8]?
    let hash: UInt64

    /// A key holding copies of `query` (`nil`: no `?`, the same as empty) and `accept`.
    init(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?) {
        self.query = query.map { [UInt8]($0) } ?? []
        self.accept = accept.map { [UInt8]($0) }
        hash = Self.hash(query: query, accept: accept)
    }

    @inline(__always)
    static func hash(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?) -> UInt64 {
        let queryHash = XXHash64.hash(query ?? UnsafeRawBufferPointer(start: nil, count: 0))
        guard let accept else { return queryHash }
        return XXHash64.hash(accept, seed: queryHash &+ 1)
    }

    /// Calls `body` with the key's bytes, as a request's are read in place.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) -> Result) -> Result {
        query.withUnsafeBytes { query in
            guard let accept else { return body(query, nil) }
            return accept.withUnsafeBytes { body(query, $0) }
        }
    }

    /// Whether the request bytes are this key's.
    @inline(__always)
    func matches(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?) -> Bool {
        guard Self.equal(self.query, query ?? UnsafeRawBufferPointer(start: nil, count: 0)) else { return false }
        switch (self.accept, accept) {
        case (nil, nil): return true
        case (let stored?, let sent?): return Self.equal(stored, sent)
        default: return false
        }
    }

    @inline(__always)
    private static func equal(_ stored: [UInt8], _ sent: UnsafeRawBufferPointer) -> Bool {
        stored.count == sent.count
            && stored.withUnsafeBytes { sent.count == 0 || memcmp($0.baseAddress!, sent.baseAddress!, sent.count) == 0 }
    }
}

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
        /// `Vary: Accept` under `format=auto`) serialised, and the thumbnail, both this thread's copies. Copying
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
            size = body.count + fields.bytes.count + requestKey.query.count + (requestKey.accept?.count ?? 0) + 160
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

    /// The entry for the request bytes `query` and `accept` (``HTTPRequest/withRawQuery(andOnlyValueOf:_:)``)
    /// if it was copied under the signing keys of `keyGeneration`.
    @inline(__always)
    func entry(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?, keyGeneration: UInt64) -> Entry? {
        guard let entry = probe(HotSetKey.hash(query: query, accept: accept), query: query, accept: accept).entry
        else { return nil }
        return entry.keyGeneration == keyGeneration ? entry : nil
    }

    /// The slot holding the entry for these request bytes (and the entry), or the empty slot where it goes.
    @inline(__always)
    private func probe(
        _ hash: UInt64, query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?
    ) -> (index: Int, entry: Entry?) {
        var index = Int(truncatingIfNeeded: hash) & mask
        while let entry = slots[index] {
            if entry.requestKey.hash == hash && entry.requestKey.matches(query: query, accept: accept) {
                return (index, entry)
            }
            index = (index + 1) & mask
        }
        return (index, nil)
    }

    /// The slot holding `key`, or the empty one where it goes.
    private func slot(for key: HotSetKey) -> Int {
        key.withBytes { probe(key.hash, query: $0, accept: $1).index }
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
        freshness: DiskCache.Freshness, cacheControl: String, variesOnAccept: Bool, now: Timestamp
    ) {
        // (The entry's own `size` adds a few dozen bytes of lines to this estimate.)
        let estimate = variant.bytes.count + variant.preparedFields.bytes.count + 160
        guard estimate <= limits.maxBytes / 8 else { return }
        var lines = [
            HTTPField(name: "Cache-Control", value: cacheControl),
            HTTPField(name: "X-Cache", value: CacheOutcome.hitMemory.rawValue),
        ]
        if variesOnAccept { lines.append(HTTPField(name: "Vary", value: "Accept")) }
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
