// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Logging
import OriginFetch
import Synchronization
import Thumbnailing

/// Revalidates expired cache entries with the origin (stale-while-revalidate, RFC 5861, as nginx's
/// `proxy_cache_background_update` and Varnish's grace do inside a proxy).
///
/// One revalidation per variant at a time, however many requests see the entry expired: a *stale*
/// entry is served at once and revalidated in the background; an entry past `stale_if_error` makes its
/// requests wait for the same revalidation. The origin is asked with the entry's validators
/// (`If-None-Match`, `If-Modified-Since`):
/// - 304 → new deadlines from the 304's headers, same bytes, no render (`X-Cache: REVALIDATED`);
/// - 200 → the new source is rendered and replaces the entry (`MISS`);
/// - 200 under other validators (`ETag`, else `Last-Modified`) → first the source is purged from every tier
///   (``Purger``: every size, its original and analysis record, here and in the shared tier), then rendered;
/// - 404/410 → the source is purged from every tier and the 404 remembered;
/// - any other failure → the entry stays as it is (a stale one keeps being served until
///   `stale_if_error` runs out) and waiting requests get the error.
final class Revalidator: Sendable {
    /// Receives the variant to serve and its `X-Cache` value, or the error.
    typealias Completion = @Sendable (Result<(RenderedVariant, CacheOutcome), ServiceError>) -> Void

    private let fetcher: OriginFetcher
    private let renderPool: WorkerPool
    private let thumbnailer: Thumbnailer
    private let cache: ThumbnailCache
    private let policy: SharedFreshnessPolicy
    private let logger: Logger
    private let watermarks: WatermarkSource
    /// The renders' intermediates and the sources' detections, so that a new source renders as a request's would.
    private let intermediates: IntermediateCache?
    /// Purges a source whose validators changed or that is gone, from every tier, before the new bytes are rendered.
    private let purger: Purger?
    private let flights = Mutex<Flights>(Flights())
    private let started = Atomic<Int>(0)

    init(
        fetcher: OriginFetcher, renderPool: WorkerPool, thumbnailer: Thumbnailer, cache: ThumbnailCache,
        policy: SharedFreshnessPolicy, logger: Logger, watermarks: WatermarkSource = .none,
        intermediates: IntermediateCache? = nil, purger: Purger? = nil
    ) {
        self.purger = purger
        self.watermarks = watermarks
        self.intermediates = intermediates
        self.fetcher = fetcher
        self.renderPool = renderPool
        self.thumbnailer = thumbnailer
        self.cache = cache
        self.policy = policy
        self.logger = logger
    }

    /// Revalidations under way, and the ones that ended in the last seconds with a fresh entry.
    private struct Flights {
        var waiting: [VariantKey: [Completion]] = [:]
        /// A request may have read the old entry just before a revalidation stored its result, and ask for
        /// a revalidation just after it ended: such a copy (validated before this result) gets the result
        /// instead of a second conditional request. Kept ``recentWindow``, pruned as results come in.
        var recent: [VariantKey: (result: (RenderedVariant, CacheOutcome), endedAt: ContinuousClock.Instant)] = [:]
    }

    /// Longer than any lookup takes between reading an entry and asking for its revalidation.
    private static let recentWindow = Duration.seconds(5)

    /// Revalidations sent to the origin since start.
    var revalidationsStarted: Int { started.load(ordering: .relaxed) }

    /// Revalidates `key`, whose cached entry is `current`, unless a revalidation of it is under way;
    /// `waiter` (if any) is answered when it ends, on a fetch or render thread.
    func revalidate(_ key: VariantKey, current: RenderedVariant, waiter: Completion?) {
        let (isFirst, ended) = flights.withLock { flights -> (Bool, (RenderedVariant, CacheOutcome)?) in
            if flights.waiting[key] != nil {
                if let waiter { flights.waiting[key]?.append(waiter) }
                return (false, nil)
            }
            if let recent = flights.recent[key], ContinuousClock.now - recent.endedAt < Self.recentWindow,
                let newer = recent.result.0.freshness?.validatedAt, let read = current.freshness?.validatedAt,
                read < newer
            {
                return (false, recent.result)
            }
            flights.waiting[key] = waiter.map { [$0] } ?? []
            return (true, nil)
        }
        if let ended {
            waiter?(.success(ended))
            return
        }
        guard isFirst else { return }
        started.add(1, ordering: .relaxed)
        let validators = Validators(
            etag: current.freshness?.originETag, lastModified: current.freshness?.originLastModified)
        let priority: FetchPriority = waiter == nil ? .background : .interactive
        fetcher.revalidate(FetchRequest(url: key.source.string, priority: priority), validators: validators) {
            [self] result in
            answered(key, current: current, result: result, priority: priority)
        }
    }

