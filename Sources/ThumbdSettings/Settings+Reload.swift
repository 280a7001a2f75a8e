// SPDX-License-Identifier: Apache-2.0

extension Settings {
    /// What a reload may apply: `new` with every `restart` key kept at its running value, and the names of the
    /// restart keys whose new value was therefore not applied (to be logged as needing a restart).
    ///
    /// ```swift
    /// let (next, ignored) = running.reloaded(with: try configFile.load())
    /// for key in ignored { logger.warning("changed key needs a restart", metadata: ["key": "\(key)"]) }
    /// ```
    package func reloaded(with new: Settings) -> (settings: Settings, restartKeys: [String]) {
        var merged = new
        var restartKeys: [String] = []
        for key in Settings.keys where key.reload == .restart {
            let running = key.render(self)
            guard key.render(new) != running else { continue }
            restartKeys.append(key.name)
            // The running value was valid when it was applied, so re-applying its own text cannot fail.
            try? key.apply(&merged, running)
        }
        return (merged, restartKeys)
    }

    /// The names of the reloadable keys whose value in `next` differs from this one's, in `Settings.keys` order:
    /// what a reload from these settings to `next` changes.
    package func changedReloadableKeys(in next: Settings) -> [String] {
        Settings.keys.filter { $0.reload == .reloadable && $0.render(self) != $0.render(next) }.map(\.name)
    }
}
