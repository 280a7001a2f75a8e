// SPDX-License-Identifier: Apache-2.0
import HTTP1
import OriginFetch
import ThumbdSettings
import Thumbnailing
import URLForms

extension ConfigReloader {
    /// The per-module configurations of one reload, each validated by its module before any is applied.
    struct Modules {
        let server: HTTPServer.Configuration
        let fetcher: OriginFetcher.Configuration
        let thumbnailer: Thumbnailer.Configuration
        let cache: ThumbnailCache.Configuration
        /// `presets`, `image.presets_only`, `image.client_hints`, each preset checked by `/thumb`'s parser.
        let queryRules: ThumbQueryRules
        /// `image.fallback*`, the file read again and checked with the new image settings (nil: none).
        let fallback: FallbackImage?

        init(_ settings: Settings, running components: Components) throws(SettingsError) {
            var server = settings.httpServerConfiguration
            let listener = components.server.configuration
            (server.host, server.port, server.threads, server.backlog) =
                (listener.host, listener.port, listener.threads, listener.backlog)
            self.server = server
            fetcher = settings.originFetcherConfiguration(objectStorage: try settings.objectStorage())
            var thumbnailer = settings.thumbnailerConfiguration
            // Settings that no key sets (encoder efforts, intermediate bands) stay as the thumbnailer has them, and so
            // does image.auto_formats (restart only: the variant keys of format=auto name the format it negotiated).
            let current = components.thumbnailer.configuration
            thumbnailer.jpegProgressive = current.jpegProgressive
            thumbnailer.pngCompression = current.pngCompression
            thumbnailer.webpEffort = current.webpEffort
            thumbnailer.avifEffort = current.avifEffort
            thumbnailer.jxlEffort = current.jxlEffort
            thumbnailer.autoFormats = current.autoFormats
            thumbnailer.intermediateBands = current.intermediateBands
            thumbnailer.intermediateMargin = current.intermediateMargin
            thumbnailer.allowedSourceFormats = current.allowedSourceFormats
            self.thumbnailer = thumbnailer
            cache = settings.thumbnailCacheConfiguration
            // The modules' own checks, which can be narrower than Settings.validate() (fetch.max_per_host).
            do {
                try self.server.validate()
            } catch {
                throw SettingsError(key: error.key, reason: error.reason)
            }
            do {
                try fetcher.validate()
            } catch {
                throw SettingsError(key: error.key, reason: error.reason)
            }
            do {
                try thumbnailer.validate()
            } catch {
                throw SettingsError(key: "image", reason: "\(error)")
            }
            do {
                try (cache.memory ?? .init(maxBytes: 0, maxEntries: 0)).validate()
                for disk in [cache.variantsDisk, cache.sourcesDisk].compactMap({ $0 }) { try disk.validate() }
            } catch {
                throw SettingsError(key: "cache", reason: "\(error)")
            }
            queryRules = try settings.thumbQueryRules()
            let checker: Thumbnailer
            do {
                checker = try Thumbnailer(configuration: thumbnailer, vips: components.thumbnailer.vips)
            } catch {
                throw SettingsError(key: "image", reason: "\(error)")
            }
            fallback = try settings.fallbackImage(thumbnailer: checker)
        }

        /// Whether the fallback file's content differs from the one in force (a new file under the same path counts
        /// as a change of `image.fallback`).
        func fallbackContentChanged(from current: FallbackImage?) -> Bool {
            fallback?.bytes != current?.bytes
        }

        func apply(to components: Components, _ settings: Settings, previous: Settings) throws {
            try components.server.update(configuration: server)
            try components.fetcher.update(configuration: fetcher)
            try components.thumbnailer.update(configuration: thumbnailer)
            components.renderPool.setQueueCapacities(
                interactive: settings.image.queueLimit, background: settings.image.queueLimit)
            components.policy.update(settings.freshnessPolicy)
            try components.cache.update(cache)
            components.thumbnails.update(clientMaxAge: settings.cache.clientMaxAge)
            components.admin.update(token: settings.admin.token)
            components.info.update(batchLimits: .init(settings.info))
            components.status.update(token: settings.admin.token)
            // New keys verify the next request; aliases verified under the old keys stop hitting at once.
            if settings.security.signingKeys != previous.security.signingKeys {
                components.signatureVerifier.update(keys: settings.security.signingKeys)
            }
            for reloadKeys in components.formKeys { reloadKeys(settings, previous) }
            components.accessLog.isEnabled = settings.log.isAccessLogEnabled
            // New presets or rules parse the next request; aliases and hot copies made under the old ones stop
            // answering at once (the rules' generation moves, and the aliases are forgotten).
            components.queryRules.update(queryRules)
            components.thumbnails.fallback?.update(fallback)
        }
    }
}
