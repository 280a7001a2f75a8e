// SPDX-License-Identifier: Apache-2.0
import CVipsShims
import Synchronization

/// An 8-bit colour, for pixel checks with a tolerance (encoders are lossy: never compare bytes).
package struct RGB: Hashable, Sendable, CustomStringConvertible {
    /// Red, 0...255.
    package var red: UInt8
    /// Green, 0...255.
    package var green: UInt8
    /// Blue, 0...255.
    package var blue: UInt8

    /// The colour (red, green, blue).
    package init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// The largest per-channel difference.
    package func distance(to other: RGB) -> Int {
        max(abs(Int(red) - Int(other.red)), abs(Int(green) - Int(other.green)), abs(Int(blue) - Int(other.blue)))
    }

    /// Whether every channel is within `tolerance` of `other`.
    package func isClose(to other: RGB, tolerance: Int = 24) -> Bool {
        distance(to: other) <= tolerance
    }

    /// `rgb(r, g, b)`.
    package var description: String { "rgb(\(red), \(green), \(blue))" }
}

/// An encoded image decoded by libvips (first page), to check a thumbnail's format, size, metadata and
/// pixels. Decoding uses the same libvips as production, through the shim's test decoder.
package struct DecodedImage: Sendable {
    /// Media type of the encoding, e.g. `image/avif`.
    package let mimeType: String
    /// Width in pixels.
    package let width: Int
    /// Height in pixels (of the first page).
    package let height: Int
    /// 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA.
    package let bands: Int
    /// Pages/frames in the file (1 for a still image).
    package let pageCount: Int
    /// Whether EXIF data is present.
    package let hasEXIF: Bool
    /// Whether XMP data is present.
    package let hasXMP: Bool
    /// Whether an ICC profile is embedded.
    package let hasICCProfile: Bool
    /// Whether an orientation tag of any value is present.
    package let hasOrientationTag: Bool
    /// Progressive JPEG or interlaced PNG.
    package let isInterlaced: Bool
    /// Interleaved 8-bit samples, `bands` per pixel, row by row.
    package let pixels: [UInt8]

    /// Height of one frame: `height` unless decoded with `allFrames` from an animation.
    package let pageHeight: Int
    /// The animation's loop count as libvips reports it (0 = forever), or -1 when absent.
    package let loop: Int
    /// Per-frame delays in milliseconds (at most the first 16).
    package let delays: [Int]

    /// Decodes `bytes` (the first frame; with `allFrames`, every frame of an animation one above the other);
    /// throws `DecodeFailure` when libvips cannot.
    package init(decoding bytes: [UInt8], allFrames: Bool = false) throws(DecodeFailure) {
        Self.ensureVipsStarted()
        var result = ThumbdVipsDecoded()
        let step = bytes.withUnsafeBytes {
            allFrames
                ? thumbd_vips_decode_frames($0.baseAddress, $0.count, &result)
                : thumbd_vips_decode($0.baseAddress, $0.count, &result)
        }
        defer {
            thumbd_vips_free(result.pixels)
            thumbd_vips_free(result.error_detail)
        }
        guard step == THUMBD_VIPS_STEP_OK, let pixels = result.pixels else {
            throw DecodeFailure(detail: result.error_detail.map { String(cString: $0) } ?? "step \(step.rawValue)")
        }
        mimeType = Self.mimeType(result.format)
        width = Int(result.width)
        height = Int(result.height)
        bands = Int(result.bands)
        pageCount = Int(result.pages)
        hasEXIF = result.has_exif != 0
        hasXMP = result.has_xmp != 0
        hasICCProfile = result.has_icc_profile != 0
        hasOrientationTag = result.has_orientation != 0
        isInterlaced = result.interlaced != 0
        pageHeight = Int(result.page_height)
        loop = Int(result.loop)
        delays = withUnsafeBytes(of: result.delays) { Array($0.bindMemory(to: Int32.self)) }
            .prefix(Int(result.delay_count)).map(Int.init)
        self.pixels = [UInt8](UnsafeRawBufferPointer(start: pixels, count: result.length))
    }

    /// Frames decoded (with `allFrames`; else 1).
    package var frameCount: Int { pageHeight > 0 ? height / pageHeight : 1 }

    /// The colour of pixel (x, y) of frame `frame` (decoded with `allFrames`).
    package func colour(frame: Int, x: Int, y: Int) -> RGB { colour(x: x, y: frame * pageHeight + y) }

    /// Whether the image has an alpha band.
    package var hasAlpha: Bool { bands == 2 || bands == 4 }

    /// The samples of pixel (x, y), `bands` values.
    package func samples(x: Int, y: Int) -> ArraySlice<UInt8> {
        precondition((0..<width).contains(x) && (0..<height).contains(y), "(\(x), \(y)) outside \(width)x\(height)")
        let start = (y * width + x) * bands
        return pixels[start..<start + bands]
    }

    /// The colour of pixel (x, y); grey images give grey colours.
    package func colour(x: Int, y: Int) -> RGB {
        let s = samples(x: x, y: y)
        let first = s.startIndex
        return bands >= 3 ? RGB(s[first], s[first + 1], s[first + 2]) : RGB(s[first], s[first], s[first])
    }

    /// The alpha of pixel (x, y): 255 when the image has no alpha band.
    package func alpha(x: Int, y: Int) -> UInt8 {
        hasAlpha ? samples(x: x, y: y).last! : 255
    }

    /// `nil` when every probe is within `tolerance`, else a description of the first mismatch (for
    /// `#expect(image.mismatch(in: probes) == nil)`, which then prints the description).
    package func mismatch(in probes: [(x: Int, y: Int, colour: RGB)], tolerance: Int = 24) -> String? {
        for probe in probes {
            let actual = colour(x: probe.x, y: probe.y)
            if !actual.isClose(to: probe.colour, tolerance: tolerance) {
                return "at (\(probe.x), \(probe.y)) expected \(probe.colour), found \(actual)"
            }
        }
        return nil
    }

    private static func mimeType(_ format: ThumbdVipsFormat) -> String {
        switch format {
        case THUMBD_VIPS_FORMAT_JPEG: "image/jpeg"
        case THUMBD_VIPS_FORMAT_PNG: "image/png"
        case THUMBD_VIPS_FORMAT_WEBP: "image/webp"
        case THUMBD_VIPS_FORMAT_GIF: "image/gif"
        case THUMBD_VIPS_FORMAT_TIFF: "image/tiff"
        case THUMBD_VIPS_FORMAT_HEIF: "image/heif"
        case THUMBD_VIPS_FORMAT_AVIF: "image/avif"
        default: "application/octet-stream"
        }
    }

    private static let started = Mutex(false)

    /// The decoder (and `FlatImage`) need libvips started; this is the same idempotent start as `Vips.initialize()`.
    static func ensureVipsStarted() {
        started.withLock { started in
            guard !started else { return }
            var detail: UnsafeMutablePointer<CChar>?
            let status = thumbd_vips_init("thumbd-tests", &detail)
            defer { thumbd_vips_free(detail) }
            precondition(status == 0, "libvips failed to start: \(detail.map { String(cString: $0) } ?? "?")")
            started = true
        }
    }
}

/// libvips could not decode an image under test.
package struct DecodeFailure: Error, CustomStringConvertible {
    /// libvips's message.
    package let detail: String
    /// The failure with libvips's detail.
    package var description: String { "decode failed: \(detail)" }
}
