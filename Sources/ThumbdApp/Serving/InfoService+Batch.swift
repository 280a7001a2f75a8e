// SPDX-License-Identifier: Apache-2.0
import EventLoops
import FoundationEssentials
import HTTP1
import OriginFetch
import Synchronization
import ThumbdSettings
import URLForms

/// `POST /info`: many sources' `/info` in one request (a page of thumbnails), answered as one JSON array in the
/// order asked (docs/api.md, "POST /info").
///
/// The body is a JSON array of 1…`info.batch_max` entries, each a URL (`"https://…"`) or an object of `GET /info`'s
/// parameters (`{"url": …, "sig": …, "faces": true}`). Each entry becomes the query `GET /info` would get and goes
/// through ``InfoService/query(_:verifier:)`` and ``InfoService/answer(_:work:_:)``, the one path of both, so an element is what `GET /info`
/// answers for that query: its object, or `{"url": …, "error": {"status": 404, "message": "source not found"}}`
/// with the status and message of `GET /info`'s error. A bad entry never fails the batch; a body that is not such
/// an array, too many entries (400), too large a body (413), or a bad whole-batch signature (403) does.
///
/// Signing (with `security.signing_keys`): each entry's `sig` as for `GET /info` over its own query, or the whole
/// body signed once in the query, `POST /info?sig=…` (``URLSignature/batchSignature(body:key:)``).
///
/// Work: identical entries are answered once; every other entry starts at once (sources from the source cache,
/// else the fetcher, which coalesces one URL's fetches), and their header reads go to the render pool through a
/// lane of the batch's own (``Lane``), at most one job per render thread queued at a time, so one batch neither
/// fills the render queue (each waiting read re-enters at the back, behind other clients) nor 503s itself; a full
/// queue is a 503 for the entries refused. The answer is sent when every entry has one; the client leaving cancels
/// the fetches no one else waits for and the header reads not started.
extension InfoService {
    /// `POST /info`'s bounds.
    struct BatchLimits: Sendable {
        /// Entries a request may hold (`info.batch_max`).
        var maxEntries = 100
        /// Largest body (`info.batch_max_bytes`).
        var maxBodyBytes = 1 << 20

        init(maxEntries: Int = 100, maxBodyBytes: Int = 1 << 20) {
            self.maxEntries = maxEntries
            self.maxBodyBytes = maxBodyBytes
        }

        /// The bounds `info.*` sets.
        init(_ settings: Settings.Info) {
            self.init(maxEntries: settings.batchMax, maxBodyBytes: settings.batchMaxBytes)
        }
    }

    /// `POST /info`'s bounds in force.
    var batchLimits: BatchLimits { limits.withLock { $0 } }

    /// Replaces `POST /info`'s bounds (a reload of `info.*`), for the requests that follow.
    func update(batchLimits: BatchLimits) {
        limits.withLock { $0 = batchLimits }
    }

    /// Checks entries of a batch signed as a whole: no keys, so an entry's own `sig` is not needed (the body's
    /// signature covers the entry), and every other check is `GET /info`'s.
    private static let wholeBatchVerified = URLSignatureVerifier(keys: [])

