// SPDX-License-Identifier: Apache-2.0
import Caching
import FoundationEssentials
import OriginFetch
import Synchronization
import Thumbnailing

/// The per-source analysis records (``SourceAnalyses/Record``: the source's header and its ``SourceAnalysis``), made
/// once per source bytes on a render thread from the source's 512 px intermediate and kept in every tier, so that
/// `/info` (and imgproxy's `info/`) answer them for any size or URL form of the source without fetching it.
///
/// - **Keyed by the canonical source URL**; a record names the digest of the bytes it was made from
///   (XXH64), and its tiers keep it with the freshness the source had (its origin's validators and deadlines). A
///   render or `/info` that sees other bytes for the URL (the origin changed them) makes a new record, which
///   replaces the old one in every tier; the revalidator forgets the old one as soon as the origin answers new bytes.
/// - **Tiers**: memory (an LRU of its own, a few hundred bytes an entry), this node's disk (the thumbnail disk cache,
///   key `analysis <url>`, in the source's purge group) and the shared tier (`<prefix>a/…`), as thumbnails are.
/// - **Coalesced**: threads that need the record of the same bytes wait for one analysis.
/// - **Eager** (`image.analysis`): a render that went through the source's 512 px intermediate makes the record
///   right after its waiters are answered, on the same render thread, from the same intermediate (no second decode).
final class SourceAnalyses: Sendable {
    /// What is kept of a source: its header (as `/info` shows it) and its analysis, and the bytes they describe.
    struct Record: Sendable, Codable, Equatable {
        /// The record's layout: a record of another version is a miss (made again).
        static let currentVersion = 1

        var version = Record.currentVersion
        /// The canonical source URL.
        var url: String
        /// XXH64 of the source's bytes, 16 hex digits.
        var digest: String
        var header: SourceHeader
        var analysis: SourceAnalysis
        /// The quick face search's detections (``SourceDetections``, `gravity=face`, `/info?faces=1`) when one was
        /// made for these bytes: joined to the record when the record is made or the search runs later.
        var faces: DetectedRegions?
    }

    /// The source's header, read without decoding a pixel (``Thumbnailer/probe(_:)``), and its size in bytes.
    struct SourceHeader: Sendable, Codable, Equatable {
        var format: String
        var width: Int
        var height: Int
        var frames: Int
        var orientation: Int
        var alpha: Bool
        var colourSpace: String
        var bitsPerChannel: Int
        var iccProfile: Bool
        var bytes: Int
        var cameraMake: String?
        var cameraModel: String?
        var takenAt: String?

        init(_ probe: ImageProbe, bytes: Int) {
            format = probe.format.rawValue
            width = probe.width
            height = probe.height
            frames = probe.pageCount
            orientation = probe.orientation
            alpha = probe.hasAlpha
            colourSpace = probe.colourSpace
            bitsPerChannel = probe.bitsPerChannel
            iccProfile = probe.hasICCProfile
            self.bytes = bytes
            cameraMake = probe.cameraMake
            cameraModel = probe.cameraModel
            takenAt = probe.takenAt
        }
    }

    /// A record and how long it may be answered without asking the origin: the freshness its source had when it was
    /// fetched or last confirmed (`nil`: never without looking at the source).
    struct Kept: Sendable {
        let record: Record
        let freshness: DiskCache.Freshness?

        /// Whether it may be answered now without looking at the source.
        var isFresh: Bool { freshness?.state(at: Timestamp.now()) == .fresh }
    }

    /// Totals since start (for /metrics and tests).
    struct Counters: Sendable, Equatable {
        /// Analyses made (counted once the record is kept: a count read after it finds the record).
        var made = 0
        /// Asked and found kept (memory, disk or the shared tier) for the same bytes.
        var kept = 0
        /// Waited for another thread's analysis of the same bytes.
        var joined = 0
        /// Analyses that failed.
        var failed = 0
    }

    /// The options the kept analyses are made with (`image.blurhash_x`, …).
    let options: AnalysisOptions
    /// Whether renders make the record (`image.analysis`); otherwise only `/info` does.
    let isEager: Bool
    /// Whether renders make the record before their answer, for `X-Thumbd-Placeholder` (`image.placeholder_header`).
    let makesPlaceholders: Bool
    private let memory: MemoryCache<String, String, Kept>
    private let cache: ThumbnailCache?
    private let shared: SharedTier?
    private let state = Mutex(State())

