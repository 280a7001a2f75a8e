// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import Logging
import OriginFetch
import Synchronization
import Thumbnailing
import URLForms

/// Answers thumbnail requests, in every URL form (``URLForm``): from this loop's hot set, the memory tier or a
/// held-open blob on the event loop, from the disk tier through a `disk-io` thread, or from the render coordinator
/// (fetch + render), from whatever thread the result arrives on (the responder hops to the connection's loop).
///
/// ``handle(_:_:form:)`` reads as its steps, and the first that can answer does: this loop's hot copy, a known
/// alias, the form's parse and verify, memory, disk, render. Only the parse step differs between URL forms; the
/// steps before it are keyed by the request's ``RequestIdentity``, the steps after it by the ``VariantKey``.
///
/// Never blocks the loop: parsing and the memory lookup are pure and O(1); disk, fetch and render run on
/// their own threads. Every answer carries `X-Cache` (``CacheOutcome``) and `Age`.
///
/// With signing keys set, a request is answered only once its signature verified: in the parse step, before any
/// cache lookup; the hot set and the alias table answer only a request that verified under the same keys (see
/// ``ThumbnailCache/aliasHit(_:keyGeneration:)``).
final class ThumbnailService: Sendable {
    let coordinator: RenderCoordinator
    let thumbnailer: Thumbnailer
    let cache: ThumbnailCache?
    let revalidator: Revalidator?
    /// `Cache-Control` of cacheable answers, from `cache.client_max_age` (replaced by ``update(clientMaxAge:)``).
    let cacheControl: Mutex<String>
    /// `cache.client_max_age` in seconds, for the answers whose request asks a deadline (``AnswerOptions``).
    let clientMaxAgeSeconds: Atomic<Int>
    let logger: Logger
    /// Counts sampled sources for /status (nil: not counted).
    private let activity: ActivityRecorder?
    /// `image.fallback` and its renders (nil: no fallback ever, as in tests that build a service alone).
    let fallback: FallbackRenders?
    /// `cache.hotSet`, used without reference counting (see ``HotSet``: a hit must not write a reference count
    /// that the other loops write too; even optional chaining through `cache` retained it). `cache` keeps it
    /// alive as long as this service.
    private let hotSet: Unmanaged<HotSet>?

    init(
        coordinator: RenderCoordinator, thumbnailer: Thumbnailer, cache: ThumbnailCache?, revalidator: Revalidator?,
        clientMaxAge: Duration, logger: Logger, activity: ActivityRecorder? = nil, fallback: FallbackRenders? = nil
    ) {
        self.activity = activity
        self.fallback = fallback
        self.coordinator = coordinator
        self.thumbnailer = thumbnailer
        self.cache = cache
        hotSet = cache?.hotSet.map { Unmanaged.passUnretained($0) }
        self.revalidator = revalidator
        cacheControl = Mutex(Self.cacheControlValue(clientMaxAge))
        clientMaxAgeSeconds = Atomic(Int(clientMaxAge.components.seconds))
        self.logger = logger
    }

    /// Sends `clientMaxAge` in the answers from now on (config hot reload). Any thread.
    func update(clientMaxAge: Duration) {
        let value = Self.cacheControlValue(clientMaxAge)
        cacheControl.withLock { $0 = value }
        clientMaxAgeSeconds.store(Int(clientMaxAge.components.seconds), ordering: .relaxed)
        cache?.hotSet?.invalidate()  // their copies carry the old value
    }

    private static func cacheControlValue(_ clientMaxAge: Duration) -> String {
        "public, max-age=\(clientMaxAge.components.seconds)"
    }

    /// The route handler of one URL form (`GET` and `HEAD`), on an event loop.
    func handler(for form: some URLForm) -> HTTPHandler {
        { [self] request, responder in handle(request, responder, form: form) }
    }

    // MARK: - The steps

    /// What the parse step made of a request: its variant, the generation of the keys and rules it was parsed under,
    /// the client hints its plan consulted, and what it asked of its answer's headers (nil: nothing).
    typealias ParsedRequest = (
        key: VariantKey, keyGeneration: UInt64, hintsUsed: ClientHints.Used, answer: AnswerOptions?
    )

