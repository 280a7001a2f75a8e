// SPDX-License-Identifier: Apache-2.0

/// The dominant colours by role, as Android's Palette (androidx.palette, `Target` and `Palette.generate`) picks them:
/// six targets, each a band and an ideal of HSL saturation and lightness; for each in turn, among the swatches inside
/// its bands and not taken by an earlier target, the one with the best weighted score of nearness to the ideal
/// saturation (weight 0.24), to the ideal lightness (0.52) and of population relative to the largest swatch (0.24).
/// The swatches are the palette's (libimagequant's instead of Palette's own colour cut quantizer), after Palette's
/// default filter (near black, near white and the red "I line" of skin tones are never a role).
enum DominantColours {
    private struct Target {
        var saturation: (minimum: Double, ideal: Double, maximum: Double)
        var lightness: (minimum: Double, ideal: Double, maximum: Double)
    }

    private static let light = (minimum: 0.55, ideal: 0.74, maximum: 1.0)
    private static let normal = (minimum: 0.3, ideal: 0.5, maximum: 0.7)
    private static let dark = (minimum: 0.0, ideal: 0.26, maximum: 0.45)
    private static let vibrant = (minimum: 0.35, ideal: 1.0, maximum: 1.0)
    private static let muted = (minimum: 0.0, ideal: 0.3, maximum: 0.4)
    private static let weights = (saturation: 0.24, lightness: 0.52, population: 0.24)

    /// The roles of `palette`'s swatches (shares as populations); a role no swatch fits is `nil`.
    static func of(_ palette: [SourceAnalysis.Swatch]) -> SourceAnalysis.DominantColours {
        let candidates = palette.filter { isAllowed(hsl($0.colour)) }
        let largest = candidates.map(\.share).max() ?? 0
        var taken = Set<SourceAnalysis.Colour>()
        // Palette's order: each target may take a swatch a later one would have scored higher.
        func pick(_ target: Target) -> SourceAnalysis.Swatch? {
            var best: (swatch: SourceAnalysis.Swatch, score: Double)?
            for swatch in candidates where !taken.contains(swatch.colour) {
                let (_, s, l) = hsl(swatch.colour)
                guard
                    s >= target.saturation.minimum && s <= target.saturation.maximum
                        && l >= target.lightness.minimum && l <= target.lightness.maximum
                else { continue }
                let score =
                    weights.saturation * (1 - abs(s - target.saturation.ideal))
                    + weights.lightness * (1 - abs(l - target.lightness.ideal))
                    + weights.population * (largest > 0 ? swatch.share / largest : 0)
                if best == nil || score > best!.score { best = (swatch, score) }
            }
            if let best { taken.insert(best.swatch.colour) }
            return best?.swatch
        }
        var roles = SourceAnalysis.DominantColours()
        roles.lightVibrant = pick(Target(saturation: vibrant, lightness: light))
        roles.vibrant = pick(Target(saturation: vibrant, lightness: normal))
        roles.darkVibrant = pick(Target(saturation: vibrant, lightness: dark))
        roles.lightMuted = pick(Target(saturation: muted, lightness: light))
        roles.muted = pick(Target(saturation: muted, lightness: normal))
        roles.darkMuted = pick(Target(saturation: muted, lightness: dark))
        return roles
    }

    /// Palette's default filter: not near black (lightness <= 0.05), not near white (>= 0.95), not on the red I line
    /// (hue 10...37 degrees with saturation <= 0.82), which would otherwise make skin a dominant colour.
    private static func isAllowed(_ hsl: (Double, Double, Double)) -> Bool {
        let (h, s, l) = hsl
        return l > 0.05 && l < 0.95 && !(h >= 10 && h <= 37 && s <= 0.82)
    }

    /// Hue (degrees), saturation and lightness (0...1) of an sRGB colour: the HSL cylinder Android's ColorUtils uses.
    static func hsl(_ colour: SourceAnalysis.Colour) -> (Double, Double, Double) {
        let r = Double(colour.red) / 255, g = Double(colour.green) / 255, b = Double(colour.blue) / 255
        let maximum = max(r, g, b), minimum = min(r, g, b), delta = maximum - minimum
        let l = (maximum + minimum) / 2
        guard delta > 0 else { return (0, 0, l) }
        var h: Double
        if maximum == r {
            h = ((g - b) / delta).truncatingRemainder(dividingBy: 6)
        } else if maximum == g {
            h = (b - r) / delta + 2
        } else {
            h = (r - g) / delta + 4
        }
        h = (h * 60).truncatingRemainder(dividingBy: 360)
        if h < 0 { h += 360 }
        return (h, delta / (1 - abs(2 * l - 1)), l)
    }
}
