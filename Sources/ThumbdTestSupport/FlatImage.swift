// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// Flat-colour pictures encoded by libvips at test time, for shapes no fixture file has (a 1x10000 strip, a
/// source at the pixel limit): a flat picture compresses to a few hundred bytes whatever its size.
package enum FlatImage {
    /// The encodings `make` writes.
    package enum Encoding: String, CaseIterable, Sendable {
        case jpeg, png, webp, gif

        fileprivate var vipsFormat: ThumbdVipsFormat {
            switch self {
            case .jpeg: THUMBD_VIPS_FORMAT_JPEG
            case .png: THUMBD_VIPS_FORMAT_PNG
            case .webp: THUMBD_VIPS_FORMAT_WEBP
            case .gif: THUMBD_VIPS_FORMAT_GIF
            }
        }
    }

    /// A `width` x `height` picture of one colour (each frame its own colour when `frames` > 1: an animation,
    /// 100 ms a frame); `alpha` adds a half-opaque alpha band, `grey` makes it one grey band.
    /// - Throws: `DecodeFailure` with libvips's message when it cannot be encoded (a JPEG side above 65,535).
    package static func make(
        width: Int, height: Int, as encoding: Encoding, frames: Int = 1, alpha: Bool = false, grey: Bool = false
    ) throws(DecodeFailure) -> [UInt8] {
        DecodedImage.ensureVipsStarted()
        var data: UnsafeMutableRawPointer?
        var length = 0
        var detail: UnsafeMutablePointer<CChar>?
        let bands = (grey ? 1 : 3) + (alpha ? 1 : 0)
        let status = thumbd_vips_make_flat(
            Int32(width), Int32(height), Int32(bands), Int32(frames), encoding.vipsFormat, &data, &length, &detail)
        defer {
            thumbd_vips_free(data)
            thumbd_vips_free(detail)
        }
        guard status == 0, let data else {
            throw DecodeFailure(detail: detail.map { String(cString: $0) } ?? "make_flat failed")
        }
        return [UInt8](UnsafeRawBufferPointer(start: data, count: length))
    }
}
