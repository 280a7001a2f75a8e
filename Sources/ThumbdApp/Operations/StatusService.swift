// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Foundation
import HTTP1
import OriginFetch
import Pages
import Synchronization
import ThumbdSettings
import URLForms

/// The pages a person looks at: `GET /status` (HTML), `GET /status.json` (the same data) and `GET /` (the
/// demo gallery).
///
/// Access: with `admin.token` set, `/status` and `/status.json` need it, as `Authorization: Bearer <token>` or
/// as the password of HTTP Basic authentication (any user name), so a browser can open the page (it asks once
/// and then sends it with the page's own refreshes); without a token the status is open but shows source
/// hosts only, never whole source URLs (which can say who looked at what). The gallery is always open: of the
/// server it shows only which URL forms answer, at which prefix, and which need signatures (``galleryForms``), and
/// it asks only what any client may ask of `/thumb`.
///
/// The handlers run on the event loop: reading the statistics takes a few short locks and no I/O.
final class StatusService: Sendable {
    /// `admin.token` in force (replaced by ``update(token:)`` on reload).
    private let tokens: Mutex<[UInt8]>
    private var token: [UInt8] { tokens.withLock { $0 } }
    private let cache: ThumbnailCache
    private let fetcher: OriginFetcher
    private let coordinator: RenderCoordinator
    private let renderPool: WorkerPool
    private let activity: ActivityRecorder
    private let sharedTier: SharedTier?
    /// Whether /thumb needs signatures now (the gallery says so); follows reloads of the keys.
    private let verifier: URLSignatureVerifier
    private var signing: Bool { verifier.requiresSignature }
    /// Each path-mounted form as the gallery shows it (mounted or not, where: restart-only), with the signing state
    /// of its keys in force, read again per page (they follow reloads).
    private let mounts: [GalleryMount]
    /// The CPUs thumbd may use and the threads made from them (restart-only, so fixed).
    private let cpus: StatusReport.CPUs

    init(
        token: String, verifier: URLSignatureVerifier, mounts: [GalleryMount], cpus: StatusReport.CPUs,
        cache: ThumbnailCache, fetcher: OriginFetcher, coordinator: RenderCoordinator,
        renderPool: WorkerPool, activity: ActivityRecorder, sharedTier: SharedTier? = nil
    ) {
        self.cpus = cpus
        self.sharedTier = sharedTier
        self.tokens = Mutex(Array(token.utf8))
        self.verifier = verifier
        self.mounts = mounts
        self.cache = cache
        self.fetcher = fetcher
        self.coordinator = coordinator
        self.renderPool = renderPool
        self.activity = activity
    }

    /// Adds `GET /`, `GET /status` and `GET /status.json` (HEAD follows GET).
    func register(in router: inout Router) {
        router.add(.get, "/status", handler: statusPage)
        router.add(.get, "/status.json", handler: statusJSON)
        router.add(.get, "/") { [self] _, responder in
            let nonce = PageResponse.makeNonce()
            let page = GalleryPage.render(nonce: nonce, forms: galleryForms())
            responder.respond(PageResponse.html(page, nonce: nonce))
        }
    }

    /// One path-mounted form in the gallery: its entry as the settings mount it, and whether its keys in force
    /// refuse unsigned URLs.
    struct GalleryMount: Sendable {
        let form: GalleryForms.Form
        let needsSignature: @Sendable () -> Bool

        /// `descriptor`'s form as `settings` mount it, its signing state read from `needsSignature`.
        init(_ descriptor: FormDescriptor, _ settings: Settings, needsSignature: @escaping @Sendable () -> Bool) {
            form = descriptor.gallery(
                isEnabled: descriptor.isEnabled(settings), prefix: descriptor.prefix(settings),
                needsSignature: needsSignature())
            self.needsSignature = needsSignature
        }
    }

    /// What the status shows of `allowance` and the thread counts made from it.
    static func cpus(_ allowance: CPUAllowance, httpThreads: Int, renderThreads: Int) -> StatusReport.CPUs {
        StatusReport.CPUs(
            count: allowance.count, affinity: allowance.affinity,
            quota: allowance.quota.map { Double($0.quota) / Double($0.period) }, origin: allowance.origin,
            httpThreads: httpThreads, renderThreads: renderThreads)
    }

    /// What the gallery is told of the URL forms now: the mounts, and the keys in force (they follow reloads).
    func galleryForms() -> GalleryForms {
        GalleryForms(
            thumbNeedsSignature: verifier.requiresSignature,
            forms: mounts.map { mount in
                var form = mount.form
                form.needsSignature = mount.needsSignature()
                return form
            })
    }

    /// Uses `token` from now on (config hot reload): empty opens the status to everyone, without URLs. Any thread.
    func update(token: String) {
        let bytes = Array(token.utf8)
        tokens.withLock { $0 = bytes }
    }

    func statusPage(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard authorize(request, responder) else { return }
        let nonce = PageResponse.makeNonce()
        responder.respond(PageResponse.html(StatusPage.render(report(), nonce: nonce), nonce: nonce))
    }

    func statusJSON(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard authorize(request, responder) else { return }
        responder.respond(
            HTTPResponse(
                status: .ok,
                headers: [
                    HTTPField(name: "Content-Type", value: "application/json"),
                    HTTPField(name: "Cache-Control", value: "no-store"),
                    HTTPField(name: "X-Content-Type-Options", value: "nosniff"),
                ],
                body: .bytes(report().json())))
    }

