// SPDX-License-Identifier: Apache-2.0
import Caching
import Foundation
import HTTP1
import OriginFetch
import Thumbnailing

/// `image.fallback`: a picture sent instead of the JSON error when the *source* fails (docs/api.md, "Fallback
/// image"), rendered with the request's own plan (size, fit, format, steps), so that a broken source in a grid of
/// 200 px WebP thumbnails shows as one more 200 px WebP thumbnail.
///
/// Loaded and checked when the configuration is (start, reload): the file must be an image this process renders
/// (a trial render of a small thumbnail), no larger than `fetch.max_source_bytes` nor `image.max_source_pixels`. A
/// bad file is a configuration error naming `image.fallback`, so a typo is seen at once, not at the first broken
/// source.
struct FallbackImage: Sendable, Equatable {
    /// The file's bytes, rendered like any source.
    let bytes: [UInt8]
    /// `XXH64` of the bytes, in hex: names this content in the renders' keys.
    let contentHash: String
    /// The stand-in source of its renders' keys (`https://fallback.thumbd.invalid/<hash>`): never a real URL, so a
    /// render of the fallback can never be taken for a source's.
    let source: SourceURL
    /// The answer's status: nil for the error's own.
    let status: HTTPStatus?
    /// `Cache-Control` of its answers: `public, max-age=<image.fallback_ttl>`.
    let cacheControl: String

    /// Why a fallback file was refused.
    struct LoadError: Error, Sendable, CustomStringConvertible {
        let description: String
    }

    /// Reads `path` and checks that `thumbnailer` renders it. Blocking (file read and a render): the main thread
    /// at start or reload, never an event loop.
    /// - Parameters:
    ///   - status: a fixed status (200, 400...599), or nil for the error's own.
    ///   - maxBytes: the largest file accepted (`fetch.max_source_bytes`).
    /// - Throws: ``LoadError`` saying what is wrong with the file.
    init(
        path: String, status: Int?, ttl: Duration, maxBytes: Int, thumbnailer: Thumbnailer
    ) throws(LoadError) {
        let size: Int
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            guard attributes[.type] as? FileAttributeType == .typeRegular else {
                throw LoadError(description: "\(path) is not a regular file")
            }
            size = (attributes[.size] as? NSNumber)?.intValue ?? 0
        } catch let error as LoadError {
            throw error
        } catch {
            throw LoadError(description: "cannot read \(path): \(error.localizedDescription)")
        }
        guard size <= maxBytes else {
            throw LoadError(description: "\(path) has \(size) bytes, more than fetch.max_source_bytes (\(maxBytes))")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count <= maxBytes else {
            throw LoadError(description: "cannot read \(path)")
        }
        let bytes = [UInt8](data)
        guard let trialSpec = Self.trialSpec else { throw LoadError(description: "internal: no trial spec") }
        do {
            // A whole render, not only the header: a truncated or damaged file fails here, not for a client.
            _ = try thumbnailer.render(bytes, spec: trialSpec)
        } catch {
            throw LoadError(
                description: "\(path) is not an image thumbd can render: \(ErrorResponse(error).publicMessage)")
        }
        let hash = String(XXHash64.hash(bytes, seed: 0), radix: 16)
        guard let source = try? SourceURL("https://fallback.thumbd.invalid/\(hash)") else {
            throw LoadError(description: "internal: no stand-in source for \(path)")
        }
        self.bytes = bytes
        contentHash = hash
        self.source = source
        self.status = status.map { HTTPStatus(code: $0) }
        cacheControl = "public, max-age=\(ttl.components.seconds)"
    }

    /// The trial render: a 16 px PNG.
    private static let trialSpec = try? ThumbnailSpec(width: 16, height: 16, format: .exactly(.png))

    static func == (lhs: FallbackImage, rhs: FallbackImage) -> Bool {
        lhs.contentHash == rhs.contentHash && lhs.bytes == rhs.bytes && lhs.status == rhs.status
            && lhs.cacheControl == rhs.cacheControl
    }

    /// Whether an error is the source's fault, so that the fallback replaces it: the origin has no such image
    /// (404), it is too large (413), not an image, damaged or over the pixel limit (422), the origin failed or
    /// could not be reached (502), or took too long (504). Never a refusal of the request itself (400, 403: the
    /// client must see what it got wrong), nor overload or shutdown (503: a retry will do), nor a failure of
    /// thumbd's own (500), nor a plan that does not fit the source (a crop outside it, a canvas too large, a trim
    /// on an animation), nor the watermark's failures. A source with too many frames is the source's fault.
    /// Exhaustive, like ErrorResponses.swift: a new error case must decide.
    static func replaces(_ error: ServiceError) -> Bool {
        switch error {
        case .request: false
        case .fetch(let error):
            switch error {
            case .originNotFound, .originClientError, .originServerError, .unexpectedStatus, .connectionRefused,
                .dnsFailure, .tlsFailure, .connectionFailed, .redirectLoop, .tooManyRedirects, .invalidURL, .timedOut,
                .tooLarge:
                true
            case .addressForbidden, .schemeForbidden, .hostForbidden, .cancelled, .internalFailure: false
            }
        case .thumbnail(let error):
            switch error {
            case .notAnImage, .unsupportedFormat, .tooManyPixels, .decodeFailed, .tooManyFrames, .sandboxFailed,
                .sandboxTimedOut:
                true
            case .sandboxUnavailable, .cropOutsidePicture, .canvasTooLarge, .renderFailed, .encodeFailed,
                .outputFormatUnavailable,
                .notAnimatable, .watermarkUnusable, .frameUnusable, .detectionUnavailable, .noSuchPage:
                false
            }
        // The watermark's or the frame's fault, not the source's: the fallback would hide what the request got wrong.
        case .watermark, .frame: false
        case .renderQueueFull, .shuttingDown, .cacheQueueFull: false
        // The URL's own deadline: it names nothing any longer.
        case .expired: false
        }
    }
}