    /// Answers one request of `form`, on its event loop: the first step that can answer does.
    func handle(_ request: HTTPRequest, _ responder: HTTPResponder, form: some URLForm) {
        let (keyGeneration, readsClientHints) = form.frontDoorState
        // Client hints read (`image.client_hints`): the same steps, with the hints in the request's identity. Without
        // them (the default), what follows is the hit path as it was before hints existed.
        if readsClientHints { return handleReadingHints(request, responder, form: form, keyGeneration: keyGeneration) }
        let now = Timestamp.now()
        let isConditional = request.hasField("if-none-match")
        // Taken before any memory lookup: a table that missed a removal meanwhile empties itself at its next use.
        let hotTable = hotSet?._withUnsafeGuaranteedRef { $0.table() }
        // 1. This loop's hot copy, found by the request's own bytes.
        if let hotTable, !isConditional,
            answerFromHotCopy(request, hotTable, keyGeneration: keyGeneration, now: now, responder)
        {
            return
        }
        // 2. A known alias: the request's identity names a variant, without parsing or verifying.
        let identity = RequestIdentity(request)
        // (`cache.map` would retain the cache, shared by the loops.)
        let alias = cache == nil ? nil : ThumbnailCache.aliasKey(target: identity.target, accept: identity.accept)
        let known = alias.flatMap { cache?.aliasHitWithAnswer($0, keyGeneration: keyGeneration) }
        if let known, let alias {
            // (A URL past its deadline is answered 404, as its parse would be.)
            if answerIfExpired(known.answer, now: now, responder) { return }
            activity?.noteSource(known.key.source)
            let hotTable = isConditional ? nil : hotTable
            if answerKnownRequest(
                known.key, alias: alias, request, nil, hintsUsed: nil, answer: known.answer, hotTable: hotTable,
                keyGeneration: keyGeneration, now: now, responder)
            {
                return
            }
        }
        // 3. The form's parse and verify, then 4-6.
        guard let parsed = parseAndVerify(identity, form: form, responder) else { return }
        if answerIfExpired(parsed.answer, now: now, responder) { return }
        if known == nil { activity?.noteSource(parsed.key.source) }
        answerParsed(parsed, alias: alias, request, hintsUsed: nil, responder)
    }

    /// ``handle(_:_:form:)`` for a request read with its client hints: they are part of its identity (the same URL
    /// from a screen of another pixel ratio is another thumbnail) in this loop's hot set and the alias table, and
    /// the answer names the hints its plan consulted (`Vary`) and asks for them (`Accept-CH`).
    @inline(never)
    private func handleReadingHints(
        _ request: HTTPRequest, _ responder: HTTPResponder, form: some URLForm, keyGeneration: UInt64
    ) {
        let now = Timestamp.now()
        let isConditional = request.hasField("if-none-match")
        let hotTable = hotSet?._withUnsafeGuaranteedRef { $0.table() }
        let identity = RequestIdentity(request, hints: ClientHints(request))
        // 1. This loop's hot copy, found by the target and a text of the `Accept` and the hints.
        if let hotTable, !isConditional,
            answerFromHotCopy(identity, hotTable, keyGeneration: keyGeneration, now: now, responder)
        {
            return
        }
        // 2. A known alias, with the hints its parse consulted.
        let alias = cache == nil ? nil : ThumbnailCache.aliasKey(target: identity.target, accept: identity.variation)
        let known = alias.flatMap { cache?.aliasHitWithHints($0, keyGeneration: keyGeneration) }
        if let known, let alias {
            if answerIfExpired(known.answer, now: now, responder) { return }
            activity?.noteSource(known.key.source)
            if answerKnownRequest(
                known.key, alias: alias, request, identity, hintsUsed: known.hintsUsed, answer: known.answer,
                hotTable: isConditional ? nil : hotTable, keyGeneration: keyGeneration, now: now, responder)
            {
                return
            }
        }
        // 3. The form's parse and verify, then 4-6.
        guard let parsed = parseAndVerify(identity, form: form, responder) else { return }
        if answerIfExpired(parsed.answer, now: now, responder) { return }
        if known == nil { activity?.noteSource(parsed.key.source) }
        answerParsed(parsed, alias: alias, request, hintsUsed: parsed.hintsUsed, responder)
    }

