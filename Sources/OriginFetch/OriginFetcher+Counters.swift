// SPDX-License-Identifier: Apache-2.0

extension OriginFetcher {
    /// Totals since start, for metrics (read with ``OriginFetcher/counters``).
    package struct Counters: Sendable, Equatable {
        /// Transfers handed to libcurl (a redirect hop does not count again).
        package var transfersStarted = 0
        /// Transfers that ended with a body or a 304.
        package var transfersSucceeded = 0
        /// Fetches that joined a transfer already in flight instead of starting one, or took the source that
        /// one had just delivered (the `reuse` of ``OriginFetcher/fetch(_:reuse:completion:)``).
        package var coalescedJoins = 0
        /// Waiters removed by ``OriginFetcher/cancel(_:)``.
        package var waitersCancelled = 0
        /// Transfers stopped because their last waiter left.
        package var transfersAbandoned = 0
        /// Connections the SSRF guard refused (one transfer may try several addresses).
        package var addressRefusals = 0
        /// Queued background transfers raised to interactive because a client now waits for them.
        package var transfersPromoted = 0
        /// Redirects followed.
        package var redirectsFollowed = 0
        /// 304 answers to conditional fetches.
        package var notModified = 0
        /// Failed transfers by error class (each transfer counts once, not once per waiter).
        package var errors: [FetchError.Kind: Int] = [:]
        /// Transfers running right now (a gauge).
        package var running = 0
        /// Transfers waiting for a per-host slot right now (a gauge).
        package var queued = 0

        /// All zero.
        package init() {}
    }
}
