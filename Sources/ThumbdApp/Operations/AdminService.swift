// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTP1
import Logging
import OriginFetch
import Synchronization
import URLForms

/// The cache admin routes, behind `Authorization: Bearer <admin.token>` (they answer 404, like an unknown
/// route, while no token is configured; a config reload can set or clear the token):
/// - `DELETE /cache?url=<source>`: purges the source from every tier (``Purger``). Answers once it is done.
/// - `POST /purge` with `{"sources": [...], "tags": [...], "prefixes": [...]}`: the same for each source named, each
///   source this node stored under one of the tags, and each whose URL starts with one of the prefixes (at most
///   ``maxSourcesPerPurge`` a request).
/// - `POST /cache/trim` with `{"memory_bytes": N}`: evicts least recently used thumbnails from memory
///   until at most N bytes remain (the seed: clearing the cache on a memory warning).
final class AdminService: Sendable {
    /// The bytes of `admin.token`; empty while the admin routes are off.
    private let token: Mutex<[UInt8]>
    private let cache: ThumbnailCache
    private let logger: Logger
    private let purger: Purger

    /// Sources one `POST /purge` purges at most (named, tagged and prefixed together); more are left for the next.
    static let maxSourcesPerPurge = 1000
    /// Entries of each list of a `POST /purge` body, at most.
    static let maxListEntries = 100

    init(token: String, cache: ThumbnailCache, logger: Logger, purger: Purger) {
        self.purger = purger
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
        router.add(.post, "/purge", handler: purgeMany)
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
        purger.purge(source, why: .source) { report in
            responder.respond(
                Self.json("{\"purged\": \(Self.json(report)), \"tag\": \"\(SourceTag.of(source))\"}"))
        }
    }

    /// What a `POST /purge` body names, checked.
    struct PurgeRequest: Sendable, Equatable {
        var sources: [SourceURL] = []
        var tags: [String] = []
        var prefixes: [String] = []
    }