    /// Steps 4-6 for a request its form parsed: memory (or a held-open blob) or a remembered origin 404, the alias
    /// remembered first; then disk, then render, for a format this process can write. `hintsUsed` is nil when
    /// client hints are not read.
    private func answerParsed(
        _ parsed: ParsedRequest, alias: CacheKey?, _ request: HTTPRequest, hintsUsed: ClientHints.Used?,
        _ responder: HTTPResponder
    ) {
        let key = parsed.key
        let conditions = Self.conditions(request, key, hints: hintsUsed, answer: parsed.answer)
        recordTags(of: parsed.answer, for: key)
        // 4. Memory (or a held-open blob), or a remembered origin 404; the alias is remembered first.
        if let alias,
            answerFromMemory(
                key, remembering: alias, keyGeneration: parsed.keyGeneration, hintsUsed: hintsUsed ?? [],
                answer: parsed.answer, conditions, responder)
        {
            return
        }
        // 5. Disk, then 6. render: for a format this process can write.
        guard acceptsOutputFormat(key, responder) else { return }
        lookUpDiskThenRender(key, conditions, responder)
    }

    /// ``answerFromHotCopy(_:_:keyGeneration:now:_:)`` for a request read with its client hints, found by its
    /// target and the text of its `Accept` and hints (``RequestIdentity/variation``).
    private func answerFromHotCopy(
        _ identity: RequestIdentity, _ hotTable: HotSetTable, keyGeneration: UInt64, now: Timestamp,
        _ responder: HTTPResponder
    ) -> Bool {
        let hotEntry = identity.withHotSetKeyBytes {
            hotTable.entry(target: $0, accept: $1, keyGeneration: keyGeneration)
        }
        guard let entry = hotEntry, entry.isFresh(at: now) else { return false }
        hotTable.countHit()
        hotSet?._withUnsafeGuaranteedRef { $0.touchIfDue(entry, now: now) }
        activity?.noteSource(entry.key.source)
        responder.respond(entry.response(at: now))
        return true
    }

    /// This loop's copy of a fresh memory hit for these very request bytes (``HotSet``): the hot path, touching
    /// nothing that another loop writes.
    @inline(__always)
    private func answerFromHotCopy(
        _ request: HTTPRequest, _ hotTable: HotSetTable, keyGeneration: UInt64, now: Timestamp,
        _ responder: HTTPResponder
    ) -> Bool {
        var hotEntry: HotSetTable.Entry?
        _ = request.withRawTarget(andOnlyValueOf: "accept") {
            hotEntry = hotTable.entry(target: $0, accept: $1, keyGeneration: keyGeneration)
        }
        guard let entry = hotEntry, entry.isFresh(at: now) else { return false }
        hotTable.countHit()
        hotSet?._withUnsafeGuaranteedRef { $0.touchIfDue(entry, now: now) }
        activity?.noteSource(entry.key.source)
        responder.respond(entry.response(at: now))
        return true
    }

