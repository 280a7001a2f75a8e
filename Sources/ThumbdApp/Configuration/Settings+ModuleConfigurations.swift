// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import FoundationEssentials
import HTTP1
import OriginFetch
import ThumbdSettings
import Thumbnailing
import URLForms

/// The per-module configurations derived from `Settings` (the composition root's only translation layer).
extension Settings {
    /// `server.*` for the HTTP server.
    var httpServerConfiguration: HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration()
        configuration.host = server.listen.host
        configuration.port = server.listen.port
        configuration.threads = httpThreads()
        configuration.maxConnections = server.maxConnections
        configuration.maxBodyBytes = server.maxBodyBytes
        configuration.headerReadTimeout = server.headerTimeout
        configuration.idleTimeout = server.idleTimeout
        configuration.writeStallTimeout = server.writeTimeout
        configuration.shutdownTimeout = server.shutdownTimeout
        return configuration
    }

    /// `fetch.*` for the origin fetcher. `Settings.validate()` has already checked every value, so the
    /// conversions of networks and host patterns cannot fail here.
    var originFetcherConfiguration: OriginFetcher.Configuration {
        var configuration = OriginFetcher.Configuration()
        configuration.maxRedirects = fetch.maxRedirects
        configuration.maxSourceBytes = fetch.maxSourceBytes
        configuration.connectTimeout = fetch.connectTimeout
        configuration.timeout = fetch.timeout
        configuration.maxPerHost = fetch.maxPerHost
        configuration.allowPrivateNetworks = fetch.allowsPrivateNetworks
        configuration.allowedNetworks = fetch.allowedNetworks.compactMap { OriginFetch.IPNetwork($0.description) }
        configuration.allowedHosts = fetch.allowedHosts.isEmpty ? nil : fetch.allowedHosts.map(\.description)
        configuration.userAgent = fetch.userAgent == "thumbd" ? "thumbd/\(ThumbdVersion.current)" : fetch.userAgent
        return configuration
    }

    /// `image.*` for the thumbnailer.
    var thumbnailerConfiguration: Thumbnailer.Configuration {
        var configuration = Thumbnailer.Configuration()
        configuration.maxSourcePixels = image.maxSourcePixels
        configuration.maxFrames = image.maxFrames
        configuration.pdfMaxDPI = image.pdfMaxDPI
        configuration.defaultQuality = image.defaultQuality
        if !image.isAVIFEnabled { configuration.allowedOutputFormats.remove(.avif) }
        if image.isHEICOutputEnabled { configuration.allowedOutputFormats.insert(.heif) }
        configuration.autoFormats = image.autoFormats.map { format in
            switch format {
            case .avif: .avif
            case .jxl: .jxl
            case .webp: .webp
            }
        }
        return configuration
    }

    /// `image.sandbox*`: the decoder sandbox's helpers, started now (`nil` for `off`). The helper is
    /// `thumbd-decoder` next to this process's executable.
    /// - Throws: `SettingsError` when the helper is missing or cannot start: a clear startup error, only when the
    ///   configuration needs it.
    func sourceSandbox() throws(SettingsError) -> SourceSandbox? {
        let mode: SandboxMode
        switch image.sandbox {
        case .off: return nil
        case .untrusted: mode = .untrusted
        case .all: mode = .all
        }
        let directory = DecoderPool.executableDirectory ?? "."
        var configuration = DecoderPool.Configuration(executable: directory + "/thumbd-decoder")
        configuration.helpers = image.sandboxHelpers
        configuration.jobsPerHelper = image.sandboxJobsPerHelper
        configuration.deadline = image.sandboxDeadline
        configuration.memoryMiB = max(64, image.sandboxMemoryBytes >> 20)
        // Tests only: the helper's looping mode, for the deadline test (never set in production).
        if ProcessInfo.processInfo.environment["THUMBD_TEST_DECODER_LOOP"] == "1" {
            configuration.extraArguments = ["--test-loop-on-magic"]
        }
        do throws(DecoderPool.StartError) {
            return SourceSandbox(pool: try DecoderPool(configuration: configuration), mode: mode)
        } catch {
            throw SettingsError(key: "image.sandbox", reason: error.description)
        }
    }

    /// `image.render_threads: 0`: one render thread per core, plus a quarter (at least one). A render thread is not
    /// busy all the time it holds a job (page faults and mappings of pixel buffers, which take the process's
    /// memory-map lock; locks of the caches it stores into), so one per core leaves cores idle under load: on 2
    /// cores, 2 threads used about 1.6–1.7 of them through the peers' COLD list, 3 threads about 1.85, for
    /// 15–20 % more thumbnails per second on COLD and ZIPF (4 threads: no better than 3). BENCHMARKS.md, issue 17.
    static func defaultRenderThreads(cores: Int) -> Int {
        cores + (cores + 3) / 4
    }

    /// The event loops `server.threads` asks for: its value, or for 0 one per CPU thumbd may use (`cpus`: the
    /// affinity count lowered to a CPU quota, ``CPUAllowance``).
    func httpThreads(cpus: Int = EventLoopGroup.coreCount) -> Int {
        server.threads == 0 ? cpus : server.threads
    }

    /// The render threads `image.render_threads` asks for: its value, or for 0 ``defaultRenderThreads(cores:)`` of
    /// `cpus`.
    func renderThreads(cpus: Int = EventLoopGroup.coreCount) -> Int {
        image.renderThreads == 0 ? Self.defaultRenderThreads(cores: cpus) : image.renderThreads
    }

    /// `image.render_threads` and `image.queue_limit` for the render pool. Background work (prefetch,
    /// background revalidation) gets a queue of the same size and one thread of its own at a lower OS
    /// priority (docs/caching.md, "Priority lanes").
    var renderPoolConfiguration: WorkerPool.Configuration {
        WorkerPool.Configuration(
            threads: renderThreads(),
            interactiveQueueCapacity: image.queueLimit,
            backgroundQueueCapacity: image.queueLimit,
            name: "render",
            backgroundThreads: 1)
    }

    /// `cache.*` for the two tiers: thumbnails under `<cache.disk.path>/thumbnails`, originals under
    /// `<cache.disk.path>/sources`.
    var thumbnailCacheConfiguration: ThumbnailCache.Configuration {
        var configuration = ThumbnailCache.Configuration()
        if cache.memory.maxBytes > 0 {
            configuration.memory = .init(maxBytes: cache.memory.maxBytes, maxEntries: cache.memory.maxEntries)
        }
        configuration.variantsDisk = DiskCache.Configuration(
            directory: cache.disk.path + "/thumbnails", maxBytes: cache.disk.maxBytes)
        if cache.keepsSources {
            configuration.sourcesDisk = DiskCache.Configuration(
                directory: cache.disk.path + "/sources", maxBytes: cache.disk.sourcesMaxBytes)
        }
        if cache.disk.analysesMaxBytes > 0 {
            // Records can be made again from their source: stored without a sync (a torn one fails its checksum).
            configuration.analysesDisk = DiskCache.Configuration(
                directory: cache.disk.path + "/analyses", maxBytes: cache.disk.analysesMaxBytes, batchSync: .none)
        }
        configuration.purgeIndexPath = cache.disk.path + "/purge-index.sqlite"
        configuration.sourceCheckInterval = cache.sourceCheckInterval > .zero ? cache.sourceCheckInterval : nil
        configuration.negativeTTL = cache.negativeTTL
        return configuration
    }

    /// `cache.purge.*`: where purges are pushed downstream.
    var purgeNotifierConfiguration: PurgeNotifier.Configuration {
        var configuration = PurgeNotifier.Configuration()
        configuration.varnish = cache.purge.varnish
        configuration.webhook = cache.purge.webhook.isEmpty ? nil : cache.purge.webhook
        configuration.webhookToken = cache.purge.webhookToken.isEmpty ? nil : cache.purge.webhookToken
        configuration.queueLimit = cache.purge.queueLimit
        configuration.attempts = cache.purge.attempts
        configuration.timeout = cache.purge.timeout
        return configuration
    }

    /// `cache.*` freshness rules.
    var freshnessPolicy: FreshnessPolicy { FreshnessPolicy(cache) }

    /// `presets`, `image.presets_only` and `image.client_hints` for `/thumb`'s parser. Each preset goes through that
    /// very parser here, so a bad one stops the start (or is refused by a reload) naming it and its parameter.
    /// - Throws: `SettingsError` for `presets.<name>`.
    func thumbQueryRules() throws(SettingsError) -> ThumbQueryRules {
        do throws(PresetError) {
            return ThumbQueryRules(
                presets: try Presets(presets), allowsOnlyPresets: image.allowsOnlyPresets,
                readsClientHints: image.readsClientHints)
        } catch {
            throw SettingsError(key: "presets.\(error.preset)", reason: error.reason)
        }
    }

    /// `image.fallback*`: the fallback image, read and rendered once with `thumbnailer` to check it; nil when
    /// `image.fallback` is empty. Blocking (reads the file, renders): the main thread at start or reload.
    /// - Throws: `SettingsError` for `image.fallback` when the file cannot be read or rendered.
    func fallbackImage(thumbnailer: Thumbnailer) throws(SettingsError) -> FallbackImage? {
        guard !image.fallback.isEmpty else { return nil }
        let status: Int? =
            switch image.fallbackStatus {
            case .original: nil
            case .fixed(let code): code
            }
        do throws(FallbackImage.LoadError) {
            return try FallbackImage(
                path: image.fallback, status: status, ttl: image.fallbackTTL, maxBytes: fetch.maxSourceBytes,
                thumbnailer: thumbnailer)
        } catch {
            throw SettingsError(key: "image.fallback", reason: error.description)
        }
    }
}
