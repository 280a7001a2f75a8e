// SPDX-License-Identifier: Apache-2.0
import Caching
import EventLoops
import FoundationEssentials
import HTTP1
import OriginFetch
import Synchronization
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
    let fetcher: OriginFetcher
    private let cache: ThumbnailCache?
    let renderPool: WorkerPool
    let thumbnailer: Thumbnailer
    let verifier: URLSignatureVerifier
    private let policy: SharedFreshnessPolicy
    /// The sources' detections (`faces=1`), kept beside their intermediates.
    let intermediates: IntermediateCache?
    /// `POST /info`'s bounds (`info.*`; a reload replaces them: ``update(batchLimits:)``).
    let limits: Mutex<BatchLimits>

    init(
        fetcher: OriginFetcher, cache: ThumbnailCache?, renderPool: WorkerPool, thumbnailer: Thumbnailer,
        verifier: URLSignatureVerifier, policy: SharedFreshnessPolicy, intermediates: IntermediateCache? = nil,
        batchLimits: BatchLimits = BatchLimits()
    ) {
        self.intermediates = intermediates
        self.limits = Mutex(batchLimits)
        self.fetcher = fetcher
        self.cache = cache
        self.renderPool = renderPool
        self.thumbnailer = thumbnailer
        self.verifier = verifier
        self.policy = policy
    }

    /// Adds `GET` and `HEAD` `/info`, and the batch `POST /info` (InfoService+Batch.swift).
    func register(in router: inout Router) {
        let handler: HTTPHandler = { [self] request, responder in handle(request, responder) }
        router.add(.get, "/info", handler: handler)
        router.add(.head, "/info", handler: handler)
        router.add(.post, "/info") { [self] request, responder in handleBatch(request, responder) }
    }

    /// The JSON answer's fields (snake_case, in this order).
    struct Info: Encodable, Sendable {
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

        struct Faces: Encodable, Sendable {
            let count: Int
            let boxes: [DetectedRegions.Box]
        }

        struct EXIF: Encodable, Sendable {
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

    /// One answer of `/info`: the JSON object and where its source came from (`cached`, `fetched`).
    struct Answer: Sendable {
        let info: Info
        let origin: String
    }

    /// Where one answer's work runs: how its header read reaches a render thread, and who is told of the fetch
    /// it starts (to cancel it). `GET /info` submits to the render pool; a batch passes its share of it.
    struct Work: Sendable {
        typealias Job = @Sendable () -> Void
        /// Runs `job` on a render thread, or `refused` when it cannot be queued (the answer is then a 503).
        let submit: @Sendable (_ job: @escaping Job, _ refused: @escaping Job) -> Void
        /// Told of each fetch started for the answer.
        var fetchStarted: @Sendable (FetchTicket) -> Void = { _ in }
    }

    private func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let work = Work { [renderPool] job, refused in
            if (try? renderPool.submit(priority: .interactive, job)) == nil { refused() }
        }
        answer(request.query ?? "", verifier: verifier, work: work) { result in
            switch result {
            case .success(let answer): responder.respond(Self.json(answer.info, origin: answer.origin))
            case .failure(let error): responder.respond(ErrorResponse(error).response)
            }
        }
    }

    /// The answer to one `/info` query (`url`, `sig`, `faces`): the one path of `GET /info` and of each entry of
    /// `POST /info`, so the two can never disagree. `done` runs once, on any thread.
    /// - Parameter verifier: checks the query's `sig` (a batch signed as a whole passes one with no keys).
    func answer(
        _ query: String, verifier: URLSignatureVerifier, work: Work,
        _ done: @escaping @Sendable (Result<Answer, ServiceError>) -> Void
    ) {
        let source: SourceURL
        let faces: Bool
        do throws(RequestError) {
            (source, faces) = try Self.infoQuery(query, verifier: verifier)
            if faces && intermediates?.detections == nil {
                throw .invalidValue("faces", reason: "face detection is off (image.faces)")
            }
        } catch {
            return done(.failure(.request(error)))
        }
        withSource(source, work: work) { [self] result in
            switch result {
            case .success(let (bytes, origin)):
                probe(bytes, url: source, origin: origin, faces: faces, work: work, done)
            case .failure(let error):
                done(.failure(.fetch(error)))
            }
        }
    }

    /// Calls `body` with the source's bytes and where they came from (`cached`, `fetched`): from the source cache
    /// when it has them, else through the fetcher (and then kept). A fetch failure is answered here.
    func withSource(
        _ source: SourceURL, _ responder: HTTPResponder,
        _ body: @escaping @Sendable (FetchedSource, _ origin: String) -> Void
    ) {
        withSource(source, work: nil) { result in
            switch result {
            case .success(let (bytes, origin)): body(bytes, origin)
            case .failure(let error): responder.respond(ErrorResponse(.fetch(error)).response)
            }
        }
    }

    /// Calls `body` with the source's bytes and where they came from, or the fetch's failure.
    private func withSource(
        _ source: SourceURL, work: Work?,
        _ body: @escaping @Sendable (Result<(FetchedSource, String), FetchError>) -> Void
    ) {
        let lookedUp =
            cache?.lookupSource(source) { [self] cached in
                if let cached {
                    body(.success((cached, "cached")))
                } else {
                    fetch(source, work: work, body)
                }
            } ?? false
        if !lookedUp { fetch(source, work: work, body) }
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
        _ url: SourceURL, work: Work?, _ body: @escaping @Sendable (Result<(FetchedSource, String), FetchError>) -> Void
    ) {
        let cache = self.cache
        let ticket = fetcher.fetch(
            FetchRequest(url: url.string, priority: .interactive), reuse: { cache?.recentSource(url) }
        ) { [self] result in
            switch result {
            case .success(let source):
                if let cache,
                    case .store(let freshness) = policy.current.decide(source.headers, receivedAt: Timestamp.now())
                {
                    cache.storeSource(source, url: url, freshness: freshness)
                }
                body(.success((source, "fetched")))
            case .failure(let error):
                if case .originNotFound = error { cache?.rememberNotFound(url) }
                body(.failure(error))
            }
        }
        work?.fetchStarted(ticket)
    }

    /// Reads the header on a render thread (through `work`) and answers.
    private func probe(
        _ source: FetchedSource, url: SourceURL, origin: String, faces: Bool, work: Work,
        _ done: @escaping @Sendable (Result<Answer, ServiceError>) -> Void
    ) {
        work.submit(
            { [thumbnailer, intermediates] in
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
                    done(.success(Answer(info: info, origin: origin)))
                } catch {
                    done(.failure(.thumbnail(error)))
                }
            }, { done(.failure(.renderQueueFull)) })
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
