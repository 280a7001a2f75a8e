// SPDX-License-Identifier: Apache-2.0
import CCurl
import CCurlShims
import Glibc

/// The coalescing key: conditional fetches never share a transfer with unconditional ones
/// (or with different validators), because their answers differ (304 versus a body).
struct CoalescingKey: Hashable {
    let url: String
    let validators: Validators?
}

/// One waiter of a transfer: its ticket and what to call with the result.
struct Waiter: Sendable {
    let ticket: FetchTicket
    let priority: FetchPriority
    let completion: Completion
    /// A source already in hand, asked before a new transfer starts (``OriginFetcher/fetch(_:reuse:completion:)``).
    var reuse: (@Sendable () -> FetchedSource?)? = nil

    enum Completion: Sendable {
        case fetch(@Sendable (Result<FetchedSource, FetchError>) -> Void)
        case revalidate(@Sendable (Result<Revalidation, FetchError>) -> Void)
    }

    /// Calls the completion unless the ticket was cancelled first (exactly-once via the ticket).
    func deliver(_ result: Result<Revalidation, FetchError>) {
        guard ticket.claimForDelivery() else { return }
        switch completion {
        case .revalidate(let body): body(result)
        case .fetch(let body):
            body(
                result.flatMap { outcome in
                    switch outcome {
                    case .modified(let source): .success(source)
                    // Unreachable: only conditional requests send validators, and their key differs.
                    case .notModified: .failure(.unexpectedStatus(status: 304))
                    }
                })
        }
    }
}

/// One origin transfer and its libcurl easy handle, shared by every waiter of one key.
///
/// Confined to the fetch thread: the engine creates, drives and destroys it there, and
/// libcurl calls its callbacks from `curl_multi_socket_action` on that same thread. The easy
/// handle's callback data is `Unmanaged.passUnretained(self)`: the engine's tables keep the
/// transfer alive until after `curl_easy_cleanup`, so the pointer never dangles.
final class Transfer {
    let id: UInt64
    let key: CoalescingKey
    let source: SourceURL
    var priority: FetchPriority
    var waiters: [Waiter] = []
    var state = State.queued

    /// The hop being fetched (the source, then each redirect target).
    var current: SourceURL
    /// The host whose per-host slot this transfer holds or waits for.
    var slotHost: String
    /// URLs fetched so far in this chain, to detect loops.
    var visited: Set<String>
    var redirectCount = 0
    var deadline: ContinuousClock.Instant?

    /// Set for a request to an operator's endpoint: a signed one to an object store (an `s3://` source or a
    /// shared-cache request) or a notification (a purge pushed downstream). No address check, no redirect, its own
    /// URL.
    let object: ObjectTarget?
    /// False for the shared cache's requests, which are not origin fetches and stay out of the origin counters.
    var countsAsOriginFetch = true

    private(set) var easy: UnsafeMutableRawPointer?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// A PUT's or a notification's body, borrowed by libcurl (`CURLOPT_POSTFIELDS`) until the handle is cleaned up.
    private var uploadBuffer: UnsafeMutableRawBufferPointer?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let policy: AddressPolicy
    private let maxBytes: Int

    // Per-hop results, written by the libcurl callbacks and reset by `prepareHop`.
    private(set) var body: [UInt8] = []
    private(set) var refusal: (address: IPAddress, range: SpecialRange)?
    private(set) var exceededLimit = false
    private(set) var stoppedNonSuccessBody = false
    private var isFirstWrite = true
    private var keepsBody = true
    private var discardedBytes = 0

    enum State { case queued, running, finished }

    /// Non-2xx bodies (redirects, errors) are read and dropped up to this size so that the
    /// connection stays reusable; past it, the transfer stops (the status is already known).
    private static let discardLimit = 64 * 1024

    init(
        id: UInt64, key: CoalescingKey, source: SourceURL, priority: FetchPriority,
        configuration: OriginFetcher.Configuration, object: ObjectTarget? = nil
    ) {
        self.object = object
        self.id = id
        self.key = key
        self.source = source
        self.priority = priority
        self.current = source
        self.slotHost = source.bareHost
        self.visited = [source.string]
        self.policy = configuration.addressPolicy
        self.maxBytes = configuration.maxSourceBytes
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        releaseHandle()
        errorBuffer.deallocate()
    }

    /// libcurl's text for the last failure (for logs only).
    var errorDetail: String { String(cString: errorBuffer) }

    // MARK: - Easy handle set-up

