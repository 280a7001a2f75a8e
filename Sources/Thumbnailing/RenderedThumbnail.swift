// SPDX-License-Identifier: Apache-2.0

/// An encoded thumbnail, ready to send or cache.
package struct RenderedThumbnail: Hashable, Sendable {
    /// The encoded image.
    package let bytes: [UInt8]
    /// The format of `bytes` (what `auto` resolved to).
    package let format: ImageFormat
    /// Output width in pixels.
    package let width: Int
    /// Output height in pixels.
    package let height: Int
    /// The format the source was read as.
    package let sourceFormat: ImageFormat
    /// The quality `max_bytes` settled on; `nil` when the plan has no `max_bytes` or the output is lossless.
    package let quality: Int?
    /// Whether `bytes` are the source's own, passed through unrendered (`raw`, or `skip` listing its format).
    package var isSourceBytes = false
    /// Whether the plan's frame was left out: `frame_optional`, and the image was no usable nine-patch.
    package var isFrameSkipped = false

    /// A thumbnail made of `bytes` (tests and caches rebuild one from stored bytes).
    package init(
        bytes: [UInt8], format: ImageFormat, width: Int, height: Int, sourceFormat: ImageFormat, quality: Int? = nil
    ) {
        self.quality = quality
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
        self.sourceFormat = sourceFormat
    }
}

/// What a source's header says, read without decoding pixels (see `Thumbnailer.probe(_:)`).
package struct ImageProbe: Hashable, Sendable {
    /// The source format.
    package let format: ImageFormat
    /// Width of the upright picture (EXIF orientation applied), one page.
    package let width: Int
    /// Height of the upright picture, one page.
    package let height: Int
    /// EXIF orientation, 1...8 (1 when absent).
    package let orientation: Int
    /// Frames or pages in the file; only the first is ever rendered.
    package let pageCount: Int
    /// Whether the picture has an alpha channel (it may still be fully opaque).
    package let hasAlpha: Bool
    /// Whether it carries an ICC profile (converted to sRGB when rendered).
    package let hasICCProfile: Bool
    /// Channels, alpha included.
    package var bands = 0
    /// Bits per channel as stored.
    package var bitsPerChannel = 8
    /// libvips's name for the colour space: `srgb`, `b-w`, `cmyk`, `rgb16`, `grey16`, ...
    package var colourSpace = ""
    /// EXIF camera make and model, and when it was taken (`DateTimeOriginal`, `YYYY:MM:DD HH:MM:SS`).
    package var cameraMake: String?
    package var cameraModel: String?
    package var takenAt: String?

    /// Pixels of one page: what `Configuration.maxSourcePixels` limits.
    package var pixelCount: Int { width * height }
}