    private struct State {
        var inProgress: [MakingKey: Pending<Record>] = [:]
        var counters = Counters()
    }

    private struct MakingKey: Hashable {
        let url: String
        let digest: String
    }

    init(
        options: AnalysisOptions, isEager: Bool, makesPlaceholders: Bool = false, cache: ThumbnailCache?,
        shared: SharedTier?, maxEntries: Int = 20_000
    ) throws(Caching.ConfigurationError) {
        self.options = options
        self.isEager = isEager
        self.makesPlaceholders = makesPlaceholders
        self.cache = cache
        self.shared = shared
        memory = try MemoryCache(configuration: .init(maxBytes: maxEntries << 11, maxEntries: maxEntries))
    }

    var counters: Counters { state.withLock { $0.counters } }

    /// The digest a record names for `bytes`.
    static func digest(_ value: UInt64) -> String { value.sixteenHexDigits }

    // MARK: - Lookups

    /// The record of `source` kept in memory, whatever its freshness. Any thread, O(1).
    func kept(_ source: SourceURL) -> Kept? { memory.value(forKey: source.string) }

    /// The record kept in memory for the canonical source URL `source`, whatever its freshness. Any thread, O(1).
    func kept(_ source: String) -> Kept? { memory.value(forKey: source) }

    /// The record of `source` from memory, else this node's disk (a `disk-io` thread), else the shared tier (the
    /// fetch thread); a record found below memory is promoted. `completion` gets `nil` when no tier has one (or its
    /// version is another); it runs once, on one of those threads or at once.
    func lookup(_ source: SourceURL, completion: @escaping @Sendable (Kept?) -> Void) {
        if let kept = kept(source) {
            completion(kept)
            return
        }
        let onDisk =
            cache?.lookupAnalysis(source) { [self] found in
                if let found, let kept = decode(found.bytes, freshness: found.freshness, url: source) {
                    remember(kept)
                    completion(kept)
                } else {
                    lookupShared(source, completion: completion)
                }
            } ?? false
        if !onDisk { lookupShared(source, completion: completion) }
    }

    private func lookupShared(_ source: SourceURL, completion: @escaping @Sendable (Kept?) -> Void) {
        guard let shared else { return completion(nil) }
        let ticket = shared.lookupAnalysis(source) { [self] lookup in
            guard case .hit(let object) = lookup,
                let kept = decode(object.body, freshness: object.freshness, url: source)
            else { return completion(nil) }
            remember(kept)
            if let freshness = kept.freshness, let bytes = try? Self.encoder.encode(kept.record) {
                cache?.storeAnalysis([UInt8](bytes), url: source, freshness: freshness)
            }
            completion(kept)
        }
        if ticket == nil { completion(nil) }
    }

    // MARK: - Making

    /// The record of `source`'s bytes (`digest`): kept for these bytes, or being made by another thread (waited
    /// for), or made now from `image` (which decodes the intermediate only when called) and kept in every tier
    /// with `freshness` (memory only when `nil`: the origin forbade storing the source). Blocks: call on a render
    /// thread.
    func record(
        of source: [UInt8], url: SourceURL, digest: UInt64, freshness: DiskCache.Freshness?, thumbnailer: Thumbnailer,
        faces: () -> DetectedRegions? = { nil }, image: () throws(ThumbnailError) -> IntermediateImage
    ) throws(ThumbnailError) -> Record {
        let digestText = Self.digest(digest)
        if let kept = kept(url), kept.record.digest == digestText {
            state.withLock { $0.counters.kept += 1 }
            if Self.outlasts(freshness, kept.freshness) { keep(kept.record, freshness: freshness) }
            return kept.record
        }
        let key = MakingKey(url: url.string, digest: digestText)
        let (pending, isMaker) = state.withLock { state -> (Pending<Record>, Bool) in
            if let pending = state.inProgress[key] {
                state.counters.joined += 1
                return (pending, false)
            }
            let pending = Pending<Record>()
            state.inProgress[key] = pending
            return (pending, true)
        }
        guard isMaker else { return try pending.wait().get() }
        let result: Result<Record, ThumbnailError>
        do throws(ThumbnailError) {
            let intermediate = try image()
            // The header the intermediate's maker read (a second reading of the source costs 1.8 M instructions).
            let probe: ImageProbe
            if let remembered = intermediate.probe { probe = remembered } else { probe = try thumbnailer.probe(source) }
            let header = SourceHeader(probe, bytes: source.count)
            let analysis = try thumbnailer.analyse(intermediate, options: options)
            result = .success(
                Record(url: url.string, digest: digestText, header: header, analysis: analysis, faces: faces()))
        } catch {
            result = .failure(error)
        }
        if case .success(let record) = result { keep(record, freshness: freshness) }
        state.withLock { state in
            _ = state.inProgress.removeValue(forKey: key)
            if case .success = result { state.counters.made += 1 } else { state.counters.failed += 1 }
        }
        pending.finish(result)
        return try result.get()
    }

