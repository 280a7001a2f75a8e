// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Glibc
import Logging
import OriginFetch
import Synchronization
import ThumbdSettings
import Thumbnailing

/// The two tiers put together for thumbnails, plus the source originals and the memory of origin 404s.
///
/// - **Memory** (`MemoryCache`, cost = encoded bytes): looked up synchronously on the event loop, O(1).
/// - **Disk** (`DiskCache` under `<cache.disk.path>/thumbnails`): looked up on the `disk-io` threads
///   (``DiskReaders``), written by the `disk` thread (``DiskWriter``) in batches. A disk hit is promoted
///   to memory, or sent with `sendfile` when the memory tier is off.
/// - **Sources** (`DiskCache` under `<cache.disk.path>/sources`, own budget): the fetched originals, so a
///   new size of a known source needs no fetch while the source is fresh.
/// - **Not found**: origin 404/410 answers per source URL, kept `cache.negative_ttl` in a small LRU.
///
/// Only variants with freshness (the origin allowed storing them) enter a tier.
final class ThumbnailCache: Sendable {
    /// Sizes and places, from `cache.*` (Settings+ModuleConfigurations.swift).
    struct Configuration: Sendable {
        /// The memory tier; `nil` turns it off (`cache.memory.max_bytes: 0`).
        var memory: MemoryCache<CacheKey, CacheGroup, RenderedVariant>.Configuration?
        /// The thumbnail disk tier; `nil` turns it off (tests only: `cache.disk.max_bytes` must be positive).
        var variantsDisk: DiskCache.Configuration?
        /// The source originals; `nil` when `cache.sources` is false or the disk tier is off.
        var sourcesDisk: DiskCache.Configuration?
        /// The sources' analysis records (``SourceAnalyses``); `nil` keeps none on disk.
        var analysesDisk: DiskCache.Configuration?
        /// Where the purge index (``PurgeIndex``: tag → sources) is kept; `nil` for none (no disk tier).
        var purgeIndexPath: String?
        /// `cache.source_check_interval`: how often each source is checked with its origin in the background
        /// (``SourceChecker``); nil for never.
        var sourceCheckInterval: Duration?
        /// How long an origin 404 is remembered; zero turns that off.
        var negativeTTL: Duration = .seconds(60)
        /// Origin 404s remembered at most.
        var maxNotFoundEntries = 10_000
        /// Blob files kept open when the memory tier is off (descriptors), at most.
        var openBlobsMaxEntries = 4096
        /// Bytes of the blob files kept open when the memory tier is off, at most.
        var openBlobsMaxBytes = 64 << 20
        /// Bytes of recently stored originals also kept in memory (with a source cache).
        var recentSourcesMaxBytes = 64 << 20
        /// `disk-io` threads.
        var readerThreads = 2
        /// Lookups waiting for a `disk-io` thread at most.
        var readerQueueCapacity = 4096
        var hotSet = HotSet.Limits()
    }

    let memory: MemoryCache<CacheKey, CacheGroup, RenderedVariant>?
    /// Raw request (target + `Accept`) → the variant key it parsed to (~1/16 of the memory budget): a repeated
    /// request finds its thumbnail without parsing and normalising again (see ``aliasHit(_:keyGeneration:)``).
    let aliases: MemoryCache<CacheKey, CacheGroup, Alias>
    /// The event loops' copies of their recent memory hits; `nil` with the memory tier off.
    let hotSet: HotSet?
    /// With the memory tier off: blobs found on disk, kept open with their metadata (nginx's
    /// `open_file_cache`), so that a repeated disk hit is sent with `sendfile` from the event loop without a
    /// hop, a query or an `open`. Blobs are immutable (a new version gets a new file), so an open descriptor
    /// always holds the bytes it was verified with; entries go when their key is stored, refreshed, removed or
    /// purged. An entry evicted from disk behind its back keeps its (unlinked) file alive until it leaves
    /// this cache, which is bounded by ``Configuration/openBlobsMaxBytes``.
    let openBlobs: MemoryCache<CacheKey, CacheGroup, CachedFile>?
    /// Bumped by every change that makes an open blob outdated. A `disk-io` lookup keeps what it opened only
    /// if no change happened since it began (checked and inserted under this lock): otherwise a lookup that
    /// read a row just before a purge or a 304 could put the outdated blob back after it was forgotten.
    let openBlobsGeneration = Mutex<UInt64>(0)
    let variants: DiskCache?
    let sources: DiskCache?
    /// The sources' analysis records (small JSON blobs, keyed by source URL, in the source's purge group).
    let analyses: DiskCache?
    /// The originals stored last, also in memory (64 MB): a new size of a source fetched a moment ago needs
    /// neither the disk (its store may still be queued) nor the origin. Only with a source cache.
    let recentSources: MemoryCache<CacheKey, CacheGroup, RecentSource>?
    let notFound: MemoryCache<CacheKey, CacheGroup, NotFound>
    /// `cache.negative_ttl` in force (a reload replaces it; remembered 404s keep their deadline).
    let negativeTTLs: Mutex<Duration>
    var negativeTTL: Duration { negativeTTLs.withLock { $0 } }
    let writer: DiskWriter?
    let readers: DiskReaders?
    /// The sources stored on this node by tag and URL, for purges by tag or prefix; written on the `disk` thread.
    let purgeIndex: PurgeIndex?
    /// The sources recorded in ``purgeIndex`` lately, so that a store of another size of one of them queues no
    /// second insert (cleared whole at 65,536; a source recorded twice costs an insert that changes nothing).
    let recordedSources = Mutex<Set<String>>([])
    /// How often each source is checked with its origin (``SourceChecker``); nil for never.
    let sourceCheckInterval: Duration?
    /// The operator tags recorded in ``purgeIndex`` lately, by source URL (cleared whole at 65,536 sources).
    let recordedTags = Mutex<[String: Set<String>]>([:])
    let logger: Logger
    /// `X-Thumbd-Placeholder` for variants read back from disk (off until the service connects it).
    let placeholders = PlaceholderHeaders()
    /// The source tag header (`cache.tag_header`) for variants made or read back (off until the service names it).
    let sourceTags = SourceTagHeaders()

