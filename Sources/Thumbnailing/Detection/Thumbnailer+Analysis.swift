// SPDX-License-Identifier: Apache-2.0
import CVipsShims
package import FoundationEssentials

extension Thumbnailer {
    /// The intermediate of `band` for `source`, made without a render: the very one a render of this source that goes
    /// through `band` makes (same header checks: allowed formats, `maxSourcePixels`, `fail_on=error`; same pixels),
    /// so a cache of intermediates may keep it for renders and give renders' ones to the analysis. Blocks (a render
    /// thread); `source` is borrowed for the call, the intermediate does not reference it.
    /// - Throws: `ThumbnailError`, as `render(_:spec:)` for the same source (`.renderFailed` for a band below 1).
    package func analysisImage(_ source: some ContiguousBytes, band: Int) throws(ThumbnailError) -> IntermediateImage {
        if let decoded = try sandboxed(source, box: max(band, configuration.intermediateBands.max() ?? 0)) {
            return try analysisImage(decoded, band: band)
        }
        let allowed = sourceMask(for: source)
        let limit = Int64(configuration.maxSourcePixels)
        let outcome = source.withUnsafeBytes {
            (bytes: UnsafeRawBufferPointer) -> Result<IntermediateImage, ThumbnailError> in
            var made: OpaquePointer?
            var result = ThumbdVipsThumbnailResult()
            defer { thumbd_vips_free(result.error_detail) }
            let step = thumbd_vips_make_intermediate(
                bytes.baseAddress, bytes.count, allowed, limit, Int32(clamping: band), &made, &result)
            guard step == THUMBD_VIPS_STEP_OK, let made else {
                return .failure(
                    ThumbnailError(
                        step: step, detail: result.error_detail, loader: result.loader,
                        sourceFormat: result.source_format, width: result.source_width, height: result.source_height,
                        sniffed: ImageFormat.sniff(bytes)))
            }
            return .success(IntermediateImage(pointer: made, band: band))
        }
        return try outcome.get()
    }
}

/// An intermediate's pixels, copied out of libvips (for detectors' oracles and tests).
package struct IntermediatePixels: Sendable, Hashable {
    package var width: Int
    package var height: Int
    /// 1 (grey), 2 (grey and alpha), 3 (sRGB) or 4 (sRGB and alpha).
    package var bands: Int
    /// width x height x bands bytes, rows packed, bands interleaved.
    package var bytes: [UInt8]
}

extension IntermediateImage {
    /// Every pixel (8-bit, interleaved bands). Any thread.
    package func pixels() throws(ThumbnailError) -> IntermediatePixels {
        var decoded = ThumbdVipsDecoded()
        defer {
            thumbd_vips_free(decoded.pixels)
            thumbd_vips_free(decoded.error_detail)
        }
        let step = withExtendedLifetime(self) { thumbd_vips_intermediate_pixels(pointer, &decoded) }
        guard step == THUMBD_VIPS_STEP_OK, let data = decoded.pixels else {
            throw .renderFailed(decoded.error_detail.map { String(cString: $0) } ?? "no pixels")
        }
        return IntermediatePixels(
            width: Int(decoded.width), height: Int(decoded.height), bands: Int(decoded.bands),
            bytes: [UInt8](UnsafeBufferPointer(start: data, count: decoded.length)))
    }

    /// The grey pixels the detectors see (Pillow's `convert("L")`: Rec. 601 luma in integers, alpha ignored), one
    /// byte per pixel, rows packed; with the intermediate's size. Any thread.
    package func greyPixels() throws(ThumbnailError) -> IntermediatePixels {
        var grey = ThumbdVipsGrey()
        defer {
            thumbd_vips_free(grey.pixels)
            thumbd_vips_free(grey.error_detail)
        }
        let step = withExtendedLifetime(self) { thumbd_vips_intermediate_grey(pointer, &grey) }
        guard step == THUMBD_VIPS_STEP_OK, let data = grey.pixels else {
            throw .renderFailed(grey.error_detail.map { String(cString: $0) } ?? "no grey pixels")
        }
        let count = Int(grey.width) * Int(grey.height)
        return IntermediatePixels(
            width: Int(grey.width), height: Int(grey.height), bands: 1,
            bytes: [UInt8](UnsafeBufferPointer(start: data, count: count)))
    }

}
