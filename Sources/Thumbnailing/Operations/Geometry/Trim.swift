// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// Which borders a trim removes: pixels within `threshold` (0...255) of `colour`, or of the pixel in
    /// `corner` (the top-left by default) when `colour` is nil.
    package struct Trim: Hashable, Sendable {
        package let threshold: Int
        package let colour: RGBAColour?
        /// The corner whose pixel is the background when no colour is given (`.topLeft` when one is).
        package let corner: Corner
        /// thumbor's measure: the Euclidean distance over every band at full detail (alpha and the colour under a
        /// transparent pixel included), instead of libvips's smoothed one on the picture flattened onto white.
        package let euclidean: Bool

        /// A corner of the (turned) picture, spelt as `/thumb`'s `trim` writes it.
        package enum Corner: String, Hashable, Sendable, CaseIterable {
            case topLeft = "tl", topRight = "tr", bottomLeft = "bl", bottomRight = "br"
        }

        package init(threshold: Int, colour: RGBAColour?, corner: Corner = .topLeft, euclidean: Bool = false) {
            self.threshold = threshold
            self.colour = colour
            self.corner = colour == nil ? corner : .topLeft
            self.euclidean = euclidean
        }
    }
}

/// `trim=<threshold>[,RRGGBB|,corner][,euclidean]`: removes borders of one colour before the crop; an empty value is
/// threshold 10; `euclidean` measures as thumbor does. Key ` trim=<threshold>[,rrggbb][,corner][,euclidean]`.
enum TrimOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.trim]

    static let thresholdRange = 0...255
    static let reason = "must be a threshold 0...255, optionally followed by ,RRGGBB or a corner, then ,euclidean"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        if text.isEmpty {
            values.trim = ThumbnailSpec.Trim(threshold: 10, colour: nil)
            return
        }
        var parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let euclidean = parts.count > 1 && parts.last == "euclidean"
        if euclidean { parts.removeLast() }
        guard (1...2).contains(parts.count), let threshold = ThumbValue.integer(String(parts[0])) else {
            throw SpecError(field: "trim", reason: reason)
        }
        var colour: RGBAColour?
        var corner = ThumbnailSpec.Trim.Corner.topLeft
        if parts.count == 2 {
            if let named = ThumbnailSpec.Trim.Corner(rawValue: String(parts[1])) {
                corner = named
            } else {
                guard parts[1].utf8.count == 6, let parsed = RGBAColour(hex: parts[1]) else {
                    throw SpecError(
                        field: "trim", reason: "the colour must be RRGGBB (hexadecimal), or a corner tl, tr, bl, br")
                }
                colour = parsed
            }
        }
        values.trim = ThumbnailSpec.Trim(threshold: threshold, colour: colour, corner: corner, euclidean: euclidean)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.trim = values.trim
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if let trim = operations.trim, !thresholdRange.contains(trim.threshold) {
            throw SpecError(field: "trim", reason: reason)
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let trim = operations.trim else { return }
        text += " trim=\(trim.threshold)"
        if let colour = trim.colour { text += ",\(colour)" }
        if trim.corner != .topLeft { text += ",\(trim.corner.rawValue)" }
        if trim.euclidean { text += ",euclidean" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let trim = operations.trim else { return }
        let corner = trim.corner == .topLeft ? "" : ",\(trim.corner.rawValue)"
        let measure = trim.euclidean ? ",euclidean" : ""
        fields.append(
            CanonicalField(.trim, String(trim.threshold) + (trim.colour.map { ",\($0)" } ?? corner) + measure))
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let trim = operations.trim else { return }
        params.trim = 1
        params.trim_threshold = Double(trim.threshold)
        params.trim_corner = Int32(ThumbnailSpec.Trim.Corner.allCases.firstIndex(of: trim.corner) ?? 0)
        params.trim_euclidean = trim.euclidean ? 1 : 0
        if let colour = trim.colour {
            params.trim_has_colour = 1
            params.trim_colour = (Double(colour.red), Double(colour.green), Double(colour.blue))
        }
    }
}
