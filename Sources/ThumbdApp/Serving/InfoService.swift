// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import FoundationEssentials
import HTTP1
import OriginFetch
import Thumbnailing
import URLForms

/// `GET /info?url=…[&sig=…]`: what a source is, as JSON, read from its header without decoding a pixel: format,
/// size (upright), frames, orientation, alpha, colour space, bits, ICC profile, bytes, and a small EXIF subset
/// (camera make and model, when it was taken).
///
/// The source comes from the source cache when it is there (no origin fetch; `X-Source: cached`), else from the
/// same fetcher as thumbnails (SSRF rules, limits, coalescing; `X-Source: fetched`), and is kept as a source
/// for the thumbnails that follow. `sig` is checked as on `/thumb` (the same keys, over this query). The header
/// is read on a render thread (a libvips call), never on the event loop.
final class InfoService: Sendable {
    private let fetcher: OriginFetcher
    private let cache: ThumbnailCache?
    let renderPool: WorkerPool
    let thumbnailer: Thumbnailer
    private let verifier: URLSignatureVerifier
    private let policy: SharedFreshnessPolicy
    /// The sources' detections (`faces=1`), kept beside their intermediates.
    let intermediates: IntermediateCache?

    init(
        fetcher: OriginFetcher, cache: ThumbnailCache?, renderPool: WorkerPool, thumbnailer: Thumbnailer,
        verifier: URLSignatureVerifier, policy: SharedFreshnessPolicy, intermediates: IntermediateCache? = nil
    ) {
        self.intermediates = intermediates
        self.fetcher = fetcher
        self.cache = cache
        self.renderPool = renderPool
        self.thumbnailer = thumbnailer
        self.verifier = verifier
        self.policy = policy
    }

    /// Adds `GET` and `HEAD` `/info`.
    func register(in router: inout Router) {
        let handler: HTTPHandler = { [self] request, responder in handle(request, responder) }
        router.add(.get, "/info", handler: handler)
        router.add(.head, "/info", handler: handler)
    }

    /// The JSON answer's fields (snake_case, in this order).
    struct Info: Encodable {
        let url: String
        let format: String
        let width: Int
        let height: Int
        let frames: Int
        let orientation: Int
        let alpha: Bool
        let colourSpace: String
        let bitsPerChannel: Int
        let iccProfile: Bool
        let bytes: Int
        let exif: EXIF
        /// With `faces=1`: the faces found (boxes in pixels of the upright source), from the source's kept detection
        /// or one made now and kept; absent otherwise.
        var faces: Faces?

        struct Faces: Encodable {
            let count: Int
            let boxes: [DetectedRegions.Box]
        }

        struct EXIF: Encodable {
            let make: String?
            let model: String?
            let takenAt: String?
        }

        enum CodingKeys: String, CodingKey {
            case url, format, width, height, frames, orientation, alpha
            case colourSpace = "colour_space"
            case bitsPerChannel = "bits_per_channel"
            case iccProfile = "icc_profile"
            case bytes, exif, faces
        }
    }

