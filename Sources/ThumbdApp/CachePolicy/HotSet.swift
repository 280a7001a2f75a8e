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
