// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// What the analysers work from, copied out of one C call on the intermediate
/// (`thumbd_vips_intermediate_analysis`): one libvips pass gives every analyser its own small picture, so none of
/// them reads the 512 px intermediate in Swift.
package struct AnalysisPixels: Sendable {
    /// One colour of libimagequant's palette and the alpha-weighted count of the miniature's pixels remapped to it.
    package struct PaletteColour: Sendable {
        package var red: UInt8
        package var green: UInt8
        package var blue: UInt8
        package var weight: Double
    }

    /// The miniature: fits 32 x 32 (ThumbHash allows 100), the intermediate's aspect; sRGB and alpha, rows packed.
    package var width: Int
    package var height: Int
    package var rgba: [UInt8]
    /// 32 x 32 grey (Pillow's convert("L"), then Lanczos-3 squashed to the square): imagehash's phash input.
    package var phashGrey: [UInt8]
    /// 9 across x 8 down, likewise: imagehash's dhash input.
    package var dhashGrey: [UInt8]
    /// Whether any pixel of the intermediate is not opaque.
    package var hasTransparency: Bool
    package var palette: [PaletteColour]
}

extension IntermediateImage {
    /// The analysers' pixels (see ``AnalysisPixels``) with a palette of at most `paletteColours` colours. Any thread.
    package func analysisPixels(paletteColours: Int) throws(ThumbnailError) -> AnalysisPixels {
        var made = ThumbdVipsAnalysisPixels()
        defer {
            thumbd_vips_free(made.rgba)
            thumbd_vips_free(made.phash_grey)
            thumbd_vips_free(made.dhash_grey)
            thumbd_vips_free(made.palette)
            thumbd_vips_free(made.error_detail)
        }
        let step = withExtendedLifetime(self) {
            thumbd_vips_intermediate_analysis(pointer, Int32(clamping: paletteColours), &made)
        }
        guard step == THUMBD_VIPS_STEP_OK, let rgba = made.rgba, let phash = made.phash_grey,
            let dhash = made.dhash_grey
        else {
            throw .renderFailed(made.error_detail.map { String(cString: $0) } ?? "no analysis pixels")
        }
        let width = Int(made.miniature_width), height = Int(made.miniature_height)
        let palette = UnsafeBufferPointer(start: made.palette, count: made.palette == nil ? 0 : Int(made.palette_count))
        return AnalysisPixels(
            width: width, height: height, rgba: [UInt8](UnsafeBufferPointer(start: rgba, count: width * height * 4)),
            phashGrey: [UInt8](UnsafeBufferPointer(start: phash, count: 32 * 32)),
            dhashGrey: [UInt8](UnsafeBufferPointer(start: dhash, count: 9 * 8)),
            hasTransparency: made.has_transparency != 0,
            palette: palette.map { .init(red: $0.red, green: $0.green, blue: $0.blue, weight: $0.weight) })
    }
}
