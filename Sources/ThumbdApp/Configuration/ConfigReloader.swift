// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Glibc
import HTTP1
import Logging
import OriginFetch
import Synchronization
import ThumbdSettings
import Thumbnailing
import URLForms

/// Applies a new configuration to the running components (config hot reload, issue 5): SIGHUP, or a change
/// of the file seen by ``ConfigFileWatcher``, makes `ThumbdService.run` call ``reload(from:trigger:)``.
///
/// A reload loads the whole file again through the same `ConfigFile` as the start (defaults < file <
/// `THUMBD_*` environment < flags, so environment and flag overrides stay in force), validates it, and only
/// then changes anything: an invalid file is refused as a whole with a warning naming the key, and the running
/// configuration stays. A valid one is applied key by key to the components that use it (each takes it under
/// its own lock, or on its own thread), without closing a connection:
///
/// | Keys | Applied by | Takes effect for |
/// |---|---|---|
/// | `server.*` limits and timeouts | `HTTPServer.update(configuration:)` | connections accepted afterwards |
/// | `fetch.*` | `OriginFetcher.update(configuration:)`, on the fetch thread | transfers started afterwards |
/// | `image.queue_limit` | `WorkerPool.setQueueCapacities` | submissions afterwards |
/// | `image.max_source_pixels`, `.max_frames`, `.pdf_max_dpi`, `.default_quality`, `.avif`, `.heic_output` | `Thumbnailer.update(configuration:)` | new renders |
/// | `cache.*` TTLs | `SharedFreshnessPolicy.update` | entries stored or revalidated afterwards |
/// | `cache.memory.*`, disk budgets, `negative_ttl` | `ThumbnailCache.update` | at once; disk: in write order |
/// | `cache.client_max_age` | `ThumbnailService.update(clientMaxAge:)` | answers afterwards |
/// | `admin.token` | `AdminService.update(token:)` | requests afterwards |
/// | `info.batch_max`, `.batch_max_bytes` | `InfoService.update(batchLimits:)` | requests afterwards |
/// | `thumbor.security_keys`, `.allow_unsafe`, `imgproxy.keys`, `.salts`, `.signature_size` | each form's `FormKeys.update(_:)` | the next request |
/// | `presets`, `image.presets_only`, `image.client_hints` | `SharedThumbQueryRules.update(_:)` | the next request |
/// | `image.fallback*` (the file read again) | `FallbackRenders.update(_:)` | answers afterwards |
/// | `log.level`, `log.access` | `LoggingSetup.LevelControl`, `AccessLog.isEnabled` | lines afterwards |
///
/// `restart` keys (`Settings.keys`) keep their running value and are logged as needing a restart; so does
/// turning on a memory tier that started off (`cache.memory.max_bytes: 0`), since no tier exists to resize.
/// The outcome is logged before a new `log.level` applies, so a reload that raises the level still shows.
final class ConfigReloader: Sendable {
    /// The running components a reload reaches.
    struct Components: Sendable {
        let server: HTTPServer
        let fetcher: OriginFetcher
        let thumbnailer: Thumbnailer
        let renderPool: WorkerPool
        let cache: ThumbnailCache
        let policy: SharedFreshnessPolicy
        let thumbnails: ThumbnailService
        let signatureVerifier: URLSignatureVerifier
        /// Each path-mounted form's keys: replaced when a reload from the previous settings changed them.
        let formKeys: [@Sendable (_ settings: Settings, _ previous: Settings) -> Void]
        /// `/thumb`'s presets and rules (presets, `image.presets_only`, `image.client_hints`).
        let queryRules: SharedThumbQueryRules
        let admin: AdminService
        /// `/info` (`info.*`).
        let info: InfoService
        let status: StatusService
        let accessLog: AccessLog
        /// The process-wide log level (nil in tests that do not bootstrap logging).
        let levelControl: LoggingSetup.LevelControl?
    }

    private let components: Components
    /// The settings in force. Held during a whole reload too, so two reloads never interleave.
    private let running: Mutex<Settings>
    private let logger: Logger

    init(components: Components, settings: Settings, logger: Logger) {
        self.components = components
        self.running = Mutex(settings)
        self.logger = logger
    }

    /// The settings in force.
    var settings: Settings { running.withLock { $0 } }

