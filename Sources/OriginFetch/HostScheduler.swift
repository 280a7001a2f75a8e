// SPDX-License-Identifier: Apache-2.0

/// The per-host concurrency cap: at most `limit` transfers run per host; the rest wait in two
/// FIFO queues per host, interactive before background. A pure value type (no I/O, no
/// clock), confined to the fetch thread and unit-tested on its own.
///
/// Queued entries are identifiers. Removal is lazy: a cancelled or promoted transfer stays in
/// a queue and is skipped when it comes up, because the caller's `isWaiting` says no. That
/// keeps cancel O(1) however long the queue is.
struct HostScheduler {
    /// Transfers allowed to run at once per host (a config reload may change it: hosts above a lowered limit
    /// start nothing until they are below it; see `release`).
    var limit: Int {
        didSet { precondition(limit >= 1) }
    }
    private var hosts: [String: Host] = [:]

    private struct Host {
        var running = 0
        var queues = [FIFO(), FIFO()]  // indexed by FetchPriority.rawValue
        var isEmpty: Bool { running == 0 && queues.allSatisfy(\.isEmpty) }
    }

    init(limit: Int) {
        precondition(limit >= 1)
        self.limit = limit
    }

    /// Takes a slot for `id` if `host` has one free (returns true: start it now), else queues it.
    mutating func admit(_ id: UInt64, host: String, priority: FetchPriority) -> Bool {
        var state = hosts[host, default: Host()]
        defer { hosts[host] = state }
        if state.running < limit {
            state.running += 1
            return true
        }
        state.queues[priority.rawValue].append(id)
        return false
    }

    /// Queues `id` again as interactive (an interactive waiter joined a queued background
    /// transfer). Its old background entry is skipped later by `isWaiting`'s owner, which must
    /// only answer true once.
    mutating func promote(_ id: UInt64, host: String) {
        hosts[host]?.queues[FetchPriority.interactive.rawValue].append(id)
    }

    /// Frees one of `host`'s slots and hands it straight to the next waiting transfer, if any.
    /// - Parameter isWaiting: whether a queued identifier still wants to start; entries that
    ///   answer false are dropped.
    /// - Returns: the identifier that now owns the slot and must be started.
    mutating func release(host: String, isWaiting: (UInt64) -> Bool) -> UInt64? {
        guard var state = hosts[host] else { return nil }
        defer { hosts[host] = state.isEmpty ? nil : state }
        if state.running <= limit, let next = Self.popWaiting(&state, isWaiting) { return next }
        state.running -= 1  // above a lowered limit: the slot goes away instead of to the next transfer
        return nil
    }

    /// After the limit was raised: takes a slot for each queued transfer that now fits, in queue order.
    /// - Returns: the identifiers that now own a slot and must be started.
    mutating func admitQueued(isWaiting: (UInt64) -> Bool) -> [UInt64] {
        var admitted: [UInt64] = []
        for host in Array(hosts.keys) {
            guard var state = hosts[host] else { continue }
            while state.running < limit, let next = Self.popWaiting(&state, isWaiting) {
                state.running += 1
                admitted.append(next)
            }
            hosts[host] = state.isEmpty ? nil : state
        }
        return admitted
    }

    private static func popWaiting(_ state: inout Host, _ isWaiting: (UInt64) -> Bool) -> UInt64? {
        for index in state.queues.indices {
            while let next = state.queues[index].popFirst() {
                if isWaiting(next) { return next }
            }
        }
        return nil
    }

    /// Transfers running for `host`.
    func running(on host: String) -> Int { hosts[host]?.running ?? 0 }

    /// Queue entries for `host` (including lazily removed ones).
    func queued(on host: String) -> Int { hosts[host]?.queues.reduce(0) { $0 + $1.count } ?? 0 }

    /// Whether no host has anything running or queued.
    var isIdle: Bool { hosts.isEmpty }
}

/// An array-backed FIFO with amortised O(1) pop (a head index, compacted as it grows).
private struct FIFO {
    private var items: [UInt64] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func append(_ item: UInt64) { items.append(item) }

    mutating func popFirst() -> UInt64? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
