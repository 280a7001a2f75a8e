// SPDX-License-Identifier: Apache-2.0

package import Logging

/// STUB, to be replaced by the lead: the composition root that starts the server, fetcher, render pool
/// and caches from `Settings` and blocks until shutdown.
///
/// It exists so that `ThumbdCommand` and the `thumbd` executable compile and run end to end while the
/// modules are being written. It only logs that nothing is served.
package enum ThumbdService {
    /// Runs thumbd with validated settings until it is asked to stop.
    ///
    /// - Parameters:
    ///   - settings: the effective, validated configuration.
    ///   - logger: the bootstrapped diagnostic logger.
    /// - Throws: when a component cannot start (binding the listener, opening the cache, ...).
    package static func run(settings: Settings, logger: Logger) throws {
        logger.warning(
            "ThumbdService is a stub: nothing is served yet",
            metadata: ["listen": "\(settings.server.listen)"]
        )
    }
}
