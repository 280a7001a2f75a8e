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
    /// `GET /info` answers made from kept records, by raw query; `nil` without analyses.
    private let prepared: PreparedInfoAnswers?

    init(
        fetcher: OriginFetcher, cache: ThumbnailCache?, renderPool: WorkerPool, thumbnailer: Thumbnailer,
        verifier: URLSignatureVerifier, policy: SharedFreshnessPolicy, intermediates: IntermediateCache? = nil,
        batchLimits: BatchLimits = BatchLimits()
    ) {
        self.intermediates = intermediates
        prepared = intermediates?.analyses == nil ? nil : try? PreparedInfoAnswers()
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
        /// With `analysis=1` (or `blurhash=`, `palette=`): the source's analysis (placeholders, colours, hashes);
        /// absent otherwise.
        var analysis: AnalysisFields?

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
            case bytes, exif, faces, analysis
        }
    }

    /// One answer of `/info`: the JSON object and where its source came from (`cached`, `fetched`).
    struct Answer: Sendable {
        let info: Info
        let origin: String
        /// The digest of the record it was made from, when it was (origin `analysis`).
        var digest: String?
    }

    /// Where one answer's work runs: how its header read reaches a render thread, and who is told of the fetch
    /// it starts (to cancel it). `GET /info` submits to the render pool; a batch passes its share of it.
    struct Work: Sendable {
        typealias Job = @Sendable () -> Void
        /// Runs `job` on a render thread, or `refused` when it cannot be queued (the answer is then a 503).
        let submit: @Sendable (_ job: @escaping Job, _ refused: @escaping Job) -> Void
        /// Told of each fetch started for the answer.
        var fetchStarted: @Sendable (FetchTicket) -> Void = { _ in }

        /// Straight to the render pool's interactive lane (a full queue refuses).
        static func pool(_ renderPool: WorkerPool) -> Work {
            Work { job, refused in
                if (try? renderPool.submit(priority: .interactive, job)) == nil { refused() }
            }
        }
    }

    private func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let rawQuery = request.query ?? ""
        // Read before the parse: keys changed during it leave an answer that the next request parses again.
        let keyGeneration = verifier.keyGeneration
        if let prepared, let analyses = intermediates?.analyses,
            let found = prepared.body(for: rawQuery, keyGeneration: keyGeneration, analyses: analyses)
        {
            let tag = cache?.sourceTags.field(forCanonical: found.source)
            responder.respond(Self.response(found.body, origin: "analysis", tag: tag))
            return
        }
        let query: InfoQuery
        do throws(RequestError) {
            query = try self.query(rawQuery, verifier: verifier)
        } catch {
            responder.respond(ErrorResponse(.request(error)).response)
            return
        }
        let tag = cache?.sourceTags.field(for: query.source)
        answer(query, work: .pool(renderPool)) { [prepared] result in
            switch result {
            case .success(let answer):
                let body = Self.encoded(answer.info)
                if answer.origin == "analysis", let prepared, let digest = answer.digest {
                    prepared.keep(
                        .init(source: query.source.string, digest: digest, keyGeneration: keyGeneration, body: body),
                        for: rawQuery)
                }
                responder.respond(Self.response(body, origin: answer.origin, tag: tag))
            case .failure(let error): responder.respond(ErrorResponse(error).response)
            }
        }
    }

    /// An `/info` query read (``infoQuery(_:verifier:defaults:)``) and checked against what this server can answer
    /// (faces, analyses): `GET /info`'s and each `POST /info` entry's, so the two can never disagree.
    /// - Parameter verifier: checks the query's `sig` (a batch signed as a whole passes one with no keys).
    func query(_ rawQuery: String, verifier: URLSignatureVerifier) throws(RequestError) -> InfoQuery {
        let query = try Self.infoQuery(
            rawQuery, verifier: verifier, defaults: intermediates?.analyses?.options ?? AnalysisOptions())
        if query.faces && intermediates?.detections == nil {
            throw .invalidValue("faces", reason: "face detection is off (image.faces)")
        }
        if query.analysis != nil && intermediates?.analyses == nil {
            throw .invalidValue("analysis", reason: "this server keeps no analyses")
        }
        return query
    }

    /// Writes the answer of an `/info` form: `/info`'s JSON, or a dialect's made from the same `Info`.
    typealias Writer = @Sendable (Info, _ origin: String) -> HTTPResponse

    /// Answers `query` on `responder` (``answer(_:work:_:)`` with the render pool); `write` makes the response.
    func answer(
        _ query: InfoQuery, _ responder: HTTPResponder,
        write: @escaping Writer = { info, origin in json(info, origin: origin) }
    ) {
        answer(query, work: .pool(renderPool)) { result in
            switch result {
            case .success(let answer): responder.respond(write(answer.info, answer.origin))
            case .failure(let error): responder.respond(ErrorResponse(error).response)
            }
        }
    }

    /// The answer to `query`: from the source's kept analysis record when it is fresh and holds all that is asked
    /// (no fetch: origin `analysis`), else from the source's bytes, read on a render thread through `work`. The one
    /// path of `GET /info`, its dialects and each entry of `POST /info`. `done` runs once, on any thread.
    func answer(
        _ query: InfoQuery, work: Work, _ done: @escaping @Sendable (Result<Answer, ServiceError>) -> Void
    ) {
        let fromBytes: @Sendable () -> Void = { [self] in
            withSource(query.source, work: work) { [self] result in
                switch result {
                case .success(let (bytes, origin)): probe(bytes, query, origin: origin, work: work, done)
                case .failure(let error): done(.failure(.fetch(error)))
                }
            }
        }
        guard let analyses = intermediates?.analyses else { return fromBytes() }
        analyses.lookup(query.source) { kept in
            if let kept, kept.isFresh, query.analysis == nil || query.analysis == analyses.options,
                !query.faces || kept.record.faces != nil
            {
                return done(
                    .success(
                        Answer(info: Self.info(kept.record, query), origin: "analysis", digest: kept.record.digest)))
            }
            fromBytes()
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

    /// What an `/info` request asks.
    struct InfoQuery: Sendable, Equatable {
        let source: SourceURL
        /// `faces=1`.
        var faces = false
        /// The analysis asked (`analysis=1`, `blurhash=X,Y`, `palette=N`), with the kept one's options where the
        /// request names none; `nil`: none asked.
        var analysis: AnalysisOptions?
    }

    /// `url` (required), `sig`, `faces` (`0`, `1`), `analysis` (`0`, `1`), `blurhash` (`X,Y`: components across and
    /// down, 1–9 each) and `palette` (colours, 2–256); anything else is a 400. `defaults` are the kept analysis's
    /// options, which `blurhash` and `palette` replace one by one.
    static func infoQuery(
        _ query: String, verifier: URLSignatureVerifier, defaults: AnalysisOptions = AnalysisOptions()
    ) throws(RequestError) -> InfoQuery {
        let parameters = try QueryParameters(parsing: query)
        _ = try verifier.verify(parameters)
        var url: String?
        var flags: [String: Bool] = [:]
        var blurhash: (Int, Int)?
        var palette: Int?
        for (name, value) in parameters.pairs {
            switch name {
            case "url":
                guard url == nil else { throw .duplicateParameter(name) }
                url = value
            case "faces", "analysis":
                guard flags[name] == nil else { throw .duplicateParameter(name) }
                guard value == "0" || value == "1" else { throw .invalidValue(name, reason: "must be 0 or 1") }
                flags[name] = value == "1"
            case "blurhash":
                guard blurhash == nil else { throw .duplicateParameter(name) }
                let parts = value.split(separator: ",", omittingEmptySubsequences: false)
                guard parts.count == 2, let x = Int(parts[0]), let y = Int(parts[1]),
                    AnalysisOptions.blurhashRange.contains(x), AnalysisOptions.blurhashRange.contains(y)
                else { throw .invalidValue(name, reason: "must be X,Y with components 1-9 across and down") }
                blurhash = (x, y)
            case "palette":
                guard palette == nil else { throw .duplicateParameter(name) }
                guard let colours = Int(value), AnalysisOptions.paletteRange.contains(colours) else {
                    throw .invalidValue(name, reason: "must be 2-256 colours")
                }
                palette = colours
            case URLSignature.parameterName: continue
            default: throw .unknownParameter(name)
            }
        }
        guard let url, !url.isEmpty else { throw .missingParameter("url") }
        guard url.utf8.count <= ThumbnailRequest.maxURLBytes, let source = try? SourceURL(url) else {
            throw .invalidValue("url", reason: "must be an absolute http(s) URL or s3://bucket/key")
        }
        var info = InfoQuery(source: source, faces: flags["faces"] ?? false)
        if flags["analysis"] == true || blurhash != nil || palette != nil {
            var options = defaults
            if let (x, y) = blurhash { (options.blurhashX, options.blurhashY) = (x, y) }
            if let palette { options.paletteColours = palette }
            info.analysis = options
        }
        return info
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

    /// Reads the header on a render thread, through `work` (and makes what `query` asks: faces, the analysis).
    private func probe(
        _ source: FetchedSource, _ query: InfoQuery, origin: String, work: Work,
        _ done: @escaping @Sendable (Result<Answer, ServiceError>) -> Void
    ) {
        work.submit(
            { [self] in
                do throws(ThumbnailError) {
                    done(.success(Answer(info: try info(of: source, query), origin: origin)))
                } catch {
                    done(.failure(.thumbnail(error)))
                }
            }, { done(.failure(.renderQueueFull)) })
    }

    /// How long what is made of `source` (its analysis record) may be kept: its caching headers' say (`nil`: not kept).
    func freshness(of source: FetchedSource) -> DiskCache.Freshness? {
        guard case .store(let decided) = policy.current.decide(source.headers, receivedAt: Timestamp.now()) else {
            return nil
        }
        return decided
    }

    /// What `query` asks of `source`'s bytes. On a render thread.
    private func info(of source: FetchedSource, _ query: InfoQuery) throws(ThumbnailError) -> Info {
        let bytes = source.body
        let digest = bytes.withUnsafeBytes { XXHash64.hash($0) }
        let freshness = freshness(of: source)
        var info: Info
        if let wanted = query.analysis, let intermediates, let analyses = intermediates.analyses {
            if wanted == analyses.options,
                let record = try intermediates.analysis(
                    of: bytes, url: query.source, digest: digest, freshness: freshness, thumbnailer: thumbnailer)
            {
                info = Self.info(record, query)
            } else {
                // Other components or palette size: made for this request from the source's intermediate, not kept.
                let header = SourceAnalyses.SourceHeader(try thumbnailer.probe(bytes), bytes: bytes.count)
                let key = IntermediateCache.Key(
                    source: query.source.string, digest: digest, band: SourceDetections.analysisBand)
                let image = try intermediates.intermediate(for: key) { () throws(ThumbnailError) -> IntermediateImage in
                    try thumbnailer.analysisImage(bytes, band: SourceDetections.analysisBand)
                }
                info = Self.info(header, url: query.source.string)
                info.analysis = AnalysisFields(try thumbnailer.analyse(image, options: wanted))
            }
        } else {
            // The kept record (if any) of the same bytes is confirmed for as long as the source now is.
            intermediates?.analyses?.refresh(query.source, digest: digest, freshness: freshness)
            info = Self.info(
                SourceAnalyses.SourceHeader(try thumbnailer.probe(bytes), bytes: bytes.count), url: query.source.string)
        }
        if query.faces, let intermediates,
            let regions = try intermediates.regions(of: bytes, url: query.source.string, thumbnailer: thumbnailer)
        {
            info.faces = .init(count: regions.faces.count, boxes: regions.faces)
        }
        return info
    }

    static func json(_ info: some Encodable, origin: String) -> HTTPResponse {
        response(encoded(info), origin: origin)
    }

    /// `info` as the answers' JSON. Sorted: the same answer is the same bytes (a cache in front, a client comparing
    /// them, a prepared answer).
    static func encoded(_ info: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(info)).map { [UInt8]($0) } ?? Array("{}".utf8)
    }

    /// An answer with `body`, from `origin` (`X-Source`), with the source tag header `tag` (``SourceTagHeaders``).
    static func response(_ body: [UInt8], origin: String, tag: HTTPField? = nil) -> HTTPResponse {
        var headers = [
            HTTPField(name: "Content-Type", value: "application/json"),
            HTTPField(name: "Cache-Control", value: "no-store"),
            HTTPField(name: "X-Source", value: origin),
        ]
        if let tag { headers.append(tag) }
        return HTTPResponse(status: .ok, headers: headers, body: .bytes(body))
    }
}
