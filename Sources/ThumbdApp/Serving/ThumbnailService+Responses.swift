// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import Thumbnailing
import URLForms

/// The responses of thumbnail requests: 200 with the thumbnail or 304, and the `X-Cache` and `Age` every answer
/// carries.
extension ThumbnailService {
    /// What the request asked that shapes the answer beyond the thumbnail itself.
    struct ResponseConditions: Sendable {
        let ifNoneMatch: String?
        let variesOnAccept: Bool
        /// The client hints the plan consulted (named in `Vary`, with `Accept-CH` sent); nil when hints are not read.
        var clientHints: ClientHints.Used? = nil
        /// What the request asked of the answer's headers (``AnswerOptions``); nil when nothing.
        var answer: AnswerOptions? = nil

        /// The `X-Thumbd-Skipped-Filters` field when the request's parse skipped filters (docs/compatibility.md).
        var skippedFiltersField: HTTPField? {
            answer?.skippedFilters.map { HTTPField(name: ThumbnailService.skippedFiltersField, value: $0) }
        }
    }

    /// The field that names the thumbor filters a request's parse skipped as thumbor does.
    static let skippedFiltersField = "X-Thumbd-Skipped-Filters"

    /// What the request asks of the answer beyond the thumbnail (its answer varies on `Accept` when the format
    /// is negotiated, and on the client hints its plan consulted).
    static func conditions(
        _ request: HTTPRequest, _ key: VariantKey, hints: ClientHints.Used? = nil, answer: AnswerOptions? = nil
    ) -> ResponseConditions {
        ResponseConditions(
            // `raw`'s answer is the source's own format, whatever `Accept` says.
            ifNoneMatch: request.listValue(of: "if-none-match"),
            variesOnAccept: key.spec.format.isAuto && !key.spec.operations.raw,
            clientHints: hints, answer: answer)
    }

    /// 200 with the thumbnail, or 304 when `If-None-Match` names its ETag.
    func thumbnailResponse(
        _ variant: RenderedVariant, body: HTTPResponse.Body, outcome: CacheOutcome, age: Int,
        _ conditions: ResponseConditions
    ) -> HTTPResponse {
        if let answer = conditions.answer {
            return answerResponse(variant, body: body, outcome: outcome, age: age, answer: answer, conditions)
        }
        let cacheControl = variant.isStorable ? cacheControl.withLock { $0 } : "no-store"
        guard conditions.ifNoneMatch == nil, conditions.clientHints == nil else {
            return Self.thumbnailResponse(
                etag: variant.etag, format: variant.format, body: body, outcome: outcome, age: age,
                cacheControl: cacheControl, conditions: conditions)
        }
        // The usual answer: the variant's own fields come serialised, only these vary. Each literal is one
        // allocation filled in place (appending `Vary` to the shorter one would allocate twice).
        let headers =
            conditions.variesOnAccept
            ? [
                HTTPField(name: "Cache-Control", value: cacheControl),
                HTTPField(name: "X-Cache", value: outcome.rawValue),
                HTTPField(name: "Age", value: String(age)), HTTPField(name: "Vary", value: "Accept"),
            ]
            : [
                HTTPField(name: "Cache-Control", value: cacheControl),
                HTTPField(name: "X-Cache", value: outcome.rawValue),
                HTTPField(name: "Age", value: String(age)),
            ]
        return HTTPResponse(
            status: .ok, preparedFields: variant.preparedFields, headers: headers, body: body,
            accessLogNote: outcome.rawValue)
    }

    /// 200 with `body`, or 304 when `If-None-Match` names `etag`. A variant the origin forbade storing is
    /// sent with `Cache-Control: no-store`, so browsers and CDNs do not keep it either.
    static func thumbnailResponse(
        etag: String, format: ImageFormat, body: HTTPResponse.Body, outcome: CacheOutcome, age: Int,
        cacheControl: String, conditions: ResponseConditions, extraFields: [HTTPField] = []
    ) -> HTTPResponse {
        var headers = [
            HTTPField(name: "ETag", value: etag),
            HTTPField(name: "Cache-Control", value: cacheControl),
            HTTPField(name: "X-Cache", value: outcome.rawValue),
            HTTPField(name: "Age", value: String(age)),
        ]
        headers += ClientHints.responseFields(variesOnAccept: conditions.variesOnAccept, used: conditions.clientHints)
        if let ifNoneMatch = conditions.ifNoneMatch, EntityTag.matches(ifNoneMatch, etag: etag) {
            return HTTPResponse(status: .notModified, headers: headers, accessLogNote: outcome.rawValue)
        }
        headers.insert(HTTPField(name: "Content-Type", value: format.mimeType), at: 0)
        // As the variant's prepared fields say them (RenderedVariant.preparedFields).
        headers += RenderedVariant.fields(markedIn: etag)
        headers += extraFields
        return HTTPResponse(status: .ok, headers: headers, body: body, accessLogNote: outcome.rawValue)
    }

    /// ``thumbnailResponse(_:body:outcome:age:_:)`` for a request that asked something of its answer's headers
    /// (``AnswerOptions``): its `Cache-Control` and `Content-Disposition`.
    @inline(never)
    private func answerResponse(
        _ variant: RenderedVariant, body: HTTPResponse.Body, outcome: CacheOutcome, age: Int, answer: AnswerOptions,
        _ conditions: ResponseConditions
    ) -> HTTPResponse {
        Self.thumbnailResponse(
            etag: variant.etag, format: variant.format, body: body, outcome: outcome, age: age,
            cacheControl: cacheControl(for: answer, isStorable: variant.isStorable, now: Timestamp.now()),
            conditions: conditions,
            extraFields: answerFields(answer, variant: variant))
    }

    static func addCacheHeaders(_ response: inout HTTPResponse, _ outcome: CacheOutcome, age: Int) {
        response.headers.append(HTTPField(name: "X-Cache", value: outcome.rawValue))
        response.headers.append(HTTPField(name: "Age", value: String(age)))
        response.accessLogNote = outcome.rawValue
    }
}