    /// `POST /info`. The body (at most `info.batch_max_bytes`) is decoded on the event loop, as `/prefetch`'s: a
    /// few milliseconds at most; the answer is encoded where the last entry finishes (a render or fetch thread).
    func handleBatch(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let batchLimits = self.batchLimits
        guard request.body.count <= batchLimits.maxBodyBytes else {
            return responder.respond(
                .error(
                    HTTPStatus(code: 413, reasonPhrase: "Content Too Large"),
                    message: "body larger than info.batch_max_bytes (\(batchLimits.maxBodyBytes))"))
        }
        // The query holds only the whole-batch `sig`, if anything.
        let entryVerifier: URLSignatureVerifier
        do throws(RequestError) {
            let parameters = try QueryParameters(parsing: request.query ?? "")
            if parameters.pairs.isEmpty {
                entryVerifier = verifier
            } else {
                _ = try verifier.verifyBatch(parameters, body: request.body)
                entryVerifier = Self.wholeBatchVerified
            }
        } catch {
            return responder.respond(ErrorResponse(.request(error)).response)
        }
        let entries: [BatchEntry]
        do {
            entries = try JSONDecoder().decode([BatchEntry].self, from: Data(request.body))
        } catch {
            return responder.respond(
                .error(
                    .badRequest,
                    message:
                        "body must be a JSON array of URLs or {\"url\": ..., \"sig\": ..., \"faces\": true} objects"
                ))
        }
        guard (1...batchLimits.maxEntries).contains(entries.count) else {
            return responder.respond(
                .error(
                    .badRequest, message: "the array must hold 1...\(batchLimits.maxEntries) entries (info.batch_max)"))
        }
        let batch = Batch(
            count: entries.count, responder: responder, fetcher: fetcher, renderPool: renderPool,
            lanes: max(1, renderPool.configuration.threads))
        // Identical entries are one answer, copied into every place that asked it.
        var places: [String: [Int]] = [:]
        var order: [String] = []
        for (index, entry) in entries.enumerated() {
            guard let query = entry.query else {
                batch.finish(
                    [index], url: nil,
                    .failure(.request(.invalidValue("entry", reason: "must be a URL or an object of url, sig, faces"))))
                continue
            }
            if places[query] == nil { order.append(query) }
            places[query, default: []].append(index)
        }
        responder.onClientGone { batch.cancel() }
        let work = batch.work
        for query in order {
            let indices = places[query] ?? []
            let url = entries[indices[0]].url
            do throws(RequestError) {
                answer(try self.query(query, verifier: entryVerifier), work: work) { result in
                    batch.finish(indices, url: url, result.map(\.info))
                }
            } catch {
                batch.finish(indices, url: url, .failure(.request(error)))
            }
        }
    }

    // MARK: - The body

    /// One entry of the body: a URL, or an object of `GET /info`'s parameters (string, number or boolean values).
    enum BatchEntry: Decodable {
        case url(String)
        case parameters([String: PrefetchBody.Scalar])
        /// Anything else (a number, null, an array, an object with a nested value): that entry's 400.
        case unusable

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let url = try? container.decode(String.self) {
                self = .url(url)
            } else if let parameters = try? container.decode([String: PrefetchBody.Scalar].self) {
                self = .parameters(parameters)
            } else {
                self = .unusable
            }
        }

        /// The `GET /info` query it stands for, percent-encoded (parameters in name order; `true`/`false` are
        /// `1`/`0`), or nil for an unusable entry.
        var query: String? {
            switch self {
            case .url(let url):
                return "url=" + Self.encoded(url)
            case .parameters(let parameters):
                return parameters.sorted { $0.key < $1.key }.map { name, value in
                    let text: String
                    switch value {
                    case .boolean(let flag): text = flag ? "1" : "0"
                    default: text = value.queryValue
                    }
                    return Self.encoded(name) + "=" + Self.encoded(text)
                }.joined(separator: "&")
            case .unusable:
                return nil
            }
        }

        /// The URL it names, for its error element.
        var url: String? {
            switch self {
            case .url(let url): url
            case .parameters(let parameters): if case .text(let url)? = parameters["url"] { url } else { nil }
            case .unusable: nil
            }
        }

