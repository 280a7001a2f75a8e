// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import HTTP1
import Instrumentation
import OriginFetch
import Synchronization
import Thumbnailing

/// The I/O behind each action of a flight's machine: every step reports its answer back to the machine through
/// `handle`, from whichever thread it arrives on (http-N, fetch, disk-io, render-N). An answer may come before the
/// call that asked for it has returned (a named watermark, a recent source, a fetcher that has shut down): the
/// machine then ignores the late ticket.
extension RenderCoordinator {
    /// The shared tier's copy of the thumbnail. A hit is kept in this node's cache before anyone is answered.
    func lookUpSharedThumbnail(_ key: VariantKey, flight id: UInt64) {
        let ticket = shared?.lookup(key) { [self] lookup in
            if case .hit(let variant) = lookup { cache?.store(key, variant) }
            handle(id) { $0.sharedThumbnailLookedUp(lookup) }
        }
        guard let ticket else {  // the breaker skips the tier
            handle(id) { $0.skipped(.sharedThumbnail) }
            return
        }
        handle(id) { $0.issued(ticket, for: .sharedThumbnail) }
    }

    /// This node's source cache: memory at once, else disk on a disk-io thread.
    func lookUpSourceCache(_ key: VariantKey, flight id: UInt64) {
        let queued =
            cache?.lookupSource(key.source) { [self] source in
                guard let source else {
                    handle(id) { $0.sourceCacheMissed() }
                    return
                }
                counts.sourceCacheHits.increment()
                handle(id) { $0.sourceArrived(source, keptFor: nil) }
            } ?? false
        if !queued { handle(id) { $0.skipped(.sourceCache) } }
    }

    /// The shared tier's copy of the original.
    func lookUpSharedSource(_ key: VariantKey, flight id: UInt64) {
        let ticket = shared?.lookupSource(key.source) { [self] lookup in
            switch lookup {
            // Not from this node's source cache: kept there, and not written back to the tier.
            case .hit(let source): arrived(source, key, flight: id, alreadyKept: false)
            case .miss(let replace): handle(id) { $0.sharedSourceMissed(writeBack: replace ? .replace : .ifAbsent) }
            case .unavailable: handle(id) { $0.sharedSourceMissed(writeBack: .none) }
            }
        }
        guard let ticket else {
            handle(id) { $0.skipped(.sharedSource) }
            return
        }
        handle(id) { $0.issued(ticket, for: .sharedSource) }
    }

    /// The origin. The fetch thread asks the recent originals again just before it would start a transfer: one that
    /// ended while this flight looked in the source cache has stored its source by then (a reused source is already
    /// stored: the flag keeps it from being stored again).
    func fetchOrigin(_ key: VariantKey, flight id: UInt64, priority: FetchPriority) {
        var reuse: (@Sendable () -> FetchedSource?)?
        let reused = ReuseFlag()
        if let cache {
            let source = key.source
            reuse = {
                let recent = cache.recentSource(source)
                if recent != nil { reused.isSet.store(true, ordering: .relaxed) }
                return recent
            }
        }
        let ticket = fetcher.fetch(FetchRequest(url: key.source.string, priority: priority), reuse: reuse) {
            [self] result in
            switch result {
            case .success(let source):
                arrived(source, key, flight: id, alreadyKept: reused.isSet.load(ordering: .relaxed))
            case .failure(let error):
                if case .originNotFound = error { cache?.rememberNotFound(key.source) }
                handle(id) { $0.originFailed(error) }
            }
        }
        handle(id) { $0.issued(ticket, for: .origin) }
    }

    /// A source from the shared tier or the origin is kept as soon as it arrives, not after the render: another size
    /// of it asked for during the render then finds it instead of fetching it again.
    private func arrived(_ source: FetchedSource, _ key: VariantKey, flight id: UInt64, alreadyKept: Bool) {
        var kept: DiskCache.Freshness?
        if !alreadyKept, case .store(let freshness) = policy.current.decide(source.headers, receivedAt: Timestamp.now())
        {
            cache?.storeSource(source, url: key.source, freshness: freshness)
            kept = freshness
        }
        handle(id) { $0.sourceArrived(source, keptFor: kept) }
    }

    /// The plan's watermark and frame images (the flight's route has this step only when the plan has one).
    func fetchWatermark(_ key: VariantKey, flight id: UInt64, priority: FetchPriority) {
        watermarks.overlays(
            for: key.spec, priority: priority,
            issued: { [self] ticket in handle(id) { $0.issued(ticket, for: .watermark) } },
            completion: { [self] result in handle(id) { $0.watermarkArrived(result) } })
    }

    /// Hands the source (and the overlays) to a render worker.
    func submitRender(
        _ key: VariantKey, flight id: UInt64, priority: FetchPriority, source: FetchedSource, overlays: Overlays
    ) {
        do {
            let job = try renderPool.submit(priority: priority == .interactive ? .interactive : .background) {
                [self] in
                render(key, flight: id, source: source, overlays: overlays)
            }
            handle(id) { $0.renderQueued(job) }
        } catch {
            counts.renderQueueRejections.increment()
            handle(id) { $0.renderRejected() }
        }
    }

