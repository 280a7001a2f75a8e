// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Logging
import OriginFetch
import Synchronization

/// Purges pushed downstream (`cache.purge.*`): after each purge (``Purger``) has removed a source from thumbd's tiers,
/// the caches in front are told to drop their copies too, by the tags thumbd's answers carried (`cache.tag_header`).
///
/// Each endpoint has a queue of its own (bounded by `cache.purge.queue_limit`: more tags are dropped and counted) and
/// at most one request under way, which leaves ``linger`` after the first tag of its batch was queued (at once when
/// ``batchLimit`` tags wait): a purge storm becomes a few requests carrying many tags each, not one request per
/// purge. A failed request (no answer, or not a 2xx) is tried again after 0.5 s,
/// then 1 s, 2 s, … at most 30 s, up to `cache.purge.attempts` tries, then given up and counted.
///
/// - A Varnish endpoint gets `BAN` with `X-Thumbd-Tags: <tag> <tag> …` (deploy/cluster/varnish.vcl bans the objects
///   whose tag header holds one of them, from thumbd's addresses only).
/// - The webhook gets `POST` with `{"tags": [...], "urls": [...]}` (the source URLs purged; a tag purge's own tags
///   too), and `Authorization: Bearer <token>` when one is set.
///
/// The requests go through the fetch thread's multi handle (``OriginFetcher/notify(_:completion:)``); the queues are
/// served by a thread of their own (`purge-push`), which only waits and hands requests over: nothing here blocks.
final class PurgeNotifier: Sendable {
    /// What the notifier pushes to, from `cache.purge.*`.
    struct Configuration: Sendable {
        var varnish: [String] = []
        var webhook: String?
        var webhookToken: String?
        var queueLimit = 10_000
        var attempts = 6
        var timeout: Duration = .seconds(5)
        /// The first pause between tries (doubling, at most ``maxPause``).
        var firstPause: Duration = .milliseconds(500)
        var maxPause: Duration = .seconds(30)

        /// Whether anything is pushed at all.
        var isOn: Bool { !varnish.isEmpty || webhook != nil }
    }

    /// One purged thing to tell: a tag (a source's own, or an operator's), and the source's URL when it is a source.
    struct Entry: Sendable, Hashable {
        var tag: String
        var url: String?
    }

    /// Counters since start, by endpoint kind (`varnish`, `webhook`), for /metrics.
    struct Counters: Sendable {
        /// Requests answered 2xx.
        var sent: [String: Int] = [:]
        /// Tags those requests carried.
        var tagsSent: [String: Int] = [:]
        /// Requests tried again after a failure.
        var retries: [String: Int] = [:]
        /// Tags given up after the last try failed.
        var failedTags: [String: Int] = [:]
        /// Tags dropped because the endpoint's queue was full.
        var droppedTags: [String: Int] = [:]
        /// Tags waiting now (queued or in a request under way).
        var pendingTags: [String: Int] = [:]
    }

    /// The most tags one request carries (a Varnish ban expression and a header line stay short: 100 tags of 17
    /// characters are under 2 KB).
    static let batchLimit = 100

    /// How long a batch waits for more tags after its first (a storm of 10,000 purges a minute then makes about 20
    /// pushes a second to each endpoint instead of 167: measured, the pushes and the thread that hands them over took
    /// a third of the storm's CPU when each purge was pushed alone).
    static let linger: Duration = .milliseconds(50)

    private enum Kind: String { case varnish, webhook }

    /// One endpoint's queue and its request under way.
    private struct Channel {
        let kind: Kind
        let url: String
        var queue: [Entry] = []
        var queued = Set<Entry>()
        /// The batch being sent (kept for its next try).
        var current: [Entry] = []
        var isSending = false
        var tries = 0
        var notBefore: ContinuousClock.Instant?
        /// When the oldest tag in `queue` was queued.
        var oldestQueuedAt: ContinuousClock.Instant?
    }

    private final class State: @unchecked Sendable {  // Sendable: every field is guarded by `lock`.
        let lock = ConditionLock()
        var channels: [Channel]
        var counters = Counters()
        var isStopping = false

        init(channels: [Channel]) { self.channels = channels }
    }

    private let configuration: Configuration
    private let fetcher: OriginFetcher
    private let logger: Logger
    private let state: State
    private var lock: ConditionLock { state.lock }
    private let thread = Mutex<OSThread?>(nil)

