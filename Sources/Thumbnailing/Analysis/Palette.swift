// SPDX-License-Identifier: Apache-2.0

/// The palette: libimagequant's colours for the miniature (the quantizer pngquant and libvips's PNG and GIF palettes
/// use, https://pngquant.org/lib/), each with its share of the picture, the largest first. The C side remaps every
/// pixel to its nearest colour without dithering and counts them, alpha-weighted; here the counts become shares of
/// the (opaque) picture, and colours libimagequant gave twice (the same RGB at two alphas) become one.
enum Palette {
    /// The swatches of `colours`: shares summing to 1 (none when every pixel is transparent), largest first, ties
    /// in libimagequant's order.
    static func swatches(_ colours: [AnalysisPixels.PaletteColour]) -> [SourceAnalysis.Swatch] {
        var merged: [SourceAnalysis.Colour: Double] = [:]
        var order: [SourceAnalysis.Colour] = []
        for colour in colours where colour.weight > 0 {
            let key = SourceAnalysis.Colour(red: colour.red, green: colour.green, blue: colour.blue)
            if merged[key] == nil { order.append(key) }
            merged[key, default: 0] += colour.weight
        }
        let total = merged.values.reduce(0, +)
        guard total > 0 else { return [] }
        let swatches = order.enumerated().map {
            (index: $0.offset, swatch: SourceAnalysis.Swatch(colour: $0.element, share: merged[$0.element]! / total))
        }
        return swatches.sorted { ($0.swatch.share, -$0.index) > ($1.swatch.share, -$1.index) }.map(\.swatch)
    }
}
