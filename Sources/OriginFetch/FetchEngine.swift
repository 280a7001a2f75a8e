// SPDX-License-Identifier: Apache-2.0
import CCurl
import CCurlShims
import CLinuxShims
import Glibc
import Synchronization

/// The fetch thread's state and loop: the multi handle, every easy handle, the in-flight
/// (coalescing) table and the per-host scheduler.
///
/// `@unchecked Sendable` because it is handed once to the fetch thread at start and from then
/// on touched only there (checked with `assertOnFetchThread()` in debug builds); other threads
/// reach it only through ``Mailbox`` and the Mutex-guarded ``counters``.
final class FetchEngine: @unchecked Sendable {
    /// Fetch thread only: replaced by a `.reconfigure` command (read by ``OriginFetcher/configuration``
    /// through its own copy).
    private(set) var configuration: OriginFetcher.Configuration
    let mailbox: Mailbox
    let counters = Mutex(OriginFetcher.Counters())
    private let multi: UnsafeMutableRawPointer  // CURLM*, owned; cleaned up when the loop exits
    private let reactor: FetchReactor
    private var hostPatterns: [HostPattern]?

    private var scheduler: HostScheduler
    private var transfers: [UInt64: Transfer] = [:]  // every live transfer, queued or running
    private var inFlight: [CoalescingKey: Transfer] = [:]
    private var transferOfTicket: [UInt64: Transfer] = [:]
    private var nextTransferID: UInt64 = 0
    private var thread: pthread_t?
    private var pendingCounters = OriginFetcher.Counters()
    private var runningCount = 0
    private var queuedCount = 0
    private var isStopping = false

