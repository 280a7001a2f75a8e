// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import OriginFetch
import Thumbnailing

/// How an answer leaves once the variant is known: from a tier, by its freshness (fresh, stale with a background
/// revalidation, expired after one the request waits for), or from the render coordinator.
extension ThumbnailService {
    /// Answers from what the event loop can reach without a hop: the memory tier, or (memory tier off) a blob
    /// held open. Returns false when neither has `key`.
    @inline(__always)
    func serveFromLoop(
        _ key: VariantKey, _ cache: ThumbnailCache, _ conditions: ResponseConditions, now: Timestamp,
        _ responder: HTTPResponder
    ) -> Bool {
        if let variant = cache.memoryHit(key) {
            serveCached(
                variant, body: .bytes(variant.bytes), key: key, tier: .hitMemory, now: now, conditions, responder)
            return true
        }
        if let file = cache.openBlobHit(key) {
            serveFile(file, key: key, now: now, conditions, responder)
            return true
        }
        return false
    }

    /// A disk hit as an open blob, sent with `sendfile`.
    func serveFile(
        _ file: ThumbnailCache.CachedFile, key: VariantKey, now: Timestamp, _ conditions: ResponseConditions,
        _ responder: HTTPResponder
    ) {
        let region = FileRegion(
            borrowing: file.hit.descriptor, offset: 0, length: Int64(file.hit.entry.sizeBytes), owner: file.hit)
        // The bytes stay on disk: the revalidator gets the metadata only (no memory tier to refresh).
        let variant = RenderedVariant(
            bytes: [], format: file.format, etag: file.etag, freshness: file.freshness,
            preparedFields: file.preparedFields)
        serveCached(variant, body: .file(region), key: key, tier: .hitDisk, now: now, conditions, responder)
    }

    /// Serves a cached variant according to its freshness: fresh as `tier`; stale at once with a background
    /// revalidation; past `stale_if_error` after a revalidation this request waits for.
    func serveCached(
        _ variant: RenderedVariant, body: HTTPResponse.Body, key: VariantKey, tier: CacheOutcome, now: Timestamp,
        _ conditions: ResponseConditions, _ responder: HTTPResponder
    ) {
        guard let state = variant.freshnessState(at: now) else {
            return render(key, conditions, PendingRequest(), responder)
        }
        switch state {
        case .fresh:
            responder.respond(
                thumbnailResponse(variant, body: body, outcome: tier, age: variant.age(at: now), conditions))
        case .stale:
            revalidator?.revalidate(key, current: variant, waiter: nil)
            responder.respond(
                thumbnailResponse(variant, body: body, outcome: .stale, age: variant.age(at: now), conditions))
        case .expired:
            guard let revalidator else { return render(key, conditions, PendingRequest(), responder) }
            revalidator.revalidate(
                key, current: variant,
                waiter: { [self] result in
                    switch result {
                    case .success((let fresh, .revalidated)):
                        // Same bytes as the entry (a 304): keep the body already in hand (it may be a file).
                        responder.respond(
                            thumbnailResponse(
                                fresh, body: body, outcome: .revalidated,
                                age: fresh.age(at: Timestamp.now()), conditions))
                    default:
                        respond(result.map { $0.0 }, key: key, outcome: .miss, conditions: conditions, responder)
                    }
                })
        }
    }

    /// Fetches and renders through the coordinator (which joins a render already under way).
    func render(
        _ key: VariantKey, _ conditions: ResponseConditions, _ pending: PendingRequest, _ responder: HTTPResponder
    ) {
        let (ticket, _) = coordinator.request(key, priority: .interactive) { [self] result, admission in
            respond(
                result, key: key, outcome: admission.cacheOutcome, conditions: conditions, responder
            )
        }
        let coordinator = self.coordinator
        pending.onLeave { coordinator.leave(ticket) }
    }

    func respond(
        _ result: Result<RenderedVariant, ServiceError>, key: VariantKey, outcome: CacheOutcome,
        conditions: ResponseConditions, _ responder: HTTPResponder
    ) {
        switch result {
        case .success(let variant):
            // Age counts from the origin's confirmation: a render from a cached original is as old as it.
            let age = variant.age(at: Timestamp.now())
            responder.respond(
                thumbnailResponse(variant, body: .bytes(variant.bytes), outcome: outcome, age: age, conditions))
        case .failure(let error):
            let errorResponse = ErrorResponse(error)
            logger.log(
                level: errorResponse.logLevel, "thumbnail failed",
                metadata: [
                    "status": "\(errorResponse.status.code)", "source": "\(key.source)", "error": "\(error)",
                ])
            if answerWithFallback(for: error, key: key, outcome: outcome, conditions, responder) { return }
            var response = errorResponse.response
            Self.addCacheHeaders(&response, outcome, age: 0)
            if let skipped = conditions.skippedFiltersField { response.headers.append(skipped) }
            responder.respond(response)
        }
    }
}

extension RenderCoordinator.Admission {
    /// The `X-Cache` of an answer that went through the coordinator.
    var cacheOutcome: CacheOutcome {
        switch self {
        case .started: .miss
        case .joined: .coalesced
        case .shared: .hitShared
        }
    }
}
