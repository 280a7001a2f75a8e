// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import Logging
import OriginFetch
import Synchronization
import Thumbnailing

/// Answers `GET|HEAD /thumb`: validates the request, then answers from the memory tier on the event loop,
/// from the disk tier through a `disk-io` thread, or from the render coordinator (fetch + render), from
/// whatever thread the result arrives on (the responder hops to the connection's loop).
///
/// Never blocks the loop: parsing and the memory lookup are pure and O(1); disk, fetch and render run on
/// their own threads. Every answer carries `X-Cache` (``CacheOutcome``) and `Age`.
///
/// With `security.signing_keys` set, a request is answered only once its `sig` verified: on the parsed path
/// before any cache lookup; the alias path answers only a raw query that verified under the same keys (see
/// ``ThumbnailCache/aliasHit(_:keyGeneration:)``).
final class ThumbnailService: Sendable {
    private let coordinator: RenderCoordinator
    private let verifier: URLSignatureVerifier
    private let thumbnailer: Thumbnailer
    private let cache: ThumbnailCache?
    private let revalidator: Revalidator?
    /// `Cache-Control` of cacheable answers, from `cache.client_max_age` (replaced by ``update(clientMaxAge:)``).
    private let cacheControl: Mutex<String>
    private let logger: Logger
    /// Counts sampled sources for /status (nil: not counted).
    private let activity: ActivityRecorder?
    /// `cache.hotSet`, used without reference counting (see ``HotSet``: a hit must not write a reference count
    /// that the other loops write too; even optional chaining through `cache` retained it). `cache` keeps it
    /// alive as long as this service.
    private let hotSet: Unmanaged<HotSet>?

    init(
        coordinator: RenderCoordinator, thumbnailer: Thumbnailer, cache: ThumbnailCache?, revalidator: Revalidator?,
        verifier: URLSignatureVerifier, clientMaxAge: Duration, logger: Logger, activity: ActivityRecorder? = nil
    ) {
        self.activity = activity
        self.coordinator = coordinator
        self.verifier = verifier
        // The generation check already keeps outdated aliases from hitting; forgetting them frees their memory.
        verifier.onUpdate { [cache] in cache?.forgetAliases() }
        self.thumbnailer = thumbnailer
        self.cache = cache
        hotSet = cache?.hotSet.map { Unmanaged.passUnretained($0) }
        self.revalidator = revalidator
        cacheControl = Mutex(Self.cacheControlValue(clientMaxAge))
        self.logger = logger
    }

    /// Sends `clientMaxAge` in the answers from now on (config hot reload). Any thread.
    func update(clientMaxAge: Duration) {
        let value = Self.cacheControlValue(clientMaxAge)
        cacheControl.withLock { $0 = value }
        cache?.hotSet?.invalidate()  // their copies carry the old value
    }

    private static func cacheControlValue(_ clientMaxAge: Duration) -> String {
        "public, max-age=\(clientMaxAge.components.seconds)"
    }

    /// What the request asked that shapes the answer beyond the thumbnail itself.
    struct ResponseConditions: Sendable {
        let ifNoneMatch: String?
        let variesOnAccept: Bool
    }