    init(configuration: OriginFetcher.Configuration) throws(FetchError) {
        OriginFetcher.initializeLibcurl()
        guard let multi = curl_multi_init() else { throw .internalFailure(detail: "curl_multi_init failed") }
        // The scheduler keeps each host at maxPerHost; libcurl's own cap is set to the same value as a
        // second line. Connection reuse and HTTP/2 multiplexing are libcurl's defaults for one multi handle.
        _ = thumbd_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maxPerHost)
        let reactor: FetchReactor
        do {
            reactor = try FetchReactor()
        } catch {
            curl_multi_cleanup(multi)
            throw error
        }
        self.multi = multi
        self.reactor = reactor
        self.configuration = configuration
        self.mailbox = Mailbox(wakeupFD: reactor.wakeupFD)
        self.scheduler = HostScheduler(limit: configuration.maxPerHost)
        self.hostPatterns = configuration.allowedHosts?.compactMap(HostPattern.init)
    }

    // MARK: - Loop

    /// The fetch thread's body: returns after `.shutdown`, with every waiter answered and
    /// every handle freed.
    ///
    /// Event-driven, like curl's `ephiperfifo.c`: epoll reports ready sockets and the timerfd,
    /// each is handed to `curl_multi_socket_action`, so a turn costs O(ready sockets), not
    /// O(transfers) as `curl_multi_perform` would.
    func run() {
        thread = pthread_self()
        let this = Unmanaged.passUnretained(self).toOpaque()  // self outlives the multi handle
        _ = thumbd_curl_multi_setopt_sockfn(multi, engineSocketCallback)
        _ = thumbd_curl_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, this)
        _ = thumbd_curl_multi_setopt_timerfn(multi, engineTimerCallback)
        _ = thumbd_curl_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, this)
        var events = [ThumbdEpollEvent](repeating: ThumbdEpollEvent(), count: 256)
        var commands: [Command] = []
        var leftovers: [Command] = []
        loop: while true {
            let count = reactor.wait(&events)
            var isWoken = false
            var isTimerDue = false
            for event in events[..<count] {
                switch event.token {
                case FetchReactor.wakeupToken:
                    reactor.drain(token: event.token)  // before draining the mailbox (see Mailbox)
                    isWoken = true
                case FetchReactor.timerToken:
                    reactor.drain(token: event.token)
                    isTimerDue = true
                default:
                    socketAction(Int32(truncatingIfNeeded: event.token), events: event.events)
                }
            }
            if isTimerDue { socketAction(-1, events: 0) }  // CURL_SOCKET_TIMEOUT
            if isWoken {
                mailbox.drain(into: &commands)
                for (index, command) in commands.enumerated() {
                    guard handle(command) else {
                        leftovers = Array(commands[(index + 1)...])  // posted after .shutdown: answered by stopAll
                        break loop
                    }
                }
                commands.removeAll(keepingCapacity: true)
            }
            readCompletions()
            publishCounters()
        }
        stopAll(leftovers)
    }

    private func socketAction(_ fd: Int32, events: UInt32) {
        var flags: Int32 = 0
        if events & thumbd_epoll_in != 0 { flags |= CURL_CSELECT_IN }
        if events & thumbd_epoll_out != 0 { flags |= CURL_CSELECT_OUT }
        if events & (thumbd_epoll_err | thumbd_epoll_hup) != 0 { flags |= CURL_CSELECT_ERR }
        var running: Int32 = 0
        _ = curl_multi_socket_action(multi, fd, flags, &running)
    }

    /// CURLMOPT_SOCKETFUNCTION, via the trampoline below.
    fileprivate func watch(socket fd: Int32, what: Int32) {
        reactor.update(socket: fd, what: what)
    }

    /// CURLMOPT_TIMERFUNCTION, via the trampoline below.
    fileprivate func armTimer(milliseconds: Int) {
        reactor.armTimer(milliseconds: milliseconds)
    }

    /// Frees the multi handle of an engine whose thread never started.
    func discard() {
        _ = mailbox.close()
        curl_multi_cleanup(multi)
        reactor.close()
    }

    private func assertOnFetchThread() {
        assert(thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false, "fetch engine used off its thread")
    }

    private func handle(_ command: Command) -> Bool {
        switch command {
        case .start(let waiter, let url, let validators):
            start(waiter, url: url, validators: validators)
        case .object(let waiter, let request):
            startObject(waiter, request)
        case .notification(let waiter, let request):
            startNotification(waiter, request)
        case .cancel(let ticketID):
            cancel(ticketID: ticketID)
        case .reconfigure(let configuration):
            reconfigure(configuration)
        case .promote(let ticketID):
            if let transfer = transferOfTicket[ticketID] { promote(transfer) }
        case .shutdown:
            return false
        }
        return true
    }

    /// Takes a new (validated) configuration. Transfers started afterwards get its timeouts, limits, address
    /// policy and User-Agent; running and queued transfers keep the values they were created with, except
    /// that redirects are checked against the new host allowlist. Under a lower per-host limit, running
    /// transfers finish and queued ones wait until their host is below it; a higher one starts queued
    /// transfers at once.
    private func reconfigure(_ new: OriginFetcher.Configuration) {
        assertOnFetchThread()
        configuration = new
        hostPatterns = new.allowedHosts?.compactMap(HostPattern.init)
        guard new.maxPerHost != scheduler.limit else { return }
        let isRaised = new.maxPerHost > scheduler.limit
        scheduler.limit = new.maxPerHost
        _ = thumbd_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, new.maxPerHost)
        guard isRaised, !isStopping else { return }
        for id in scheduler.admitQueued(isWaiting: { transfers[$0]?.state == .queued }) {
            if let queued = transfers[id] { begin(queued) }
        }
    }

    /// Copies the counters out under the lock (cheap, uncontended): at the end of every loop turn, and before
    /// any waiter is answered (``answer(_:with:)``).
    private func publishCounters() {
        pendingCounters.running = runningCount
        pendingCounters.queued = queuedCount
        let snapshot = pendingCounters
        counters.withLock { $0 = snapshot }
    }

    /// Answers `waiters` with `result`, after publishing the counters. A completion may answer a client, and
    /// whoever sees that answer may read ``counters`` next (a `/metrics` scrape right after a miss, a test right
    /// after `fetch` returned): what led to the answer (the success, the error class, the refused address) must
    /// be counted there already. Published only at the end of the loop turn, it was not, for as long as the rest
    /// of the turn took.
    private func answer(_ waiters: [Waiter], with result: Result<Revalidation, FetchError>) {
        publishCounters()
        for waiter in waiters { waiter.deliver(result) }
    }

    /// Every state change goes through here, to keep the running/queued gauges exact.
    private func setState(_ transfer: Transfer, _ state: Transfer.State) {
        switch transfer.state {
        case .queued: queuedCount -= 1
        case .running: runningCount -= 1
        case .finished: break
        }
        switch state {
        case .queued: queuedCount += 1
        case .running: runningCount += 1
        case .finished: break
        }
        transfer.state = state
    }

    // MARK: - Starting and joining

    private func start(_ waiter: Waiter, url: Result<SourceURL, FetchError>, validators: Validators?) {
        assertOnFetchThread()
        if waiter.ticket.isCancelled {  // cancelled before we saw it; its cancel command will find nothing
            pendingCounters.waitersCancelled += 1
            return
        }
        let source: SourceURL
        switch url {
        case .success(let parsed): source = parsed
        case .failure(let error):
            countError(error)
            answer([waiter], with: .failure(error))
            return
        }
        if let error = hostRefusal(source) {
            countError(error)
            answer([waiter], with: .failure(error))
            return
        }
        var object: ObjectTarget?
        if let objectKey = source.objectKey {  // s3://bucket/key; hostRefusal checked the scheme and bucket
            guard let store = configuration.s3Sources?.storage else {
                answer([waiter], with: .failure(.schemeForbidden(scheme: "s3")))
                return
            }
            object = ObjectTarget(
                storage: store, url: store.url(bucket: source.host, key: objectKey), upload: nil, timeout: nil)
        }
        let key = CoalescingKey(url: source.string, validators: validators)
        if let transfer = inFlight[key] {
            transfer.waiters.append(waiter)
            transferOfTicket[waiter.ticket.id] = transfer
            pendingCounters.coalescedJoins += 1
            if waiter.priority == .interactive { promote(transfer) }
            return
        }
        if let reused = waiter.reuse?() {
            pendingCounters.coalescedJoins += 1
            answer([waiter], with: .success(.modified(reused)))
            return
        }
        nextTransferID += 1
        let transfer = Transfer(
            id: nextTransferID, key: key, source: source, priority: waiter.priority, configuration: configuration,
            object: object)
        enqueue(transfer, waiter: waiter)
    }

    /// A request to an object store for the shared cache tier. GETs of one object share a transfer; each PUT
    /// has its own (two writers of one key may send different validators).
    private func startObject(_ waiter: Waiter, _ request: ObjectRequest) {
        assertOnFetchThread()
        if waiter.ticket.isCancelled {
            pendingCounters.waitersCancelled += 1
            return
        }
        // The shared tier's keys are thumbd's own (a prefix and a hash), but the prefix is the operator's: the same
        // rule as a client's `s3://` key keeps every spelling of it in the bucket.
        // A listing's prefix ends with `/`: it is checked as the key of an object under it would be.
        let checked: String
        if case .list = request.method { checked = request.key + "x" } else { checked = request.key }
        if let refusal = ObjectStorage.keyRefusal(checked.utf8) {
            waiter.deliver(.failure(.invalidURL(detail: "object key: \(refusal)")))
            return
        }
        let url: String
        if case .list(let continuation) = request.method {
            url = request.storage.listURL(bucket: request.bucket, prefix: request.key, continuation: continuation)
        } else {
            url = request.storage.url(bucket: request.bucket, key: request.key)
        }
        let endpoint: SourceURL
        do {
            endpoint = try SourceURL(url)
        } catch {
            waiter.deliver(.failure(error))
            return
        }
        nextTransferID += 1
        var upload: ObjectUpload?
        var key = CoalescingKey(url: "GET " + url, validators: nil)
        var customMethod: String?
        switch request.method {
        case .put(let body):
            upload = body
            key = CoalescingKey(url: "PUT \(nextTransferID) " + url, validators: nil)
        case .delete:
            customMethod = "DELETE"
            key = CoalescingKey(url: "DELETE \(nextTransferID) " + url, validators: nil)
        case .get, .list:
            break
        }
        if let transfer = inFlight[key] {
            transfer.waiters.append(waiter)
            transferOfTicket[waiter.ticket.id] = transfer
            if waiter.priority == .interactive { promote(transfer) }
            return
        }
        let object = ObjectTarget(
            storage: request.storage, url: url, upload: upload, timeout: request.timeout, customMethod: customMethod)
        let transfer = Transfer(
            id: nextTransferID, key: key, source: endpoint, priority: waiter.priority, configuration: configuration,
            object: object)
        transfer.countsAsOriginFetch = false
        enqueue(transfer, waiter: waiter)
    }

    /// A request to an operator's endpoint (a purge pushed downstream): a transfer of its own, never joined.
    private func startNotification(_ waiter: Waiter, _ request: NotificationRequest) {
        assertOnFetchThread()
        if waiter.ticket.isCancelled {
            pendingCounters.waitersCancelled += 1
            return
        }
        let endpoint: SourceURL
        do {
            endpoint = try SourceURL(request.url)
        } catch {
            waiter.deliver(.failure(error))
            return
        }
        nextTransferID += 1
        let key = CoalescingKey(url: "\(request.method) \(nextTransferID) " + request.url, validators: nil)
        let target = ObjectTarget(
            storage: nil, url: request.url, upload: nil, timeout: request.timeout, customMethod: request.method,
            plain: PlainRequest(headers: request.headers, body: request.body))
        let transfer = Transfer(
            id: nextTransferID, key: key, source: endpoint, priority: .background, configuration: configuration,
            object: target)
        transfer.countsAsOriginFetch = false
        enqueue(transfer, waiter: waiter)
    }

    /// Puts a new transfer in the tables and starts it when its host has a free slot.
    private func enqueue(_ transfer: Transfer, waiter: Waiter) {
        let key = transfer.key
        transfer.waiters = [waiter]
        transfers[transfer.id] = transfer
        queuedCount += 1  // a new Transfer starts out queued
        inFlight[key] = transfer
        transferOfTicket[waiter.ticket.id] = transfer
        if scheduler.admit(transfer.id, host: transfer.slotHost, priority: transfer.priority) {
            begin(transfer)
        }
    }

    /// A client now waits for `transfer`: if it still waits for a slot at background priority, it queues
    /// again in the interactive lane (a running transfer needs nothing: it has its slot).
    private func promote(_ transfer: Transfer) {
        guard transfer.priority == .background, transfer.state == .queued else { return }
        transfer.priority = .interactive
        scheduler.promote(transfer.id, host: transfer.slotHost)
        pendingCounters.transfersPromoted += 1
    }

    /// The `allowedHosts` check, for the source and for every redirect target.
    func hostRefusal(_ url: SourceURL) -> FetchError? {
        if url.objectKey != nil {
            guard let sources = configuration.s3Sources else { return .schemeForbidden(scheme: "s3") }
            return sources.buckets.contains(url.host) ? nil : .hostForbidden(host: "s3://\(url.host)")
        }
        guard let hostPatterns else { return nil }
        return hostPatterns.contains(where: { $0.matches(url.bareHost) }) ? nil : .hostForbidden(host: url.bareHost)
    }

    /// Starts a transfer that owns a slot of its `slotHost`: first hop or a later redirect hop.
    private func begin(_ transfer: Transfer) {
        let isFirstHop = transfer.easy == nil
        setState(transfer, .running)
        if isFirstHop {
            if transfer.countsAsOriginFetch { pendingCounters.transfersStarted += 1 }
            transfer.deadline = .now + (transfer.object?.timeout ?? configuration.timeout)
            guard transfer.makeHandle(configuration: configuration) else {
                finish(transfer, .failure(.internalFailure(detail: "curl easy handle set-up failed")))
                return
            }
        }
        let remaining = (transfer.deadline ?? .now) - .now
        guard remaining > .zero else {
            finish(transfer, .failure(.timedOut(detail: "deadline passed before redirect to \(transfer.current)")))
            return
        }
        guard transfer.prepareHop(remaining: remaining), let easy = transfer.easy,
            curl_multi_add_handle(multi, easy) == CURLM_OK
        else {
            finish(transfer, .failure(.internalFailure(detail: "curl_multi_add_handle failed")))
            return
        }
    }

    // MARK: - Cancellation

    private func cancel(ticketID: UInt64) {
        assertOnFetchThread()
        guard let transfer = transferOfTicket.removeValue(forKey: ticketID) else { return }  // already finished
        transfer.waiters.removeAll { $0.ticket.id == ticketID }
        pendingCounters.waitersCancelled += 1
        guard transfer.waiters.isEmpty else { return }
        // The last waiter left: stop the transfer now. Removing a handle in the middle of a
        // transfer makes libcurl close its connection, so the origin sees the close at once.
        pendingCounters.transfersAbandoned += 1
        retire(transfer)
    }

    // MARK: - Completion

    private func readCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = thumbd_curl_msg_result(message)
            var pointer: UnsafeMutableRawPointer?
            _ = thumbd_curl_getinfo_ptr(easy, CURLINFO_PRIVATE, &pointer)
            _ = curl_multi_remove_handle(multi, easy)
            guard let pointer else { continue }
            let transfer = Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue()
            if transfer.refusal != nil { pendingCounters.addressRefusals += 1 }
            switch outcome(of: transfer, code: code) {
            case .done(let result):
                finish(transfer, result)
            case .redirect(let target):
                follow(transfer, to: target)
            }
        }
    }

    private func follow(_ transfer: Transfer, to target: SourceURL) {
        pendingCounters.redirectsFollowed += 1
        transfer.current = target
        transfer.visited.insert(target.string)
        transfer.redirectCount += 1
        if target.bareHost == transfer.slotHost {
            begin(transfer)
            return
        }
        // Another host: give this host's slot to its next waiting transfer and queue for the new host.
        releaseSlot(of: transfer)
        transfer.slotHost = target.bareHost
        setState(transfer, .queued)
        if scheduler.admit(transfer.id, host: transfer.slotHost, priority: transfer.priority) {
            begin(transfer)
        }
    }

    /// Ends a transfer with `result`: removes it from every table, frees its slot (starting the
    /// next queued transfer for that host) and answers its waiters, in that order, so a
    /// completion that immediately fetches the same URL starts a new transfer.
    private func finish(_ transfer: Transfer, _ result: Result<Revalidation, FetchError>) {
        switch result {
        case _ where !transfer.countsAsOriginFetch:
            break
        case .success(let outcome):
            pendingCounters.transfersSucceeded += 1
            if case .notModified = outcome { pendingCounters.notModified += 1 }
        case .failure(let error):
            countError(error)
        }
        let waiters = transfer.waiters
        for waiter in waiters { transferOfTicket[waiter.ticket.id] = nil }
        retire(transfer)
        answer(waiters, with: result)
    }

    /// Removes a transfer from the tables and libcurl, and frees its per-host slot.
    private func retire(_ transfer: Transfer) {
        if inFlight[transfer.key] === transfer { inFlight[transfer.key] = nil }
        transfers[transfer.id] = nil
        transfer.waiters = []
        if let easy = transfer.easy { _ = curl_multi_remove_handle(multi, easy) }  // no-op if not added
        transfer.releaseHandle()
        if transfer.state == .running { releaseSlot(of: transfer) }
        setState(transfer, .finished)
    }

    private func releaseSlot(of transfer: Transfer) {
        if isStopping { return }  // nothing new starts during shutdown
        let next = scheduler.release(host: transfer.slotHost) { id in
            self.transfers[id]?.state == .queued
        }
        if let next, let queued = transfers[next] { begin(queued) }
    }

    private func countError(_ error: FetchError) {
        pendingCounters.errors[error.kind, default: 0] += 1
    }

    // MARK: - Shutdown

    private func stopAll(_ unhandled: [Command]) {
        isStopping = true
        for command in unhandled + mailbox.close() {
            switch command {
            case .start(let waiter, _, _), .object(let waiter, _), .notification(let waiter, _):
                waiter.deliver(.failure(.cancelled))
            default: break
            }
        }
        for transfer in Array(transfers.values) {
            finish(transfer, .failure(.cancelled))
        }
        publishCounters()
        curl_multi_cleanup(multi)  // may still call the socket callback: close the reactor after
        reactor.close()
    }
}

/// `curl_socket_callback` trampoline: `userp` is the unretained ``FetchEngine``.
private let engineSocketCallback: curl_socket_callback = { _, fd, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<FetchEngine>.fromOpaque(userp).takeUnretainedValue().watch(socket: fd, what: what)
    return 0
}

/// `curl_multi_timer_callback` trampoline: `userp` is the unretained ``FetchEngine``.
private let engineTimerCallback: curl_multi_timer_callback = { _, milliseconds, userp in
    guard let userp else { return 0 }
    Unmanaged<FetchEngine>.fromOpaque(userp).takeUnretainedValue().armTimer(milliseconds: milliseconds)
    return 0
}
