// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import OriginFetch
import Synchronization
import Thumbnailing

/// Keeps the intermediate renders of recent sources (`IntermediateImage`: a source decoded once to fit a
/// band, 512 x 512 by default), so that other boxes of the same source are resized from it instead of
/// decoding the source again (the peers' ZIPF boxes: 1.7 ms on average from a JPEG's intermediate against
/// 21 ms from the source, including the encode).
///
/// - Keyed by source URL, a digest of the source bytes and the band: a source that changed at the origin
///   (revalidated with a new body) gets new intermediates, so outputs stay a pure function of the bytes.
/// - A byte-budget LRU (`MemoryCache`, cost = width x height x bands of decoded pixels), separate from the
///   thumbnail memory tier: `image.intermediate_cache_bytes`; 0 keeps nothing.
/// - Coalesced: while one render thread makes the intermediate of a (source, band), others that need it wait
///   for it instead of decoding the same source again (a render thread, never an event loop, waits).
/// - Thread-safe: one `Mutex` for the in-progress table, `MemoryCache`'s own lock for the LRU; neither is
///   held while decoding.
final class IntermediateCache: Sendable {
    struct Key: Hashable, Sendable {
        let source: String
        let digest: UInt64
        let band: Int
        /// The page of a PDF (`page=`): each page has intermediates of its own. Detections read page 1 only.
        var page = 1
    }

    /// Totals since start (for tests and diagnostics).
    struct Counters: Sendable, Equatable {
        /// Taken from the cache.
        var hits = 0
        /// Made by the asking render.
        var made = 0
        /// Made by another render that the asking one waited for.
        var joined = 0
    }

    private let memory: MemoryCache<Key, String, IntermediateImage>?
    private let state = Mutex(State())
    /// The sources' detections, made from their intermediates; `nil` with face detection off.
    let detections: SourceDetections?
    /// The sources' analysis records, made from their analysis-band intermediates; `nil` for none.
    let analyses: SourceAnalyses?

    private struct State {
        var inProgress: [Key: Pending<IntermediateImage>] = [:]
        var counters = Counters()
    }

    /// - Parameter maxBytes: budget for the decoded pixels kept; 0 keeps none (renders still coalesce).
    /// - Parameter detections: the per-source detections (`image.faces`), or `nil`.
    /// - Throws: `Caching.ConfigurationError` when `maxBytes` is negative.
    /// - Parameter analyses: the per-source analysis records, or `nil`.
    init(maxBytes: Int, detections: SourceDetections? = nil, analyses: SourceAnalyses? = nil)
        throws(Caching.ConfigurationError)
    {
        self.detections = detections
        self.analyses = analyses
        guard maxBytes >= 0 else {
            throw Caching.ConfigurationError(key: "maxBytes", message: "must not be negative")
        }
        // One entry may take the whole budget (a 512 px band of a 4:3 photo is 0.6 MB): a small budget
        // should still hold the latest source's intermediate.
        memory =
            maxBytes == 0
            ? nil
            : try MemoryCache(
                configuration: .init(maxBytes: maxBytes, maxEntries: 100_000, entryCostLimit: maxBytes))
    }

    /// Totals since start.
    var counters: Counters { state.withLock { $0.counters } }

    /// The LRU's counters and sizes (`nil` when nothing is kept), for /metrics.
    var memoryStatistics: MemoryCache<Key, String, IntermediateImage>.Statistics? { memory?.statistics }

    /// Bytes of pixels kept now.
    var currentBytes: Int { memory?.statistics.currentBytes ?? 0 }

    /// Renders `spec` of `source` (fetched from `url`) with `thumbnailer`, through a kept intermediate when
    /// the box is small enough. Blocks: call on a render thread.
    func render(
        _ source: [UInt8], url: String, spec: ThumbnailSpec, overlays: Overlays = Overlays(), thumbnailer: Thumbnailer
    ) throws(ThumbnailError) -> RenderedThumbnail {
        var analysable: Analysable?
        return try render(
            source, url: url, spec: spec, overlays: overlays, thumbnailer: thumbnailer, analysable: &analysable)
    }

    /// What a render leaves for the source's analysis (``SourceAnalyses``): the digest of the source's bytes and the
    /// intermediate of ``SourceDetections/analysisBand`` it went through, which the analysis is made from.
    struct Analysable {
        let digest: UInt64
        let image: IntermediateImage
    }

    /// Renders as ``render(_:url:spec:overlays:thumbnailer:)`` and sets `analysable` when the render went through
    /// the source's analysis-band intermediate.
    func render(
        _ source: [UInt8], url: String, spec: ThumbnailSpec, overlays: Overlays = Overlays(), thumbnailer: Thumbnailer,
        analysable: inout Analysable?
    ) throws(ThumbnailError) -> RenderedThumbnail {
        // Computed only when an intermediate is needed: hashing a large source costs about 0.1 ms per MB.
        var digest: UInt64?
        var regions: DetectedRegions?
        if spec.needsDetection {
            let sourceDigest = source.withUnsafeBytes { XXHash64.hash($0) }
            digest = sourceDigest
            regions = try self.regions(
                of: source, url: url, digest: sourceDigest, thorough: spec.needsThoroughDetection,
                thumbnailer: thumbnailer)
        }
        var used: Analysable?
        let thumbnail = try thumbnailer.render(
            source, spec: spec, watermarks: overlays.watermarks, frame: overlays.frame, regions: regions
        ) {
            (band, make) throws(ThumbnailError) -> IntermediateImage in
            let sourceDigest = digest ?? source.withUnsafeBytes { XXHash64.hash($0) }
            digest = sourceDigest
            let page = spec.operations.page
            let image = try intermediate(
                for: Key(source: url, digest: sourceDigest, band: band, page: page), make: make)
            // The analysis reads the first page: another page's intermediate is never handed to it.
            if band == SourceDetections.analysisBand && page == 1 {
                used = Analysable(digest: sourceDigest, image: image)
            }
            return image
        }
        analysable = used
        return thumbnail
    }

