// SPDX-License-Identifier: Apache-2.0

public import Synchronization

/// The memory tier: an LRU cache with a byte budget, an entry budget and a per-entry cost cap.
///
/// Thread-safe: every operation takes one `Mutex` for O(1) work and never does I/O under it.
/// The budgets hold at every instant, even under concurrent inserts, because room is made under the
/// same lock before a new entry is linked (``Statistics/peakBytes`` records the highest total ever
/// reached, so tests and operators can check it). A hit moves the entry to the front and allocates
/// nothing.
///
/// Each entry may name a `Group` (e.g. ``CacheGroup`` of the source URL): ``removeAll(inGroup:)``
/// purges every variant of one source in O(variants), through an intrusive per-group list.
///
/// ```swift
/// let memory = try MemoryCache<CacheKey, CacheGroup, ImageBytes>(configuration: .init(maxBytes: 256 << 20))
/// memory.insert(bytes, forKey: key, cost: bytes.count, group: CacheGroup(sourceURL))
/// if let hit = memory.value(forKey: key) { serve(hit) }
/// ```
// `public` (not `package`, against STYLE.md) for the type and its hot-path methods only: Swift 6.3 does not
// inline or specialise `@inlinable package` members in another module, but does for `@inlinable public`
// ones (two-module repro, and bench/: unspecialised, a hit cost ~500 ns of generic-metadata lookups and
// value-witness copies). Everything else stays `package`.
public final class MemoryCache<Key: Hashable & Sendable, Group: Hashable & Sendable, Value: Sendable>: Sendable {
    // @usableFromInline + @inlinable: the app's module specialises the hot path for its concrete types.
    @usableFromInline let storage: Mutex<LRUStorage<Key, Group, Value>>
    /// ``LRUStorage/removals`` as of the last operation that removed anything, readable without the lock.
    @usableFromInline let removals = Atomic<Int>(0)

    /// Creates an empty cache.
    /// - Throws: ``ConfigurationError`` when `configuration` is out of range.
    package init(configuration: Configuration = Configuration()) throws(ConfigurationError) {
        try configuration.validate()
        storage = Mutex(
            LRUStorage(
                maxBytes: configuration.maxBytes,
                maxEntries: configuration.maxEntries,
                entryCostLimit: configuration.effectiveEntryCostLimit
            )
        )
    }

    /// The cached value for `key`, made most recently used; `nil` on a miss. Counts a hit or a miss.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        storage.withLock { $0.value(forKey: key) }
    }

    /// Makes `key` most recently used without counting a hit: for a copy that served the hits itself
    /// (the event loops' hot sets) and tells the cache now and then that its entry is still in use.
    @inlinable
    public func touch(_ key: Key) {
        _ = storage.withLock { $0.touch(key) }
    }

    /// How many entries have left the cache so far, for any reason (eviction, removal, replacement, trim).
    /// A copy of an entry taken while this count was `n` is still the cached value while it is `n`. Lock-free:
    /// a plain read of a word written only when something leaves.
    @inlinable
    public var removalCount: Int { removals.load(ordering: .acquiring) }

    /// Runs a mutation under the lock and publishes ``removalCount`` if it removed anything.
    @inlinable
    func mutate<Result>(_ body: (inout LRUStorage<Key, Group, Value>) -> Result) -> Result {
        storage.withLock { storage in
            let before = storage.removals
            let result = body(&storage)
            if storage.removals != before { removals.store(storage.removals, ordering: .releasing) }
            return result
        }
    }

    /// Whether `key` is cached, without counting or refreshing it.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        storage.withLock { $0.contains(key) }
    }

    /// Inserts or replaces the value for `key`, evicting least recently used entries first so the
    /// budgets are never exceeded.
    ///
    /// - Parameters:
    ///   - cost: the value's size in bytes (encoded image bytes). Must not be negative.
    ///   - group: what ``removeAll(inGroup:)`` purges together; `nil` for none.
    /// - Returns: `false` when `cost` is above the per-entry limit: the value is not kept and any
    ///   previous value for `key` is removed (it is outdated).
    @discardableResult
    @inlinable
    public func insert(_ value: Value, forKey key: Key, cost: Int, group: Group? = nil) -> Bool {
        mutate { $0.insert(value, forKey: key, cost: cost, group: group) }
    }

    /// Removes and returns the value for `key`, if any.
    @discardableResult
    @inlinable
    public func removeValue(forKey key: Key) -> Value? {
        mutate { $0.removeValue(forKey: key) }
    }

    /// Removes every entry inserted with `group` (every variant of one source). Returns how many.
    @discardableResult
    @inlinable
    public func removeAll(inGroup group: Group) -> Int {
        mutate { $0.removeAll(inGroup: group) }
    }

    /// Removes every entry whose key matches. O(n) under the lock: for rare admin use; prefer
    /// ``removeAll(inGroup:)``.
    @discardableResult
    package func removeAll(where shouldRemove: @Sendable (Key) -> Bool) -> Int {
        mutate { $0.removeAll(where: shouldRemove) }
    }

    /// Removes everything. Counters other than sizes are kept.
    package func removeAll() {
        mutate { $0.removeAll() }
    }

    /// Evicts least recently used entries until at most `bytes` are cached (memory pressure, admin
    /// trim). The limits are unchanged. Returns how many entries were evicted.
    @discardableResult
    package func trim(toBytes bytes: Int) -> Int {
        mutate { $0.trim(toBytes: bytes) }
    }

    /// Applies new limits (config hot reload); shrinking evicts at once, before this returns.
    /// - Parameter entryCostLimit: `nil` for the default, `maxBytes / 10`.
    /// - Throws: ``ConfigurationError`` when the limits are out of range; nothing changes then.
    package func setLimits(maxBytes: Int, maxEntries: Int, entryCostLimit: Int? = nil) throws(ConfigurationError) {
        let configuration = Configuration(maxBytes: maxBytes, maxEntries: maxEntries, entryCostLimit: entryCostLimit)
        try configuration.validate()
        mutate {
            $0.setLimits(
                maxBytes: configuration.maxBytes,
                maxEntries: configuration.maxEntries,
                entryCostLimit: configuration.effectiveEntryCostLimit
            )
        }
    }

    /// A consistent snapshot of the counters and sizes.
    package var statistics: Statistics {
        storage.withLock {
            Statistics(
                hits: $0.hits,
                misses: $0.misses,
                evictions: $0.evictions,
                rejections: $0.rejections,
                currentBytes: $0.totalBytes,
                currentEntries: $0.count,
                peakBytes: $0.peakBytes,
                peakEntries: $0.peakEntries,
                maxBytes: $0.maxBytes,
                maxEntries: $0.maxEntries,
                entryCostLimit: $0.entryCostLimit
            )
        }
    }

    /// Keys from most to least recently used. O(n) under the lock: tests and diagnostics only.
    package func keysByRecency() -> [Key] {
        storage.withLock { $0.keysByRecency() }
    }
}

