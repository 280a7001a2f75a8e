// SPDX-License-Identifier: Apache-2.0
package import ThumbdSettings

extension ThumbdService {
    /// Loads `file` again and applies it to the running service, as SIGHUP does: an invalid file is refused
    /// (logged with its key) and changes nothing. Blocking (reads the file); not on an event loop.
    /// - Returns: what changed, or nil when the file was refused.
    @discardableResult
    package func reload(from file: ConfigFile) -> ReloadOutcome? {
        reloader.reload(from: file, trigger: "call")
    }

    /// Applies valid `settings` (as `ConfigFile.load()` returns them) to the running service: every reloadable
    /// key takes its new value, restart keys keep theirs. The entry point behind ``reload(from:)``.
    /// - Throws: `SettingsError` naming the key when the result would be invalid; nothing changes then.
    package func apply(_ settings: Settings) throws(SettingsError) -> ReloadOutcome {
        try reloader.apply(settings)
    }
}
