// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Logging
import OriginFetch
import Thumbnailing

/// Answers `GET|HEAD /thumb`: validates the request, then hands it to the render coordinator and
/// answers from whatever thread the result arrives on (the responder hops to the connection's loop).
///
/// Runs on an HTTP event loop and never blocks there: parsing is pure, and fetching and rendering
/// happen on the fetch thread and the render workers.
final class ThumbnailService: Sendable {
    private let coordinator: RenderCoordinator
    private let thumbnailer: Thumbnailer
    private let cacheControl: String
    private let logger: Logger

    init(coordinator: RenderCoordinator, thumbnailer: Thumbnailer, clientMaxAge: Duration, logger: Logger) {
        self.coordinator = coordinator
        self.thumbnailer = thumbnailer
        cacheControl = "public, max-age=\(clientMaxAge.components.seconds)"
        self.logger = logger
    }

    /// The route handler for `/thumb`.
    func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        let thumbnailRequest: ThumbnailRequest
        do {
            thumbnailRequest = try ThumbnailRequest(
                rawQuery: request.query ?? "", accept: Self.listValue(request.headers.values(for: "accept")))
        } catch {
            responder.respond(ErrorResponse(error).response)
            return
        }
        let key = VariantKey(source: thumbnailRequest.source, spec: thumbnailer.normalized(thumbnailRequest.spec))
        // An explicit format this process cannot write (AVIF without an encoder, or turned off) fails every
        // render: refuse it now rather than after fetching the source for nothing.
        do {
            _ = try thumbnailer.outputFormats(for: key.spec.format)
        } catch {
            responder.respond(ErrorResponse(error).response)
            return
        }
        let conditions = ResponseConditions(
            ifNoneMatch: Self.listValue(request.headers.values(for: "if-none-match")),
            variesOnAccept: thumbnailRequest.variesOnAccept)
        let (ticket, _) = coordinator.request(key, priority: .interactive) { [self] result, admission in
            responder.respond(response(for: result, key: key, admission: admission, conditions: conditions))
        }
        let coordinator = self.coordinator
        responder.onClientGone { coordinator.leave(ticket) }
    }

    /// A list-valued header (Accept, If-None-Match) sent on several lines means the lines joined with commas
    /// (RFC 9110 §5.3): reading only the first would miss `image/webp` on a second Accept line.
    static func listValue(_ lines: [String]) -> String? {
        lines.isEmpty ? nil : lines.joined(separator: ", ")
    }

    /// What the request asked that shapes the answer beyond the thumbnail itself.
    struct ResponseConditions: Sendable {
        let ifNoneMatch: String?
        let variesOnAccept: Bool
    }

    private func response(
        for result: Result<RenderedVariant, ServiceError>, key: VariantKey,
        admission: RenderCoordinator.Admission, conditions: ResponseConditions
    ) -> HTTPResponse {
        let outcome = admission == .started ? "MISS" : "COALESCED"
        switch result {
        case .success(let variant):
            return Self.thumbnailResponse(
                variant, outcome: outcome, cacheControl: cacheControl, conditions: conditions)
        case .failure(let error):
            let errorResponse = ErrorResponse(error)
            logger.log(
                level: errorResponse.logLevel, "thumbnail failed",
                metadata: [
                    "status": "\(errorResponse.status.code)", "source": "\(key.source)", "error": "\(error)",
                ])
            var response = errorResponse.response
            response.headers.append(HTTPField(name: "X-Cache", value: outcome))
            response.accessLogNote = outcome
            return response
        }
    }

    /// 200 with the thumbnail, or 304 when `If-None-Match` names its ETag.
    static func thumbnailResponse(
        _ variant: RenderedVariant, outcome: String, cacheControl: String, conditions: ResponseConditions
    ) -> HTTPResponse {
        var headers = [
            HTTPField(name: "ETag", value: variant.etag),
            HTTPField(name: "Cache-Control", value: cacheControl),
            HTTPField(name: "X-Cache", value: outcome),
        ]
        if conditions.variesOnAccept { headers.append(HTTPField(name: "Vary", value: "Accept")) }
        if let ifNoneMatch = conditions.ifNoneMatch, EntityTag.matches(ifNoneMatch, etag: variant.etag) {
            return HTTPResponse(status: .notModified, headers: headers, accessLogNote: outcome)
        }
        headers.insert(HTTPField(name: "Content-Type", value: variant.format.mimeType), at: 0)
        return HTTPResponse(status: .ok, headers: headers, body: .bytes(variant.bytes), accessLogNote: outcome)
    }
}

/// `If-None-Match` evaluation (RFC 9110 §13.1.2): weak comparison, a list of tags or `*`.
enum EntityTag {
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        let opaque = etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
        for candidate in ifNoneMatch.split(separator: ",") {
            let trimmed = Substring(String(candidate).trimmingSpaces)
            if trimmed == "*" { return true }
            let candidateOpaque = trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
            if candidateOpaque == opaque { return true }
        }
        return false
    }
}