    /// The route handler for `/thumb`, on an event loop.
    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let keyGeneration = verifier.keyGeneration
        var now = Timestamp.now()
        let isConditional = request.hasField("if-none-match")
        // The hot path: a fresh memory hit this loop copied before answers from the copy, found by the request's
        // own bytes, touching nothing that another loop writes (HotSet).
        let hotTable = hotSet?._withUnsafeGuaranteedRef { $0.table() }
        var hotEntry: HotSetTable.Entry?
        if let hotTable, !isConditional {
            _ = request.withRawQuery(andOnlyValueOf: "accept") {
                hotEntry = hotTable.entry(query: $0, accept: $1, keyGeneration: keyGeneration)
            }
        }
        if let hotTable, let entry = hotEntry, entry.isFresh(at: now) {
            hotTable.countHit()
            hotSet?._withUnsafeGuaranteedRef { $0.touchIfDue(entry, now: now) }
            activity?.noteSource(entry.key.source)
            responder.respond(entry.response(at: now))
            return
        }
        let rawQuery = request.query ?? ""
        // A list-valued field sent on several lines means the lines joined with commas (RFC 9110 §5.3):
        // reading only the first would miss `image/webp` on a second Accept line.
        let accept = request.listValue(of: "accept")
        // (`cache.map` would retain the cache, shared by the loops.)
        let alias = cache == nil ? nil : ThumbnailCache.aliasKey(rawQuery: rawQuery, accept: accept)
        // The hit path: a request seen before (and verified under the current signing keys), whose thumbnail is
        // in memory (or, memory tier off, held open), skips parsing and verifying.
        var sourceNoted = false
        if let cache, let alias, let key = cache.aliasHit(alias, keyGeneration: keyGeneration) {
            activity?.noteSource(key.source)
            sourceNoted = true
            let conditions = Self.conditions(request, key)
            if let variant = cache.memoryHit(key) {
                if let hotTable, !isConditional, let freshness = variant.freshness, freshness.state(at: now) == .fresh {
                    // (A request with `Accept` on several lines gets no copy: its bytes are not its alias.)
                    _ = request.withRawQuery(andOnlyValueOf: "accept") { query, accept in
                        hotTable.insert(
                            HotSetKey(query: query, accept: accept), alias: alias, key: key,
                            keyGeneration: keyGeneration, variant: variant, freshness: freshness,
                            cacheControl: cacheControl.withLock { $0 }, variesOnAccept: conditions.variesOnAccept,
                            now: now)
                    }
                }
                serveCached(
                    variant, body: .bytes(variant.bytes), key: key, tier: .hitMemory, now: now, conditions, responder)
                return
            }
            if let file = cache.openBlobHit(key) {
                serveFile(file, key: key, now: now, conditions, responder)
                return
            }
        }
        // Decoded once; the signature is checked before the parameters are validated (an unsigned request learns
        // nothing about them) and before any cache is looked at.
        let thumbnailRequest: ThumbnailRequest
        let verifiedGeneration: UInt64
        do {
            let parameters = try QueryParameters(parsing: rawQuery)
            verifiedGeneration = try verifier.verify(parameters)
            thumbnailRequest = try ThumbnailRequest(parameters: parameters, accept: accept)
        } catch {
            var response = ErrorResponse(error).response
            Self.addCacheHeaders(&response, .miss, age: 0)
            responder.respond(response)
            return
        }
        let key = VariantKey(source: thumbnailRequest.source, spec: thumbnailer.normalized(thumbnailRequest.spec))
        if !sourceNoted { activity?.noteSource(key.source) }
        let conditions = Self.conditions(request, key)
        now = Timestamp.now()
        if let cache, let alias {
            cache.rememberAlias(alias, key, keyGeneration: verifiedGeneration)
            if serveFromLoop(key, cache, conditions, now: now, responder) { return }
            if let notFound = cache.notFoundHit(key.source, now: now) {
                var response = ErrorResponse(FetchError.originNotFound(status: 404)).response
                Self.addCacheHeaders(
                    &response, .hitMemory, age: DiskCache.Freshness(validatedAt: notFound.validatedAt).age(at: now))
                responder.respond(response)
                return
            }
        }
        // An explicit format this process cannot write (AVIF without an encoder, or turned off) fails every
        // render: refuse it now rather than after fetching the source for nothing.
        do {
            _ = try thumbnailer.outputFormats(for: key.spec.format)
        } catch {
            var response = ErrorResponse(error).response
            Self.addCacheHeaders(&response, .miss, age: 0)
            responder.respond(response)
            return
        }
        guard let cache, cache.hasDiskTier else {
            let pending = PendingRequest()
            responder.onClientGone { pending.clientLeft() }
            render(key, conditions, pending, responder)
            return
        }
        let pending = PendingRequest()
        responder.onClientGone { pending.clientLeft() }
        do {
            try cache.lookupDisk(key) { [self] lookup in
                guard !pending.isGone else { return }
                let now = Timestamp.now()
                switch lookup {
                case .variant(let variant):
                    serveCached(
                        variant, body: .bytes(variant.bytes), key: key, tier: .hitDisk, now: now, conditions, responder)
                case .file(let file):
                    serveFile(file, key: key, now: now, conditions, responder)
                case .miss:
                    render(key, conditions, pending, responder)
                }
            }
        } catch {
            respond(.failure(.cacheQueueFull), key: key, outcome: .miss, conditions: conditions, responder)
        }
    }

    /// What the request asks of the answer beyond the thumbnail (its answer varies on `Accept` when the format
    /// is negotiated).
    private static func conditions(_ request: HTTPRequest, _ key: VariantKey) -> ResponseConditions {
        ResponseConditions(
            ifNoneMatch: request.listValue(of: "if-none-match"), variesOnAccept: key.spec.format.isAuto
        )
    }

    // MARK: - Paths

    /// Answers from what the event loop can reach without a hop: the memory tier, or (memory tier off) a blob
    /// held open. Returns false when neither has `key`.
    @inline(__always)
    private func serveFromLoop(
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
    private func serveFile(
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
    private func serveCached(
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
    private func render(
        _ key: VariantKey, _ conditions: ResponseConditions, _ pending: PendingRequest, _ responder: HTTPResponder
    ) {
        let (ticket, _) = coordinator.request(key, priority: .interactive) { [self] result, admission in
            respond(
                result, key: key, outcome: admission == .started ? .miss : .coalesced, conditions: conditions, responder
            )
        }
        let coordinator = self.coordinator
        pending.onLeave { coordinator.leave(ticket) }
    }

    private func respond(
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
            var response = errorResponse.response
            Self.addCacheHeaders(&response, outcome, age: 0)
            responder.respond(response)
        }
    }

    // MARK: - Responses

    /// 200 with the thumbnail, or 304 when `If-None-Match` names its ETag.
    private func thumbnailResponse(
        _ variant: RenderedVariant, body: HTTPResponse.Body, outcome: CacheOutcome, age: Int,
        _ conditions: ResponseConditions
    ) -> HTTPResponse {
        let cacheControl = variant.isStorable ? cacheControl.withLock { $0 } : "no-store"
        guard conditions.ifNoneMatch == nil else {
            return Self.thumbnailResponse(
                etag: variant.etag, format: variant.format, body: body, outcome: outcome, age: age,
                cacheControl: cacheControl, conditions: conditions)
        }
        // The usual answer: the variant's own fields come serialised, only these vary. Each literal is one
        // allocation filled in place (appending `Vary` to the shorter one would allocate twice).
        let headers =
            conditions.variesOnAccept
            ? [
                HTTPField(name: "Cache-Control", value: cacheControl),
                HTTPField(name: "X-Cache", value: outcome.rawValue),
                HTTPField(name: "Age", value: String(age)), HTTPField(name: "Vary", value: "Accept"),
            ]
            : [
                HTTPField(name: "Cache-Control", value: cacheControl),
                HTTPField(name: "X-Cache", value: outcome.rawValue),
                HTTPField(name: "Age", value: String(age)),
            ]
        return HTTPResponse(
            status: .ok, preparedFields: variant.preparedFields, headers: headers, body: body,
            accessLogNote: outcome.rawValue)
    }

    /// 200 with `body`, or 304 when `If-None-Match` names `etag`. A variant the origin forbade storing is
    /// sent with `Cache-Control: no-store`, so browsers and CDNs do not keep it either.
    static func thumbnailResponse(
        etag: String, format: ImageFormat, body: HTTPResponse.Body, outcome: CacheOutcome, age: Int,
        cacheControl: String, conditions: ResponseConditions
    ) -> HTTPResponse {
        var headers = [
            HTTPField(name: "ETag", value: etag),
            HTTPField(name: "Cache-Control", value: cacheControl),
            HTTPField(name: "X-Cache", value: outcome.rawValue),
            HTTPField(name: "Age", value: String(age)),
        ]
        if conditions.variesOnAccept { headers.append(HTTPField(name: "Vary", value: "Accept")) }
        if let ifNoneMatch = conditions.ifNoneMatch, EntityTag.matches(ifNoneMatch, etag: etag) {
            return HTTPResponse(status: .notModified, headers: headers, accessLogNote: outcome.rawValue)
        }
        headers.insert(HTTPField(name: "Content-Type", value: format.mimeType), at: 0)
        return HTTPResponse(status: .ok, headers: headers, body: body, accessLogNote: outcome.rawValue)
    }

    private static func addCacheHeaders(_ response: inout HTTPResponse, _ outcome: CacheOutcome, age: Int) {
        response.headers.append(HTTPField(name: "X-Cache", value: outcome.rawValue))
        response.headers.append(HTTPField(name: "Age", value: String(age)))
        response.accessLogNote = outcome.rawValue
    }
}
