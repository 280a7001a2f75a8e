// SPDX-License-Identifier: Apache-2.0
import Caching
import Foundation
import HTTP1
import Logging
import Synchronization
import Thumbnailing
import URLForms

/// Warms the cache ahead of need, and stops when told to (the seed: UICollectionView prefetching with cancel).
/// Admin routes, behind the same `Authorization: Bearer <admin.token>` as /cache (``AdminService``):
/// - `POST /prefetch` with `{"items": [{"url": "...", "w": 256, "h": 256, ...}, ...]}` (1...1000 items, each
///   with /thumb's parameters) → 202 `{"id": "..."}`. One invalid item refuses the whole request (400 naming
///   `items[i]`), so a typo never turns into silent failures.
/// - `GET /prefetch/<id>` → 200 with the counts (``PrefetchJob/statusJSON``); unknown id → 404.
/// - `DELETE /prefetch/<id>` → cancels what has not finished, 200 with the counts.
///
/// How items run (docs/caching.md, "Prefetch"):
/// - A fresh thumbnail in memory or on disk counts as done at once, with no work.
/// - Otherwise the item goes through ``RenderCoordinator`` at background priority: it joins work under way for
///   the same thumbnail (or the same source, in the fetcher), fills both tiers as a client miss does, and
///   waits behind every client in the fetcher's per-host queues and the render pool's lanes.
/// - At most ``Limits/maxInFlight`` items of all jobs are under way at once (jobs in arrival order), so
///   prefetch can neither flood the origin nor fill the background render lane.
/// - Cancelling leaves the coordinator: a fetch that no client waits for stops; a client that joined the same
///   work keeps it alive and gets its answer; a render already running finishes for the cache.
final class PrefetchService: Sendable {
    /// Sizes, fixed (not configuration keys): documented in README and docs/caching.md.
    struct Limits: Sendable {
        /// Items per request at most.
        var maxItems = 1000
        /// Items under way at once, over all jobs (K).
        var maxInFlight = 4
        /// Jobs not finished at once; one more is refused with 503.
        var maxActiveJobs = 16
        /// Jobs kept (finished ones are forgotten oldest first beyond it).
        var maxKeptJobs = 256
        /// How long a finished job's counts stay readable.
        var retention: Duration = .seconds(600)
    }

    private struct State {
        var jobs: [String: PrefetchJob] = [:]
        /// Job ids in arrival order (for forgetting the oldest finished ones).
        var arrival: [String] = []
        /// Jobs with items not started yet, in arrival order.
        var queue: [PrefetchJob] = []
        var inFlight = 0
        var isPumping = false
        var isShutDown = false
        /// Totals since start, for /metrics (jobs are forgotten, these are not).
        var totals = Totals()

        mutating func release(_ slot: PrefetchJob.Slot) {
            guard !slot.isReleased else { return }
            slot.isReleased = true
            inFlight -= 1
        }
    }

    private let admin: AdminService
    private let coordinator: RenderCoordinator
    private let cache: ThumbnailCache?
    private let thumbnailer: Thumbnailer
    private let limits: Limits
    private let logger: Logger
    /// `/thumb`'s presets and rules: an item is read as the `/thumb` query it spells would be.
    private let rules: SharedThumbQueryRules
    private let state = Mutex(State())

    init(
        admin: AdminService, coordinator: RenderCoordinator, cache: ThumbnailCache?, thumbnailer: Thumbnailer,
        rules: SharedThumbQueryRules = SharedThumbQueryRules(), limits: Limits = Limits(), logger: Logger
    ) {
        self.rules = rules
        self.admin = admin
        self.coordinator = coordinator
        self.cache = cache
        self.thumbnailer = thumbnailer
        self.limits = limits
        self.logger = logger
    }

    /// Adds `POST /prefetch`, `GET /prefetch/<id>` and `DELETE /prefetch/<id>`.
    func register(in router: inout Router) {
        router.add(.post, "/prefetch", handler: create)
        router.add(.get, prefix: Self.prefix, handler: status)
        router.add(.delete, prefix: Self.prefix, handler: cancel)
    }

    private static let prefix = "/prefetch/"

