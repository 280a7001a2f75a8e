// SPDX-License-Identifier: Apache-2.0
import Instrumentation
import Synchronization

extension RenderCoordinator {
    /// Totals since start, read with ``RenderCoordinator/counters`` (for /metrics, issue 5, and for tests that
    /// prove coalescing by counting, as Nuke's `createdTaskCount`).
    struct Counters: Sendable, Equatable {
        /// Requests that started the work for their variant key (each asked the fetcher once).
        var flightsStarted = 0
        /// Requests that joined work already under way for their key instead of starting any.
        var coalescedJoins = 0
        /// Waiters that left (client gone) before they were answered.
        var waitersLeft = 0
        /// Fetches cancelled because every waiter of their key left before the source arrived.
        var fetchCancellations = 0
        /// Renders begun on a render worker.
        var rendersStarted = 0
        /// Renders ended, successfully or not (`rendersStarted - rendersFinished` are running).
        var rendersFinished = 0
        /// Renders that ended with an error (included in `rendersFinished`).
        var renderFailures = 0
        /// Renders that finished with no waiter left: kept for the cache, answered to nobody.
        var rendersUnattended = 0
        /// Sources that arrived but could not be queued for rendering (queue full: 503).
        var renderQueueRejections = 0
        /// Flights that took their source from the source cache instead of the origin.
        var sourceCacheHits = 0
        /// Queued background renders moved to the interactive lane because a client joined them.
        var renderPromotions = 0
        /// Filters skipped in thumbor URLs as thumbor skips them (counted by the parse step, read with these).
        var thumborFiltersSkipped = 0

        /// All zero.
        init() {}
    }
}

/// The live counters behind ``RenderCoordinator/Counters``: one relaxed atomic each, so that counting never
/// takes the coordinator's lock and never orders anything (a snapshot may be a few increments apart between
/// fields; each field is exact once the work has settled, which is all tests and /metrics need).
final class RenderCounters: Sendable {
    let flightsStarted = Atomic<Int>(0)
    let coalescedJoins = Atomic<Int>(0)
    let waitersLeft = Atomic<Int>(0)
    let fetchCancellations = Atomic<Int>(0)
    let rendersStarted = Atomic<Int>(0)
    let rendersFinished = Atomic<Int>(0)
    let renderFailures = Atomic<Int>(0)
    let rendersUnattended = Atomic<Int>(0)
    let renderQueueRejections = Atomic<Int>(0)
    let sourceCacheHits = Atomic<Int>(0)
    /// How long each render took on its worker (decode, resize, encode, cache store), for /metrics.
    let renderDurations = DurationHistogram(series: 1, bounds: DurationHistogram.renderBounds)
    let renderPromotions = Atomic<Int>(0)
    /// Counted by ``ThumbnailService``'s parse step (not a render's), kept here with the totals /metrics reads.
    let thumborFiltersSkipped = Atomic<Int>(0)

    /// The current values.
    var snapshot: RenderCoordinator.Counters {
        var counters = RenderCoordinator.Counters()
        counters.flightsStarted = flightsStarted.load(ordering: .relaxed)
        counters.coalescedJoins = coalescedJoins.load(ordering: .relaxed)
        counters.waitersLeft = waitersLeft.load(ordering: .relaxed)
        counters.fetchCancellations = fetchCancellations.load(ordering: .relaxed)
        counters.rendersStarted = rendersStarted.load(ordering: .relaxed)
        counters.rendersFinished = rendersFinished.load(ordering: .relaxed)
        counters.renderFailures = renderFailures.load(ordering: .relaxed)
        counters.rendersUnattended = rendersUnattended.load(ordering: .relaxed)
        counters.renderQueueRejections = renderQueueRejections.load(ordering: .relaxed)
        counters.sourceCacheHits = sourceCacheHits.load(ordering: .relaxed)
        counters.renderPromotions = renderPromotions.load(ordering: .relaxed)
        counters.thumborFiltersSkipped = thumborFiltersSkipped.load(ordering: .relaxed)
        return counters
    }
}

extension Atomic where Value == Int {
    /// Adds one, relaxed: a counter orders nothing.
    func increment() {
        add(1, ordering: .relaxed)
    }
}