    private func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let source: SourceURL
        let faces: Bool
        do throws(RequestError) {
            (source, faces) = try Self.infoQuery(request.query ?? "", verifier: verifier)
            if faces && intermediates?.detections == nil {
                throw .invalidValue("faces", reason: "face detection is off (image.faces)")
            }
        } catch {
            responder.respond(ErrorResponse(.request(error)).response)
            return
        }
        withSource(source, responder) { [self] bytes, origin in
            probe(bytes, url: source, origin: origin, faces: faces, responder)
        }
    }

    /// Calls `body` with the source's bytes and where they came from (`cached`, `fetched`): from the source cache
    /// when it has them, else through the fetcher (and then kept). A fetch failure is answered here.
    func withSource(
        _ source: SourceURL, _ responder: HTTPResponder,
        _ body: @escaping @Sendable (FetchedSource, _ origin: String) -> Void
    ) {
        let lookedUp =
            cache?.lookupSource(source) { [self] cached in
                if let cached {
                    body(cached, "cached")
                } else {
                    fetch(source, responder, body)
                }
            } ?? false
        if !lookedUp { fetch(source, responder, body) }
    }

    /// `url` (required) and `sig`; anything else is a 400.
    static func sourceURL(_ query: String, verifier: URLSignatureVerifier) throws(RequestError) -> SourceURL {
        let (source, faces) = try infoQuery(query, verifier: verifier)
        if faces { throw .unknownParameter("faces") }
        return source
    }

    /// `url` (required), `sig` and `faces` (`0`, `1`); anything else is a 400.
    static func infoQuery(_ query: String, verifier: URLSignatureVerifier) throws(RequestError) -> (SourceURL, Bool) {
        let parameters = try QueryParameters(parsing: query)
        _ = try verifier.verify(parameters)
        var url: String?
        var faces: Bool?
        for (name, value) in parameters.pairs {
            switch name {
            case "url":
                guard url == nil else { throw .duplicateParameter(name) }
                url = value
            case "faces":
                guard faces == nil else { throw .duplicateParameter(name) }
                guard value == "0" || value == "1" else { throw .invalidValue(name, reason: "must be 0 or 1") }
                faces = value == "1"
            case URLSignature.parameterName: continue
            default: throw .unknownParameter(name)
            }
        }
        guard let url, !url.isEmpty else { throw .missingParameter("url") }
        guard url.utf8.count <= ThumbnailRequest.maxURLBytes, let source = try? SourceURL(url) else {
            throw .invalidValue("url", reason: "must be an absolute http(s) URL or s3://bucket/key")
        }
        return (source, faces ?? false)
    }

    private func fetch(
        _ url: SourceURL, _ responder: HTTPResponder,
        _ body: @escaping @Sendable (FetchedSource, _ origin: String) -> Void
    ) {
        let cache = self.cache
        fetcher.fetch(FetchRequest(url: url.string, priority: .interactive), reuse: { cache?.recentSource(url) }) {
            [self] result in
            switch result {
            case .success(let source):
                if let cache,
                    case .store(let freshness) = policy.current.decide(source.headers, receivedAt: Timestamp.now())
                {
                    cache.storeSource(source, url: url, freshness: freshness)
                }
                body(source, "fetched")
            case .failure(let error):
                if case .originNotFound = error { cache?.rememberNotFound(url) }
                responder.respond(ErrorResponse(.fetch(error)).response)
            }
        }
    }

    /// Reads the header on a render thread and answers.
    private func probe(
        _ source: FetchedSource, url: SourceURL, origin: String, faces: Bool, _ responder: HTTPResponder
    ) {
        do {
            try renderPool.submit(priority: .interactive) { [thumbnailer, intermediates] in
                let response: HTTPResponse
                do throws(ThumbnailError) {
                    let probe = try thumbnailer.probe(source.body)
                    var info = Info(
                        url: url.string, format: probe.format.rawValue, width: probe.width, height: probe.height,
                        frames: probe.pageCount, orientation: probe.orientation, alpha: probe.hasAlpha,
                        colourSpace: probe.colourSpace, bitsPerChannel: probe.bitsPerChannel,
                        iccProfile: probe.hasICCProfile, bytes: source.body.count,
                        exif: .init(make: probe.cameraMake, model: probe.cameraModel, takenAt: probe.takenAt))
                    if faces, let intermediates,
                        let regions = try intermediates.regions(
                            of: source.body, url: url.string, thumbnailer: thumbnailer)
                    {
                        info.faces = .init(count: regions.faces.count, boxes: regions.faces)
                    }
                    response = Self.json(info, origin: origin)
                } catch {
                    response = ErrorResponse(.thumbnail(error)).response
                }
                responder.respond(response)
            }
        } catch {
            responder.respond(ErrorResponse(.renderQueueFull).response)
        }
    }

    static func json(_ info: some Encodable, origin: String) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let body = (try? encoder.encode(info)).map { [UInt8]($0) } ?? Array("{}".utf8)
        return HTTPResponse(
            status: .ok,
            headers: [
                HTTPField(name: "Content-Type", value: "application/json"),
                HTTPField(name: "Cache-Control", value: "no-store"),
                HTTPField(name: "X-Source", value: origin),
            ],
            body: .bytes(body))
    }
}
