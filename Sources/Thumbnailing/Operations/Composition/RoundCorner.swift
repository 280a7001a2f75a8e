// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// Rounded corners: outside an ellipse of these radii in each corner, the picture takes ``colour``.
    package struct RoundCorner: Hashable, Sendable {
        /// Radii in output pixels, along x and along y (each at most half the output's side: the step clamps).
        package var horizontal: Int
        package var vertical: Int
        /// Opaque: the corners are painted (the colour bands only, an alpha band kept, as thumbor does); alpha below
        /// 255: the corners are made that transparent too, with the colour's bands where alpha cannot be kept (JPEG).
        package var colour: RGBAColour

        package init(horizontal: Int, vertical: Int, colour: RGBAColour = .white) {
            self.horizontal = horizontal
            self.vertical = vertical
            self.colour = colour
        }

        /// The largest radius (the longest output side).
        package static let maxRadius = 4096
    }
}

extension RGBAColour {
    /// Opaque white, the corners' colour unless told.
    package static let white = RGBAColour(red: 255, green: 255, blue: 255)
}

/// `radius=<r>` or `radius=<rx>,<ry>` (output pixels, 0...4096; 0 does nothing) and `radius_bg=RRGGBB[AA]` (default
/// `ffffff`; alpha below `ff`: transparent corners): thumbor's `round_corner`. Key ` radius=rx,ry/colour`.
enum RoundCornerOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.radius, .radius_bg]

    static let range = 0...ThumbnailSpec.RoundCorner.maxRadius

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .radius_bg:
            guard let colour = RGBAColour(hex: text) else {
                throw SpecError(field: "radius_bg", reason: "must be RRGGBB or RRGGBBAA (hexadecimal)")
            }
            values.radiusColour = colour
        default:
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            let radii = parts.compactMap { ThumbValue.integer(String($0)) }
            guard (1...2).contains(parts.count), radii.count == parts.count else {
                throw SpecError(field: "radius", reason: reason)
            }
            values.radius = ThumbnailSpec.RoundCorner(horizontal: radii[0], vertical: radii.last ?? radii[0])
        }
    }

    static let reason = "must be R or RX,RY, whole numbers 0…\(ThumbnailSpec.RoundCorner.maxRadius)"

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        // (A radius of 0 on either axis is no corner: left out here already, so the plan is the plain one.)
        guard var corner = values.radius, corner.horizontal != 0, corner.vertical != 0 else { return }
        corner.colour = values.radiusColour ?? .white
        operations.roundCorner = corner
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let corner = operations.roundCorner else { return }
        guard range.contains(corner.horizontal), range.contains(corner.vertical) else {
            throw SpecError(field: "radius", reason: reason)
        }
    }

    /// A corner with a radius of 0 along either axis is no corner.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if let corner = operations.roundCorner, corner.horizontal == 0 || corner.vertical == 0 {
            operations.roundCorner = nil
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let corner = operations.roundCorner else { return }
        text += " radius=\(corner.horizontal),\(corner.vertical)/\(corner.colour)"
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let corner = operations.roundCorner else { return }
        let radius =
            corner.horizontal == corner.vertical ? "\(corner.horizontal)" : "\(corner.horizontal),\(corner.vertical)"
        fields.append(CanonicalField(.radius, radius))
        if corner.colour != .white { fields.append(CanonicalField(.radius_bg, corner.colour.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let corner = operations.roundCorner else { return }
        params.round_corner_x = Int32(corner.horizontal)
        params.round_corner_y = Int32(corner.vertical)
        let colour = corner.colour
        params.round_corner_colour = (
            Double(colour.red), Double(colour.green), Double(colour.blue), Double(colour.alpha)
        )
    }
}
