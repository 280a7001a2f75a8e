// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import HTTP1
import Instrumentation
import OriginFetch
import Synchronization
import ThumbdSettings

/// `GET /metrics`: the Prometheus text exposition (format 0.0.4) of every component's counters, on
/// `server.listen` or, with `metrics.listen`, on a server of its own (one loop) and not on the main one.
///
/// Pull model: almost everything is read at scrape time from the totals and gauges the components keep anyway
/// (relaxed atomics, the fetch thread's published snapshot, the caches' statistics under their own short locks),
/// so the request path does no extra work for them. Only what no component counted is recorded as it happens:
/// per-response route, status, duration and cache outcome (``RequestMetrics``, from the server's access-log hook
/// on the connection's loop) and render durations (`RenderCoordinator`). Metric names and meanings:
/// docs/metrics.md.
///
/// A scrape runs on the loop that received it: every read is non-blocking (no lock is held while calling out,
/// `/proc/self/statm` is generated from kernel memory).
final class MetricsEndpoint: Sendable {
    /// The routes that get their own `route` label when matched exactly.
    static let routes = ["/thumb", "/health", "/ready", "/metrics"]
    /// The routes that get their own `route` label for their subpaths too (`/cache/trim`, `/prefetch/<id>`);
    /// every other path is `other`.
    static let prefixRoutes = ["/cache", "/prefetch"]

    /// Per-response counts; fed by ``accessLogHook(chainingTo:)``.
    let requests = RequestMetrics(
        routes: MetricsEndpoint.routes, prefixRoutes: MetricsEndpoint.prefixRoutes,
        outcomes: [
            (CacheOutcome.hitMemory.rawValue, "hit_memory"), (CacheOutcome.hitDisk.rawValue, "hit_disk"),
            (CacheOutcome.hitShared.rawValue, "hit_shared"), (CacheOutcome.miss.rawValue, "miss"),
            (CacheOutcome.coalesced.rawValue, "coalesced"),
            (CacheOutcome.stale.rawValue, "stale"), (CacheOutcome.revalidated.rawValue, "revalidated"),
            (CacheOutcome.fallback.rawValue, "fallback"),
        ])
    private let process = ProcessMetrics()
    let fetcher: OriginFetcher
    let coordinator: RenderCoordinator
    let cache: ThumbnailCache
    let revalidator: Revalidator
    let renderPool: WorkerPool
    let prefetch: PrefetchService
    let sharedTier: SharedTier?
    let purger: Purger?
    let sourceChecker: SourceChecker?
    /// `metrics.listen`'s server settings; nil when /metrics is served on `server.listen`.
    private let ownConfiguration: HTTPServer.Configuration?
    /// The servers whose connections are counted: `main` (set once built: it takes the router this endpoint
    /// registers in) and `metrics` (built by ``start()``).
    private let servers = Mutex<(main: HTTPServer?, own: HTTPServer?)>((nil, nil))

    init(
        settings: Settings, fetcher: OriginFetcher, coordinator: RenderCoordinator, cache: ThumbnailCache,
        revalidator: Revalidator, renderPool: WorkerPool, prefetch: PrefetchService, sharedTier: SharedTier? = nil,
        purger: Purger? = nil, sourceChecker: SourceChecker? = nil
    ) {
        self.sourceChecker = sourceChecker
        self.sharedTier = sharedTier
        self.purger = purger
        self.prefetch = prefetch
        self.fetcher = fetcher
        self.coordinator = coordinator
        self.cache = cache
        self.revalidator = revalidator
        self.renderPool = renderPool
        ownConfiguration = settings.metrics.listen.map { listen in
            var configuration = settings.httpServerConfiguration
            configuration.host = listen.host
            configuration.port = listen.port
            configuration.threads = 1
            configuration.maxConnections = 64
            configuration.maxBodyBytes = 0
            return configuration
        }
    }

    // MARK: - Wiring (ThumbdService)

    /// Registers `GET /metrics` in the main router, unless `metrics.listen` gives it a server of its own.
    func register(in router: inout Router) {
        guard ownConfiguration == nil else { return }
        router.add(.get, "/metrics", handler: handler)
    }

    /// The route handler. It holds the endpoint weakly: the endpoint holds the servers whose routers hold the
    /// handler, and a cycle would keep every component (and the disk caches' directory locks) alive after the
    /// service is released.
    private var handler: HTTPHandler {
        { [weak self] request, responder in
            guard let self else { return responder.respond(.error(.serviceUnavailable, message: "stopping")) }
            handle(request, responder)
        }
    }

    /// The main server's access-log hook: counts every response, then calls `next` (the access log), if any.
    func accessLogHook(
        chainingTo next: (@Sendable (AccessLogRecord) -> Void)?
    ) -> @Sendable (AccessLogRecord) -> Void {
        let requests = self.requests
        guard let next else {
            return { record in
                requests.record(path: record.path, status: record.status, duration: record.duration, note: record.note)
            }
        }
        return { record in
            requests.record(path: record.path, status: record.status, duration: record.duration, note: record.note)
            next(record)
        }
    }

    /// Tells the endpoint which server is the main one (for `thumbd_http_open_connections{listener="main"}`).
    func attach(main server: HTTPServer) {
        servers.withLock { $0.main = server }
    }

    /// Starts the `metrics.listen` server, if configured.
    /// - Throws: when it cannot bind.
    func start() throws {
        guard let ownConfiguration else { return }
        var router = Router()
        router.add(.get, "/metrics", handler: handler)
        let server = HTTPServer(
            configuration: ownConfiguration, router: router, accessLog: accessLogHook(chainingTo: nil))
        try server.start()
        servers.withLock { $0.own = server }
    }

    /// Where the `metrics.listen` server listens (empty without one).
    var ownAddresses: [SocketAddress] {
        servers.withLock { $0.own }?.localAddresses ?? []
    }

    /// Stops the `metrics.listen` server, if running.
    func shutdown() {
        let own = servers.withLock { servers -> HTTPServer? in
            defer { servers = (nil, nil) }
            return servers.own
        }
        own?.shutdown(timeout: .seconds(1))
    }

    // MARK: - Scrape

    private func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        responder.respond(
            HTTPResponse(
                status: .ok, headers: [HTTPField(name: "Content-Type", value: PrometheusText.contentType)],
                body: .bytes(scrape().bytes)))
    }

    /// Every metric, as of now.
    func scrape() -> PrometheusText {
        var text = PrometheusText()
        requests.write(to: &text)
        writeConnections(to: &text)
        writeCaches(to: &text)
        writeSharedTier(to: &text)
        writePurges(to: &text)
        writeOrigin(to: &text)
        writeRenders(to: &text)
        writeSandbox(to: &text)
        writePrefetch(to: &text)
        process.write(to: &text)
        return text
    }

    private func writeConnections(to text: inout PrometheusText) {
        let (main, own) = servers.withLock { ($0.main, $0.own) }
        text.family(MetricNames.httpOpenConnections, .gauge, "Open client connections, by listener.")
        text.sample(MetricNames.httpOpenConnections, [("listener", "main")], main?.connectionCount ?? 0)
        if let own { text.sample(MetricNames.httpOpenConnections, [("listener", "metrics")], own.connectionCount) }
    }
}