    /// Joins the quick face search's detections of `source`'s bytes (`digest`) to its kept record, if it has none.
    func attach(faces: DetectedRegions, to source: SourceURL, digest: UInt64) {
        guard let kept = kept(source), kept.record.digest == Self.digest(digest), kept.record.faces == nil else {
            return
        }
        var record = kept.record
        record.faces = faces
        keep(record, freshness: kept.freshness)
    }

    /// Gives a kept record of the same bytes new freshness (the source was fetched again or confirmed by a 304).
    func refresh(_ source: SourceURL, digest: UInt64, freshness: DiskCache.Freshness?) {
        guard let kept = kept(source), kept.record.digest == Self.digest(digest),
            Self.outlasts(freshness, kept.freshness)
        else { return }
        keep(kept.record, freshness: freshness)
    }

    /// Whether `new` keeps a record fresh at least a second longer than `old` does: only then is a kept record
    /// written again (every render of a known source confirms it with about the same freshness, and each write to the
    /// shared tier is a PUT).
    static func outlasts(_ new: DiskCache.Freshness?, _ old: DiskCache.Freshness?) -> Bool {
        guard let new else { return false }
        guard let old else { return true }
        guard let oldEnd = old.expiresAt else { return false }
        guard let newEnd = new.expiresAt else { return true }
        return newEnd.millisecondsSinceEpoch > oldEnd.millisecondsSinceEpoch + 1000
    }

    /// Forgets the record of `source` in memory (a purge forgets the disk's with the source's group; the shared
    /// tier's is replaced when the source is analysed again).
    func forget(_ source: SourceURL) { memory.removeValue(forKey: source.string) }

    /// Forgets the record of `source` in memory unless it describes the bytes of `digest`.
    func forget(_ source: SourceURL, unlessDigest digest: UInt64) {
        guard let kept = kept(source), kept.record.digest != Self.digest(digest) else { return }
        memory.removeValue(forKey: source.string)
    }

    /// Forgets every record kept in memory (memory trim).
    func removeAll() { memory.removeAll() }

    // MARK: - Keeping

    private func keep(_ record: Record, freshness: DiskCache.Freshness?) {
        remember(Kept(record: record, freshness: freshness))
        guard let freshness, let source = try? SourceURL(record.url),
            let bytes = try? Self.encoder.encode(record)
        else { return }
        cache?.storeAnalysis([UInt8](bytes), url: source, freshness: freshness)
        shared?.storeAnalysis([UInt8](bytes), url: source, freshness: freshness)
    }

    private func remember(_ kept: Kept) {
        memory.insert(kept, forKey: kept.record.url, cost: 2048, group: kept.record.url)
    }

    /// A record as a tier keeps it (JSON), if it is of this layout and of `url`.
    func decode(_ bytes: [UInt8], freshness: DiskCache.Freshness?, url: SourceURL) -> Kept? {
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)),
            record.version == Record.currentVersion, record.url == url.string
        else { return nil }
        return Kept(record: record, freshness: freshness)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension UInt64 {
    /// 16 lower-case hex digits (a digest, a perceptual hash).
    var sixteenHexDigits: String {
        let text = String(self, radix: 16)
        return String(repeating: "0", count: 16 - text.utf8.count) + text
    }
}
