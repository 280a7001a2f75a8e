// SPDX-License-Identifier: Apache-2.0
import Caching
import Logging
import Synchronization

extension ThumbnailCache {
    /// Applies new budgets and the negative TTL (config hot reload). The memory tier evicts down to a smaller
    /// budget at once, before this returns; the disk tiers take theirs on the `disk` thread, after the stores
    /// queued before, and evict there. A tier that is off stays off (`memory` or a disk configuration given for
    /// it is ignored: turning a tier on needs a restart), and a memory budget of `nil` for a running memory tier
    /// empties it and keeps nothing.
    /// - Throws: `ConfigurationError` when a budget is out of range; nothing changes then.
    func update(_ configuration: Configuration) throws(Caching.ConfigurationError) {
        let memoryConfiguration = configuration.memory ?? .init(maxBytes: 0, maxEntries: 0)
        try memoryConfiguration.validate()
        for disk in [configuration.variantsDisk, configuration.sourcesDisk, configuration.analysesDisk].compactMap({
            $0
        }) {
            try disk.validate()
        }
        negativeTTLs.withLock { $0 = configuration.negativeTTL }
        if let memory {
            try memory.setLimits(maxBytes: memoryConfiguration.maxBytes, maxEntries: memoryConfiguration.maxEntries)
            try aliases.setLimits(
                maxBytes: max(1 << 20, memoryConfiguration.maxBytes / 16),
                maxEntries: max(1, memoryConfiguration.maxEntries))
        }
        guard let writer else { return }
        let logger = self.logger
        let changes = [
            (variants, configuration.variantsDisk), (sources, configuration.sourcesDisk),
            (analyses, configuration.analysesDisk),
        ]
        for case (let cache?, let new?) in changes {
            writer.perform {
                do {
                    try cache.setLimits(maxBytes: new.maxBytes, maxEntryBytes: new.maxEntryBytes)
                } catch {
                    logger.error("disk cache budget change failed", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}