    /// Loads `file` again and applies it (``apply(_:)``), logging the outcome: `config reloaded` with the
    /// changed keys, a warning per restart key, or a warning naming the key that made the file invalid.
    /// Blocking (reads the file): call it from the main thread, never from an event loop.
    /// - Returns: what changed, or nil when the file was refused.
    @discardableResult
    func reload(from file: ConfigFile, trigger: String) -> ReloadOutcome? {
        let loaded: ConfigFile.Resolution
        do {
            loaded = try file.resolve()
        } catch {
            refuse(error, trigger: trigger)
            return nil
        }
        do {
            // Reported before the new log level applies: raising it to `warning` still shows this reload.
            return try apply(loaded.settings) { outcome in report(outcome, trigger: trigger) }
        } catch {
            var error = error
            // A preset or the fallback file refused by the service's own checks: name where it was written.
            if error.source == nil { error.source = ConfigFile.Resolution.origin(of: error.key, in: loaded.origins) }
            refuse(error, trigger: trigger)
            return nil
        }
    }

    /// Applies `loaded` (valid settings, as `ConfigFile.load()` returns them) to the running components:
    /// restart keys keep their running value, every reloadable key takes its new one. Everything is checked
    /// before anything changes, so a refusal leaves the running configuration whole.
    /// - Returns: the keys whose value changed, and the restart keys whose new value was not applied.
    /// - Throws: `SettingsError` naming the key when the result would be invalid; nothing changes then.
    /// - Parameter beforeLevelChange: runs once the rest is applied, before `log.level` changes.
    func apply(
        _ loaded: Settings, beforeLevelChange: (ReloadOutcome) -> Void = { _ in }
    ) throws(SettingsError) -> ReloadOutcome {
        try running.withLock { running throws(SettingsError) -> ReloadOutcome in
            var (next, restartKeys) = running.reloaded(with: loaded)
            if components.cache.memory == nil, next.cache.memory.maxBytes > 0 {
                // The memory tier did not start (max_bytes 0), so there is nothing to resize; it needs a restart.
                next.cache.memory.maxBytes = 0
                restartKeys.append("cache.memory.max_bytes")
            }
            try next.validate()
            let modules = try Modules(next, running: components)
            var changed = running.changedReloadableKeys(in: next)
            if modules.fallbackContentChanged(from: components.thumbnails.fallback?.image),
                !changed.contains("image.fallback")
            {
                // The same path, another file: applied and reported as a change of the key.
                changed = Settings.keys.map(\.name).filter { changed.contains($0) || $0 == "image.fallback" }
            }
            guard !changed.isEmpty else {
                let outcome = ReloadOutcome(changedKeys: [], restartKeys: restartKeys)
                beforeLevelChange(outcome)
                return outcome
            }
            do {
                try modules.apply(to: components, next, previous: running)
            } catch {
                // Not expected: every value was validated above. Some components may have taken theirs.
                logger.error("config reload partly applied", metadata: ["error": "\(error)"])
                throw SettingsError(key: "reload", reason: "\(error)")
            }
            running = next
            let outcome = ReloadOutcome(changedKeys: changed, restartKeys: restartKeys)
            beforeLevelChange(outcome)
            components.levelControl?.level = next.log.level
            return outcome
        }
    }

    private func report(_ outcome: ReloadOutcome, trigger: String) {
        for key in outcome.restartKeys {
            logger.warning(
                "config key changed but needs a restart; its running value stays",
                metadata: ["key": "\(key)", "trigger": "\(trigger)"])
        }
        if outcome.changedKeys.isEmpty {
            logger.info("config reloaded, nothing changed", metadata: ["trigger": "\(trigger)"])
        } else {
            logger.notice(
                "config reloaded",
                metadata: ["changed": "\(outcome.changedKeys.joined(separator: ","))", "trigger": "\(trigger)"])
        }
    }

    private func refuse(_ error: SettingsError, trigger: String) {
        var metadata: Logger.Metadata = ["key": "\(error.key)", "problem": "\(error.reason)", "trigger": "\(trigger)"]
        if let source = error.source { metadata["source"] = "\(source)" }
        logger.warning("config reload refused; the running configuration stays", metadata: metadata)
    }
}

/// What one reload changed.
package struct ReloadOutcome: Sendable, Equatable {
    /// Reloadable keys that took a new value, in `Settings.keys` order.
    package var changedKeys: [String]
    /// Restart keys whose new value was not applied (they need a restart).
    package var restartKeys: [String]
}