    /// Opens the disk caches (moving a corrupt index aside, logged as an error), starts the `disk` and
    /// `disk-io` threads. Reads no blob directory: the index is the truth, reconciling runs later.
    /// - Throws: when a cache directory cannot be used or a thread cannot start.
    init(configuration: Configuration, logger: Logger) throws {
        self.logger = logger
        let memory = try configuration.memory.map {
            try MemoryCache<CacheKey, CacheGroup, RenderedVariant>(configuration: $0)
        }
        self.memory = memory
        // About 200 bytes per alias (key text + entry): at most ~1/16 of the memory tier's budget.
        let memoryBytes = configuration.memory?.maxBytes ?? 256 << 20
        let aliases = try MemoryCache<CacheKey, CacheGroup, Alias>(
            configuration: .init(
                maxBytes: max(1 << 20, memoryBytes / 16), maxEntries: configuration.memory?.maxEntries ?? 100_000))
        self.aliases = aliases
        hotSet = memory.map { HotSet(memory: $0, aliases: aliases, limits: configuration.hotSet) }
        openBlobs =
            configuration.memory == nil && configuration.variantsDisk != nil
            ? try MemoryCache(
                configuration: .init(
                    maxBytes: configuration.openBlobsMaxBytes, maxEntries: configuration.openBlobsMaxEntries,
                    entryCostLimit: configuration.openBlobsMaxBytes))
            : nil
        notFound = try MemoryCache(
            configuration: .init(
                maxBytes: configuration.maxNotFoundEntries * 256, maxEntries: configuration.maxNotFoundEntries)
        )
        negativeTTLs = Mutex(configuration.negativeTTL)
        variants = try configuration.variantsDisk.map { try Self.open($0, name: "thumbnails", logger: logger) }
        sources = try configuration.sourcesDisk.map { try Self.open($0, name: "sources", logger: logger) }
        analyses = try configuration.analysesDisk.map { try Self.open($0, name: "analyses", logger: logger) }
        recentSources =
            sources == nil
            ? nil
            : try MemoryCache(configuration: .init(maxBytes: configuration.recentSourcesMaxBytes, maxEntries: 1024))
        purgeIndex = try configuration.purgeIndexPath.map { try PurgeIndex(path: $0) }
        sourceCheckInterval = configuration.sourceCheckInterval
        let caches = [variants, sources, analyses].compactMap { $0 }
        if caches.isEmpty {
            writer = nil
            readers = nil
        } else {
            writer = try DiskWriter(caches: caches, logger: logger)
            readers = try DiskReaders(
                variants: variants, sources: sources, analyses: analyses, threads: configuration.readerThreads,
                queueCapacity: configuration.readerQueueCapacity)
        }
    }

    private static func open(_ configuration: DiskCache.Configuration, name: String, logger: Logger) throws -> DiskCache
    {
        let cache = try DiskCache(configuration: configuration)
        if let issue = cache.startupIssue {
            logger.error(
                "disk cache index was unusable and has been rebuilt empty",
                metadata: ["cache": "\(name)", "directory": "\(configuration.directory)", "issue": "\(issue)"])
        }
        let statistics = cache.statistics
        logger.info(
            "disk cache opened",
            metadata: [
                "cache": "\(name)", "directory": "\(configuration.directory)",
                "entries": "\(statistics.currentEntries)", "bytes": "\(statistics.currentBytes)",
            ])
        return cache
    }

