// SPDX-License-Identifier: Apache-2.0

/// Why a source could not be turned into a thumbnail. No HTTP here: `ThumbdApp/ErrorResponses.swift` maps
/// each case to a status.
///
/// libvips has one process-wide error buffer, so the case is decided by the step that failed, never by the
/// text; the `String` payloads are libvips's messages, meant for logs only (they may even contain a message
/// from a concurrent job).
package enum ThumbnailError: Error, Hashable, Sendable {
    /// No allowed or known image loader recognises the bytes (HTML, text, an empty body, ...).
    case notAnImage
    /// The bytes are an image format thumbd refuses (SVG, PDF, BMP through ImageMagick, ...) or one the
    /// configuration does not allow. The payload names it, e.g. `"svg"`, `"magick"`, `"tiff"`.
    case unsupportedFormat(String)
    /// The header announces more pixels than `Configuration.maxSourcePixels`; nothing was decoded.
    case tooManyPixels(width: Int, height: Int)
    /// The header or the pixel data is corrupt or truncated.
    case decodeFailed(String)
    /// Resizing, rotating or cropping failed on pixels that decoded.
    case renderFailed(String)
    /// The encoder failed.
    case encodeFailed(String)
    /// The plan's crop region lies entirely outside the (oriented, trimmed) picture.
    case cropOutsidePicture
    /// The output canvas (box plus padding, times the frames of an animation) has more pixels than
    /// `Configuration.maxSourcePixels`, or a side longer than its format holds (`fit=outside` on a long source).
    case canvasTooLarge
    /// An animation to render animated has more frames than `Configuration.maxFrames` (nothing decoded).
    case tooManyFrames
    /// The watermark image is not an allowed image, is damaged, or has more pixels than the limit.
    case watermarkUnusable
    /// The frame is not an allowed image, is damaged, is smaller than 3×3 or larger than 2048×2048 px, or has no
    /// nine-patch stretch markers.
    case frameUnusable
    /// The plan has a step that cannot run on an animation (`trim`); `animated=0` renders the first frame.
    case notAnimatable(String)
    /// The spec asks explicitly for a format this process cannot or may not write (for example AVIF when
    /// libheif has no AV1 encoder, or a format outside `Configuration.allowedOutputFormats`).
    case outputFormatUnavailable(ImageFormat)
    /// The plan needs the source's detections (`redact`, named by the payload) and the render has none: detection is
    /// off (`image.faces`) or unavailable. Never answered with the picture as it is, which would show what it hides.
    case detectionUnavailable(String)
    /// The decoder sandbox's helper refused the source or died decoding it (a crash, its memory or CPU limit, the
    /// seccomp filter); the payload says how, for logs.
    case sandboxFailed(String)
    /// The decoder sandbox's helper did not answer within `image.sandbox_deadline`; it was killed.
    case sandboxTimedOut
    /// No decoder sandbox helper could be started (the payload says why, for logs).
    case sandboxUnavailable(String)
    /// The plan's `page` is past the source's last page: `pages` of them (1 for a source other than a PDF).
    case noSuchPage(page: Int, pages: Int)
}

/// Why a `ThumbnailSpec` could not be built. `field` names the spec property; the request layer maps it to
/// its own parameter name.
package struct SpecError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `ThumbnailSpec` property at fault: `width`, `height`, `quality` or `format`.
    package let field: String
    /// What is wrong with it, for a 400 message.
    package let reason: String

    /// An error about `field`, explained by `reason`.
    package init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `field: reason`.
    package var description: String { "\(field): \(reason)" }
}

/// An invalid `Thumbnailer.Configuration` value, found by `validate()` before anything starts.
package struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `Thumbnailer.Configuration` property at fault, e.g. `maxSourcePixels`.
    package let key: String
    /// What is wrong with it.
    package let reason: String

    /// An error about `key`, explained by `reason`.
    package init(key: String, reason: String) {
        self.key = key
        self.reason = reason
    }

    /// `key: reason`.
    package var description: String { "\(key): \(reason)" }
}

/// libvips could not be started.
package struct VipsInitializationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// libvips's error text.
    package let detail: String

    /// The failure with libvips's detail.
    package var description: String { "libvips initialisation failed: \(detail)" }
}

/// Why a `FaceDetector` could not be made or could not detect. No HTTP here (`ThumbdApp` decides what a failed
/// analysis means: a plan falls back to attention or the centre).
package enum FaceDetectorError: Error, Hashable, Sendable {
    /// A number of `FaceDetector.Configuration` is out of range; the payload says which.
    case invalidConfiguration(String)
    /// The cascade file is missing, unreadable or not an OpenCV cascade (`detail`: OpenCV's or the shim's text).
    case cascadeUnreadable(path: String, detail: String)
    /// The grey pixels could not be made, or OpenCV failed (its message, for logs).
    case detectionFailed(String)
}