    /// Cancels every job (as DELETE would) and starts nothing more.
    func shutdown() {
        let tickets = state.withLock { state -> [RenderCoordinator.Ticket] in
            state.isShutDown = true
            return state.jobs.values.flatMap { Self.cancel($0, in: &state) }
        }
        for ticket in tickets { coordinator.leave(ticket) }
    }

    /// The counts of job `id` (tests), or nil when it is unknown.
    func statusJSON(of id: String) -> String? {
        state.withLock { $0.jobs[id]?.statusJSON }
    }

    // MARK: - Routes

    /// `POST /prefetch`. Decoding up to `server.max_body_bytes` of JSON runs on the event loop: it is CPU
    /// work of a few milliseconds at most, on an admin route.
    private func create(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard admin.authorize(request, responder) else { return }
        let body: PrefetchBody
        do {
            body = try JSONDecoder().decode(PrefetchBody.self, from: Data(request.body))
        } catch {
            let at = Self.itemIndex(of: error).map { "items[\($0)]: " } ?? ""
            return responder.respond(
                .error(
                    .badRequest,
                    message: at + "body must be {\"items\": [{\"url\": ..., \"w\": ...}, ...]} "
                        + "with string, number or boolean values"))
        }
        guard (1...limits.maxItems).contains(body.items.count) else {
            return responder.respond(.error(.badRequest, message: "items must hold 1...\(limits.maxItems) entries"))
        }
        // Items without `format` negotiate it from this request's Accept, as /thumb does.
        let accept = request.listValue(of: "accept")
        // Presets (`preset`, the `default` one) and `image.presets_only` as for /thumb; no client hints.
        let rules = self.rules.current.rules
        var keys: [VariantKey] = []
        keys.reserveCapacity(body.items.count)
        for (index, item) in body.items.enumerated() {
            do {
                let parsed = try ThumbnailRequest(
                    rawQuery: PrefetchBody.query(of: item), accept: accept, rules: rules)
                let key = VariantKey(source: parsed.source, spec: thumbnailer.normalized(parsed.spec))
                _ = try thumbnailer.outputFormats(for: key.spec.format)
                keys.append(key)
            } catch let error as RequestError {
                return responder.respond(.error(.badRequest, message: "items[\(index)]: \(error.publicMessage)"))
            } catch {
                let message = (error as? ThumbnailError).map { ErrorResponse($0).publicMessage } ?? "\(error)"
                return responder.respond(.error(.badRequest, message: "items[\(index)]: \(message)"))
            }
        }
        let job = PrefetchJob(id: PrefetchJob.randomID(), keys: keys)
        let admitted = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            forgetOld(&state, now: .now)
            guard state.queue.count < limits.maxActiveJobs else { return false }
            state.jobs[job.id] = job
            state.totals.jobs += 1
            state.totals.itemsAccepted += job.total
            state.arrival.append(job.id)
            state.queue.append(job)
            return true
        }
        guard admitted else {
            var response = HTTPResponse.error(
                .serviceUnavailable,
                message: "too many prefetch jobs under way (\(limits.maxActiveJobs))")
            response.headers.append(HTTPField(name: "Retry-After", value: "5"))
            return responder.respond(response)
        }
        logger.info("prefetch started", metadata: ["id": "\(job.id)", "items": "\(keys.count)"])
        responder.respond(Self.json(status: HTTPStatus(code: 202, reasonPhrase: "Accepted"), "{\"id\": \"\(job.id)\"}"))
        pump()
    }

    /// `GET /prefetch/<id>`.
    private func status(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard admin.authorize(request, responder) else { return }
        let json = Self.id(of: request).flatMap { id in
            state.withLock { state -> String? in
                forgetOld(&state, now: .now)
                return state.jobs[id]?.statusJSON
            }
        }
        guard let json else { return responder.respond(.error(.notFound, message: "no such prefetch job")) }
        responder.respond(Self.json(status: .ok, json))
    }

    /// `DELETE /prefetch/<id>`.
    private func cancel(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard admin.authorize(request, responder) else { return }
        let outcome = Self.id(of: request).flatMap { id in
            state.withLock { state -> (String, [RenderCoordinator.Ticket])? in
                forgetOld(&state, now: .now)
                guard let job = state.jobs[id] else { return nil }
                let tickets = Self.cancel(job, in: &state)
                return (job.statusJSON, tickets)
            }
        }
        guard let (json, tickets) = outcome else {
            return responder.respond(.error(.notFound, message: "no such prefetch job"))
        }
        // Outside the lock: leaving may cancel a fetch, whose completion never comes back here.
        for ticket in tickets { coordinator.leave(ticket) }
        responder.respond(Self.json(status: .ok, json))
        pump()  // the places the cancelled items held go to other jobs
    }

    /// Counts everything not settled as cancelled; returns the coordinator tickets to leave. Items still in a
    /// cache lookup (no ticket yet) give their place back when the lookup returns.
    private static func cancel(_ job: PrefetchJob, in state: inout State) -> [RenderCoordinator.Ticket] {
        guard job.finishedAt == nil else { return [] }
        job.isCancelled = true
        let cancelledBefore = job.cancelled
        defer { state.totals.itemsCancelled += job.cancelled - cancelledBefore }
        job.cancelled += job.total - job.nextIndex
        job.nextIndex = job.total
        var tickets: [RenderCoordinator.Ticket] = []
        for slot in job.running.values {
            slot.isCancelled = true
            job.cancelled += 1
            if let ticket = slot.ticket {
                tickets.append(ticket)
                state.release(slot)
            }
        }
        job.running.removeAll()
        state.queue.removeAll { $0 === job }
        job.finishIfSettled(now: .now)
        return tickets
    }

    /// Forgets finished jobs older than the retention, and the oldest finished ones beyond the count bound.
    private func forgetOld(_ state: inout State, now: ContinuousClock.Instant) {
        var excess = state.jobs.count - limits.maxKeptJobs + 1  // room for one more
        state.arrival.removeAll { id in
            guard let job = state.jobs[id] else { return true }
            guard let finishedAt = job.finishedAt else { return false }
            if now - finishedAt > limits.retention || excess > 0 {
                excess -= 1
                state.jobs[id] = nil
                return true
            }
            return false
        }
    }

    // MARK: - Running items

    /// Prefetch totals since start and what is under way now (for /metrics).
    struct Totals: Sendable, Equatable {
        /// Jobs accepted (202).
        var jobs = 0
        /// Items in accepted jobs.
        var itemsAccepted = 0
        /// Items in the cache now (including those found fresh without work).
        var itemsDone = 0
        /// Items whose fetch or render failed.
        var itemsFailed = 0
        /// Items a DELETE cancelled.
        var itemsCancelled = 0
        /// Items under way now (at most 4).
        var itemsInFlight = 0
        /// Jobs with items not finished.
        var activeJobs = 0
    }

    /// A snapshot of ``Totals``.
    var totals: Totals {
        state.withLock { state in
            var totals = state.totals
            totals.itemsInFlight = state.inFlight
            totals.activeJobs = state.jobs.values.count { $0.finishedAt == nil }
            return totals
        }
    }

    /// Starts items while there are places, from whatever thread freed one. Only one thread pumps at a time; a
    /// result that arrives synchronously while pumping (a memory hit, a shut-down coordinator) is picked up by
    /// the loop instead of recursing once per item.
    private func pump() {
        let maxInFlight = limits.maxInFlight
        let canStart = state.withLock { state -> Bool in
            guard !state.isPumping else { return false }
            state.isPumping = true
            return true
        }
        guard canStart else { return }
        while true {
            let batch = state.withLock { state -> [(PrefetchJob, Int, PrefetchJob.Slot, VariantKey)] in
                var batch: [(PrefetchJob, Int, PrefetchJob.Slot, VariantKey)] = []
                while !state.isShutDown, state.inFlight < maxInFlight, let job = state.queue.first {
                    guard job.nextIndex < job.keys.count else {
                        state.queue.removeFirst()
                        continue
                    }
                    let index = job.nextIndex
                    job.nextIndex += 1
                    let slot = PrefetchJob.Slot()
                    job.running[index] = slot
                    state.inFlight += 1
                    batch.append((job, index, slot, job.keys[index]))
                }
                if batch.isEmpty { state.isPumping = false }
                return batch
            }
            if batch.isEmpty { return }
            for (job, index, slot, key) in batch { start(job, index: index, slot: slot, key: key) }
        }
    }

    /// An item: done at once when fresh in memory, else looked up on disk, else rendered.
    private func start(_ job: PrefetchJob, index: Int, slot: PrefetchJob.Slot, key: VariantKey) {
        guard let cache else { return render(job, index: index, slot: slot, key: key) }
        if let variant = cache.memoryHit(key), Self.isFresh(variant.freshness) {
            return settle(job, index: index, slot: slot, succeeded: true)
        }
        guard cache.hasDiskTier else { return render(job, index: index, slot: slot, key: key) }
        do {
            try cache.lookupDisk(key) { [self] lookup in
                switch lookup {
                case .variant(let variant) where Self.isFresh(variant.freshness):
                    settle(job, index: index, slot: slot, succeeded: true)
                case .file(let file) where Self.isFresh(file.freshness):
                    settle(job, index: index, slot: slot, succeeded: true)
                default:
                    render(job, index: index, slot: slot, key: key)
                }
            }
        } catch {
            render(job, index: index, slot: slot, key: key)  // the lookup queue is full: render decides
        }
    }

    private static func isFresh(_ freshness: DiskCache.Freshness?) -> Bool {
        freshness?.state(at: Timestamp.now()) == .fresh
    }

    /// Asks the coordinator at background priority (it joins work under way and stores the result).
    private func render(_ job: PrefetchJob, index: Int, slot: PrefetchJob.Slot, key: VariantKey) {
        let isCancelled = state.withLock { state -> Bool in
            guard slot.isCancelled else { return false }
            state.release(slot)
            return true
        }
        if isCancelled {
            pump()
            return
        }
        let (ticket, _) = coordinator.request(key, priority: .background) { [self] result, _ in
            if case .failure(let error) = result {
                logger.debug(
                    "prefetch item failed",
                    metadata: ["id": "\(job.id)", "source": "\(key.source)", "error": "\(error)"])
            }
            settle(job, index: index, slot: slot, succeeded: (try? result.get()) != nil)
        }
        // A DELETE between the request and here found no ticket to leave: leave now.
        let mustLeave = state.withLock { state -> Bool in
            slot.ticket = ticket
            guard slot.isCancelled, !slot.isReleased else { return false }
            state.release(slot)
            return true
        }
        if mustLeave {
            coordinator.leave(ticket)
            pump()
        }
    }

    /// Counts an item done or failed (unless a DELETE counted it cancelled first) and frees its place.
    private func settle(_ job: PrefetchJob, index: Int, slot: PrefetchJob.Slot, succeeded: Bool) {
        state.withLock { state in
            if !slot.isCancelled, !slot.isSettled {
                slot.isSettled = true
                if succeeded {
                    job.done += 1
                    state.totals.itemsDone += 1
                } else {
                    job.failed += 1
                    state.totals.itemsFailed += 1
                }
                job.running[index] = nil
                job.finishIfSettled(now: .now)
            }
            state.release(slot)
        }
        pump()
    }

    // MARK: - Helpers

    /// The id in `/prefetch/<id>`, when it has the shape of one.
    private static func id(of request: HTTPRequest) -> String? {
        let path = request.path
        guard path.hasPrefix(prefix) else { return nil }
        let id = path.dropFirst(prefix.count)
        return PrefetchJob.isWellFormedID(id) ? String(id) : nil
    }

    /// The item index a decoding error points at, if any.
    private static func itemIndex(of error: any Error) -> Int? {
        let path: [any CodingKey]
        switch error as? DecodingError {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context),
            .dataCorrupted(let context):
            path = context.codingPath
        default:
            return nil
        }
        guard path.first?.stringValue == "items" else { return nil }
        return path.dropFirst().first?.intValue
    }

    private static func json(status: HTTPStatus, _ text: String) -> HTTPResponse {
        HTTPResponse(
            status: status,
            headers: [
                HTTPField(name: "Content-Type", value: "application/json"),
                HTTPField(name: "Cache-Control", value: "no-store"),
            ],
            body: .bytes(Array(text.utf8)))
    }
}
