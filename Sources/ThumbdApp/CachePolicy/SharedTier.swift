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
/// Object keys are `<prefix>v/<sha256 of the variant key>`, `<prefix>s/<sha256 of the source URL>` and
/// `<prefix>a/<sha256 of "analysis " and the source URL>` (a source's analysis record, ``SourceAnalyses``): hex only,
/// so nothing a client sends reaches a path (libcurl signs the path as written).
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
        get(variantObjectKey(key), kind: .variant) { [counts, placeholders] lookup in
            completion(
                lookup.settle(kind: .variant, counts: counts) { object in
                    SharedObject.variant(from: object, url: key.source, placeholders: placeholders).map {
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

    // MARK: - Keys

    /// `<prefix>v/<hex SHA-256 of the variant key's text>` (which starts with its version, `v1`).
    static func variantObjectKey(_ key: VariantKey, prefix: String) -> String {
        prefix + "v/" + SharedObject.sha256Hex(Array(key.cacheKey.variant.utf8))
    }

    /// `<prefix>s/<hex SHA-256 of "src " and the canonical source URL>`.
    static func sourceObjectKey(_ source: SourceURL, prefix: String) -> String {
        prefix + "s/" + SharedObject.sha256Hex(Array(("src " + source.string).utf8))
    }

    /// `<prefix>a/<hex SHA-256 of "analysis " and the canonical source URL>`.
    static func analysisObjectKey(_ source: SourceURL, prefix: String) -> String {
        prefix + "a/" + SharedObject.sha256Hex(Array(("analysis " + source.string).utf8))
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