        private static func encoded(_ text: String) -> String {
            String(decoding: QueryParameters.percentEncoded(text), as: UTF8.self)
        }
    }

    /// One element of the answer: `GET /info`'s object, or the entry's error.
    enum BatchElement: Encodable, Sendable {
        case info(Info)
        case failure(url: String?, status: Int, message: String)

        private enum CodingKeys: String, CodingKey { case url, error }
        private struct Failure: Encodable {
            let status: Int
            let message: String
        }

        func encode(to encoder: any Encoder) throws {
            switch self {
            case .info(let info):
                try info.encode(to: encoder)
            case .failure(let url, let status, let message):
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(url, forKey: .url)
                try container.encode(Failure(status: status, message: message), forKey: .error)
            }
        }
    }

    // MARK: - One batch under way

    /// The elements of one batch as they arrive, its fetches (to cancel) and its lane to the render pool.
    final class Batch: Sendable {
        private struct State {
            var elements: [BatchElement?]
            var remaining: Int
            var isCancelled = false
            var tickets: [FetchTicket] = []
            var lane = Lane()
        }

        /// The batch's share of the render pool: at most `lanes` of its jobs queued or running there at once, the
        /// rest waiting here in order. A job that ends submits the next one anew, at the back of the pool's queue.
        struct Lane {
            var waiting: [(job: Work.Job, refused: Work.Job)] = []
            var next = 0
            var inPool = 0
        }

        private let state: Mutex<State>
        private let responder: HTTPResponder
        private let fetcher: OriginFetcher
        private let renderPool: WorkerPool
        private let lanes: Int

        init(count: Int, responder: HTTPResponder, fetcher: OriginFetcher, renderPool: WorkerPool, lanes: Int) {
            state = Mutex(State(elements: Array(repeating: nil, count: count), remaining: count))
            self.responder = responder
            self.fetcher = fetcher
            self.renderPool = renderPool
            self.lanes = lanes
        }

        /// How the entries' work runs: through the lane, their fetches remembered.
        var work: Work {
            Work(
                submit: { [self] job, refused in submit(job, refused) },
                fetchStarted: { [self] ticket in started(ticket) })
        }

        /// Records the answer of the entries at `indices`; the last one sends the array.
        func finish(_ indices: [Int], url: String?, _ result: Result<Info, ServiceError>) {
            let element: BatchElement
            switch result {
            case .success(let info):
                element = .info(info)
            case .failure(let error):
                let response = ErrorResponse(error)
                element = .failure(url: url, status: response.status.code, message: response.publicMessage)
            }
            let complete = state.withLock { state -> [BatchElement]? in
                for index in indices { state.elements[index] = element }
                state.remaining -= indices.count
                guard state.remaining == 0, !state.isCancelled else { return nil }
                return state.elements.map { $0! }
            }
            if let complete { responder.respond(Self.json(complete)) }
        }

        /// The client left: cancels the fetches (a transfer stops when no one else waits for it) and the jobs
        /// still waiting in the lane.
        func cancel() {
            let tickets = state.withLock { state -> [FetchTicket] in
                state.isCancelled = true
                // The jobs in the pool give their places back as they end (``takeNext()``).
                state.lane.waiting = []
                state.lane.next = 0
                defer { state.tickets = [] }
                return state.tickets
            }
            for ticket in tickets { fetcher.cancel(ticket) }
        }

        private func started(_ ticket: FetchTicket) {
            let cancelled = state.withLock { state -> Bool in
                if !state.isCancelled { state.tickets.append(ticket) }
                return state.isCancelled
            }
            if cancelled { fetcher.cancel(ticket) }
        }

        private func submit(_ job: @escaping Work.Job, _ refused: @escaping Work.Job) {
            let toPool = state.withLock { state -> Bool in
                if state.isCancelled { return false }
                if state.lane.inPool < lanes {
                    state.lane.inPool += 1
                    return true
                }
                state.lane.waiting.append((job, refused))
                return false
            }
            if toPool { run(job, refused) }
        }

        /// Queues `job` in the pool, then the next waiting one after it; a refused job is refused, and with
        /// none of the batch's in the pool the waiting ones are refused too (nothing would start them).
        private func run(_ job: @escaping Work.Job, _ refused: @escaping Work.Job) {
            do {
                try renderPool.submit(priority: .interactive) { [self] in
                    job()
                    if let (next, nextRefused) = takeNext() { run(next, nextRefused) }
                }
            } catch {
                let stranded = state.withLock { state -> [Work.Job] in
                    state.lane.inPool -= 1
                    guard state.lane.inPool == 0 else { return [] }
                    defer { state.lane = Lane() }
                    return state.lane.waiting[state.lane.next...].map(\.refused)
                }
                refused()
                for refused in stranded { refused() }
            }
        }

        /// The next waiting job, keeping its place in the pool; nil (the place given back) when none waits.
        private func takeNext() -> (Work.Job, Work.Job)? {
            state.withLock { state -> (Work.Job, Work.Job)? in
                guard !state.isCancelled, state.lane.next < state.lane.waiting.count else {
                    state.lane.inPool -= 1
                    return nil
                }
                defer { state.lane.next += 1 }
                return state.lane.waiting[state.lane.next]
            }
        }

        static func json(_ elements: [BatchElement]) -> HTTPResponse {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]  // as GET /info's
            let body = (try? encoder.encode(elements)).map { [UInt8]($0) } ?? Array("[]".utf8)
            return HTTPResponse(
                status: .ok,
                headers: [
                    HTTPField(name: "Content-Type", value: "application/json"),
                    HTTPField(name: "Cache-Control", value: "no-store"),
                ],
                body: .bytes(body))
        }
    }
}