    /// Reads a `POST /purge` body; the error's text names what was wrong.
    static func parsePurge(_ body: [UInt8]) -> Result<PurgeRequest, PurgeBodyError> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)), let fields = object as? [String: Any]
        else {
            return .failure(PurgeBodyError("body must be a JSON object with \"sources\", \"tags\" or \"prefixes\""))
        }
        if let unknown = fields.keys.sorted().first(where: { !["sources", "tags", "prefixes"].contains($0) }) {
            return .failure(PurgeBodyError("unknown field \"\(unknown)\" (sources, tags, prefixes)"))
        }
        var lists: [String: [String]] = [:]
        for (name, value) in fields {
            guard let list = value as? [String] else {
                return .failure(PurgeBodyError("\(name) must be an array of strings"))
            }
            guard list.count <= maxListEntries else {
                return .failure(PurgeBodyError("\(name) has \(list.count) entries, at most \(maxListEntries)"))
            }
            lists[name] = list
        }
        var request = PurgeRequest()
        for raw in lists["sources"] ?? [] {
            guard let source = try? SourceURL(raw) else {
                return .failure(PurgeBodyError("sources: \"\(printable(raw))\" is not an absolute http(s) URL"))
            }
            request.sources.append(source)
        }
        for tag in lists["tags"] ?? [] {
            if let refusal = tagRefusal(tag) { return .failure(PurgeBodyError("tags: \(refusal)")) }
            request.tags.append(tag)
        }
        for raw in lists["prefixes"] ?? [] {
            // At least `scheme://host/`: a prefix names part of one origin, never every source.
            guard let schemeEnd = raw.range(of: "://"), raw[schemeEnd.upperBound...].contains("/"),
                raw.hasPrefix("http://") || raw.hasPrefix("https://"),
                let canonical = try? SourceURL(raw).string
            else {
                return .failure(
                    PurgeBodyError(
                        "prefixes: \"\(printable(raw))\" must be an http(s) URL with a host and a path (scheme://host/...)"
                    ))
            }
            // SourceURL writes the host in lower case, as the index holds the URLs; the rest is kept as written.
            request.prefixes.append(raw.hasSuffix("/") && !canonical.hasSuffix("/") ? canonical + "/" : canonical)
        }
        guard !request.sources.isEmpty || !request.tags.isEmpty || !request.prefixes.isEmpty else {
            return .failure(PurgeBodyError("nothing to purge: give sources, tags or prefixes"))
        }
        return .success(request)
    }

    /// Why `tag` is not a tag (1 to 64 of `A-Z a-z 0-9 - _ . :`), or nil.
    static func tagRefusal(_ tag: String) -> String? {
        guard !tag.isEmpty else { return "a tag is empty" }
        guard tag.utf8.count <= 64 else { return "\"\(printable(tag).prefix(70))...\" is longer than 64 bytes" }
        let allowed = tag.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
        }
        return allowed ? nil : "\"\(printable(tag))\" has a character outside A-Z a-z 0-9 - _ . :"
    }

    /// `text` with anything but printable ASCII (and `"`, `\\`) as `?`, at most 200 characters: safe in a JSON string.
    private static func printable(_ text: String) -> String {
        String(
            String(
                decoding: text.utf8.prefix(200).map { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C ? $0 : 0x3F },
                as: UTF8.self))
    }

    /// A `POST /purge` body's fault.
    struct PurgeBodyError: Error, Equatable {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// `POST /purge`.
    func purgeMany(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard authorize(request, responder) else { return }
        let parsed: PurgeRequest
        switch Self.parsePurge(request.body) {
        case .success(let request): parsed = request
        case .failure(let error): return responder.respond(.error(.badRequest, message: error.message))
        }
        let purger = self.purger
        let named = parsed.sources
        let run: @Sendable ([SourceURL], Bool) -> Void = { found, truncated in
            // Named sources count as `source`, the ones found as `tag` (or `prefix` when no tag was given).
            let foundReason: Purger.Reason = parsed.tags.isEmpty ? .prefix : .tag
            var unique: [(source: SourceURL, reason: Purger.Reason)] = []
            var seen = Set<String>()
            for source in named where seen.insert(source.string).inserted { unique.append((source, .source)) }
            for source in found where seen.insert(source.string).inserted { unique.append((source, foundReason)) }
            let purges = unique
            let sources = unique.map(\.source)
            purger.purge(purges) { report in
                purger.announce(tags: parsed.tags)
                let listed = sources.map {
                    "{\"url\": \(Self.jsonString($0.string)), \"tag\": \"\(SourceTag.of($0))\"}"
                }
                responder.respond(
                    Self.json(
                        "{\"purged\": \(Self.json(report)), \"truncated\": \(truncated), "
                            + "\"shared_truncated\": \(report.sharedTruncated), \"sources\": ["
                            + listed.joined(separator: ", ") + "]}"))
            }
        }
        guard !parsed.tags.isEmpty || !parsed.prefixes.isEmpty else { return run([], false) }
        guard purger.hasIndex else {
            return responder.respond(
                .error(.badRequest, message: "tags and prefixes need the purge index, kept beside cache.disk"))
        }
        purger.sources(
            tagged: parsed.tags, prefixed: parsed.prefixes, limit: Self.maxSourcesPerPurge - named.count
        ) { found in
            let urls = found?.urls.compactMap { try? SourceURL($0) } ?? []
            run(urls, found?.truncated ?? false)
        }
    }

    /// A report's counts as a JSON object.
    private static func json(_ report: Purger.Report) -> String {
        "{\"memory\": \(report.memory), \"disk\": \(report.disk), \"sources\": \(report.originals), "
            + "\"analyses\": \(report.analyses), \"shared\": \(report.shared), \"shared_errors\": \(report.sharedErrors)}"
    }

    /// `text` as a JSON string (also the purge webhook's, ``PurgeNotifier``).
    static func jsonString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data()
        let array = String(decoding: data, as: UTF8.self)
        return array.count >= 2 ? String(array.dropFirst().dropLast()) : "\"\""
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
