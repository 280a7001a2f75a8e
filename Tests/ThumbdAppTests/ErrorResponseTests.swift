// SPDX-License-Identifier: Apache-2.0
import HTTP1
import OriginFetch
import Testing
import Thumbnailing

@testable import ThumbdApp
@testable import URLForms

/// The one error → status mapping (STYLE.md §6), as a table listing every case of every error type.
///
/// The fetch table is checked against `FetchError.Kind.allCases`, so a new fetch error fails this test until
/// it is listed here; the switches in ErrorResponses.swift have no `default:`, so it would not even compile
/// without a status.
@Suite struct ErrorResponseTests {
    /// Details that must never reach a client (addresses, libcurl and libvips messages).
    static let secret = "SECRET-DETAIL 10.0.0.7"

    static let fetchErrors: [(error: FetchError, status: Int)] = [
        (.originNotFound(status: 404), 404),
        (.originNotFound(status: 410), 404),
        (.originClientError(status: 403), 404),
        (.originClientError(status: 451), 404),
        (.originServerError(status: 500), 502),
        (.originServerError(status: 503), 502),
        (.unexpectedStatus(status: 304), 502),
        (.connectionRefused(detail: secret), 502),
        (.dnsFailure(detail: secret), 502),
        (.tlsFailure(detail: secret), 502),
        (.connectionFailed(detail: secret), 502),
        (.redirectLoop(url: "http://\(secret)/"), 502),
        (.tooManyRedirects(limit: 5), 502),
        (.timedOut(detail: secret), 504),
        (.addressForbidden(address: secret, range: .loopback), 403),
        (.schemeForbidden(scheme: "file"), 403),
        (.hostForbidden(host: secret), 403),
        (.invalidURL(detail: secret), 502),  // only a redirect target can be invalid by then
        (.tooLarge(limit: 25_000_000), 413),
        (.cancelled, 503),
        (.internalFailure(detail: secret), 500),
    ]

    static let thumbnailErrors: [(error: ThumbnailError, status: Int)] = [
        (.notAnImage, 422),
        (.unsupportedFormat("svg"), 422),
        (.tooManyPixels(width: 30_000, height: 30_000), 422),
        (.decodeFailed(secret), 422),
        (.renderFailed(secret), 500),
        (.encodeFailed(secret), 500),
        (.outputFormatUnavailable(.avif), 400),
        (.cropOutsidePicture, 422),
        (.canvasTooLarge, 422),
        (.tooManyFrames, 422),
        (.watermarkUnusable, 422),
        (.notAnimatable("trim"), 422),
        (.detectionUnavailable("redact"), 503),
    ]

    static let requestErrors: [(error: RequestError, status: Int)] = [
        (.missingParameter("url"), 400),
        (.unknownParameter("width"), 400),
        (.duplicateParameter("w"), 400),
        (.invalidValue("q", reason: "must be an integer 1...100"), 400),
        (.malformedQuery(parameter: "w"), 400),
        (.onlyPresetsAllowed("w"), 400),
        (.missingSignature, 403),
        (.invalidSignature, 403),
    ]

    static let serviceErrors: [(error: ServiceError, status: Int)] =
        fetchErrors.map { (.fetch($0.error), $0.status) }
        + thumbnailErrors.map { (.thumbnail($0.error), $0.status) }
        + requestErrors.map { (.request($0.error), $0.status) }
        + [(.renderQueueFull, 503), (.shuttingDown, 503), (.expired, 404)]
        // A watermark URL's failures are the watermark's: refused 403, too large 413, cancelled 503, else 502.
        + [
            (.watermark(.addressForbidden(address: secret, range: .loopback)), 403),
            (.watermark(.tooLarge(limit: 1)), 413), (.watermark(.cancelled), 503),
            (.watermark(.originNotFound(status: 404)), 502), (.watermark(.timedOut(detail: secret)), 502),
        ]
        // A frame URL's likewise, as the frame's.
        + [
            (.frame(.addressForbidden(address: secret, range: .loopback)), 403), (.frame(.tooLarge(limit: 1)), 413),
            (.frame(.cancelled), 503), (.frame(.originNotFound(status: 404)), 502),
        ]

    @Test func aFramesFetchFailureNamesTheFrame() {
        #expect(ErrorResponse(.frame(.originNotFound(status: 404))).publicMessage == "frame unavailable")
        #expect(ErrorResponse(.frame(.tooLarge(limit: 1))).publicMessage == "frame too large")
        #expect(ErrorResponse(.watermark(.tooLarge(limit: 1))).publicMessage == "watermark too large")
    }

    @Test func everyFetchErrorKindIsListed() {
        #expect(Set(Self.fetchErrors.map(\.error.kind)) == Set(FetchError.Kind.allCases))
    }

    @Test(arguments: serviceErrors)
    func errorHasItsStatusAndAPublicJSONBody(_ error: ServiceError, status: Int) throws {
        // When the error is turned into a response
        let mapped = ErrorResponse(error)
        let response = mapped.response

        // Then the status is the table's, the body is JSON naming the same status, and no internal detail leaks
        #expect(mapped.status.code == status)
        #expect(response.status.code == status)
        guard case .bytes(let body) = response.body else {
            Issue.record("no body")
            return
        }
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.hasPrefix("{\"status\": \(status), \"error\": \""))
        #expect(!text.contains("SECRET") && !text.contains("10.0.0.7"))
        #expect(!mapped.publicMessage.isEmpty)
        #expect(response.headers.contains(HTTPField(name: "Content-Type", value: "application/json")))
        #expect(response.headers.contains(HTTPField(name: "Cache-Control", value: "no-store")))

        // And 503s, and only they, ask the client to retry after a second
        let retryAfter = response.headers.first { $0.name == "Retry-After" }?.value
        #expect(retryAfter == (status == 503 ? "1" : nil))
    }

    @Test func serverFailuresAreLoggedAsErrorsAndClientMistakesQuietly() {
        #expect(ErrorResponse(.fetch(.internalFailure(detail: ""))).logLevel == .error)
        #expect(ErrorResponse(.thumbnail(.renderFailed(""))).logLevel == .error)
        #expect(ErrorResponse(.request(.missingParameter("url"))).logLevel == .debug)
        #expect(ErrorResponse(.fetch(.originServerError(status: 500))).logLevel == .warning)
    }
}