    /// On the fetch thread.
    private func answered(
        _ key: VariantKey, current: RenderedVariant, result: Result<Revalidation, FetchError>, priority: FetchPriority
    ) {
        switch result {
        case .success(.notModified(let headers)):
            let previous = current.freshness ?? DiskCache.Freshness(validatedAt: Timestamp.now())
            let rules = policy.current
            let refreshed = current.refreshed(rules.refreshed(previous, with: headers, receivedAt: Timestamp.now()))
            // Ends when lookups see the new deadline (memory at once; disk after its update), so that no
            // request in between starts a second revalidation.
            cache.refresh(key, refreshed) { [self] in finish(key, .success((refreshed, .revalidated))) }
        case .success(.modified(let source)):
            // New bytes under other validators: every size of the old ones goes from every tier (shared included)
            // before this one is rendered, so the next request of any other size renders from the new bytes, and
            // what the render stores (its analysis record) comes after the purge. This variant's disk row stays
            // until the store replaces it, so lookups meanwhile find the old entry (served stale), never nothing.
            if let purger, Self.validatorsChanged(current.freshness, source) {
                purger.purge(key.source, why: .changed, keeping: key) { [self] _ in
                    rendering(key, source: source, priority: priority)
                }
                return
            }
            rendering(key, source: source, priority: priority)
        case .failure(let error):
            if case .originNotFound = error {
                // The 404 first: a request between the two then finds it instead of fetching again.
                cache.rememberNotFound(key.source)
                if let purger {
                    purger.purge(key.source, why: .changed, keepsNotFound: true) { _ in }
                } else {
                    cache.remove(key)
                    intermediates?.analyses?.forget(key.source)
                }
            }
            logger.notice(
                "revalidation failed; the cached thumbnail stays until stale_if_error runs out",
                metadata: ["source": "\(key.source)", "error": "\(error)"])
            finish(key, .failure(.fetch(error)))
        }
    }

    /// Whether the origin's answer carries other validators than the entry was made with (an origin that sends
    /// none tells nothing: its entries are replaced one by one, as before).
    static func validatorsChanged(_ previous: DiskCache.Freshness?, _ source: FetchedSource) -> Bool {
        guard let previous, previous.originETag != nil || previous.originLastModified != nil else { return false }
        let etag = source.headers.etag
        let lastModified = source.headers.lastModified
        if let old = previous.originETag { return etag != old }
        return lastModified != previous.originLastModified
    }

    /// Renders the new source of `key` (with its overlays).
    private func rendering(_ key: VariantKey, source: FetchedSource, priority: FetchPriority) {
        guard Overlays.needed(by: key.spec) else {
            submitRender(key, source: source, overlays: Overlays(), priority: priority)
            return
        }
        watermarks.overlays(for: key.spec, priority: priority, issued: { _ in }) { [self] result in
            switch result {
            case .success(let overlays): submitRender(key, source: source, overlays: overlays, priority: priority)
            case .failure(let error): finish(key, .failure(error))
            }
        }
    }

    private func submitRender(
        _ key: VariantKey, source: FetchedSource, overlays: Overlays, priority: FetchPriority
    ) {
        do {
            try renderPool.submit(priority: priority == .interactive ? .interactive : .background) { [self] in
                render(key, source: source, overlays: overlays)
            }
        } catch {
            finish(key, .failure(.renderQueueFull))
        }
    }

    /// On a render worker: the origin sent a new source.
    private func render(_ key: VariantKey, source: FetchedSource, overlays: Overlays) {
        do {
            var analysable: IntermediateCache.Analysable?
            let digest = source.body.withUnsafeBytes { XXHash64.hash($0) }
            // New bytes: the source's kept record describes the old ones. Forgotten now (the disk's and the shared
            // tier's copies are as stale as the thumbnail was, so never answered without a look at the source).
            intermediates?.analyses?.forget(key.source, unlessDigest: digest)
            // With `image.placeholder_header` on, the new bytes' record is made now, for the new variant's header.
            let variant = try RenderCoordinator.renderVariant(
                key, from: source, overlays: overlays, thumbnailer: thumbnailer, intermediates: intermediates,
                cache: cache, policy: policy.current, analysable: &analysable)
            if let freshness = variant.freshness {
                cache.storeSource(source, url: key.source, freshness: freshness)
                // As for a 304: ends when lookups find the new variant, not the old expired one.
                cache.store(key, variant) { [self] in finish(key, .success((variant, .miss))) }
            } else {
                cache.remove(key)
                finish(key, .success((variant, .miss)))
            }
            // The new bytes' record, as a request's render makes it (`image.analysis`).
            if let analysable, let intermediates, intermediates.analyses?.isEager == true,
                intermediates.analyses?.makesPlaceholders != true
            {
                _ = try? intermediates.analysis(
                    of: source.body, url: key.source, digest: analysable.digest, freshness: variant.freshness,
                    thumbnailer: thumbnailer, given: analysable.image)
            }
        } catch {
            finish(key, .failure(.thumbnail(error)))
        }
    }

    private func finish(_ key: VariantKey, _ result: Result<(RenderedVariant, CacheOutcome), ServiceError>) {
        let waiters = flights.withLock { flights -> [Completion] in
            let now = ContinuousClock.now
            if flights.recent.count >= 64 {
                flights.recent = flights.recent.filter { now - $0.value.endedAt < Self.recentWindow }
            }
            if case .success(let ended) = result, ended.0.freshness != nil { flights.recent[key] = (ended, now) }
            return flights.waiting.removeValue(forKey: key) ?? []
        }
        for waiter in waiters { waiter(result) }
    }
}
