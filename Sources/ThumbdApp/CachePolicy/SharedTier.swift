// SPDX-License-Identifier: Apache-2.0
import Caching
import Crypto
import Logging
import OriginFetch
import Synchronization
import Thumbnailing

/// The third tier: thumbnails and source originals as objects in a bucket of an S3-compatible store that every
/// node reads and writes (`cache.shared.*`, docs/scaling.md).
///
/// - **Lookups** are one GET each (never HEAD + GET), through the fetcher's multi handle, signed by libcurl; GETs
///   of one object coalesce there. The render coordinator asks here after the disk tier missed, inside the
///   variant's flight (so one GET however many clients wait), and promotes a hit to disk and memory.
/// - **Writes** are PUTs with `If-None-Match: *` (412: another node stored it first, which is a success), sent
///   after the client has its answer, at background priority in the endpoint's queue, at most `put_queue` under
///   way; more are dropped and counted, never queued without bound. A corrupt or expired object is overwritten
///   (no condition).
/// - **It can never fail a request**: every request has the tier's own short deadline, a circuit breaker skips
///   the tier for `breaker_pause` after `breaker_failures` failures in a row, and anything wrong with an object
///   (checksum, metadata) makes it a miss.
/// - **Integrity**: each object carries the SHA-256 of its bytes in `x-amz-meta-thumbd-sha256` (also sent as
///   `x-amz-content-sha256`, which S3 checks on the way in), verified on every read.
///
/// Object keys are grouped by source, so that a purge finds every object of a source with one listing (never of
/// the whole bucket): under `<prefix>src/<sha256 of the canonical source URL>/`, the original is `o`, its analysis
/// record (``SourceAnalyses``) `a`, and each thumbnail `v/<sha256 of the variant key>`. Hex only, so nothing a
/// client sends reaches a path (libcurl signs the path as written). Objects under the layout before (`<prefix>v/`,
/// `<prefix>s/`, `<prefix>a/`) are never read again (docs/scaling.md: a lifecycle rule expires them).
final class SharedTier: Sendable {
    /// What a lookup found.
    enum Lookup<Value: Sendable>: Sendable {
        /// A good, fresh object.
        case hit(Value)
        /// None. `replace` is true when an object was there but unusable (corrupt, expired): the next write
        /// overwrites it instead of sending `If-None-Match: *`.
        case miss(replace: Bool)
        /// The tier was skipped or failed: treat as a miss, and do not bother writing (it is likely down).
        case unavailable
    }

    private let fetcher: OriginFetcher
    private let storage: ObjectStorage
    private let settings: Settings
    private let breaker: CircuitBreaker
    /// `X-Thumbd-Placeholder` for variants read back from the tier (off until the service connects it).
    let placeholders = PlaceholderHeaders()
    /// The source tag header for variants read back from the tier (off until the service names it).
    let sourceTags = SourceTagHeaders()
    private let putsUnderWay = Atomic<Int>(0)
    /// Bytes of the writes under way: each holds one copy of its body until the store answers.
    private let putBytesUnderWay = Atomic<Int>(0)

    private let counts = SharedTierCounters()
    private let logger = Logger(label: "thumbd.cache.shared")

    /// The tier's settings, mapped from `cache.shared.*`.
    struct Settings: Sendable {
        var bucket: String
        var prefix: String
        var timeout: Duration
        var breakerFailures: Int
        var breakerPause: Duration
        var putQueue: Int
        var keepsSources: Bool
        /// At most this many bytes of writes under way, whatever `putQueue` allows: 256 originals of 25 MB would
        /// otherwise hold gigabytes. A write over it is dropped (an original larger than it is never shared).
        var maxPutBytes = 64 << 20
    }

    init(fetcher: OriginFetcher, storage: ObjectStorage, settings: Settings) {
        self.fetcher = fetcher
        self.storage = storage
        self.settings = settings
        self.breaker = CircuitBreaker(failures: settings.breakerFailures, pause: settings.breakerPause)
    }

    /// Whether source originals are kept here too.
    var keepsSources: Bool { settings.keepsSources }

    /// A snapshot of the counters, for /metrics and /status.
    var counters: SharedTierCounters.Snapshot {
        counts.snapshot(
            isOpen: breaker.isOpen, putsUnderWay: putsUnderWay.load(ordering: .relaxed), openings: breaker.openings)
    }

    // MARK: - Lookups