    /// Creates and configures the easy handle (first hop only). Returns false on failure.
    func makeHandle(configuration: OriginFetcher.Configuration) -> Bool {
        guard let easy = curl_easy_init() else { return false }
        self.easy = easy
        let this = Unmanaged.passUnretained(self).toOpaque()
        var ok = true
        func set(_ option: CURLoption, _ value: Int) {
            ok = ok && thumbd_curl_setopt_long(easy, option, value) == CURLE_OK
        }
        func set(_ option: CURLoption, _ value: String) {
            ok =
                ok
                && value.withCString { thumbd_curl_setopt_ptr(easy, option, UnsafeMutableRawPointer(mutating: $0)) }
                    == CURLE_OK
        }
        func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) {
            ok = ok && thumbd_curl_setopt_ptr(easy, option, pointer) == CURLE_OK
        }
        set(CURLOPT_NOSIGNAL, 1)  // libcurl must not touch signals in a threaded process
        set(CURLOPT_PROTOCOLS_STR, "http,https")
        set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        set(CURLOPT_FOLLOWLOCATION, 0)  // redirects are followed by the engine, which checks each target
        set(CURLOPT_PROXY, "")  // ignore http_proxy & co: a proxy would hide the real destination from the SSRF check
        set(CURLOPT_USERAGENT, configuration.userAgent)
        set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(configuration.connectTimeout))
        set(CURLOPT_DNS_CACHE_TIMEOUT, Int(configuration.dnsCacheTimeout.components.seconds))
        set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        set(CURLOPT_PRIVATE, pointer: this)
        set(CURLOPT_WRITEDATA, pointer: this)
        set(CURLOPT_OPENSOCKETDATA, pointer: this)
        ok = ok && thumbd_curl_setopt_writefn(easy, CURLOPT_WRITEFUNCTION, transferWriteCallback) == CURLE_OK
        ok = ok && thumbd_curl_setopt_opensocketfn(easy, transferOpenSocketCallback) == CURLE_OK

        var headers: [String] = []
        if let object {
            // The path is sent and signed exactly as written: libcurl would otherwise resolve dot segments, and the
            // key, checked by ObjectStorage.keyRefusal, must reach the store as checked.
            // https://curl.se/libcurl/c/CURLOPT_PATH_AS_IS.html
            set(CURLOPT_PATH_AS_IS, 1)
            if let storage = object.storage {
                headers = signObjectRequest(object, storage: storage) { option, value in set(option, value) }
                ok = ok && (object.upload == nil || uploadBuffer != nil)
            } else {
                if let method = object.customMethod { set(CURLOPT_CUSTOMREQUEST, method) }
                let plain = object.plain ?? PlainRequest(headers: [], body: [])
                ok = ok && (plain.body.isEmpty || borrowBody(plain.body))
                headers = plain.headers
            }
        } else {
            headers.append("Accept: \(configuration.accept)")
        }
        if let etag = key.validators?.etag { headers.append("If-None-Match: \(etag)") }
        if let date = key.validators?.lastModified { headers.append("If-Modified-Since: \(date)") }
        for header in headers {
            guard let list = curl_slist_append(headerList, header) else { return false }
            headerList = list
        }
        set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headerList))
        return ok
    }

    /// Sets an object request's signing, method and body, and returns the headers it needs. Every header
    /// given to libcurl is signed (so none may be a removal such as `Expect:`), and libcurl 7.88 does not add
    /// `x-amz-content-sha256` itself: S3 refuses a request without it.
    private func signObjectRequest(
        _ object: ObjectTarget, storage: ObjectStorage, setString: (CURLoption, String) -> Void
    ) -> [String] {
        setString(CURLOPT_AWS_SIGV4, "aws:amz:\(storage.region):s3")
        setString(CURLOPT_USERNAME, storage.credentials.accessKeyID)
        setString(CURLOPT_PASSWORD, storage.credentials.secretAccessKey)
        guard let upload = object.upload else {
            if let method = object.customMethod { setString(CURLOPT_CUSTOMREQUEST, method) }
            return ["x-amz-content-sha256: \(ObjectTarget.emptyBodySHA256)"]
        }
        // POSTFIELDS (not UPLOAD): libcurl 7.88 hashes the post fields into the canonical request, so the
        // signed payload hash and the header agree; with UPLOAD it would sign the hash of nothing.
        setString(CURLOPT_CUSTOMREQUEST, "PUT")
        guard borrowBody(upload.body) else { return [] }
        var headers = ["x-amz-content-sha256: \(upload.bodySHA256)", "Content-Type: \(upload.contentType)"]
        if upload.onlyIfAbsent { headers.append("If-None-Match: *") }
        for (name, value) in upload.metadata { headers.append("x-amz-meta-\(name): \(value)") }
        return headers
    }

    /// Copies `body` into a buffer libcurl borrows as the request's body (`CURLOPT_POSTFIELDS`) until the handle is
    /// cleaned up. False when libcurl refused it.
    private func borrowBody(_ body: [UInt8]) -> Bool {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(body.count, 1), alignment: 1)
        body.withUnsafeBytes { buffer.copyMemory(from: $0) }
        guard thumbd_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)) == CURLE_OK,
            thumbd_curl_setopt_ptr(easy, CURLOPT_POSTFIELDS, buffer.baseAddress) == CURLE_OK
        else {
            buffer.deallocate()
            return false
        }
        uploadBuffer = buffer
        return true
    }

    /// Resets per-hop state and points the handle at `current` with what is left of the deadline.
    func prepareHop(remaining: Duration) -> Bool {
        guard let easy else { return false }
        body = []
        refusal = nil
        exceededLimit = false
        stoppedNonSuccessBody = false
        isFirstWrite = true
        keepsBody = true
        discardedBytes = 0
        errorBuffer[0] = 0
        let timeout = max(1, Self.milliseconds(remaining))
        return (object?.url ?? current.string).withCString {
            thumbd_curl_setopt_ptr(easy, CURLOPT_URL, UnsafeMutableRawPointer(mutating: $0))
        } == CURLE_OK
            && thumbd_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeout) == CURLE_OK
    }

    /// Cleans up the easy handle (the caller removed it from the multi handle first) and the header list.
    func releaseHandle() {
        if let easy { curl_easy_cleanup(easy) }
        easy = nil
        if let headerList { curl_slist_free_all(headerList) }
        headerList = nil
        uploadBuffer?.deallocate()
        uploadBuffer = nil
    }

    /// Hands the collected body over (the transfer is finished; no copy).
    func takeBody() -> [UInt8] {
        defer { body = [] }
        return body
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    // MARK: - Callbacks (fetch thread, inside curl_multi_socket_action)

    /// CURLOPT_WRITEFUNCTION: appends to the body, enforcing `maxSourceBytes` as bytes arrive.
    /// Content-Length is not trusted, but one over the limit on a 2xx refuses the body at its
    /// first bytes. (Done here rather than with CURLOPT_MAXFILESIZE, which would also turn a
    /// large 404 page into "too large" before the status could be read.)
    /// Returning a count other than `length` makes libcurl abort with CURLE_WRITE_ERROR.
    func write(_ data: UnsafeRawBufferPointer) -> Int {
        if isFirstWrite {
            isFirstWrite = false
            var status = 0
            _ = thumbd_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            keepsBody = (200..<300).contains(status)
            var announced: curl_off_t = -1
            if keepsBody, thumbd_curl_getinfo_off(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced) == CURLE_OK,
                announced > 0
            {
                guard announced <= maxBytes else {
                    exceededLimit = true
                    return 0
                }
                body.reserveCapacity(Int(announced))
            }
        }
        guard keepsBody else {
            discardedBytes += data.count
            if discardedBytes > Self.discardLimit {
                stoppedNonSuccessBody = true
                return 0
            }
            return data.count
        }
        guard body.count + data.count <= maxBytes else {
            exceededLimit = true
            return 0
        }
        body.append(contentsOf: data)
        return data.count
    }

    /// CURLOPT_OPENSOCKETFUNCTION: the SSRF check on the address libcurl is about to dial.
    /// A refusal is remembered (to report ``FetchError/addressForbidden(address:range:)``
    /// rather than a connect failure) and answered with CURL_SOCKET_BAD.
    func openSocket(family: Int32, type: Int32, protocol: Int32, address: UnsafeRawPointer, length: Int) -> Int32 {
        guard let ip = IPAddress(sockaddr: address, length: length) else { return -1 }
        // An object store is the operator's endpoint, not a client's URL (ObjectStorage).
        if object == nil, let range = policy.refusal(for: ip) {
            refusal = (ip, range)
            return -1
        }
        return socket(family, type | Int32(SOCK_CLOEXEC.rawValue), `protocol`)
    }
}

/// `curl_write_callback` trampoline: `userdata` is the unretained ``Transfer``.
private let transferWriteCallback: curl_write_callback = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.write(UnsafeRawBufferPointer(start: data, count: size * count))
}

/// `curl_opensocket_callback` trampoline: `clientp` is the unretained ``Transfer``.
private let transferOpenSocketCallback: curl_opensocket_callback = { clientp, _, address in
    guard let clientp, let address else { return -1 }
    let transfer = Unmanaged<Transfer>.fromOpaque(clientp).takeUnretainedValue()
    // `addr` is declared as a 16-byte sockaddr but libcurl stores the whole (possibly IPv6)
    // address there; read it through a raw pointer with libcurl's `addrlen`.
    let offset = MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    return transfer.openSocket(
        family: address.pointee.family, type: address.pointee.socktype, protocol: address.pointee.protocol,
        address: UnsafeRawPointer(address) + offset, length: Int(address.pointee.addrlen))
}
