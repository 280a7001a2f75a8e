// SPDX-License-Identifier: Apache-2.0
import Caching
import Logging
import OriginFetch
import Synchronization

/// The one purge path: `DELETE /cache?url=`, `POST /purge` (by source, tag or URL prefix) and a revalidation that
/// finds a source changed or gone all go through ``purge(_:why:completion:)``.
///
/// A purge of a source removes, on this node, its thumbnails in memory (hot sets included: they check the memory
/// tier's generation), its aliases, open blobs, original (memory and disk), analysis record (memory and disk),
/// intermediates, detections, remembered 404 and purge-index rows, and its variants on disk; then, in the shared
/// tier, every object under the source's prefix (one listing, one DELETE each). It answers when both are done, and
/// then pushes the source's tag downstream (``PurgeNotifier``: Varnish, a webhook) when `cache.purge.*` names any.
final class Purger: Sendable {
    /// Why a purge ran (the counter's label).
    enum Reason: String, Sendable, CaseIterable {
        case source, tag, prefix
        /// A revalidation found the origin's validators changed, or the source gone (404/410).
        case changed
    }

    /// What one purge (of one or more sources) removed, by tier.
    struct Report: Sendable {
        var sources = 0
        var memory = 0
        var disk = 0
        var originals = 0
        var analyses = 0
        var shared = 0
        var sharedErrors = 0
        var sharedTruncated = false

        mutating func add(_ other: Report) {
            sources += other.sources
            memory += other.memory
            disk += other.disk
            originals += other.originals
            analyses += other.analyses
            shared += other.shared
            sharedErrors += other.sharedErrors
            sharedTruncated = sharedTruncated || other.sharedTruncated
        }
    }

    /// Counters since start, for /metrics.
    struct Counters: Sendable {
        /// Sources purged, by reason.
        var purges: [Reason: Int] = [:]
        /// Objects removed: thumbnails in memory, rows on disk (thumbnails, originals, analysis records), objects in
        /// the shared tier.
        var memoryEntries = 0
        var diskEntries = 0
        var sharedObjects = 0
        var sharedErrors = 0
    }

    private let cache: ThumbnailCache
    private let analyses: SourceAnalyses?
    private let intermediates: IntermediateCache?
    private let shared: SharedTier?
    /// Where purges are pushed downstream; nil when `cache.purge.*` names nothing.
    let notifier: PurgeNotifier?
    private let logger: Logger
    private let counts = Mutex(Counters())

    init(
        cache: ThumbnailCache, analyses: SourceAnalyses?, intermediates: IntermediateCache?, shared: SharedTier?,
        notifier: PurgeNotifier? = nil, logger: Logger
    ) {
        self.notifier = notifier
        self.cache = cache
        self.analyses = analyses
        self.intermediates = intermediates
        self.shared = shared
        self.logger = logger
    }

    /// A snapshot of the counters.
    var counters: Counters { counts.withLock { $0 } }

    /// Whether sources can be found by tag or prefix (the purge index lives beside the disk tier).
    var hasIndex: Bool { cache.purgeIndex != nil }

    /// Purges `source` from every tier. `completion` runs once, when the disk rows are gone and the shared tier
    /// answered every request (on the `disk` or the fetch thread).
    ///
    /// `keeping` and `keepsNotFound` are a revalidation's (``ThumbnailCache/purge(source:keeping:forgetsNotFound:completion:)``).
    func purge(
        _ source: SourceURL, why reason: Reason, keeping: VariantKey? = nil, keepsNotFound: Bool = false,
        completion: @escaping @Sendable (Report) -> Void
    ) {
        analyses?.forget(source)
        intermediates?.remove(source: source.string)
        let joined = Mutex((pending: shared == nil ? 1 : 2, report: Report(sources: 1)))
        let finish: @Sendable (Report) -> Void = { [self] part in
            let done = joined.withLock { state -> Report? in
                state.report.add(part)
                state.pending -= 1
                return state.pending == 0 ? state.report : nil
            }
            guard let done else { return }
            counts.withLock { counts in
                counts.purges[reason, default: 0] += 1
                counts.memoryEntries += done.memory
                counts.diskEntries += done.disk + done.originals + done.analyses
                counts.sharedObjects += done.shared
                counts.sharedErrors += done.sharedErrors
            }
            logger.notice(
                "source purged",
                metadata: [
                    "source": "\(source)", "reason": "\(reason.rawValue)", "memory": "\(done.memory)",
                    "disk": "\(done.disk)", "originals": "\(done.originals)", "analyses": "\(done.analyses)",
                    "shared": "\(done.shared)", "shared_errors": "\(done.sharedErrors)",
                ])
            // After thumbd's own tiers: a cache in front that asks again at once gets the new bytes.
            notifier?.push([PurgeNotifier.Entry(tag: SourceTag.of(source), url: source.string)])
            completion(done)
        }
        cache.purge(source: source, keeping: keeping, forgetsNotFound: !keepsNotFound) { report in
            finish(
                Report(
                    memory: report.memoryEntries, disk: report.diskEntries, originals: report.sourceEntries,
                    analyses: report.analysisEntries))
        }
        shared?.purge(source: source) { outcome in
            finish(Report(shared: outcome.deleted, sharedErrors: outcome.errors, sharedTruncated: outcome.truncated))
        }
    }

    /// Purges each of `sources` (all at once), each counted under its reason, then calls `completion` with the sum.
    func purge(
        _ sources: [(source: SourceURL, reason: Reason)], completion: @escaping @Sendable (Report) -> Void
    ) {
        guard !sources.isEmpty else { return completion(Report()) }
        let joined = Mutex((pending: sources.count, report: Report()))
        for (source, reason) in sources {
            purge(source, why: reason) { part in
                let done = joined.withLock { state -> Report? in
                    state.report.add(part)
                    state.pending -= 1
                    return state.pending == 0 ? state.report : nil
                }
                if let done { completion(done) }
            }
        }
    }

    /// Pushes `tags` themselves downstream (a `POST /purge` by tag): the caches in front drop what carries them even
    /// where this node stored none of their sources.
    func announce(tags: [String]) {
        notifier?.push(tags.map { PurgeNotifier.Entry(tag: $0) })
    }

    /// The sources this node stored under `tags` or with a URL starting with one of `prefixes`, at most `limit` in
    /// all (read on the `disk` thread); nil without a purge index. `completion` gets them and whether the limit cut
    /// the list short.
    func sources(
        tagged tags: [String], prefixed prefixes: [String], limit: Int,
        completion: @escaping @Sendable ((urls: [String], truncated: Bool)?) -> Void
    ) {
        let logger = self.logger
        cache.withPurgeIndex { index in
            guard let index else { return completion(nil) }
            var found: [String] = []
            var seen = Set<String>()
            var truncated = false
            do {
                for tag in tags {
                    for url in try index.sources(tagged: tag, limit: limit + 1) where seen.insert(url).inserted {
                        found.append(url)
                    }
                }
                for prefix in prefixes {
                    for url in try index.sources(prefixed: prefix, limit: limit + 1) where seen.insert(url).inserted {
                        found.append(url)
                    }
                }
            } catch {
                logger.error("purge index lookup failed", metadata: ["error": "\(error)"])
            }
            if found.count > limit {
                found.removeLast(found.count - limit)
                truncated = true
            }
            completion((found, truncated))
        }
    }
}
