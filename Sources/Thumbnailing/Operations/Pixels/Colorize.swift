// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// thumbor's `colorize`: each colour band moved toward ``colour``'s by its own percentage.
    package struct Colorize: Hashable, Sendable {
        /// Percentages 0...1000 for red, green and blue (above 100 extrapolates past the colour, as thumbor does).
        package var red: Int
        package var green: Int
        package var blue: Int
        /// The colour blended in (its alpha is not used).
        package var colour: RGBAColour

        package init(red: Int, green: Int, blue: Int, colour: RGBAColour) {
            self.red = red
            self.green = green
            self.blue = blue
            self.colour = colour
        }

        /// The largest percentage.
        package static let maxPercent = 1000
    }
}

/// `colorize=<r>,<g>,<b>,<RRGGBB>`: out = in × (100 − p)/100 + colour × p/100 per colour band, truncated and clamped
/// as thumbor's C does (an alpha band unchanged). Key ` colorize=r,g,b/rrggbb`.
enum ColorizeOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.colorize]

    static let reason = "must be R,G,B,RRGGBB: percentages 0…\(ThumbnailSpec.Colorize.maxPercent) and a colour"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4, let colour = RGBAColour(hex: parts[3]) else {
            throw SpecError(field: "colorize", reason: reason)
        }
        let percents = parts.prefix(3).compactMap { ThumbValue.integer(String($0)) }
        guard percents.count == 3 else { throw SpecError(field: "colorize", reason: reason) }
        values.colorize = ThumbnailSpec.Colorize(
            red: percents[0], green: percents[1], blue: percents[2], colour: colour)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let colorize = values.colorize { operations.colorize = colorize }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let colorize = operations.colorize else { return }
        let range = 0...ThumbnailSpec.Colorize.maxPercent
        guard [colorize.red, colorize.green, colorize.blue].allSatisfy({ range.contains($0) }) else {
            throw SpecError(field: "colorize", reason: reason)
        }
    }

    /// All three at 0 leave the picture as it is; the colour's alpha is not used.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        guard var colorize = operations.colorize else { return }
        if colorize.red == 0 && colorize.green == 0 && colorize.blue == 0 {
            operations.colorize = nil
            return
        }
        let colour = colorize.colour
        colorize.colour = RGBAColour(red: colour.red, green: colour.green, blue: colour.blue)
        operations.colorize = colorize
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let c = operations.colorize else { return }
        text += " colorize=\(c.red),\(c.green),\(c.blue)/\(c.colour)"
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let c = operations.colorize else { return }
        fields.append(CanonicalField(.colorize, "\(c.red),\(c.green),\(c.blue),\(c.colour)"))
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let c = operations.colorize else { return }
        params.colorize = 1
        params.colorize_percent = (Int32(c.red), Int32(c.green), Int32(c.blue))
        params.colorize_colour = (Double(c.colour.red), Double(c.colour.green), Double(c.colour.blue))
    }
}