    /// The source's detections (``SourceDetections``): the quick search's made from its analysis-band intermediate
    /// (kept, or made and offered to this cache as any render's), the thorough one's from an intermediate of
    /// `SourceDetections.thoroughBand` made for it alone (thumbor detects on its whole picture; a larger intermediate
    /// would only crowd the renders' out of the budget); `nil` with detection off. Blocks: call on a render thread.
    func regions(
        of source: [UInt8], url: String, digest: UInt64? = nil, thorough: Bool = false, thumbnailer: Thumbnailer
    ) throws(ThumbnailError) -> DetectedRegions? {
        guard let detections else { return nil }
        let key = Key(
            source: url, digest: digest ?? source.withUnsafeBytes { XXHash64.hash($0) },
            band: SourceDetections.analysisBand)
        let record = SourceDetections.Key(intermediate: key, profile: thorough ? .thorough : .quick)
        let regions = try detections.regions(for: record) { () throws(ThumbnailError) -> IntermediateImage in
            if thorough { return try thumbnailer.analysisImage(source, band: SourceDetections.thoroughBand) }
            return try intermediate(for: key) { () throws(ThumbnailError) -> IntermediateImage in
                try thumbnailer.analysisImage(source, band: SourceDetections.analysisBand)
            }
        }
        // The quick search's faces join the source's analysis record (kept in every tier, read by /info).
        if !thorough, let regions, let source = try? SourceURL(url) {
            analyses?.attach(faces: regions, to: source, digest: key.digest)
        }
        return regions
    }

    /// The source's analysis record (``SourceAnalyses``): kept for these bytes, or made from `given` (the intermediate
    /// a render just went through) or from the source's analysis-band intermediate (kept, or made and offered to this
    /// cache as any render's); `nil` without analyses. Blocks: call on a render thread.
    func analysis(
        of source: [UInt8], url: SourceURL, digest: UInt64? = nil, freshness: DiskCache.Freshness?,
        thumbnailer: Thumbnailer, given: IntermediateImage? = nil
    ) throws(ThumbnailError) -> SourceAnalyses.Record? {
        guard let analyses else { return nil }
        let digest = digest ?? source.withUnsafeBytes { XXHash64.hash($0) }
        let band = SourceDetections.analysisBand
        let quick = SourceDetections.Key(
            intermediate: Key(source: url.string, digest: digest, band: band), profile: .quick)
        return try analyses.record(
            of: source, url: url, digest: digest, freshness: freshness, thumbnailer: thumbnailer,
            faces: { [detections] in detections?.kept(quick) }
        ) { () throws(ThumbnailError) -> IntermediateImage in
            if let given { return given }
            return try intermediate(for: Key(source: url.string, digest: digest, band: band)) {
                () throws(ThumbnailError) -> IntermediateImage in
                try thumbnailer.analysisImage(source, band: band)
            }
        }
    }

    /// The kept intermediate for `key`, or the one another thread is making, or a new one from `make`.
    func intermediate(
        for key: Key, make: () throws(ThumbnailError) -> IntermediateImage
    ) throws(ThumbnailError) -> IntermediateImage {
        if let hit = memory?.value(forKey: key) {
            state.withLock { $0.counters.hits += 1 }
            return hit
        }
        let (making, isMaker) = state.withLock { state -> (Pending<IntermediateImage>, Bool) in
            if let making = state.inProgress[key] {
                state.counters.joined += 1
                return (making, false)
            }
            let making = Pending<IntermediateImage>()
            state.inProgress[key] = making
            state.counters.made += 1
            return (making, true)
        }
        guard isMaker else { return try making.wait().get() }
        let result: Result<IntermediateImage, ThumbnailError>
        do throws(ThumbnailError) {
            result = .success(try make())
        } catch {
            result = .failure(error)
        }
        // Into the LRU before leaving the table, so a newcomer finds it in one or the other.
        if case .success(let image) = result {
            memory?.insert(image, forKey: key, cost: image.byteCount, group: key.source)
        }
        state.withLock { _ = $0.inProgress.removeValue(forKey: key) }
        making.finish(result)
        return try result.get()
    }

    /// Forgets every intermediate and detection of a source (purge).
    func remove(source: String) {
        memory?.removeAll(inGroup: source)
        detections?.remove(source: source)
    }

    /// Forgets everything (memory trim).
    func removeAll() {
        memory?.removeAll()
        detections?.removeAll()
    }
}

/// One value being made (an intermediate, a detection); the threads that need it wait here for its result.
final class Pending<Value: Sendable>: @unchecked Sendable {
    // Sendable: `result` is read and written only with `condition` locked.
    private let condition = ConditionLock()
    private var result: Result<Value, ThumbnailError>?

    func finish(_ result: Result<Value, ThumbnailError>) {
        condition.withLock {
            self.result = result
            condition.broadcast()
        }
    }

    func wait() -> Result<Value, ThumbnailError> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil { condition.wait() }
        return result!
    }
}
