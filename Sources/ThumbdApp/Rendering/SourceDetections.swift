// SPDX-License-Identifier: Apache-2.0
import Caching
import Synchronization
import Thumbnailing

/// The per-source analysis: what face and feature detection found in each recent source (`DetectedRegions`),
/// computed once per source on a render thread from its intermediate (`analysisBand`, shared with the renders'
/// intermediates of that band), and read by every render of the source that needs it (`gravity=face`, thumbor's
/// `smart`, `redact`), whatever its size or URL form, and by `/info`.
///
/// - Keyed as the intermediates are: the source URL, a digest of its bytes and the band, so a source that changed at
///   the origin is analysed again and a purge of the source forgets it (`remove(source:)`).
/// - Kept in a small LRU of its own (entries of a few hundred bytes; `maxEntries`), beside the intermediates' budget.
/// - Coalesced: renders of one new source that all need it wait for one detection.
/// - A detection that fails (an unreadable cascade, OpenCV's error) is counted and answered as `nil` (each gravity's
///   fallback; a redaction then refuses to render).
final class SourceDetections: Sendable {
    /// The band of the intermediate detection runs on: at most 512 px a side, as thumbd's default band.
    static let analysisBand = 512
    /// The band of the thorough search's own intermediate (thumbor's `smart`, `redact`): thumbor searches its whole
    /// picture, and its corners found on a 512 px copy of a larger one are not its own (`make smart-crops`).
    static let thoroughBand = 1024

    /// Totals since start (for /metrics and tests).
    struct Counters: Sendable, Equatable {
        /// Detections run.
        var detections = 0
        /// Answers from the kept record.
        var hits = 0
        /// Renders that waited for another's detection.
        var joined = 0
        /// Detections that failed.
        var failures = 0
    }

    /// Which search a record comes from: each source has at most one of each, made when first needed.
    enum Profile: Hashable, Sendable {
        /// The operator's (`image.face_cascade` on the intermediate reduced to `image.face_side`): `gravity=face`,
        /// `/info`.
        case quick
        /// thumbor's face detector as thumbor runs it (its Haar cascade on a 1024 px intermediate): thumbor's
        /// `smart`, and `redact`, which must not miss a face for speed.
        case thorough
    }

    /// A record's key: the source's analysis intermediate, and the search.
    struct Key: Hashable, Sendable {
        let intermediate: IntermediateCache.Key
        let profile: Profile
    }

    private let detectors: [Profile: FaceDetector]
    private let memory: MemoryCache<Key, String, DetectedRegions>
    private let state = Mutex(State())

    private struct State {
        var inProgress: [Key: Pending<DetectedRegions?>] = [:]
        var counters = Counters()
    }

    init(quick: FaceDetector, thorough: FaceDetector, maxEntries: Int = 20_000) throws(Caching.ConfigurationError) {
        detectors = [.quick: quick, .thorough: thorough]
        memory = try MemoryCache(configuration: .init(maxBytes: maxEntries << 10, maxEntries: maxEntries))
    }

    var counters: Counters { state.withLock { $0.counters } }

    /// The source's detections: kept, or being made by another render (waited for), or made now from `image` (which
    /// decodes the intermediate only when called). Blocks: call on a render thread.
    func regions(
        for key: Key, image: () throws(ThumbnailError) -> IntermediateImage
    ) throws(ThumbnailError) -> DetectedRegions? {
        if let hit = memory.value(forKey: key) {
            state.withLock { $0.counters.hits += 1 }
            return hit
        }
        let (pending, isMaker) = state.withLock { state -> (Pending<DetectedRegions?>, Bool) in
            if let pending = state.inProgress[key] {
                state.counters.joined += 1
                return (pending, false)
            }
            let pending = Pending<DetectedRegions?>()
            state.inProgress[key] = pending
            state.counters.detections += 1
            return (pending, true)
        }
        guard isMaker else { return try pending.wait().get() }
        let result: Result<DetectedRegions?, ThumbnailError>
        do throws(ThumbnailError) {
            let intermediate = try image()
            do throws(FaceDetectorError) {
                guard let detector = detectors[key.profile] else {
                    throw FaceDetectorError.detectionFailed("no detector")
                }
                result = .success(try detector.detect(in: intermediate))
            } catch {
                state.withLock { $0.counters.failures += 1 }
                result = .success(nil)
            }
        } catch {
            result = .failure(error)
        }
        if case .success(let regions?) = result {
            _ = memory.insert(
                regions, forKey: key, cost: 64 + 16 * (regions.faces.count + regions.features.count),
                group: key.intermediate.source)
        }
        state.withLock { _ = $0.inProgress.removeValue(forKey: key) }
        pending.finish(result)
        return try result.get()
    }

    /// The record kept for `key`, if any (no detection is made). Any thread.
    func kept(_ key: Key) -> DetectedRegions? { memory.value(forKey: key) }

    /// Forgets every record of a source (purge).
    func remove(source: String) { memory.removeAll(inGroup: source) }

    /// Forgets everything (memory trim).
    func removeAll() { memory.removeAll() }
}