    /// Looks the thumbnail `key` up. `completion` runs once, on the fetch thread, unless the returned ticket is
    /// cancelled first; nil (and no call) when the breaker skips the tier: a miss. A hit is fresh and intact.
    func lookup(
        _ key: VariantKey, completion: @escaping @Sendable (Lookup<RenderedVariant>) -> Void
    ) -> FetchTicket? {
        get(variantObjectKey(key), kind: .variant) { [counts, placeholders, sourceTags] lookup in
            completion(
                lookup.settle(kind: .variant, counts: counts) { object in
                    SharedObject.variant(from: object, url: key.source, placeholders: placeholders, tags: sourceTags)
                        .map {
                            ($0, $0.freshness)
                        }
                })
        }
    }

    /// Looks the original of `source` up; completion as for ``lookup(_:completion:)``.
    func lookupSource(
        _ source: SourceURL, completion: @escaping @Sendable (Lookup<FetchedSource>) -> Void
    ) -> FetchTicket? {
        get(sourceObjectKey(source), kind: .source) { [counts] lookup in
            completion(
                lookup.settle(kind: .source, counts: counts) { object in
                    SharedObject.freshness(of: object).flatMap { freshness in
                        SharedObject.source(from: object, url: source, freshness: freshness).map { ($0, freshness) }
                    }
                })
        }
    }

    /// An analysis record's object and the freshness it was stored with (fresh or not: a stale record still names the
    /// bytes it describes).
    struct StoredAnalysis: Sendable {
        let body: [UInt8]
        let freshness: DiskCache.Freshness
    }

    /// Looks the analysis record of `source` up; completion as for ``lookup(_:completion:)``, but a stale record is a
    /// hit too (its reader compares the bytes it describes).
    func lookupAnalysis(
        _ source: SourceURL, completion: @escaping @Sendable (Lookup<StoredAnalysis>) -> Void
    ) -> FetchTicket? {
        get(analysisObjectKey(source), kind: .analysis) { [counts] lookup in
            switch lookup {
            case .hit(let object):
                guard let freshness = SharedObject.freshness(of: object) else {
                    counts.count(.analysis, .corrupt)
                    return completion(.miss(replace: true))
                }
                counts.count(.analysis, .hit)
                completion(.hit(StoredAnalysis(body: object.body, freshness: freshness)))
            case .miss(let replace): completion(.miss(replace: replace))
            case .unavailable: completion(.unavailable)
            }
        }
    }

    private func get(
        _ objectKey: String, kind: SharedTierCounters.Kind,
        completion: @escaping @Sendable (Lookup<FetchedSource>) -> Void
    ) -> FetchTicket? {
        guard breaker.admit() else {
            counts.count(kind, .skipped)
            return nil
        }
        let request = ObjectRequest(
            storage: storage, bucket: settings.bucket, key: objectKey, method: .get, timeout: settings.timeout,
            priority: .interactive)
        return fetcher.object(request) { [self] result in
            switch result {
            case .success(let object):
                breaker.record(success: true)
                guard SharedObject.isIntact(object) else {
                    counts.count(kind, .corrupt)
                    logger.warning(
                        "shared tier object failed its checksum: ignored, will be overwritten",
                        metadata: ["key": "\(objectKey)"])
                    completion(.miss(replace: true))
                    return
                }
                completion(.hit(object))
            case .failure(.originNotFound):
                breaker.record(success: true)
                counts.count(kind, .miss)
                completion(.miss(replace: false))
            case .failure(.cancelled):
                completion(.unavailable)
            case .failure(let error):
                breaker.record(success: false)
                counts.count(kind, .error)
                logger.debug("shared tier lookup failed", metadata: ["key": "\(objectKey)", "error": "\(error)"])
                completion(.unavailable)
            }
        }
    }

    // MARK: - Writes

    /// Stores a rendered thumbnail (one that may be stored at all), after its client has the answer.
    func store(_ key: VariantKey, _ variant: RenderedVariant, replacing: Bool) {
        guard let freshness = variant.freshness else { return }
        put(
            variantObjectKey(key), body: variant.bytes, contentType: variant.format.mimeType,
            metadata: SharedObject.metadata(
                freshness: freshness, etag: variant.etag,
                placeholder: PlaceholderHeaders.value(in: variant.preparedFields)),
            replacing: replacing, kind: .variant)
    }

