// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Logging
import OriginFetch
import Thumbnailing
import URLForms

/// The one place that turns an error into an HTTP status (STYLE.md §6).
///
/// Every switch is exhaustive with no `default:`, so a new error case does not compile until it
/// has a status. Clients see only `publicMessage`; the log gets the whole error.
struct ErrorResponse: Equatable, Sendable {
    let status: HTTPStatus
    let publicMessage: String
    let logLevel: Logger.Level
    /// Seconds for `Retry-After` (503 answers only).
    var retryAfterSeconds: Int? = nil

    /// The JSON error response: `{"status": 404, "error": "..."}`.
    var response: HTTPResponse {
        var response = HTTPResponse.error(status, message: publicMessage)
        if let retryAfterSeconds {
            response.headers.append(HTTPField(name: "Retry-After", value: String(retryAfterSeconds)))
        }
        return response
    }
}

extension ErrorResponse {
    private static let badRequest = HTTPStatus(code: 400, reasonPhrase: "Bad Request")
    private static let forbidden = HTTPStatus(code: 403, reasonPhrase: "Forbidden")
    private static let notFound = HTTPStatus(code: 404, reasonPhrase: "Not Found")
    private static let contentTooLarge = HTTPStatus(code: 413, reasonPhrase: "Content Too Large")
    private static let unprocessable = HTTPStatus(code: 422, reasonPhrase: "Unprocessable Content")
    private static let internalError = HTTPStatus(code: 500, reasonPhrase: "Internal Server Error")
    private static let badGateway = HTTPStatus(code: 502, reasonPhrase: "Bad Gateway")
    private static let unavailable = HTTPStatus(code: 503, reasonPhrase: "Service Unavailable")
    private static let gatewayTimeout = HTTPStatus(code: 504, reasonPhrase: "Gateway Timeout")

    init(_ error: RequestError) {
        switch error {
        case .missingParameter, .unknownParameter, .duplicateParameter, .invalidValue, .malformedQuery,
            .onlyPresetsAllowed, .unsupportedOption, .malformedPath:
            self.init(status: Self.badRequest, publicMessage: error.publicMessage, logLevel: .debug)
        case .missingSignature, .invalidSignature:
            self.init(status: Self.forbidden, publicMessage: error.publicMessage, logLevel: .info)
        }
    }

    init(_ error: FetchError) {
        switch error {
        case .originNotFound, .originClientError:
            self.init(status: Self.notFound, publicMessage: "source not found", logLevel: .info)
        case .originServerError, .unexpectedStatus:
            self.init(status: Self.badGateway, publicMessage: "source failed", logLevel: .warning)
        case .connectionRefused, .dnsFailure, .tlsFailure, .connectionFailed:
            self.init(status: Self.badGateway, publicMessage: "source unreachable", logLevel: .warning)
        case .redirectLoop, .tooManyRedirects:
            self.init(status: Self.badGateway, publicMessage: "source redirects too much", logLevel: .warning)
        case .timedOut:
            self.init(status: Self.gatewayTimeout, publicMessage: "source timed out", logLevel: .warning)
        case .addressForbidden, .schemeForbidden, .hostForbidden:
            self.init(status: Self.forbidden, publicMessage: "source not allowed", logLevel: .warning)
        case .invalidURL:
            // The request's own url was parsed (with the same parser) before anything was fetched, so an
            // invalid URL here is a redirect target the origin sent (credentials, junk): the origin's fault.
            self.init(status: Self.badGateway, publicMessage: "source redirects to an invalid url", logLevel: .warning)
        case .tooLarge:
            self.init(status: Self.contentTooLarge, publicMessage: "source too large", logLevel: .info)
        case .cancelled:
            self.init(
                status: Self.unavailable, publicMessage: "shutting down", logLevel: .info, retryAfterSeconds: 1)
        case .internalFailure:
            self.init(status: Self.internalError, publicMessage: "fetch failed", logLevel: .error)
        }
    }