    // MARK: - The report

    /// Reads every component's statistics now.
    func report() -> StatusReport {
        let memory = cache.memoryStatistics
        let variants = cache.variants?.statistics
        let sources = cache.sources?.statistics
        let fetches = fetcher.counters
        let renders = coordinator.counters
        let activity = activity.snapshot()
        // A lookup that misses memory goes to disk when there is a disk tier; its miss is the real miss.
        let misses = variants?.misses ?? memory?.misses ?? 0
        let finished = activity.buckets.dropLast().suffix(6)
        let showsURLs = !token.isEmpty
        return StatusReport(
            generatedAt: StatusReport.iso8601(unixTime: Int(Date().timeIntervalSince1970)),
            uptimeSeconds: activity.uptimeSeconds,
            cpus: cpus,
            signing: signing,
            hitRatio: .init(memoryHits: memory?.hits ?? 0, diskHits: variants?.hits ?? 0, misses: misses),
            tiers: [
                .init(
                    name: "memory", enabled: memory != nil, entries: memory?.currentEntries ?? 0,
                    bytes: memory?.currentBytes ?? 0, maxBytes: memory?.maxBytes ?? 0),
                .init(
                    name: "disk_thumbnails", enabled: variants != nil, entries: variants?.currentEntries ?? 0,
                    bytes: variants?.currentBytes ?? 0, maxBytes: variants?.maxBytes ?? 0),
                .init(
                    name: "disk_sources", enabled: sources != nil, entries: sources?.currentEntries ?? 0,
                    bytes: sources?.currentBytes ?? 0, maxBytes: sources?.maxBytes ?? 0),
            ],
            sharedTier: sharedTierStatus(),
            requests: .init(
                total: activity.totalRequests, bucketSeconds: ActivityRecorder.bucketSeconds,
                buckets: activity.buckets,
                perSecondLastMinute: Double(finished.reduce(0, +))
                    / Double(max(1, finished.count * ActivityRecorder.bucketSeconds))),
            inFlight: .init(
                fetchesRunning: fetches.running, fetchesQueued: fetches.queued,
                renderFlights: coordinator.inFlightCount,
                rendersRunning: max(0, renders.rendersStarted - renders.rendersFinished),
                renderQueueDepth: renderPool.queueDepth.interactive + renderPool.queueDepth.background,
                transfersStarted: fetches.transfersStarted, coalescedRequests: renders.coalescedJoins,
                coalescedFetches: fetches.coalescedJoins),
            topSources: .init(
                kind: showsURLs ? "url" : "host", sampleEvery: self.activity.sourceSamplePeriod,
                items: (showsURLs ? activity.topURLs : activity.topHosts).map {
                    .init(
                        name: showsURLs ? LoggingRedaction.redactingSecrets(in: $0.name) : $0.name,
                        requests: $0.requests)
                }),
            recentErrors: activity.errors.map {
                .init(
                    time: StatusReport.iso8601(unixTime: $0.unixTime), status: $0.status, method: $0.method,
                    route: LoggingRedaction.redactingSecrets(in: $0.route), message: $0.message)
            })
    }

    /// The shared tier's counters, summed over thumbnails and originals.
    private func sharedTierStatus() -> StatusReport.SharedTier {
        guard let counters = sharedTier?.counters else { return .init(enabled: false) }
        func lookups(_ results: SharedTierCounters.LookupResult...) -> Int {
            SharedTierCounters.Kind.allCases.reduce(0) { total, kind in
                total + results.reduce(0) { $0 + counters.lookups(kind, $1) }
            }
        }
        return .init(
            enabled: true, breakerOpen: counters.isOpen, hits: lookups(.hit), misses: lookups(.miss),
            errors: lookups(.error), skipped: lookups(.skipped), unusable: lookups(.corrupt, .stale),
            stored: counters.puts[.stored] ?? 0, alreadyStored: counters.puts[.exists] ?? 0,
            writeErrors: counters.puts[.error] ?? 0,
            dropped: (counters.puts[.dropped] ?? 0) + (counters.puts[.skipped] ?? 0))
    }

    // MARK: - Access

    /// True when no token is configured, or the request carries it (Bearer, or Basic with it as password);
    /// otherwise answers 401 with a Basic challenge, so that a browser asks for it.
    private func authorize(_ request: HTTPRequest, _ responder: HTTPResponder) -> Bool {
        let token = self.token
        guard !token.isEmpty else { return true }
        let value = request.headers["authorization"] ?? ""
        let parts = value.split(separator: " ", maxSplits: 1)
        var presented: [UInt8]? = nil
        if parts.count == 2 {
            let scheme = parts[0].lowercased()
            let credentials = parts[1].trimmingCharacters(in: .whitespaces)
            if scheme == "bearer" {
                presented = Array(credentials.utf8)
            } else if scheme == "basic", let decoded = Data(base64Encoded: credentials),
                let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
            {
                presented = Array(decoded[decoded.index(after: colon)...])
            }
        }
        if let presented, AdminService.constantTimeEquals(presented, token) { return true }
        var response = HTTPResponse.error(
            HTTPStatus(code: 401, reasonPhrase: "Unauthorized"), message: "admin token required")
        response.headers.append(
            HTTPField(name: "WWW-Authenticate", value: "Basic realm=\"thumbd status\", charset=\"UTF-8\""))
        responder.respond(response)
        return false
    }
}
