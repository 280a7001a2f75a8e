// SPDX-License-Identifier: Apache-2.0
import Thumbnailing

/// `/info`'s answer made from a source's analysis record (``SourceAnalyses/Record``), and the analysis's JSON fields
/// (docs/api.md, "The per-source analysis").
extension InfoService {
    /// The header's fields of `/info`.
    static func info(_ header: SourceAnalyses.SourceHeader, url: String) -> Info {
        Info(
            url: url, format: header.format, width: header.width, height: header.height, frames: header.frames,
            orientation: header.orientation, alpha: header.alpha, colourSpace: header.colourSpace,
            bitsPerChannel: header.bitsPerChannel, iccProfile: header.iccProfile, bytes: header.bytes,
            exif: .init(make: header.cameraMake, model: header.cameraModel, takenAt: header.takenAt))
    }

    /// What `query` asks, from a record (faces when the record has the quick search's).
    static func info(_ record: SourceAnalyses.Record, _ query: InfoQuery) -> Info {
        var info = info(record.header, url: query.source.string)
        if query.analysis != nil { info.analysis = AnalysisFields(record.analysis) }
        if query.faces, let faces = record.faces { info.faces = .init(count: faces.faces.count, boxes: faces.faces) }
        return info
    }

    /// The analysis as `/info` shows it: colours as `#rrggbb`, hashes as 16 hex digits, snake_case names.
    struct AnalysisFields: Encodable {
        /// The analysis these fields show (not encoded: for the dialects' answers made from the same `Info`).
        let source: SourceAnalysis
        let blurhash: String
        let blurhashComponents: [Int]
        let thumbhash: String
        let averageColour: String
        let dominantColours: [String: Swatch]
        let palette: [Swatch]
        let phash: String
        let dhash: String
        let transparency: Bool
        let lightness: Double
        let tone: String

        struct Swatch: Encodable {
            let colour: String
            let share: Double

            init(_ swatch: SourceAnalysis.Swatch) {
                colour = swatch.colour.hex
                share = (swatch.share * 10_000).rounded() / 10_000
            }
        }

        enum CodingKeys: String, CodingKey {
            case blurhash
            case blurhashComponents = "blurhash_components"
            case thumbhash
            case averageColour = "average_colour"
            case dominantColours = "dominant_colours"
            case palette, phash, dhash, transparency, lightness, tone
        }

        init(_ analysis: SourceAnalysis) {
            source = analysis
            blurhash = analysis.blurhash
            blurhashComponents = analysis.blurhashComponents
            thumbhash = analysis.thumbhash
            averageColour = analysis.average.hex
            var dominant: [String: Swatch] = [:]
            for (role, swatch) in analysis.dominant.roles { if let swatch { dominant[role] = Swatch(swatch) } }
            dominantColours = dominant
            palette = analysis.palette.map(Swatch.init)
            phash = analysis.phash.sixteenHexDigits
            dhash = analysis.dhash.sixteenHexDigits
            transparency = analysis.hasTransparency
            lightness = (analysis.lightness * 1000).rounded() / 1000
            tone = analysis.isLight ? "light" : "dark"
        }

    }
}

extension SourceAnalysis.DominantColours {
    /// Each role by its JSON name (imgproxy's and `/info`'s), in Android Palette's order.
    var roles: [(String, SourceAnalysis.Swatch?)] {
        [
            ("vibrant", vibrant), ("light_vibrant", lightVibrant), ("dark_vibrant", darkVibrant), ("muted", muted),
            ("light_muted", lightMuted), ("dark_muted", darkMuted),
        ]
    }

    /// imgproxy's `dc:1:1`: a role no colour fits is made from a found one of the same kind (vibrant or muted; else
    /// any), its hue and saturation kept and its lightness set to the role's target (Android Palette's: 0.74 light,
    /// 0.5 normal, 0.26 dark), with no share of the picture.
    var withMissedRolesBuilt: Self {
        let vibrants = [vibrant, lightVibrant, darkVibrant].compactMap { $0 }
        let muteds = [muted, lightMuted, darkMuted].compactMap { $0 }
        let any = vibrants + muteds
        func built(_ found: SourceAnalysis.Swatch?, family: [SourceAnalysis.Swatch], lightness: Double)
            -> SourceAnalysis.Swatch?
        {
            if let found { return found }
            guard let model = family.first ?? any.first else { return nil }
            return .init(colour: model.colour.withLightness(lightness), share: 0)
        }
        return Self(
            vibrant: built(vibrant, family: vibrants, lightness: 0.5),
            lightVibrant: built(lightVibrant, family: vibrants, lightness: 0.74),
            darkVibrant: built(darkVibrant, family: vibrants, lightness: 0.26),
            muted: built(muted, family: muteds, lightness: 0.5),
            lightMuted: built(lightMuted, family: muteds, lightness: 0.74),
            darkMuted: built(darkMuted, family: muteds, lightness: 0.26))
    }
}

extension SourceAnalysis.Colour {
    /// The colour with its HSL lightness replaced (hue and saturation kept).
    func withLightness(_ lightness: Double) -> Self {
        let (r, g, b) = (Double(red) / 255, Double(green) / 255, Double(blue) / 255)
        let high = max(r, g, b)
        let low = min(r, g, b)
        let chroma = high - low
        var hue = 0.0
        if chroma > 0 {
            if high == r {
                hue = ((g - b) / chroma).truncatingRemainder(dividingBy: 6)
            } else if high == g {
                hue = (b - r) / chroma + 2
            } else {
                hue = (r - g) / chroma + 4
            }
            hue = (hue < 0 ? hue + 6 : hue)
        }
        let oldLightness = (high + low) / 2
        let saturation = chroma == 0 ? 0 : chroma / (1 - abs(2 * oldLightness - 1))
        let newChroma = (1 - abs(2 * lightness - 1)) * saturation
        let second = newChroma * (1 - abs(hue.truncatingRemainder(dividingBy: 2) - 1))
        let (r1, g1, b1): (Double, Double, Double) =
            switch Int(hue) {
            case 0: (newChroma, second, 0)
            case 1: (second, newChroma, 0)
            case 2: (0, newChroma, second)
            case 3: (0, second, newChroma)
            case 4: (second, 0, newChroma)
            default: (newChroma, 0, second)
            }
        let m = lightness - newChroma / 2
        func channel(_ value: Double) -> UInt8 { UInt8(max(0, min(255, ((value + m) * 255).rounded()))) }
        return .init(red: channel(r1), green: channel(g1), blue: channel(b1))
    }
}