    init(_ error: ThumbnailError) {
        switch error {
        case .notAnImage:
            self.init(status: Self.unprocessable, publicMessage: "source is not an image", logLevel: .info)
        case .unsupportedFormat:
            self.init(status: Self.unprocessable, publicMessage: "source format not supported", logLevel: .info)
        case .tooManyPixels:
            self.init(status: Self.unprocessable, publicMessage: "source has too many pixels", logLevel: .info)
        case .decodeFailed:
            self.init(status: Self.unprocessable, publicMessage: "source image is damaged", logLevel: .info)
        case .cropOutsidePicture:
            self.init(status: Self.unprocessable, publicMessage: "crop region lies outside the image", logLevel: .info)
        case .canvasTooLarge:
            self.init(status: Self.unprocessable, publicMessage: "output has too many pixels", logLevel: .info)
        case .watermarkUnusable:
            self.init(status: Self.unprocessable, publicMessage: "watermark image is not usable", logLevel: .info)
        case .frameUnusable:
            self.init(
                status: Self.unprocessable,
                publicMessage: "frame image is not a usable nine-patch (3x3 to 2048x2048 px, black stretch markers)",
                logLevel: .info)
        case .tooManyFrames:
            self.init(status: Self.unprocessable, publicMessage: "source has too many frames", logLevel: .info)
        case .notAnimatable:
            self.init(
                status: Self.unprocessable, publicMessage: "trim cannot run on an animation (add animated=0)",
                logLevel: .info)
        case .renderFailed, .encodeFailed:
            self.init(status: Self.internalError, publicMessage: "rendering failed", logLevel: .error)
        case .outputFormatUnavailable(.heif):
            // Off unless the operator opts in (HEVC's patents): the answer names the setting.
            self.init(
                status: Self.badRequest, publicMessage: "invalid format: heic output is off (image.heic_output)",
                logLevel: .debug)
        case .outputFormatUnavailable:
            self.init(status: Self.badRequest, publicMessage: "invalid format: not available here", logLevel: .debug)
        case .detectionUnavailable(let operation):
            // Never the picture unredacted; a 503 as every one here, with its Retry-After (a reload may turn it on).
            self.init(
                status: Self.unavailable, publicMessage: "\(operation): face detection is off (image.faces)",
                logLevel: .warning, retryAfterSeconds: 1)
        case .sandboxFailed:
            // A helper that refused or died: the source's fault (it is what the helper was decoding), never cached.
            self.init(status: Self.unprocessable, publicMessage: "source could not be decoded", logLevel: .info)
        case .noSuchPage(let page, let pages):
            self.init(
                status: Self.unprocessable,
                publicMessage: "invalid page: \(page) is past the last page of the source (\(pages) "
                    + (pages == 1 ? "page" : "pages") + "; page counts from 1 and picks a page of a PDF only)",
                logLevel: .info)
        case .sandboxTimedOut:
            self.init(status: Self.gatewayTimeout, publicMessage: "source took too long to decode", logLevel: .warning)
        case .sandboxUnavailable:
            self.init(
                status: Self.unavailable, publicMessage: "decoder unavailable, retry shortly", logLevel: .error,
                retryAfterSeconds: 1)
        }
    }

    /// An image laid over the output (`what`: a watermark, a frame) could not be fetched. The picture may be fine;
    /// the client learns that this image is at fault, not why.
    private init(overlay what: String, _ error: FetchError) {
        switch error {
        case .addressForbidden, .schemeForbidden, .hostForbidden:
            self.init(status: Self.forbidden, publicMessage: "\(what) not allowed", logLevel: .warning)
        case .tooLarge:
            self.init(status: Self.contentTooLarge, publicMessage: "\(what) too large", logLevel: .info)
        case .cancelled:
            self.init(status: Self.unavailable, publicMessage: "shutting down", logLevel: .info, retryAfterSeconds: 1)
        default:
            self.init(status: Self.badGateway, publicMessage: "\(what) unavailable", logLevel: .warning)
        }
    }

    init(_ error: ServiceError) {
        switch error {
        case .request(let error): self.init(error)
        case .fetch(let error): self.init(error)
        case .thumbnail(let error): self.init(error)
        case .watermark(let error): self.init(overlay: "watermark", error)
        case .frame(let error): self.init(overlay: "frame", error)
        case .renderQueueFull:
            self.init(
                status: Self.unavailable, publicMessage: "too busy, retry shortly", logLevel: .warning,
                retryAfterSeconds: 1)
        case .shuttingDown:
            self.init(
                status: Self.unavailable, publicMessage: "shutting down", logLevel: .info, retryAfterSeconds: 1)
        case .cacheQueueFull:
            self.init(
                status: Self.unavailable, publicMessage: "too busy, retry shortly", logLevel: .warning,
                retryAfterSeconds: 1)
        case .expired:
            self.init(status: Self.notFound, publicMessage: "expired URL", logLevel: .debug)
        }
    }
}