    /// On a render worker. A rendered variant goes into the cache before any waiter is answered, so a request that
    /// arrives after an answer finds it there.
    private func render(_ key: VariantKey, flight id: UInt64, source: FetchedSource, overlays: Overlays) {
        handle(id) { machine in
            machine.renderStarted()
            return []
        }
        counts.rendersStarted.increment()
        let started = LoopInstant.now()
        let result: Result<RenderedVariant, ServiceError>
        var analysable: IntermediateCache.Analysable?
        do {
            let variant = try Self.renderVariant(
                key, from: source, overlays: overlays, thumbnailer: thumbnailer, intermediates: intermediates,
                cache: cache, policy: policy.current, analysable: &analysable)
            cache?.store(key, variant)
            // A frame left out (`frame_optional`) is a skipped filter, counted once per render.
            if RenderedVariant.isFrameSkipped(etag: variant.etag) {
                counts.thumborFiltersSkipped.add(1, ordering: .relaxed)
            }
            result = .success(variant)
        } catch {
            counts.renderFailures.increment()
            result = .failure(.thumbnail(error))
        }
        // Before the render counts as finished and anyone is answered: a scrape that sees the render sees its
        // duration too (it was observed after the answer, which a /metrics read right after a miss could beat).
        counts.renderDurations.observe(0, started.duration(to: LoopInstant.now()))
        counts.rendersFinished.increment()
        handle(id) { machine in
            let actions = machine.rendered(result)
            if !actions.contains(where: \.isAnswer) { counts.rendersUnattended.increment() }
            return actions
        }
        if case .success(let variant) = result, let analysable, intermediates?.analyses?.makesPlaceholders != true {
            analyse(source, url: key.source, freshness: variant.freshness, from: analysable)
        }
    }

    /// After the waiters have their answer, on the same render thread: the source's analysis record from the
    /// intermediate the render went through (`image.analysis`), unless one is kept for these bytes.
    func analyse(
        _ source: FetchedSource, url: SourceURL, freshness: DiskCache.Freshness?,
        from analysable: IntermediateCache.Analysable
    ) {
        guard let intermediates, intermediates.analyses?.isEager == true else { return }
        // A failure is counted by the analyses and left to /info, which asks again and answers the error.
        _ = try? intermediates.analysis(
            of: source.body, url: url, digest: analysable.digest, freshness: freshness, thumbnailer: thumbnailer,
            given: analysable.image)
    }

    /// After the clients have their answer: what this node rendered, and the original it fetched, go to the shared
    /// tier (when its lookups found nothing there, or something to overwrite).
    func share(_ writes: Machine.SharedWrites, key: VariantKey) {
        guard let shared else { return }
        if let variant = writes.variant { shared.store(key, variant.variant, replacing: variant.replacing) }
        if let source = writes.source {
            shared.storeSource(
                source.source, url: key.source, freshness: source.freshness, replacing: source.replacing)
        }
    }

    /// `key`'s thumbnail rendered from `source` (through the source's intermediate when there is an intermediate
    /// cache) as a variant with its freshness and its placeholder and tag fields: what a miss and a revalidation that
    /// found new bytes both make. Sets `analysable` when the render went through the analysis band. On a render thread.
    static func renderVariant(
        _ key: VariantKey, from source: FetchedSource, overlays: Overlays, thumbnailer: Thumbnailer,
        intermediates: IntermediateCache?, cache: ThumbnailCache?, policy: FreshnessPolicy,
        analysable: inout IntermediateCache.Analysable?
    ) throws(ThumbnailError) -> RenderedVariant {
        let thumbnail =
            if let intermediates {
                try intermediates.render(
                    source.body, url: key.source.string, spec: key.spec, overlays: overlays,
                    thumbnailer: thumbnailer, analysable: &analysable)
            } else {
                try thumbnailer.render(
                    source.body, spec: key.spec, watermarks: overlays.watermarks, frame: overlays.frame)
            }
        let freshness = freshness(of: source, policy: policy)
        // With `image.placeholder_header` on, the source's record is made now, for the variant's header.
        return variant(
            thumbnail, freshness: freshness,
            placeholder: intermediates?.placeholder(
                of: source.body, url: key.source, freshness: freshness, thumbnailer: thumbnailer, from: analysable),
            tag: cache?.sourceTags.field(for: key.source))
    }

    /// A rendered thumbnail with the freshness the source's caching headers give it (none when the origin
    /// forbade storing).
    static func variant(
        _ thumbnail: RenderedThumbnail, from source: FetchedSource, policy: FreshnessPolicy
    ) -> RenderedVariant {
        variant(thumbnail, freshness: freshness(of: source, policy: policy), placeholder: nil)
    }

    /// How long a thumbnail of `source` may be kept (`nil`: not at all).
    static func freshness(of source: FetchedSource, policy: FreshnessPolicy) -> DiskCache.Freshness? {
        switch policy.decide(source.headers, receivedAt: Timestamp.now()) {
        case .store(let decided): decided
        case .doNotStore: nil
        }
    }

    static func variant(
        _ thumbnail: RenderedThumbnail, freshness: DiskCache.Freshness?, placeholder: HTTPField?, tag: HTTPField? = nil
    ) -> RenderedVariant {
        RenderedVariant(
            bytes: thumbnail.bytes, format: thumbnail.format, freshness: freshness, quality: thumbnail.quality,
            isSourceBytes: thumbnail.isSourceBytes, isFrameSkipped: thumbnail.isFrameSkipped, placeholder: placeholder,
            tag: tag)
    }

}

extension Flight.StateMachine.Action {
    /// Whether this answers waiters.
    var isAnswer: Bool {
        if case .answer = self { return true }
        return false
    }
}

/// Whether the fetcher answered a flight with a source it reused (both closures run on the fetch thread, one
/// after the other).
private final class ReuseFlag: Sendable {
    let isSet = Atomic<Bool>(false)
}