    /// A request seen before (and verified under the current signing keys and rules), whose alias names `key`:
    /// answered from memory (copied into this loop's hot set when fresh) or a held-open blob, without parsing or
    /// verifying. Returns false when neither has it: the request is then parsed like a new one.
    private func answerKnownRequest(
        _ key: VariantKey, alias: CacheKey, _ request: HTTPRequest, _ hintedIdentity: RequestIdentity?,
        hintsUsed: ClientHints.Used?, answer: AnswerOptions?, hotTable: HotSetTable?, keyGeneration: UInt64,
        now: Timestamp, _ responder: HTTPResponder
    ) -> Bool {
        guard let cache else { return false }
        let conditions = Self.conditions(request, key, hints: hintsUsed, answer: answer)
        if let variant = cache.memoryHit(key) {
            // (No hot copy for operator tags while the tag header is on: the copy's lines are the variant's, whose
            // tag line has the source's tag only. Such a request takes the alias path.)
            if let hotTable, let freshness = variant.freshness, freshness.state(at: now) == .fresh,
                answer?.tags == nil || !(cache.sourceTags.isOn)
            {
                let insert = { (target: UnsafeRawBufferPointer, accept: UnsafeRawBufferPointer?) in
                    guard let answer else {
                        return hotTable.insert(
                            HotSetKey(target: target, accept: accept), alias: alias, key: key,
                            keyGeneration: keyGeneration, variant: variant, freshness: freshness,
                            cacheControl: self.cacheControl.withLock { $0 }, variesOnAccept: conditions.variesOnAccept,
                            clientHints: conditions.clientHints, now: now)
                    }
                    // The copy carries the answer's own lines, and stops at the deadline (and at each second
                    // before it, when its `max-age` would be a second too long).
                    hotTable.insert(
                        HotSetKey(target: target, accept: accept), alias: alias, key: key,
                        keyGeneration: keyGeneration, variant: variant,
                        freshness: Self.hotFreshness(freshness, deadline: answer.expiresAt, now: now),
                        cacheControl: self.cacheControl(for: answer, isStorable: true, now: now),
                        variesOnAccept: conditions.variesOnAccept, clientHints: conditions.clientHints,
                        extraFields: self.answerFields(answer, variant: variant, copyingPrepared: false), now: now)
                }
                if let hintedIdentity {
                    hintedIdentity.withHotSetKeyBytes(insert)
                } else {
                    // (A request with `Accept` on several lines gets no copy: its bytes are not its identity.)
                    _ = request.withRawTarget(andOnlyValueOf: "accept", insert)
                }
            }
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

    /// The form's one step (``URLForm/thumbnailRequest(for:)``): the variant the request names, normalised, the
    /// generation of the keys (and rules) it was parsed under, and the client hints its plan consulted; or nil once
    /// the refusal (400, 403) is answered.
    private func parseAndVerify(
        _ identity: RequestIdentity, form: some URLForm, _ responder: HTTPResponder
    ) -> ParsedRequest? {
        do {
            let verified = try form.thumbnailRequest(for: identity)
            let request = verified.request
            if let skipped = request.answer.skippedFilters {
                // One per filter named (the names are `, `-separated).
                let count = 1 + skipped.utf8.count(where: { $0 == UInt8(ascii: ",") })
                coordinator.counts.thumborFiltersSkipped.add(count, ordering: .relaxed)
            }
            return (
                VariantKey(source: request.source, spec: thumbnailer.normalized(request.spec)), verified.keyGeneration,
                request.hintsUsed, request.answer.isEmpty ? nil : request.answer
            )
        } catch {
            var response = ErrorResponse(error).response
            Self.addCacheHeaders(&response, .miss, age: 0)
            responder.respond(response)
            return nil
        }
    }

    /// Remembers what `alias` parsed to (under the keys of `keyGeneration`, with the client hints it consulted),
    /// then answers from what the loop reaches without a hop: the memory tier, a held-open blob (memory tier off),
    /// or a remembered origin 404.
    private func answerFromMemory(
        _ key: VariantKey, remembering alias: CacheKey, keyGeneration: UInt64, hintsUsed: ClientHints.Used,
        answer: AnswerOptions?, _ conditions: ResponseConditions, _ responder: HTTPResponder
    ) -> Bool {
        guard let cache else { return false }
        cache.rememberAlias(alias, key, keyGeneration: keyGeneration, hintsUsed: hintsUsed, answer: answer)
        let now = Timestamp.now()
        return serveFromLoop(key, cache, conditions, now: now, responder)
            || answerRememberedNotFound(key, cache, now: now, conditions, responder)
    }

    /// An origin 404 for `key`'s source remembered in memory (`cache.negative_ttl`), answered as one (or with the
    /// fallback image).
    private func answerRememberedNotFound(
        _ key: VariantKey, _ cache: ThumbnailCache, now: Timestamp, _ conditions: ResponseConditions,
        _ responder: HTTPResponder
    ) -> Bool {
        guard let notFound = cache.notFoundHit(key.source, now: now) else { return false }
        let error = ServiceError.fetch(.originNotFound(status: 404))
        if answerWithFallback(for: error, key: key, outcome: .hitMemory, conditions, responder) { return true }
        var response = ErrorResponse(error).response
        Self.addCacheHeaders(
            &response, .hitMemory, age: DiskCache.Freshness(validatedAt: notFound.validatedAt).age(at: now))
        responder.respond(response)
        return true
    }

    /// Whether this process can write the format `key` asks for. An explicit format it cannot write (AVIF without
    /// an encoder, or turned off) fails every render: it is refused here, before a source is fetched for nothing.
    private func acceptsOutputFormat(_ key: VariantKey, _ responder: HTTPResponder) -> Bool {
        do {
            _ = try thumbnailer.outputFormats(for: key.spec.format)
            return true
        } catch {
            var response = ErrorResponse(error).response
            Self.addCacheHeaders(&response, .miss, age: 0)
            responder.respond(response)
            return false
        }
    }

    /// The disk tier on a `disk-io` thread, then (a miss) the render coordinator; straight to the coordinator
    /// without a disk tier. The client leaving cancels what it waits for.
    private func lookUpDiskThenRender(_ key: VariantKey, _ conditions: ResponseConditions, _ responder: HTTPResponder) {
        let pending = PendingRequest()
        responder.onClientGone { pending.clientLeft() }
        guard let cache, cache.hasDiskTier else {
            render(key, conditions, pending, responder)
            return
        }
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
}
