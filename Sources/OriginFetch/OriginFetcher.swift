// SPDX-License-Identifier: Apache-2.0
import CCurl
import CLinuxShims
import EventLoops
import Glibc
import Synchronization

/// Fetches source images over HTTP(S) with libcurl's multi interface on one dedicated thread.
///
/// - **Coalescing**: concurrent fetches of one normalised URL (``SourceURL``) share one
///   transfer; every waiter receives the same ``FetchedSource`` instance or the same error. The
///   in-flight entry is removed when the transfer ends (success, failure or cancellation), so
///   a later fetch starts a new transfer: caching is the cache module's job.
/// - **Cancellation**: ``cancel(_:)`` removes one waiter. When the last waiter of a transfer
///   leaves, the transfer is removed from libcurl at the fetch thread's next turn (it is woken
///   at once), which closes its connection.
/// - **Safety**: http/https only, redirects followed by hand with each target checked,
///   resolved addresses checked by ``AddressPolicy`` for every connection, size and time limits.
/// - **Threading**: completions run on the fetch thread and must be cheap (hop to your own
///   thread). `fetch`, `revalidate` and `cancel` may be called from any thread, including from
///   inside a completion. Nothing here blocks Swift's cooperative pool.
///
/// ```swift
/// let fetcher = try OriginFetcher(configuration: .init())
/// let ticket = fetcher.fetch(FetchRequest(url: "https://example.com/a.jpg")) { result in
///     loop.execute { respond(with: result) }       // hop off the fetch thread
/// }
/// // client went away:
/// fetcher.cancel(ticket)
/// ```
package final class OriginFetcher: Sendable {
    private let engine: FetchEngine
    private let mailbox: Mailbox
    private let nextTicketID = Atomic<UInt64>(0)
    private let thread: Mutex<OSThread?>
    /// The configuration in force, for readers on other threads (the engine keeps its own copy).
    private let current: Mutex<Configuration>

    /// Validates `configuration` and starts the fetch thread.
    /// - Throws: ``FetchError/internalFailure(detail:)`` when libcurl or the thread cannot be
    ///   set up, with the configuration error's text when it is invalid.
    package init(configuration: Configuration) throws(FetchError) {
        do {
            try configuration.validate()
        } catch {
            throw .internalFailure(detail: "invalid configuration: \(error)")
        }
        let engine = try FetchEngine(configuration: configuration)
        self.engine = engine
        self.mailbox = engine.mailbox
        self.current = Mutex(configuration)
        let thread: OSThread
        do {
            thread = try OSThread.spawn(name: "fetch") { engine.run() }
        } catch {
            engine.discard()
            throw .internalFailure(detail: "could not start the fetch thread: \(error)")
        }
        self.thread = Mutex(thread)
    }

    deinit { shutdown() }

    /// The configuration in force (the last one given to ``update(configuration:)``).
    package var configuration: Configuration { current.withLock { $0 } }

    /// Applies a new configuration (config hot reload) on the fetch thread, for transfers started afterwards:
    /// timeouts, size limit, redirects, per-host limit, address policy, host allowlist, User-Agent. Transfers
    /// already running keep their limits (a fetch that joins one gets its result). Any thread; does not wait
    /// for the fetch thread.
    /// - Throws: ``ConfigurationError`` when `configuration` is invalid; nothing changes then.
    package func update(configuration: Configuration) throws(ConfigurationError) {
        try configuration.validate()
        current.withLock { current in
            current = configuration
            // Posted under the lock, so two concurrent updates reach the fetch thread in the order they took effect.
            _ = mailbox.post(.reconfigure(configuration))
        }
    }

    /// A snapshot of the counters, refreshed by the fetch thread at every loop turn and before it answers a waiter:
    /// once a completion has run, the transfer's outcome is counted here.
    package var counters: Counters { engine.counters.withLock { $0 } }

    /// Fetches `request.url`, joining a transfer already in flight for the same URL.
    ///
    /// - Parameters:
    ///   - request: the URL and its priority.
    ///   - reuse: asked on the fetch thread when no transfer for the URL is in flight, just before a new one
    ///     would start; a source it returns is delivered instead, without a transfer. A cache that stores
    ///     what a completion delivers closes the window of coalescing with it: a transfer is retired and its
    ///     completions run on the fetch thread before the next command is read, so a request that arrives
    ///     after the transfer ended finds the source stored.
    ///   - completion: called exactly once on the fetch thread, unless ``cancel(_:)`` returns
    ///     true for the returned ticket (then it is never called). After ``shutdown()``, it is
    ///     called at once on the caller's thread with ``FetchError/cancelled``.
    /// - Returns: the ticket to cancel this waiter with.
    @discardableResult
    package func fetch(
        _ request: FetchRequest, reuse: (@Sendable () -> FetchedSource?)? = nil,
        completion: @escaping @Sendable (Result<FetchedSource, FetchError>) -> Void
    ) -> FetchTicket {
        submit(request, validators: nil, reuse: reuse, completion: .fetch(completion))
    }

    /// Fetches `request.url` conditionally (If-None-Match / If-Modified-Since from `validators`),
    /// for revalidating a stale cache entry. Joins only identical conditional fetches, never
    /// unconditional ones. Completion rules as for ``fetch(_:completion:)``.
    @discardableResult
    package func revalidate(
        _ request: FetchRequest, validators: Validators,
        completion: @escaping @Sendable (Result<Revalidation, FetchError>) -> Void
    ) -> FetchTicket {
        submit(request, validators: validators, reuse: nil, completion: .revalidate(completion))
    }

    /// Sends `request` to an object store (the shared cache tier), signed with AWS Signature V4 by libcurl, on
    /// the same thread, multi handle and per-host queue as origin fetches (the endpoint's host is the queue's).
    /// GETs of one object share a transfer. Not counted as origin fetches. Completion and cancellation rules
    /// as for ``fetch(_:reuse:completion:)``; see ``ObjectRequest/Method`` for what the result holds.
    @discardableResult
    package func object(
        _ request: ObjectRequest, completion: @escaping @Sendable (Result<FetchedSource, FetchError>) -> Void
    ) -> FetchTicket {
        let ticket = FetchTicket(id: nextTicketID.add(1, ordering: .relaxed).newValue)
        let waiter = Waiter(ticket: ticket, priority: request.priority, completion: .fetch(completion))
        if !mailbox.post(.object(waiter, request)) {
            waiter.deliver(.failure(.cancelled))
        }
        return ticket
    }

    /// Sends `request` to an operator's endpoint (``NotificationRequest``) on the same thread and multi handle, in
    /// the endpoint host's queue at background priority. Not counted as an origin fetch. `completion` gets an empty
    /// ``FetchedSource`` for a 2xx answer, else the error its status or failure maps to.
    @discardableResult
    package func notify(
        _ request: NotificationRequest, completion: @escaping @Sendable (Result<FetchedSource, FetchError>) -> Void
    ) -> FetchTicket {
        let ticket = FetchTicket(id: nextTicketID.add(1, ordering: .relaxed).newValue)
        let waiter = Waiter(ticket: ticket, priority: .background, completion: .fetch(completion))
        if !mailbox.post(.notification(waiter, request)) {
            waiter.deliver(.failure(.cancelled))
        }
        return ticket
    }

    /// Removes the waiter holding `ticket`; other waiters of the same transfer are unaffected.
    /// When it was the last one, the transfer is stopped and its connection closed.
    /// Any thread; does not block on the fetch thread.
    /// - Returns: true when the waiter was removed before its result was delivered: its
    ///   completion will never be called. False when the completion has run or is running.
    @discardableResult
    package func cancel(_ ticket: FetchTicket) -> Bool {
        guard ticket.claimForCancellation() else { return false }
        _ = mailbox.post(.cancel(ticketID: ticket.id))
        return true
    }

    /// Raises the transfer `ticket` waits on to interactive priority, if it is still queued behind the
    /// per-host cap as background (a client now waits for what a prefetch started). Any thread; does
    /// nothing when the transfer runs, has finished or was interactive.
    package func promote(_ ticket: FetchTicket) {
        guard !ticket.isCancelled else { return }
        _ = mailbox.post(.promote(ticketID: ticket.id))
    }

    /// Cancels every fetch (their waiters get ``FetchError/cancelled``), closes every
    /// connection and joins the fetch thread. Idempotent. Also runs from `deinit`.
    ///
    /// Called on the fetch thread itself (from a completion, or because a completion held the
    /// last reference to the fetcher), it cannot wait for its own thread: it then only asks
    /// the loop to stop after the current turn and detaches the thread.
    package func shutdown() {
        guard let thread = self.thread.withLock({ $0.take() }) else { return }
        _ = mailbox.post(.shutdown)
        if thread.isCurrent {
            thread.detach()
        } else {
            thread.join()
        }
    }

    private func submit(
        _ request: FetchRequest, validators: Validators?, reuse: (@Sendable () -> FetchedSource?)?,
        completion: Waiter.Completion
    ) -> FetchTicket {
        let ticket = FetchTicket(id: nextTicketID.add(1, ordering: .relaxed).newValue)
        let waiter = Waiter(ticket: ticket, priority: request.priority, completion: completion, reuse: reuse)
        // Parsing here spreads the work over callers' threads; the result travels with the command.
        let url = Result { () throws(FetchError) in try SourceURL(request.url) }
        if !mailbox.post(.start(waiter, url, validators)) {
            waiter.deliver(.failure(.cancelled))
        }
        return ticket
    }

    // MARK: - Process-wide set-up

    private static let libcurlStatus: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// `curl_global_init` exactly once per process (a lazily initialised static is thread-safe),
    /// before the first handle exists. Never paired with `curl_global_cleanup`: other code in
    /// the process may still use libcurl (the test client does), and exit frees it anyway.
    static func initializeLibcurl() {
        precondition(libcurlStatus == CURLE_OK, "curl_global_init failed: \(libcurlStatus.rawValue)")
    }
}
