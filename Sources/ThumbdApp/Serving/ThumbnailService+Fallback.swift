// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Thumbnailing
import URLForms

/// Answers with the fallback image (`image.fallback`, ``FallbackImage``) instead of the error body when the source
/// failed: the fallback rendered with the request's plan, with the error's status (or `image.fallback_status`),
/// `Cache-Control: public, max-age=<image.fallback_ttl>`, `X-Cache: FALLBACK` and `X-Thumbd-Fallback` naming the
/// error it replaces. Never stored: the source's next request asks the origin again (docs/api.md, "Fallback
/// image").
extension ThumbnailService {
    /// Starts an answer with the fallback for `error` when it is the source's fault and a fallback is configured;
    /// returns false (nothing answered) otherwise. If the fallback cannot be rendered with this plan (a crop outside
    /// it, a full render queue), the error itself is answered, as without a fallback.
    /// - Parameter outcome: the `X-Cache` the error would have had (kept for that case).
    func answerWithFallback(
        for error: ServiceError, key: VariantKey, outcome: CacheOutcome, _ conditions: ResponseConditions,
        _ responder: HTTPResponder
    ) -> Bool {
        guard let fallback, FallbackImage.replaces(error) else { return false }
        let errorResponse = ErrorResponse(error)
        return fallback.render(key.spec) { [self] result in
            switch result {
            case .success(let rendered):
                responder.respond(Self.fallbackResponse(rendered, replacing: errorResponse, conditions))
            case .failure(let renderError):
                logger.warning(
                    "fallback image not rendered; the error is answered",
                    metadata: ["source": "\(key.source)", "error": "\(renderError)"])
                var response = errorResponse.response
                Self.addCacheHeaders(&response, outcome, age: 0)
                responder.respond(response)
            }
        }
    }

    /// The fallback `rendered` in place of `error`: its status (the error's, or the configured one), its own
    /// `Cache-Control`, `X-Cache: FALLBACK`, `X-Thumbd-Fallback: <status> <reason>`, and `Vary` (and `Accept-CH`) as a
    /// thumbnail of this plan has. No `ETag`: it is not the representation of the URL, only a stand-in.
    static func fallbackResponse(
        _ rendered: FallbackRenders.Rendered, replacing error: ErrorResponse, _ conditions: ResponseConditions
    ) -> HTTPResponse {
        var headers = [
            HTTPField(name: "Content-Type", value: rendered.variant.format.mimeType),
            HTTPField(name: "Cache-Control", value: rendered.image.cacheControl),
            HTTPField(name: "X-Cache", value: CacheOutcome.fallback.rawValue),
            HTTPField(name: "X-Thumbd-Fallback", value: "\(error.status.code) \(error.publicMessage)"),
            HTTPField(name: "Age", value: "0"),
        ]
        headers += ClientHints.responseFields(variesOnAccept: conditions.variesOnAccept, used: conditions.clientHints)
        if let skipped = conditions.skippedFiltersField { headers.append(skipped) }
        return HTTPResponse(
            status: rendered.image.status ?? error.status, headers: headers, body: .bytes(rendered.variant.bytes),
            accessLogNote: CacheOutcome.fallback.rawValue)
    }
}