    /// Stores an original fetched from its origin.
    func storeSource(_ source: FetchedSource, url: SourceURL, freshness: DiskCache.Freshness, replacing: Bool) {
        guard settings.keepsSources else { return }
        put(
            sourceObjectKey(url), body: source.body,
            contentType: source.contentType ?? "application/octet-stream",
            metadata: SharedObject.metadata(freshness: freshness, etag: nil), replacing: replacing, kind: .source)
    }

    /// Stores a source's analysis record, replacing the one there (it describes the source's bytes as last seen).
    func storeAnalysis(_ record: [UInt8], url: SourceURL, freshness: DiskCache.Freshness) {
        put(
            analysisObjectKey(url), body: record, contentType: "application/json",
            metadata: SharedObject.metadata(freshness: freshness, etag: nil), replacing: true, kind: .analysis)
    }

    private func put(
        _ objectKey: String, body: [UInt8], contentType: String, metadata: [(name: String, value: String)],
        replacing: Bool, kind: SharedTierCounters.Kind
    ) {
        guard breaker.admit(probing: false) else {
            counts.countPut(.skipped)
            return
        }
        guard putsUnderWay.add(1, ordering: .relaxed).newValue <= settings.putQueue else {
            putsUnderWay.subtract(1, ordering: .relaxed)
            counts.countPut(.dropped)
            return
        }
        guard putBytesUnderWay.add(body.count, ordering: .relaxed).newValue <= settings.maxPutBytes else {
            putBytesUnderWay.subtract(body.count, ordering: .relaxed)
            putsUnderWay.subtract(1, ordering: .relaxed)
            counts.countPut(.dropped)
            return
        }
        let digest = SharedObject.sha256Hex(body)
        let upload = ObjectUpload(
            body: body, bodySHA256: digest,
            contentType: SharedObject.printable(contentType) ?? "application/octet-stream",
            metadata: metadata + [("thumbd-sha256", digest)], onlyIfAbsent: !replacing)
        // A write also gets a millisecond per 10 kB (a floor of 10 MB/s), so a large original is not cut off by
        // a deadline made for lookups of thumbnails (and does not open the breaker for it).
        let request = ObjectRequest(
            storage: storage, bucket: settings.bucket, key: objectKey, method: .put(upload),
            timeout: settings.timeout + .milliseconds(body.count / 10_000), priority: .background)
        fetcher.object(request) { [self] result in
            // Counted before the write leaves the gauge: one that reads "none under way" sees its outcome.
            defer {
                putBytesUnderWay.subtract(body.count, ordering: .relaxed)
                putsUnderWay.subtract(1, ordering: .relaxed)
            }
            switch result {
            case .success:
                breaker.record(success: true)
                counts.countPut(.stored)
            case .failure(.originClientError(status: 412)):
                breaker.record(success: true)
                counts.countPut(.exists)
            case .failure(.cancelled):
                counts.countPut(.dropped)
            case .failure(let error):
                breaker.record(success: false)
                counts.countPut(.error)
                logger.debug("shared tier write failed", metadata: ["key": "\(objectKey)", "error": "\(error)"])
            }
        }
    }

    // MARK: - Purges

    /// What a purge of the tier did.
    struct PurgeOutcome: Sendable {
        /// Objects deleted.
        var deleted = 0
        /// Listings and deletions that failed (the objects they concern may still be there).
        var errors = 0
        /// The listing stopped at ``maxPurgePages`` pages with more left.
        var truncated = false
    }

    /// At most this many pages of 1,000 keys are listed for one source (a source has one object per variant it
    /// was ever rendered as, plus two: tens, not thousands).
    static let maxPurgePages = 10

    /// Deletes every object of `source` (its original, analysis record and thumbnails): one ListObjectsV2 of the
    /// source's prefix per 1,000 objects, then one DELETE each, all through the fetcher's multi handle at
    /// interactive priority. `completion` runs once, on the fetch thread, when every request has answered. The
    /// breaker is not consulted (an operator's purge should try), but failures count towards it.
    func purge(source: SourceURL, completion: @escaping @Sendable (PurgeOutcome) -> Void) {
        list(Self.sourcePrefix(source, prefix: settings.prefix), continuation: nil, page: 0, found: []) {
            [self] keys, outcome in
            guard !keys.isEmpty else { return completion(outcome) }
            let remaining = Mutex((keys.count, outcome))
            for key in keys {
                let request = ObjectRequest(
                    storage: storage, bucket: settings.bucket, key: key, method: .delete, timeout: settings.timeout,
                    priority: .interactive)
                fetcher.object(request) { [self] result in
                    switch result {
                    case .success, .failure(.originNotFound):
                        breaker.record(success: true)
                        remaining.withLock { $0.1.deleted += 1 }
                    case .failure(let error):
                        if case .cancelled = error {} else { breaker.record(success: false) }
                        logger.warning(
                            "shared tier purge: delete failed", metadata: ["key": "\(key)", "error": "\(error)"])
                        remaining.withLock { $0.1.errors += 1 }
                    }
                    let done = remaining.withLock { state -> PurgeOutcome? in
                        state.0 -= 1
                        return state.0 == 0 ? state.1 : nil
                    }
                    if let done { completion(done) }
                }
            }
        }
    }

