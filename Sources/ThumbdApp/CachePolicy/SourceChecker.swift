// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import Logging
import OriginFetch
import Synchronization

/// The background check of sources (`cache.source_check_interval`): every source this node stored is asked of its
/// origin once an interval, with the validators it was stored under (`If-None-Match`, `If-Modified-Since`), whether
/// or not any request reaches this node. When the caches in front (Varnish, a CDN) answer every request, a
/// revalidation on demand (``Revalidator``) never runs; this one does, and a source found changed (other validators)
/// or gone (404, 410) is purged from every tier and pushed downstream (``Purger``, ``PurgeNotifier``), so the
/// caches in front drop it too and ask again.
///
/// The sources and their due times are in the purge index (``PurgeIndex``, `checks`): recorded when a variant or
/// original is stored, next due one interval later. A thread of its own (`source-check`) takes the due ones twice a
/// second, at most ``Configuration/perTick`` at a time and ``Configuration/maxInFlight`` under way, moves each one's
/// next check an interval on (so a failure waits an interval too), and hands the requests to the fetch thread at
/// background priority: a check never delays a client's fetch, and a busy origin is asked at most as fast as its
/// per-host cap allows.
final class SourceChecker: Sendable {
    /// `cache.source_check_interval` and the bounds on how fast checks are made.
    struct Configuration: Sendable {
        var interval: Duration
        var perTick = 25
        var maxInFlight = 50
        var tick: Duration = .milliseconds(500)
    }

    /// What the checks found, since start (for /metrics).
    struct Counters: Sendable {
        var unchanged = 0
        var changed = 0
        var gone = 0
        var failed = 0
    }

    private final class State: @unchecked Sendable {  // Sendable: every field is guarded by `lock`.
        let lock = ConditionLock()
        var isStopping = false
    }

    private let configuration: Configuration
    private let index: PurgeIndex
    private let fetcher: OriginFetcher
    private let purger: Purger
    private let logger: Logger
    private let state = State()
    private let inFlight = Atomic<Int>(0)
    private let counts = Mutex(Counters())
    private let thread = Mutex<OSThread?>(nil)

    /// Starts the `source-check` thread.
    init(
        configuration: Configuration, index: PurgeIndex, fetcher: OriginFetcher, purger: Purger, logger: Logger
    ) throws(SystemError) {
        self.configuration = configuration
        self.index = index
        self.fetcher = fetcher
        self.purger = purger
        self.logger = logger
        let started = try OSThread.spawn(name: "source-check") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// A snapshot of the counters.
    var counters: Counters { counts.withLock { $0 } }

    /// Stops the thread (checks under way finish on the fetch thread, or are cancelled with it). Idempotent.
    func shutdown() {
        state.lock.withLock { state.isStopping = true }
        state.lock.broadcast()
        thread.takeAndJoin()
    }

    private func run() {
        while true {
            let stopping = state.lock.withLock { () -> Bool in
                if !state.isStopping { state.lock.wait(timeout: configuration.tick) }
                return state.isStopping
            }
            if stopping { return }
            checkDue()
        }
    }

    /// Takes the due sources (as many as the bounds allow) and asks their origins.
    private func checkDue() {
        let room = min(configuration.perTick, configuration.maxInFlight - inFlight.load(ordering: .relaxed))
        guard room > 0 else { return }
        let now = Timestamp.now()
        let next = now.advanced(by: configuration.interval).millisecondsSinceEpoch
        let due: [PurgeIndex.Check]
        do {
            due = try index.dueChecks(now: now.millisecondsSinceEpoch, limit: room)
            for check in due { try index.postponeCheck(url: check.url, due: next) }
        } catch {
            logger.error("source check lookup failed", metadata: ["error": "\(error)"])
            return
        }
        for check in due {
            guard let source = try? SourceURL(check.url) else { continue }
            inFlight.add(1, ordering: .relaxed)
            let validators = Validators(etag: check.etag, lastModified: check.lastModified)
            fetcher.revalidate(FetchRequest(url: check.url, priority: .background), validators: validators) {
                [self] result in
                answered(source, check, result)
                inFlight.subtract(1, ordering: .relaxed)
            }
        }
    }

    /// On the fetch thread: a changed or gone source is purged; anything else waits for its next check.
    private func answered(_ source: SourceURL, _ check: PurgeIndex.Check, _ result: Result<Revalidation, FetchError>) {
        switch result {
        case .success(.notModified):
            counts.withLock { $0.unchanged += 1 }
        case .success(.modified(let fetched)):
            let previous = DiskCache.Freshness(
                validatedAt: Timestamp.now(), originETag: check.etag, originLastModified: check.lastModified)
            guard Revalidator.validatorsChanged(previous, fetched) else {
                counts.withLock { $0.unchanged += 1 }
                return
            }
            counts.withLock { $0.changed += 1 }
            logger.notice("source changed", metadata: ["source": "\(source)"])
            purger.purge(source, why: .changed) { _ in }
        case .failure(.originNotFound):
            counts.withLock { $0.gone += 1 }
            logger.notice("source gone", metadata: ["source": "\(source)"])
            purger.purge(source, why: .changed) { _ in }
        case .failure(let error):
            counts.withLock { $0.failed += 1 }
            logger.warning("source check failed", metadata: ["source": "\(source)", "error": "\(error)"])
        }
    }
}