    /// Whether lookups go to disk at all.
    var hasDiskTier: Bool { variants != nil }

    /// Disk stores dropped (writer queue full) and writer operations failed, for /metrics; zeros without a disk.
    var writerCounts: (droppedStores: Int, failedOperations: Int) {
        (writer?.droppedStores ?? 0, writer?.failedOperations ?? 0)
    }

    /// Drains the writer (queued stores are written), then stops the threads.
    func shutdown() {
        readers?.shutdown()
        writer?.shutdown()
    }

    // MARK: - Lookups

    /// The memory tier's entry for `key` (most recently used now). Any thread; O(1).
    @inline(__always)
    func memoryHit(_ key: VariantKey) -> RenderedVariant? {
        memory?.value(forKey: key.cacheKey)
    }

    /// The memory tier's counters, its hits including those the event loops served from their hot sets.
    var memoryStatistics: MemoryCache<CacheKey, CacheGroup, RenderedVariant>.Statistics? {
        guard let memory else { return nil }
        var statistics = memory.statistics
        statistics.hits += hotSet?.hits ?? 0
        return statistics
    }

    // MARK: - Changes

    /// Keeps a rendered variant in both tiers (nothing when it has no freshness). Any thread.
    ///
    /// `visible` runs once a lookup finds the variant: at once when the memory tier took it, else after the
    /// disk write (on the `disk` thread), or at once when it cannot be stored at all.
    func store(_ key: VariantKey, _ variant: RenderedVariant, visible: @escaping @Sendable () -> Void = {}) {
        forgetOpenBlob(key)
        guard let freshness = variant.freshness else { return visible() }
        let inMemory =
            memory?.insert(variant, forKey: key.cacheKey, cost: variant.bytes.count, group: key.group) ?? false
        if inMemory { visible() }
        guard let variants, let writer else {
            if !inMemory { visible() }
            return
        }
        let metadata = DiskCache.EntryMetadata(
            contentType: variant.format.mimeType, etag: variant.etag, createdAt: Timestamp.now(), freshness: freshness)
        writer.store(.init(bytes: variant.bytes, key: key.cacheKey, group: key.group, metadata: metadata), in: variants)
        recordForPurge(key.source, freshness: freshness)
        // `perform` runs after the store queued before it.
        // A lookup between the forget above and the write may have reopened the old blob: forget it again
        // once the new row is in (`perform` runs after the store queued before it).
        if !inMemory,
            !writer.perform({ [self] in
                forgetOpenBlob(key)
                visible()
            })
        {
            visible()
        }
    }

    /// Replaces the freshness of a stored variant (after a 304): in memory at once, on disk in queue order.
    ///
    /// `visible` runs once a lookup finds the new freshness: at once when the memory tier took the variant,
    /// else after the disk update (on the `disk` thread). A revalidation ends only then: a request in between
    /// would still find the old deadline and send the origin a second conditional request.
    func refresh(_ key: VariantKey, _ variant: RenderedVariant, visible: @escaping @Sendable () -> Void = {}) {
        forgetOpenBlob(key)  // its metadata carries the old deadline; the next lookup reopens it
        guard let freshness = variant.freshness else { return visible() }
        // A variant served from a file (memory tier off) carries no bytes: there is nothing to put in memory.
        let inMemory =
            !variant.bytes.isEmpty
            && (memory?.insert(variant, forKey: key.cacheKey, cost: variant.bytes.count, group: key.group) ?? false)
        if inMemory { visible() }
        guard let variants, let writer else {
            if !inMemory { visible() }
            return
        }
        let logger = self.logger
        let queued = writer.perform { [self] in
            do {
                try variants.updateFreshness(for: key.cacheKey, freshness)
            } catch {
                logger.error("disk cache freshness update failed", metadata: ["error": "\(error)"])
            }
            forgetOpenBlob(key)  // reopened with the old deadline meanwhile? The next lookup sees the new one.
            if !inMemory { visible() }
        }
        if !queued, !inMemory { visible() }
    }

