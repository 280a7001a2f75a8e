// SPDX-License-Identifier: Apache-2.0
import EventLoops
package import HTTP1
package import Logging
import OriginFetch
package import ThumbdSettings
import Thumbnailing
package import URLForms

/// The composition root: builds every component from `Settings`, wires the routes, and stops
/// everything in order (imgproxy's `New`, STYLE.md §2). Feature modules meet only here.
///
/// Threads (docs/architecture.md): `http-N` event loops answer requests; `fetch` drives libcurl;
/// `render-N` run libvips; nothing blocking runs on an event loop or on Swift's cooperative pool.
package final class ThumbdService: Sendable {
    /// The settings in force (those it started with, then each reload's: ConfigReloader.swift).
    package var settings: Settings { reloader.settings }
    private let logger: Logger
    private let fetcher: OriginFetcher
    /// The render workers (internal: integration tests occupy them to show what a full pool does).
    let renderPool: WorkerPool
    private let coordinator: RenderCoordinator
    /// The shared tier on the `s3.*` store (`cache.shared.enabled`), or nil.
    let sharedTier: SharedTier?
    /// The two cache tiers (internal: integration tests read their statistics).
    let cache: ThumbnailCache
    /// Background and waiting revalidations of expired entries (internal: tests count them).
    let revalidator: Revalidator
    /// The one purge path (admin routes, changed sources); internal: tests and /metrics read its counters.
    let purger: Purger
    /// The background check of sources (`cache.source_check_interval`); nil when off.
    let sourceChecker: SourceChecker?
    /// Checks `sig` on /thumb against `security.signing_keys`; a reload applies new keys with
    /// `signatureVerifier.update(keys:)`, effective for the next request.
    package let signatureVerifier: URLSignatureVerifier
    /// `/thumb`'s presets and rules; a reload replaces them with `queryRules.update(_:)`, effective for the next
    /// request (internal: tests read them).
    let queryRules: SharedThumbQueryRules
    /// The path-mounted forms' keys and routes, in ``FormDescriptor/all``'s order.
    let forms: [FormDescriptor.Started]
    /// The `/thumb` service (internal: tests count its fallback renders).
    let thumbnails: ThumbnailService
    private let accessLog: AccessLog
    /// Requests per 10 s, recent errors and top sources for /status.
    let activity: ActivityRecorder
    private let server: HTTPServer
    /// `GET /metrics` (internal: integration tests read its counters and its own listener's address).
    let metrics: MetricsEndpoint
    /// `/health` and `/ready`.
    private let health = HealthRoutes()
    /// Applies reloaded settings to the components above (ConfigReloader.swift).
    let reloader: ConfigReloader
    /// `/prefetch` jobs (internal: tests read job counts).
    let prefetch: PrefetchService

    /// Builds every component; nothing listens until `start()`.
    /// - Parameter levelControl: the process-wide log level that a reload sets (`LoggingSetup.bootstrap`'s).
    /// - Throws: when libvips, libcurl, the render threads or a configuration cannot be set up; `SettingsError` for
    ///   a preset `/thumb`'s parser refuses or a fallback image that cannot be read or rendered.
    package init(settings: Settings, logger: Logger, levelControl: LoggingSetup.LevelControl? = nil) throws {
        // The CPUs the thread counts are made from: the cgroup files are read here, once, before any thread starts.
        let cpus = CPUAllowance.current
        let activity = ActivityRecorder()
        self.activity = activity
        self.logger = logger
        let vips = try Vips.initialize(programName: "thumbd")
        let thumbnailer = try Thumbnailer(
            configuration: settings.thumbnailerConfiguration, vips: vips, sandbox: try settings.sourceSandbox())
        // Checked before any thread starts: a bad preset or fallback file stops the start as a configuration error.
        queryRules = SharedThumbQueryRules(try settings.thumbQueryRules())
        let fallbackImage = try settings.fallbackImage(thumbnailer: thumbnailer)
        let objectStorage = try settings.objectStorage()
        fetcher = try OriginFetcher(configuration: settings.originFetcherConfiguration(objectStorage: objectStorage))
        renderPool = try WorkerPool(
            configuration: settings.renderPoolConfiguration,
            onThreadExit: { _ in Vips.shutdownCurrentThread() })
        cache = try ThumbnailCache(configuration: settings.thumbnailCacheConfiguration, logger: logger)
        let policy = SharedFreshnessPolicy(settings.freshnessPolicy)
        let watermarks = try WatermarkSource.load(
            settings.image.watermarks, thumbnailer: thumbnailer, fetcher: fetcher, cache: cache, policy: policy)
        // A preset's wm= must name a watermark that exists (a reload that adds such a preset gets 400s instead).
        if let missing = queryRules.current.rules.presets.watermarkNames.subtracting(watermarks.names).sorted().first {
            throw SettingsError(
                key: "presets", reason: "a preset names watermark \"\(missing)\", not in image.watermarks")
        }
        if settings.cache.shared.isEnabled, let objectStorage {
            sharedTier = SharedTier(fetcher: fetcher, storage: objectStorage, settings: settings.sharedTierSettings)
        } else {
            sharedTier = nil
        }
        let analyses = try SourceAnalyses(
            options: AnalysisOptions(
                blurhashX: settings.image.blurhashX, blurhashY: settings.image.blurhashY,
                paletteColours: settings.image.paletteColours),
            isEager: settings.image.analysis, makesPlaceholders: settings.image.placeholderHeader, cache: cache,
            shared: sharedTier)
        cache.sourceTags.connect(name: settings.cache.tagHeader)
        sharedTier?.sourceTags.connect(name: settings.cache.tagHeader)
        if settings.image.placeholderHeader {
            cache.placeholders.connect(analyses)
            sharedTier?.placeholders.connect(analyses)
        }
        let intermediates = try IntermediateCache(
            maxBytes: settings.image.intermediateCacheBytes, detections: try Self.detections(settings, logger),
            analyses: analyses)
        coordinator = RenderCoordinator(
            fetcher: fetcher, renderPool: renderPool, thumbnailer: thumbnailer, cache: cache, policy: policy,
            intermediates: intermediates, watermarks: watermarks, shared: sharedTier)
        let push = settings.purgeNotifierConfiguration
        let purger = Purger(
            cache: cache, analyses: analyses, intermediates: intermediates, shared: sharedTier,
            notifier: push.isOn ? try PurgeNotifier(configuration: push, fetcher: fetcher, logger: logger) : nil,
            logger: logger)
        self.purger = purger
        if let interval = cache.sourceCheckInterval, let index = cache.purgeIndex {
            sourceChecker = try SourceChecker(
                configuration: .init(interval: interval), index: index, fetcher: fetcher, purger: purger,
                logger: logger)
        } else {
            sourceChecker = nil
        }
        revalidator = Revalidator(
            fetcher: fetcher, renderPool: renderPool, thumbnailer: thumbnailer, cache: cache, policy: policy,
            logger: logger, watermarks: watermarks, intermediates: intermediates, purger: purger)
        signatureVerifier = URLSignatureVerifier(keys: settings.security.signingKeys)
        // The generation check already keeps outdated aliases from hitting; forgetting them frees their memory.
        signatureVerifier.onUpdate { [cache] in cache.forgetAliases() }
        // The same for new presets or rules: the rules' generation keeps outdated aliases and hot copies from hitting.
        queryRules.onUpdate { [cache] in cache.forgetAliases() }
        let thumbnails = ThumbnailService(
            coordinator: coordinator, thumbnailer: thumbnailer, cache: cache, revalidator: revalidator,
            clientMaxAge: settings.cache.clientMaxAge, logger: logger, activity: activity,
            fallback: try FallbackRenders(image: fallbackImage, renderPool: renderPool, thumbnailer: thumbnailer))
        self.thumbnails = thumbnails
        accessLog = AccessLog(settings: settings.log)

        var router = Router()
        // Every URL form goes through the same front door (ThumbnailService.handle); only its parse step differs.
        let thumbQuery = thumbnails.handler(
            for: ThumbQueryForm(verifier: signatureVerifier, rules: queryRules, watermarks: watermarks))
        router.add(.get, "/thumb", handler: thumbQuery)
        router.add(.head, "/thumb", handler: thumbQuery)
        let info = InfoService(
            fetcher: fetcher, cache: cache, renderPool: renderPool, thumbnailer: thumbnailer,
            verifier: signatureVerifier, policy: policy, intermediates: intermediates,
            batchLimits: .init(settings.info))
        info.register(in: &router)
        // Registered even without a token (they answer 404 then), so that a reload can turn them on.
        let admin = AdminService(token: settings.admin.token, cache: cache, logger: logger, purger: purger)
        admin.register(in: &router)
        prefetch = PrefetchService(
            admin: admin, coordinator: coordinator, cache: cache, thumbnailer: thumbnailer, rules: queryRules,
            logger: logger)
        prefetch.register(in: &router)
        metrics = MetricsEndpoint(
            settings: settings, fetcher: fetcher, coordinator: coordinator, cache: cache, revalidator: revalidator,
            renderPool: renderPool, prefetch: prefetch, sharedTier: sharedTier, purger: purger,
            sourceChecker: sourceChecker)
        health.register(in: &router)
        metrics.register(in: &router)

        // The path-mounted forms (FormDescriptor.all: thumbor's, imgproxy's), each at its prefix, after every other
        // route (those keep precedence: exact paths win, and prefixes are tried in the order added, the longest of the
        // forms' first). Every form's keys are made, mounted or not (a reload replaces them; the gallery shows them);
        // a change of any forgets the aliases verified under the old ones.
        let parts = FormDescriptor.Parts(
            thumbnails: thumbnails, info: info, rules: queryRules, watermarks: watermarks,
            keysChanged: { [cache] in cache.forgetAliases() })
        let started = FormDescriptor.all.map { (descriptor: $0, started: $0.start(settings, parts)) }
        self.forms = started.map(\.started)
        let mounted = started.filter { $0.descriptor.isEnabled(settings) }
        let forms = mounted.map { form in
            (prefix: form.descriptor.prefix(settings), handler: form.started.route())
        }
        for (prefix, handler) in forms.sorted(by: { $0.prefix.count > $1.prefix.count }) {
            router.add(.get, prefix: prefix, handler: handler)
            router.add(.head, prefix: prefix, handler: handler)
        }

        let status = StatusService(
            token: settings.admin.token, verifier: signatureVerifier,
            mounts: started.map { .init($0.descriptor, settings, needsSignature: $0.started.needsSignature) },
            cpus: StatusService.cpus(
                cpus, httpThreads: settings.httpThreads(), renderThreads: renderPool.configuration.threads),
            cache: cache, fetcher: fetcher, coordinator: coordinator, renderPool: renderPool, activity: activity,
            sharedTier: sharedTier)
        status.register(in: &router)

        // Always installed and always called, even with the access log off: /metrics and /status count every
        // response here (a few ns each; the path of a /thumb request is a small string, stored inline without an
        // allocation). `log.access` (reloadable) decides only whether a line is written.
        let accessLog = self.accessLog
        // Every answer on a form's route is redacted (thumbnails, meta/, info/, errors); the other routes' are not.
        let formPrefixes = Set(forms.map(\.prefix))
        let redaction = PathSignatureRedaction(
            mounted.map { .init(prefix: $0.descriptor.prefix(settings), form: $0.descriptor.form) },
            otherRoutes: (router.exactPaths, router.pathPrefixes.filter { !formPrefixes.contains($0) }))
        let plainHook: @Sendable (AccessLogRecord) -> Void = { record in
            activity.record(record)
            guard accessLog.isEnabled else { return }
            accessLog.record(
                method: record.method.description, path: record.path, status: record.status,
                bytes: Int(record.bodyBytes), duration: record.duration, note: record.note ?? "-")
        }
        // Without a foreign form mounted there is nothing to redact in paths: the hit path keeps the plain hook.
        var accessLogHook = plainHook
        if redaction.isActive {
            accessLogHook = { record in
                var record = record
                record.path = redaction.redacted(record.path)
                plainHook(record)
            }
        }
        server = HTTPServer(
            configuration: settings.httpServerConfiguration, router: router,
            accessLog: metrics.accessLogHook(chainingTo: accessLogHook))
        metrics.attach(main: server)
        reloader = ConfigReloader(
            components: .init(
                server: server, fetcher: fetcher, thumbnailer: thumbnailer, renderPool: renderPool, cache: cache,
                policy: policy, thumbnails: thumbnails, signatureVerifier: signatureVerifier,
                formKeys: started.map(\.started.reloadKeys),
                queryRules: queryRules,
                admin: admin,
                info: info,
                status: status, accessLog: accessLog, levelControl: levelControl),
            settings: settings, logger: logger)
        logger.info(
            "thumbd components ready",
            metadata: [
                "libvips": "\(vips.version)", "avif": "\(vips.canSaveAVIF)", "jxl": "\(vips.canSaveJXL)",
                "heic": "\(vips.canSaveHEIC)", "cpus": "\(cpus)",
                "render_threads": "\(renderPool.configuration.threads)",
            ])
    }

    /// The keys of `Form`'s form (tests replace them as a reload does).
    func formKeys<Form: PathForm>(_: Form.Type) -> FormKeys<Form.Keys>? {
        zip(FormDescriptor.all, forms).first { $0.0.name == Form.name }?.1.keys as? FormKeys<Form.Keys>
    }

    /// Binds the listener and starts serving; `/ready` turns 200.
    package func start() throws {
        try server.start()
        try metrics.start()
        health.isReady = true
        logger.info(
            "listening",
            metadata: [
                "address": "\(server.localAddresses.map(\.description).joined(separator: ","))",
                "http_threads": "\(server.configuration.threads)",
            ])
    }

    /// The bound addresses (the port, when `server.listen` asked for port 0).
    package var localAddresses: [SocketAddress] { server.localAddresses }

    /// The render coordinator's totals (coalescing, renders, cancellations).
    var renderCounters: RenderCoordinator.Counters { coordinator.counters }

    /// The per-source analyses' totals (for tests).
    var analysisCounters: SourceAnalyses.Counters? { coordinator.analysisCounters }

    /// The fetcher's totals and gauges (tests: queued transfers, promotions).
    var fetchCounters: OriginFetcher.Counters { fetcher.counters }

    /// Graceful stop: `/ready` turns 503, the listener closes, requests in flight finish (up to
    /// `server.shutdown_timeout`), then the fetch thread and render workers stop.
    package func shutdown() {
        health.isReady = false
        let timeout = settings.server.shutdownTimeout
        logger.info("shutting down", metadata: ["timeout": "\(timeout)"])
        server.shutdown(timeout: timeout)
        metrics.shutdown()
        prefetch.shutdown()
        coordinator.shutdown()
        sourceChecker?.shutdown()
        purger.notifier?.shutdown()  // before the fetch thread: their requests go there
        fetcher.shutdown()
        renderPool.shutdown()
        cache.shutdown()  // after the renders: their stores are queued, and written before the disk thread stops
        accessLog.shutdown()
        logger.info("stopped")
    }

    /// The sources' detections (`image.faces`), or `nil` when off or when a cascade cannot be read (logged: the
    /// detection gravities then take their fallbacks, and `redact` answers 503). The quick search is the operator's
    /// (`image.face_cascade`, `image.face_side`); the thorough one thumbor's (its Haar cascade on the whole
    /// intermediate), for `smart` and `redact`.
    static func detections(_ settings: Settings, _ logger: Logger) throws -> SourceDetections? {
        guard settings.image.faces else { return nil }
        var quick = FaceDetector.Configuration()
        quick.cascadePath = settings.image.faceCascade
        quick.faceSide = settings.image.faceSide
        quick.maxFeatures = 0  // the corners serve thumbor's smart crop only, which takes the thorough search
        var thorough = FaceDetector.Configuration()
        thorough.featuresBesideFaces = false
        let detectors: (quick: FaceDetector, thorough: FaceDetector)
        do throws(FaceDetectorError) {
            detectors = (try FaceDetector(configuration: quick), try FaceDetector(configuration: thorough))
        } catch {
            logger.warning(
                "face detection is off: a cascade cannot be loaded",
                metadata: ["key": "image.face_cascade", "error": "\(error)"])
            return nil
        }
        return try SourceDetections(quick: detectors.quick, thorough: detectors.thorough)
    }
}
