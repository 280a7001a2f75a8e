// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTP1
import Logging
import OriginFetch
import Synchronization
import URLForms

/// The cache admin routes, behind `Authorization: Bearer <admin.token>` (they answer 404, like an unknown
/// route, while no token is configured; a config reload can set or clear the token):
/// - `DELETE /cache?url=<source>`: purges every variant of the source from both tiers, its original and
///   its remembered 404. Answers once the disk rows are gone.
/// - `POST /cache/trim` with `{"memory_bytes": N}`: evicts least recently used thumbnails from memory
///   until at most N bytes remain (the seed: clearing the cache on a memory warning).
final class AdminService: Sendable {
    /// The bytes of `admin.token`; empty while the admin routes are off.
    private let token: Mutex<[UInt8]>
    private let cache: ThumbnailCache
    private let logger: Logger
    /// The sources' analysis records, whose memory copy a purge forgets (the disk's goes with the source's group).
    private let analyses: SourceAnalyses?

    init(token: String, cache: ThumbnailCache, logger: Logger, analyses: SourceAnalyses? = nil) {
        self.analyses = analyses
        self.token = Mutex(Array(token.utf8))
        self.cache = cache
        self.logger = logger
    }

    /// Requires `token` from now on; empty turns the routes off (404). Any thread (config hot reload).
    func update(token: String) {
        let bytes = Array(token.utf8)
        self.token.withLock { $0 = bytes }
    }

    /// Adds the routes to `router`.
    func register(in router: inout Router) {
        router.add(.delete, "/cache", handler: purge)
        router.add(.post, "/cache/trim", handler: trim)
    }

    /// `DELETE /cache?url=`.
    func purge(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard authorize(request, responder) else { return }
        let source: SourceURL
        do {
            let parameters = try QueryParameters(parsing: request.query ?? "")
            guard let raw = parameters.pairs.first(where: { $0.name == "url" })?.value else {
                return responder.respond(.error(.badRequest, message: "url is required"))
            }
            source = try SourceURL(raw)
        } catch {
            return responder.respond(.error(.badRequest, message: "url must be an absolute http(s) URL"))
        }
        let logger = self.logger
        analyses?.forget(source)
        cache.purge(source: source) { report in
            logger.notice(
                "cache purged",
                metadata: [
                    "source": "\(source)", "memory_entries": "\(report.memoryEntries)",
                    "disk_entries": "\(report.diskEntries)", "source_entries": "\(report.sourceEntries)",
                    "analysis_entries": "\(report.analysisEntries)",
                ])
            responder.respond(
                Self.json(
                    "{\"purged\": {\"memory\": \(report.memoryEntries), \"disk\": \(report.diskEntries), "
                        + "\"sources\": \(report.sourceEntries), \"analyses\": \(report.analysisEntries)}}"))
        }
    }

    /// `POST /cache/trim`.
    func trim(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard authorize(request, responder) else { return }
        struct Body: Decodable {
            let memoryBytes: Int
            enum CodingKeys: String, CodingKey { case memoryBytes = "memory_bytes" }
        }
        guard let body = try? JSONDecoder().decode(Body.self, from: Data(request.body)), body.memoryBytes >= 0 else {
            return responder.respond(
                .error(.badRequest, message: "body must be {\"memory_bytes\": N} with N a non-negative integer"))
        }
        let evicted = cache.trimMemory(toBytes: body.memoryBytes)
        let statistics = cache.memory?.statistics
        logger.notice(
            "memory tier trimmed", metadata: ["target_bytes": "\(body.memoryBytes)", "evicted": "\(evicted)"])
        responder.respond(
            Self.json(
                "{\"evicted\": \(evicted), \"memory_bytes\": \(statistics?.currentBytes ?? 0), "
                    + "\"memory_entries\": \(statistics?.currentEntries ?? 0)}"))
    }

    /// 403 unless the request carries `Authorization: Bearer <token>`, compared in constant time. The scheme
    /// is matched case-insensitively (RFC 9110 §11.1: `bearer` is the same scheme); the token is not.
    /// Internal: the prefetch routes use the same check.
    func authorize(_ request: HTTPRequest, _ responder: HTTPResponder) -> Bool {
        let token = self.token.withLock { $0 }
        guard !token.isEmpty else {
            responder.respond(.error(.notFound))
            return false
        }
        let parts = (request.headers["authorization"] ?? "").split(separator: " ", maxSplits: 1)
        let presented = parts.count == 2 && parts[0].lowercased() == "bearer" ? Array(parts[1].utf8) : []
        let matches = Self.constantTimeEquals(presented, token)
        if !matches {
            responder.respond(.error(.forbidden, message: "admin token required"))
        }
        return matches
    }

    /// Compares in time that depends on the lengths only (the admin routes and /status).
    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }

    private static func json(_ text: String) -> HTTPResponse {
        HTTPResponse(
            status: .ok,
            headers: [
                HTTPField(name: "Content-Type", value: "application/json"),
                HTTPField(name: "Cache-Control", value: "no-store"),
            ],
            body: .bytes(Array(text.utf8)))
    }
}
