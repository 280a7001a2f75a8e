// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import Thumbnailing
import URLForms

/// What a request asks of its answer's headers rather than of the picture (``AnswerOptions``: a deadline,
/// `Cache-Control`, `Content-Disposition`). Not part of the variant key: the alias table and the hot set's copy keep
/// them with the request, so a repeated request answered without parsing carries them as a parsed one does.
///
/// A request that asks none of them takes none of these paths: its answer is the usual one, and its hot copy's
/// lines are what they were.
extension ThumbnailService {
    /// Answers 404 (imgproxy's "Expired URL", a JSON body) when the request's deadline has passed at `now`.
    @inline(__always)
    func answerIfExpired(_ answer: AnswerOptions?, now: Timestamp, _ responder: HTTPResponder) -> Bool {
        guard let deadline = answer?.expiresAt, Self.isPast(deadline, at: now) else { return false }
        var response = ErrorResponse(ServiceError.expired).response
        Self.addCacheHeaders(&response, .miss, age: 0)
        responder.respond(response)
        return true
    }

    /// Whether the deadline `seconds` (since the epoch) has passed at `now` (imgproxy: expired when `ts < now`).
    static func isPast(_ seconds: Int64, at now: Timestamp) -> Bool {
        now.millisecondsSinceEpoch >= seconds.multipliedReportingOverflow(by: 1000).partialValue
    }

    /// The seconds left until the deadline `seconds` at `now`, rounded down, never below 0.
    static func secondsLeft(until seconds: Int64, at now: Timestamp) -> Int64 {
        max(0, (seconds &* 1000 &- now.millisecondsSinceEpoch) / 1000)
    }

    /// The answer's `Cache-Control` under `answer`: `no-store` for a variant the origin forbade storing, whatever
    /// was asked; `max_age`'s lifetime in place of `cache.client_max_age` (`no-cache` for 0: the answer may be kept
    /// but must be revalidated, where thumbor would send no header and leave a cache to its heuristics); the
    /// lifetime lowered to the seconds left before the deadline (imgproxy's rule).
    func cacheControl(for answer: AnswerOptions, isStorable: Bool, now: Timestamp) -> String {
        guard isStorable else { return "no-store" }
        var maxAge = Int64(answer.maxAge ?? clientMaxAgeSeconds.load(ordering: .relaxed))
        if answer.maxAge == 0 { return "no-cache" }
        if let deadline = answer.expiresAt { maxAge = min(maxAge, Self.secondsLeft(until: deadline, at: now)) }
        return "public, max-age=\(maxAge)"
    }

    /// The lines an answer under `answer` adds to the usual ones: `Content-Disposition` when a filename or the
    /// attachment flag was asked, its extension the answer's format's; `X-Thumbd-Skipped-Filters` when the parse
    /// skipped thumbor filters; and, with `copyingPrepared` (an answer written without the variant's prepared
    /// fields, unlike a hot copy), the placeholder and source tag lines they hold, the tag line with the request's
    /// operator tags after the source's.
    func answerFields(_ answer: AnswerOptions, variant: RenderedVariant, copyingPrepared: Bool = true) -> [HTTPField] {
        var fields: [HTTPField] = []
        if answer.hasDisposition {
            fields.append(
                HTTPField(
                    name: "Content-Disposition",
                    value: answer.contentDisposition(fileExtension: variant.format.fileExtension)))
        }
        if let skipped = answer.skippedFilters {
            fields.append(HTTPField(name: Self.skippedFiltersField, value: skipped))
        }
        guard copyingPrepared else { return fields }
        if let placeholder = PlaceholderHeaders.value(in: variant.preparedFields) {
            fields.append(HTTPField(name: PlaceholderHeaders.name, value: placeholder))
        }
        if let tag = cache?.sourceTags.field(in: variant.preparedFields, adding: answer.tags ?? []) {
            fields.append(tag)
        }
        return fields
    }

    /// Records the request's operator tags for its source in the purge index (``ThumbnailCache/recordTags(_:for:)``),
    /// so that `POST /purge` by one of them finds the source; nothing without tags.
    func recordTags(of answer: AnswerOptions?, for key: VariantKey) {
        guard let tags = answer?.tags, !tags.isEmpty else { return }
        cache?.recordTags(tags, for: key.source)
    }

    /// The hot copy's freshness for a request with a deadline: it stops being served at the deadline, and at each
    /// whole second before it, when the `max-age` its lines carry would be one second too long; the request then
    /// takes the alias path, which answers afresh (a 404 past the deadline) and copies it again.
    static func hotFreshness(_ freshness: DiskCache.Freshness, deadline: Int64?, now: Timestamp)
        -> DiskCache.Freshness
    {
        guard let deadline else { return freshness }
        let left = secondsLeft(until: deadline, at: now)
        let until = Timestamp(millisecondsSinceEpoch: deadline &* 1000 &- left &* 1000)
        var clamped = freshness
        clamped.expiresAt = min(freshness.expiresAt ?? until, until)
        return clamped
    }
}