    private func list(
        _ prefix: String, continuation: String?, page: Int, found: [String],
        completion: @escaping @Sendable ([String], PurgeOutcome) -> Void
    ) {
        let request = ObjectRequest(
            storage: storage, bucket: settings.bucket, key: prefix, method: .list(continuation: continuation),
            timeout: settings.timeout, priority: .interactive)
        fetcher.object(request) { [self] result in
            switch result {
            case .success(let answer):
                breaker.record(success: true)
                let listing = ObjectListing.parse(answer.body)
                // Only keys under the prefix asked for (a store that ignored the prefix must not lose the bucket).
                let keys = found + listing.keys.filter { $0.hasPrefix(prefix) }
                guard let next = listing.nextContinuation else { return completion(keys, PurgeOutcome()) }
                guard page + 1 < Self.maxPurgePages else {
                    return completion(keys, PurgeOutcome(truncated: true))
                }
                list(prefix, continuation: next, page: page + 1, found: keys, completion: completion)
            case .failure(let error):
                if case .cancelled = error {} else { breaker.record(success: false) }
                logger.warning(
                    "shared tier purge: listing failed", metadata: ["prefix": "\(prefix)", "error": "\(error)"])
                completion(found, PurgeOutcome(errors: 1))
            }
        }
    }

    // MARK: - Keys

    /// `<prefix>src/<hex SHA-256 of the canonical source URL>/`: every object of the source is under it.
    static func sourcePrefix(_ source: SourceURL, prefix: String) -> String {
        prefix + "src/" + SharedObject.sha256Hex(Array(source.string.utf8)) + "/"
    }

    /// `<source prefix>v/<hex SHA-256 of the variant key's text>` (which starts with its version, `v1`).
    static func variantObjectKey(_ key: VariantKey, prefix: String) -> String {
        sourcePrefix(key.source, prefix: prefix) + "v/" + SharedObject.sha256Hex(Array(key.cacheKey.variant.utf8))
    }

    /// `<source prefix>o`: the original.
    static func sourceObjectKey(_ source: SourceURL, prefix: String) -> String {
        sourcePrefix(source, prefix: prefix) + "o"
    }

    /// `<source prefix>a`: the analysis record.
    static func analysisObjectKey(_ source: SourceURL, prefix: String) -> String {
        sourcePrefix(source, prefix: prefix) + "a"
    }

    private func analysisObjectKey(_ source: SourceURL) -> String {
        Self.analysisObjectKey(source, prefix: settings.prefix)
    }
    private func variantObjectKey(_ key: VariantKey) -> String { Self.variantObjectKey(key, prefix: settings.prefix) }
    private func sourceObjectKey(_ source: SourceURL) -> String {
        Self.sourceObjectKey(source, prefix: settings.prefix)
    }
}

extension SharedTier.Lookup where Value == FetchedSource {
    /// The lookup of an intact object turned into a thumbnail or an original, counted: a hit only when `read`
    /// understands its metadata (else corrupt) and it is fresh now (else stale); both others overwrite it.
    func settle<Other>(
        kind: SharedTierCounters.Kind, counts: SharedTierCounters,
        _ read: (FetchedSource) -> (Other, DiskCache.Freshness?)?
    ) -> SharedTier.Lookup<Other> {
        switch self {
        case .hit(let object):
            guard let (value, freshness) = read(object), let freshness else {
                counts.count(kind, .corrupt)
                return .miss(replace: true)
            }
            guard freshness.state(at: Timestamp.now()) == .fresh else {
                counts.count(kind, .stale)
                return .miss(replace: true)
            }
            counts.count(kind, .hit)
            return .hit(value)
        case .miss(let replace): return .miss(replace: replace)
        case .unavailable: return .unavailable
        }
    }
}