extension MemoryCache {
    /// Counters and sizes of a ``MemoryCache`` at one instant.
    package struct Statistics: Sendable, Equatable {
        /// Lookups that found a value.
        package var hits: Int
        /// Lookups that found nothing.
        package var misses: Int
        /// Entries removed to make room (inserts, trims, shrinking limits); explicit removals not included.
        package var evictions: Int
        /// Inserts refused because the cost was above the per-entry limit.
        package var rejections: Int
        /// Sum of the costs of the cached entries.
        package var currentBytes: Int
        /// Number of cached entries.
        package var currentEntries: Int
        /// Highest `currentBytes` ever reached (the budget check: never above `maxBytes` in force then).
        package var peakBytes: Int
        /// Highest `currentEntries` ever reached.
        package var peakEntries: Int
        /// Byte budget in force.
        package var maxBytes: Int
        /// Entry budget in force.
        package var maxEntries: Int
        /// Largest cost kept.
        package var entryCostLimit: Int
    }

    /// Limits of a ``MemoryCache`` (`cache.memory.*` in the config file).
    package struct Configuration: Sendable, Equatable {
        /// Byte budget, the sum of entry costs (default 256 MiB).
        package var maxBytes: Int
        /// Entry budget (default 100,000).
        package var maxEntries: Int
        /// Largest cost an entry may have to be kept; `nil` means `maxBytes / 10`, so one huge image
        /// cannot flush most of the cache (Nuke's `entryCostLimit`).
        package var entryCostLimit: Int?

        /// Creates a configuration; every parameter has the documented default.
        package init(maxBytes: Int = 256 << 20, maxEntries: Int = 100_000, entryCostLimit: Int? = nil) {
            self.maxBytes = maxBytes
            self.maxEntries = maxEntries
            self.entryCostLimit = entryCostLimit
        }

        /// The per-entry limit in force: `entryCostLimit` or `maxBytes / 10`.
        package var effectiveEntryCostLimit: Int {
            entryCostLimit ?? maxBytes / 10
        }

        /// Checks every limit.
        /// - Throws: ``ConfigurationError`` naming the first setting out of range.
        package func validate() throws(ConfigurationError) {
            guard maxBytes >= 0 else { throw ConfigurationError(key: "maxBytes", message: "must not be negative") }
            guard maxEntries >= 0, maxEntries < Int(Int32.max) else {
                throw ConfigurationError(key: "maxEntries", message: "must be between 0 and \(Int32.max - 1)")
            }
            if let entryCostLimit, entryCostLimit < 0 {
                throw ConfigurationError(key: "entryCostLimit", message: "must not be negative")
            }
        }
    }
}
