// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials

/// What a source's pixels say, computed once per source from its intermediate (no second decode) and kept beside the
/// source in every tier: placeholders (BlurHash, ThumbHash), colours (average, dominant swatches, a palette),
/// perceptual hashes (pHash, dHash), transparency and tone. `Codable`: the disk and shared tiers keep it as JSON.
///
/// Made by ``Thumbnailer/analyse(_:options:)``; docs/api.md names each field's algorithm and reference.
package struct SourceAnalysis: Sendable, Hashable, Codable {
    /// An sRGB colour, 8 bits a channel.
    package struct Colour: Sendable, Hashable, Codable {
        package var red: UInt8
        package var green: UInt8
        package var blue: UInt8

        package init(red: UInt8, green: UInt8, blue: UInt8) {
            self.red = red
            self.green = green
            self.blue = blue
        }
    }

    /// A colour and the share of the picture's (opaque) pixels it stands for, 0…1.
    package struct Swatch: Sendable, Hashable, Codable {
        package var colour: Colour
        package var share: Double

        package init(colour: Colour, share: Double) {
            self.colour = colour
            self.share = share
        }
    }

    /// The dominant colours by role (Android's Palette targets: saturation and lightness bands); a role no colour of
    /// the picture fits is `nil`.
    package struct DominantColours: Sendable, Hashable, Codable {
        package var vibrant: Swatch?
        package var lightVibrant: Swatch?
        package var darkVibrant: Swatch?
        package var muted: Swatch?
        package var lightMuted: Swatch?
        package var darkMuted: Swatch?

        package init(
            vibrant: Swatch? = nil, lightVibrant: Swatch? = nil, darkVibrant: Swatch? = nil, muted: Swatch? = nil,
            lightMuted: Swatch? = nil, darkMuted: Swatch? = nil
        ) {
            self.vibrant = vibrant
            self.lightVibrant = lightVibrant
            self.darkVibrant = darkVibrant
            self.muted = muted
            self.lightMuted = lightMuted
            self.darkMuted = darkMuted
        }
    }

    /// BlurHash of the picture with `blurhashComponents` (x, y).
    package var blurhash: String
    /// The BlurHash's components across and down (1…9 each).
    package var blurhashComponents: [Int]
    /// ThumbHash, base64 (standard alphabet, padded).
    package var thumbhash: String
    /// The mean colour of the picture (alpha-weighted: transparent pixels count for nothing).
    package var average: Colour
    /// The dominant colours by role.
    package var dominant: DominantColours
    /// The palette (libimagequant), the largest share first.
    package var palette: [Swatch]
    /// 64-bit perceptual hash (DCT of a 32 x 32 grey copy), as imagehash's `phash`.
    package var phash: UInt64
    /// 64-bit difference hash (9 x 8 grey copy), as imagehash's `dhash`.
    package var dhash: UInt64
    /// Whether any pixel is not fully opaque.
    package var hasTransparency: Bool
    /// Mean lightness of the opaque pixels, 0 (black) … 1 (white): CIE L* / 100.
    package var lightness: Double

    /// Whether the picture is mostly light (`lightness` at least 0.5).
    package var isLight: Bool { lightness >= 0.5 }

    package init(
        blurhash: String, blurhashComponents: [Int], thumbhash: String, average: Colour, dominant: DominantColours,
        palette: [Swatch], phash: UInt64, dhash: UInt64, hasTransparency: Bool, lightness: Double
    ) {
        self.blurhash = blurhash
        self.blurhashComponents = blurhashComponents
        self.thumbhash = thumbhash
        self.average = average
        self.dominant = dominant
        self.palette = palette
        self.phash = phash
        self.dhash = dhash
        self.hasTransparency = hasTransparency
        self.lightness = lightness
    }
}

/// What an analysis is asked for: the BlurHash's components and the palette's size. The kept analysis of a source is
/// made with the operator's defaults (`image.analysis`); a request asking other values gets one made for it.
package struct AnalysisOptions: Sendable, Hashable, Codable {
    /// BlurHash components across (1…9).
    package var blurhashX: Int
    /// BlurHash components down (1…9).
    package var blurhashY: Int
    /// Colours in the palette (2…256).
    package var paletteColours: Int

    package static let blurhashRange = 1...9
    package static let paletteRange = 2...256

    package init(blurhashX: Int = 4, blurhashY: Int = 3, paletteColours: Int = 8) {
        self.blurhashX = blurhashX
        self.blurhashY = blurhashY
        self.paletteColours = paletteColours
    }
}

extension SourceAnalysis.Colour {
    /// `#rrggbb`, lower case.
    package var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "#")]
        for value in [red, green, blue] {
            text.append(digits[Int(value >> 4)])
            text.append(digits[Int(value & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Thumbnailer {
    /// The analysis of the picture `image` holds (a source's intermediate). Blocks (a render thread): about a
    /// millisecond for a 512 px intermediate (docs/api.md, "The per-source analysis").
    ///
    /// One C call makes every analyser's pixels from the intermediate (an RGBA miniature fitting 32 x 32, the grey
    /// copies of the two hashes, the transparency, libimagequant's palette); the rest is Swift on those few pixels.
    /// - Throws: `ThumbnailError.renderFailed` when an option is out of its range or libvips or libimagequant fails.
    package func analyse(_ image: IntermediateImage, options: AnalysisOptions = AnalysisOptions())
        throws(ThumbnailError) -> SourceAnalysis
    {
        guard AnalysisOptions.blurhashRange.contains(options.blurhashX),
            AnalysisOptions.blurhashRange.contains(options.blurhashY),
            AnalysisOptions.paletteRange.contains(options.paletteColours)
        else {
            throw .renderFailed(
                "analysis options out of range: BlurHash \(options.blurhashX) x \(options.blurhashY) (1...9 each), "
                    + "\(options.paletteColours) palette colours (2...256)")
        }
        let pixels = try image.analysisPixels(paletteColours: options.paletteColours)
        let count = pixels.width * pixels.height
        let palette = Palette.swatches(pixels.palette)
        return SourceAnalysis(
            blurhash: BlurHash.encode(
                rgba: pixels.rgba, width: pixels.width, height: pixels.height, x: options.blurhashX,
                y: options.blurhashY),
            blurhashComponents: [options.blurhashX, options.blurhashY],
            thumbhash: Data(ThumbHash.encode(rgba: pixels.rgba, width: pixels.width, height: pixels.height))
                .base64EncodedString(),
            average: AverageColour.of(rgba: pixels.rgba, count: count), dominant: DominantColours.of(palette),
            palette: palette, phash: PerceptualHash.of(grey: pixels.phashGrey),
            dhash: DifferenceHash.of(grey: pixels.dhashGrey), hasTransparency: pixels.hasTransparency,
            lightness: Lightness.of(rgba: pixels.rgba, count: count))
    }
}
