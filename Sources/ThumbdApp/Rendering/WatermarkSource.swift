// SPDX-License-Identifier: Apache-2.0
import Caching
import FoundationEssentials
import OriginFetch
import ThumbdSettings
import Thumbnailing
import URLForms

/// Where a render gets its watermark's bytes: a named one from the images the configuration lists
/// (`image.watermarks`, read and checked at start), one from a URL through the same fetcher as every source,
/// so it meets the same guard (SSRF rules, allowed hosts, size limit, timeouts), is coalesced with any other
/// fetch of that URL, is taken from the recent sources when one is there, and is kept as a source afterwards.
final class WatermarkSource: Sendable {
    /// A named watermark: its bytes and their digest (which the variant key holds).
    struct Named: Sendable {
        let bytes: [UInt8]
        let digest: UInt64
    }

    private let named: [String: Named]
    private let fetcher: OriginFetcher?
    private let cache: ThumbnailCache?
    private let policy: SharedFreshnessPolicy?

    /// No named watermarks and no fetching (tests that do not use watermarks).
    static let none = WatermarkSource(named: [:], fetcher: nil, cache: nil, policy: nil)

    init(named: [String: Named], fetcher: OriginFetcher?, cache: ThumbnailCache?, policy: SharedFreshnessPolicy?) {
        self.named = named
        self.fetcher = fetcher
        self.cache = cache
        self.policy = policy
    }

    /// Reads and checks every `image.watermarks` file: an image `thumbnailer` reads, within its pixel limit.
    /// - Throws: `SettingsError` naming the entry.
    static func load(
        _ files: [Settings.WatermarkFile], thumbnailer: Thumbnailer, fetcher: OriginFetcher, cache: ThumbnailCache?,
        policy: SharedFreshnessPolicy
    ) throws(SettingsError) -> WatermarkSource {
        var named: [String: Named] = [:]
        for file in files {
            let bytes: [UInt8]
            do {
                bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file.path)))
            } catch {
                throw SettingsError(key: "image.watermarks", reason: "\(file.name): cannot read \(file.path): \(error)")
            }
            do {
                let probe = try thumbnailer.probe(bytes)
                guard probe.width * probe.height <= thumbnailer.configuration.maxSourcePixels else {
                    throw ThumbnailError.tooManyPixels(width: probe.width, height: probe.height)
                }
            } catch {
                throw SettingsError(
                    key: "image.watermarks", reason: "\(file.name): \(file.path) is not usable: \(error)")
            }
            named[file.name] = Named(bytes: bytes, digest: bytes.withUnsafeBytes { XXHash64.hash($0) })
        }
        return WatermarkSource(named: named, fetcher: fetcher, cache: cache, policy: policy)
    }

    /// A source that knows `name` (with no bytes): for checking a preset's other parameters.
    static func standIn(named name: String) -> WatermarkSource {
        WatermarkSource(named: [name: Named(bytes: [], digest: 0)], fetcher: nil, cache: nil, policy: nil)
    }

    /// The names of the configured watermarks.
    var names: Set<String> { Set(named.keys) }

    /// The digest of the named watermark, `nil` when there is none by that name (the parser's check).
    func digest(named name: String) -> UInt64? { named[name]?.digest }

    /// Calls `completion` once with `image`'s bytes (a watermark's or a frame's, as `role` says, which names the
    /// failures): at once for a named one, else on the fetch thread.
    /// - Returns: the fetch's ticket when a transfer was asked for.
    func image(
        _ image: ThumbnailSpec.Watermark.Image, as role: OverlayRole, priority: FetchPriority,
        completion: @escaping @Sendable (Result<[UInt8], ServiceError>) -> Void
    ) -> FetchTicket? {
        switch image {
        case .named(let name, let digest):
            guard let mark = named[name], mark.digest == digest else {
                completion(.failure(.thumbnail(role == .watermark ? .watermarkUnusable : .frameUnusable)))
                return nil
            }
            completion(.success(mark.bytes))
            return nil
        case .url(let text):
            guard let fetcher, let url = try? SourceURL(text) else {
                completion(.failure(role.failure(.invalidURL(detail: text))))
                return nil
            }
            let cache = self.cache
            let policy = self.policy
            return fetcher.fetch(FetchRequest(url: url.string, priority: priority), reuse: { cache?.recentSource(url) })
            {
                result in
                switch result {
                case .success(let source):
                    if let cache, let policy,
                        case .store(let freshness) = policy.current.decide(source.headers, receivedAt: Timestamp.now())
                    {
                        cache.storeSource(source, url: url, freshness: freshness)
                    }
                    completion(.success(source.body))
                case .failure(let error):
                    completion(.failure(role.failure(error)))
                }
            }
        }
    }
}

/// What an image laid over the output is, which its failures name.
enum OverlayRole: Sendable {
    case watermark
    case frame

    /// The request's failure when the image's fetch failed.
    func failure(_ error: FetchError) -> ServiceError {
        switch self {
        case .watermark: .watermark(error)
        case .frame: .frame(error)
        }
    }
}

/// The images a plan lays over its output, encoded, as the render takes them.
struct Overlays: Sendable {
    /// Each watermark's, in the plan's order.
    var watermarks: [[UInt8]] = []
    /// The nine-patch frame's, when the plan has one.
    var frame: [UInt8]?

    /// Whether `spec` needs any (then the flight fetches them after the source).
    static func needed(by spec: ThumbnailSpec) -> Bool {
        !spec.operations.watermarks.isEmpty || spec.operations.frame != nil
    }
}

extension WatermarkSource {
    /// Calls `completion` once with the images `spec` lays over its output: each watermark's in order, then the
    /// frame's (each named or fetched as ``image(_:priority:completion:)`` does, one after another); the first
    /// failure ends it.
    /// - Parameter issued: called with each transfer's ticket as it is asked for (to cancel the one running when
    ///   nobody waits any more).
    func overlays(
        for spec: ThumbnailSpec, priority: FetchPriority, issued: @escaping @Sendable (FetchTicket) -> Void,
        completion: @escaping @Sendable (Result<Overlays, ServiceError>) -> Void
    ) {
        var images = spec.operations.watermarks.map { (image: $0.image, role: OverlayRole.watermark) }
        if let frame = spec.operations.frame { images.append((frame.image, .frame)) }
        let watermarkCount = spec.operations.watermarks.count
        collect(images[...], [], priority: priority, issued: issued) { result in
            completion(
                result.map { bytes in
                    Overlays(
                        watermarks: Array(bytes.prefix(watermarkCount)),
                        frame: bytes.count > watermarkCount ? bytes[watermarkCount] : nil)
                })
        }
    }

    /// Gets `images`' bytes one after another onto `got`.
    private func collect(
        _ images: ArraySlice<(image: ThumbnailSpec.Watermark.Image, role: OverlayRole)>, _ got: [[UInt8]],
        priority: FetchPriority,
        issued: @escaping @Sendable (FetchTicket) -> Void,
        completion: @escaping @Sendable (Result<[[UInt8]], ServiceError>) -> Void
    ) {
        guard let next = images.first else { return completion(.success(got)) }
        let ticket = image(next.image, as: next.role, priority: priority) { [self] result in
            switch result {
            case .success(let bytes):
                collect(images.dropFirst(), got + [bytes], priority: priority, issued: issued, completion: completion)
            case .failure(let error): completion(.failure(error))
            }
        }
        if let ticket { issued(ticket) }
    }
}

/// The parsers (URLForms) ask here for a name's digest; the canonical form of a `wm_url` is theirs.
extension WatermarkSource: WatermarkNames {}
