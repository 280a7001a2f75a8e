// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Thumbnailing
import URLForms

/// Every way a thumbnail request can fail, by layer. The payload keeps the whole cause for the log.
enum ServiceError: Error, Sendable {
    case request(RequestError)
    case fetch(FetchError)
    case thumbnail(ThumbnailError)
    /// The watermark named by a URL could not be fetched.
    case watermark(FetchError)
    /// The frame (thumbor's nine-patch) named by a URL could not be fetched.
    case frame(FetchError)
    /// The render queue is full: answer 503 with Retry-After rather than queue without bound.
    case renderQueueFull
    /// The service is stopping and no longer starts work.
    case shuttingDown
    /// The disk-tier lookup queue is full (the disk is slower than the request rate): 503, rather than
    /// render again what is on disk.
    case cacheQueueFull
    /// The URL's deadline (imgproxy's `expires`, `/thumb`'s `expires`) has passed: 404, as imgproxy answers.
    case expired
}