    /// Forgets one variant in both tiers (the origin no longer allows storing it, or it is gone).
    func remove(_ key: VariantKey) {
        memory?.removeValue(forKey: key.cacheKey)
        forgetOpenBlob(key)
        guard let variants, let writer else { return }
        let logger = self.logger
        writer.perform {
            do {
                try variants.remove(key.cacheKey)
            } catch {
                logger.error("disk cache remove failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Removes every variant of `source` from both tiers, its original and its remembered 404.
    /// `completion` runs once the disk rows are gone (on the `disk` thread), or at once without a disk tier.
    /// Work already under way for the source (a render in progress) may store again afterwards.
    /// - Parameters:
    ///   - keeping: a variant whose disk row stays (a revalidation replaces it next: lookups meanwhile find the old
    ///     entry, not nothing); its memory entry goes, the caller stores the new one at once.
    ///   - forgetsNotFound: false keeps the remembered 404 (a revalidation that met one remembered it first).
    func purge(
        source: SourceURL, keeping: VariantKey? = nil, forgetsNotFound: Bool = true,
        completion: @escaping @Sendable (PurgeReport) -> Void
    ) {
        let group = CacheGroup(source.string)
        var report = PurgeReport()
        report.memoryEntries = memory?.removeAll(inGroup: group) ?? 0
        aliases.removeAll(inGroup: group)
        recentSources?.removeAll(inGroup: group)
        if let openBlobs {
            openBlobsGeneration.withLock { generation in
                generation &+= 1
                openBlobs.removeAll(inGroup: group)
            }
        }
        if forgetsNotFound { notFound.removeAll(inGroup: group) }
        _ = recordedSources.withLock { $0.remove(source.string) }
        _ = recordedTags.withLock { $0.removeValue(forKey: source.string) }
        guard let writer else {
            completion(report)
            return
        }
        let (variants, sources, analyses, logger) = (self.variants, self.sources, self.analyses, self.logger)
        let purgeIndex = self.purgeIndex
        let queued = writer.perform { [report] in
            var report = report
            do {
                report.diskEntries = try variants?.purge(group: group, except: keeping?.cacheKey) ?? 0
                report.sourceEntries = try sources?.purge(group: group) ?? 0
                report.analysisEntries = try analyses?.purge(group: group) ?? 0
                try purgeIndex?.remove(url: source.string)
            } catch {
                logger.error("disk cache purge failed", metadata: ["source": "\(source)", "error": "\(error)"])
            }
            completion(report)
        }
        if !queued { completion(report) }
    }

    /// Records `source` in the purge index (on the `disk` thread, after the stores queued before), under its source
    /// tag, and with `cache.source_check_interval` its validators from `freshness`, due for a check one interval
    /// from now. Any thread; nothing when the source was recorded lately.
    func recordForPurge(_ source: SourceURL, freshness: DiskCache.Freshness) {
        guard let purgeIndex, let writer else { return }
        let url = source.string
        let isNew = recordedSources.withLock { recorded in
            if recorded.count >= 65_536 { recorded.removeAll(keepingCapacity: true) }
            return recorded.insert(url).inserted
        }
        guard isNew else { return }
        let logger = self.logger
        // A source with no validators cannot be checked: a conditional request would tell nothing.
        let interval = sourceCheckInterval ?? .zero
        let check =
            sourceCheckInterval == nil || (freshness.originETag == nil && freshness.originLastModified == nil)
            ? nil
            : PurgeIndex.Check(url: url, etag: freshness.originETag, lastModified: freshness.originLastModified)
        let queued = writer.perform {
            do {
                try purgeIndex.record(url: url, tags: [SourceTag.of(source)])
                if let check {
                    try purgeIndex.schedule(check, due: Timestamp.now().advanced(by: interval).millisecondsSinceEpoch)
                }
            } catch {
                logger.error("purge index insert failed", metadata: ["error": "\(error)"])
            }
        }
        if !queued { _ = recordedSources.withLock { $0.remove(url) } }
    }

    /// Records `source` in the purge index under the operator `tags` a request carried (``AnswerOptions/tags``), on
    /// the `disk` thread. Any thread; nothing for the tags recorded lately.
    func recordTags(_ tags: [String], for source: SourceURL) {
        guard let purgeIndex, let writer else { return }
        let url = source.string
        let new = recordedTags.withLock { recorded -> [String] in
            if recorded.count >= 65_536 && recorded[url] == nil { recorded.removeAll(keepingCapacity: true) }
            return tags.filter { recorded[url, default: []].insert($0).inserted }
        }
        guard !new.isEmpty else { return }
        let logger = self.logger
        let queued = writer.perform {
            do {
                try purgeIndex.record(url: url, tags: new)
            } catch {
                logger.error("purge index insert failed", metadata: ["error": "\(error)"])
            }
        }
        if !queued { recordedTags.withLock { recorded in for tag in new { recorded[url]?.remove(tag) } } }
    }

    /// Runs `job` with the purge index on the `disk` thread (after every store queued before it): its reads are
    /// blocking SQLite calls. `job` gets nil when there is no index (no disk tier) or the queue is full.
    func withPurgeIndex(_ job: @escaping @Sendable (PurgeIndex?) -> Void) {
        guard let purgeIndex, let writer else { return job(nil) }
        if !writer.perform({ job(purgeIndex) }) { job(nil) }
    }

    /// Evicts least recently used thumbnails from memory until at most `bytes` remain. Returns how many.
    func trimMemory(toBytes bytes: Int) -> Int {
        memory?.trim(toBytes: bytes) ?? 0
    }
}