    /// Starts the `purge-push` thread.
    init(configuration: Configuration, fetcher: OriginFetcher, logger: Logger) throws(SystemError) {
        self.configuration = configuration
        self.fetcher = fetcher
        self.logger = logger
        var channels = configuration.varnish.map { Channel(kind: .varnish, url: $0) }
        if let webhook = configuration.webhook { channels.append(Channel(kind: .webhook, url: webhook)) }
        state = State(channels: channels)
        let started = try OSThread.spawn(name: "purge-push") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Queues `entries` for every endpoint (each tag once while it waits). Any thread; never blocks on I/O.
    func push(_ entries: [Entry]) {
        guard !entries.isEmpty else { return }
        let wakes = lock.withLock { () -> Bool in
            guard !state.isStopping else { return false }
            var wakes = false
            for index in state.channels.indices {
                let kind = state.channels[index].kind.rawValue
                let wasEmpty = state.channels[index].queue.isEmpty
                for entry in entries where !state.channels[index].queued.contains(entry) {
                    guard state.channels[index].queue.count < configuration.queueLimit else {
                        state.counters.droppedTags[kind, default: 0] += 1
                        continue
                    }
                    state.channels[index].queue.append(entry)
                    state.channels[index].queued.insert(entry)
                }
                if wasEmpty && !state.channels[index].queue.isEmpty {
                    state.channels[index].oldestQueuedAt = .now
                    wakes = true  // a new batch: the thread sets its deadline
                } else if state.channels[index].queue.count >= Self.batchLimit {
                    wakes = true  // a full batch leaves at once
                }
            }
            return wakes
        }
        if wakes { lock.signal() }
    }

    /// A snapshot of the counters.
    var counters: Counters {
        lock.withLock {
            var counters = state.counters
            for channel in state.channels {
                counters.pendingTags[channel.kind.rawValue, default: 0] += channel.queue.count + channel.current.count
            }
            return counters
        }
    }

    /// Stops the thread; what is still queued is dropped. Idempotent.
    func shutdown() {
        lock.withLock { state.isStopping = true }
        lock.broadcast()
        thread.takeAndJoin()
    }

    // MARK: - The thread

    private func run() {
        while true {
            var requests: [(index: Int, request: NotificationRequest)] = []
            lock.lock()
            while true {
                if state.isStopping {
                    lock.unlock()
                    return
                }
                let now = ContinuousClock.now
                var earliest: ContinuousClock.Instant?
                for index in state.channels.indices where !state.channels[index].isSending {
                    if let notBefore = state.channels[index].notBefore, notBefore > now {
                        earliest = min(earliest ?? notBefore, notBefore)
                        continue
                    }
                    if state.channels[index].current.isEmpty {
                        guard !state.channels[index].queue.isEmpty else { continue }
                        if state.channels[index].queue.count < Self.batchLimit,
                            let leaves = state.channels[index].oldestQueuedAt.map({ $0 + Self.linger }), leaves > now
                        {
                            earliest = min(earliest ?? leaves, leaves)
                            continue
                        }
                        let batch = Array(state.channels[index].queue.prefix(Self.batchLimit))
                        state.channels[index].queue.removeFirst(batch.count)
                        for entry in batch { state.channels[index].queued.remove(entry) }
                        state.channels[index].current = batch
                        // What is left (more than a batch) leaves as soon as this push is answered.
                        if state.channels[index].queue.isEmpty { state.channels[index].oldestQueuedAt = nil }
                    }
                    state.channels[index].isSending = true
                    requests.append((index, request(for: state.channels[index])))
                }
                if !requests.isEmpty { break }
                if let earliest { lock.wait(timeout: earliest - now) } else { lock.wait() }
            }
            lock.unlock()
            for (index, request) in requests {
                fetcher.notify(request) { [self] result in answered(index, result) }
            }
        }
    }

    /// A request's answer (on the fetch thread): the batch is done, tried again later, or given up.
    private func answered(_ index: Int, _ result: Result<FetchedSource, FetchError>) {
        lock.withLock {
            var channel = state.channels[index]
            let kind = channel.kind.rawValue
            channel.isSending = false
            switch result {
            case .success:
                state.counters.sent[kind, default: 0] += 1
                state.counters.tagsSent[kind, default: 0] += channel.current.count
                channel.current = []
                channel.tries = 0
                channel.notBefore = nil
            case .failure(let error):
                channel.tries += 1
                if channel.tries >= configuration.attempts {
                    logger.error(
                        "purge push given up",
                        metadata: [
                            "endpoint": "\(kind)", "tags": "\(channel.current.count)", "error": "\(error)",
                        ])
                    state.counters.failedTags[kind, default: 0] += channel.current.count
                    channel.current = []
                    channel.tries = 0
                    channel.notBefore = nil
                } else {
                    state.counters.retries[kind, default: 0] += 1
                    channel.notBefore = .now + pause(afterTries: channel.tries)
                    logger.warning(
                        "purge push failed, will try again",
                        metadata: ["endpoint": "\(kind)", "try": "\(channel.tries)", "error": "\(error)"])
                }
            }
            state.channels[index] = channel
        }
        lock.signal()
    }

    /// The pause before the next try after `tries` failed ones: ``Configuration/firstPause``, doubling.
    private func pause(afterTries tries: Int) -> Duration {
        var pause = configuration.firstPause
        for _ in 1..<max(1, tries) where pause < configuration.maxPause { pause *= 2 }
        return min(pause, configuration.maxPause)
    }

    /// The request that tells `channel`'s endpoint about its current batch.
    private func request(for channel: Channel) -> NotificationRequest {
        switch channel.kind {
        case .varnish:
            let tags = channel.current.map(\.tag).joined(separator: " ")
            return NotificationRequest(
                url: channel.url, method: "BAN", headers: ["X-Thumbd-Tags: \(tags)"], timeout: configuration.timeout)
        case .webhook:
            var tags: [String] = []
            var urls: [String] = []
            for entry in channel.current {
                tags.append(entry.tag)
                if let url = entry.url { urls.append(url) }
            }
            let body =
                "{\"tags\": [" + tags.map(AdminService.jsonString).joined(separator: ", ") + "], \"urls\": ["
                + urls.map(AdminService.jsonString).joined(separator: ", ") + "]}"
            var headers = ["Content-Type: application/json"]
            if let token = configuration.webhookToken { headers.append("Authorization: Bearer \(token)") }
            return NotificationRequest(
                url: channel.url, method: "POST", headers: headers, body: Array(body.utf8),
                timeout: configuration.timeout)
        }
    }
}
