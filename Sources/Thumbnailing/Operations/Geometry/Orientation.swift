// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// `flip` as a plan states it, before it is composed with `rotate` into an ``Orientation``.
    package struct Flip: Hashable, Sendable {
        /// Left-right.
        package var horizontal: Bool
        /// Top-bottom.
        package var vertical: Bool

        package init(horizontal: Bool, vertical: Bool) {
            self.horizontal = horizontal
            self.vertical = vertical
        }
    }

    /// A clockwise rotation by a multiple of 90°, then an optional left-right mirror: every combination of
    /// rotations and flips is exactly one of these eight.
    package struct Orientation: Hashable, Sendable {
        /// 0, 90, 180 or 270.
        package let degrees: Int
        /// Mirrored left-right after the rotation.
        package let mirrored: Bool

        /// Nothing.
        package static let none = Orientation(validDegrees: 0, mirrored: false)

        /// `nil` unless `degrees` is 0, 90, 180 or 270 (after reduction modulo 360).
        package init?(degrees: Int, mirrored: Bool = false) {
            guard degrees % 90 == 0 else { return nil }
            self.init(validDegrees: ((degrees % 360) + 360) % 360, mirrored: mirrored)
        }

        private init(validDegrees: Int, mirrored: Bool) {
            degrees = validDegrees
            self.mirrored = mirrored
        }

        /// Rotate by `degrees`, then flip left-right (`horizontal`) and top-bottom (`vertical`).
        package static func rotated(_ degrees: Int, flippedHorizontally horizontal: Bool, vertically vertical: Bool)
            -> Orientation?
        {
            guard let rotation = Orientation(degrees: degrees) else { return nil }
            var result = rotation
            if horizontal { result = result.then(Orientation(validDegrees: 0, mirrored: true)) }
            // A top-bottom flip is a half turn and a left-right mirror.
            if vertical { result = result.then(Orientation(validDegrees: 180, mirrored: true)) }
            return result
        }

        /// This orientation, then `next`. A mirror followed by a rotation is the opposite rotation followed
        /// by the mirror.
        package func then(_ next: Orientation) -> Orientation {
            let turn = mirrored ? 360 - next.degrees : next.degrees
            return Orientation(validDegrees: (degrees + turn) % 360, mirrored: mirrored != next.mirrored)
        }

        /// Whether width and height trade places.
        package var swapsSides: Bool { degrees == 90 || degrees == 270 }
    }
}

/// `rotate` (0, 90, 180, 270) then `flip` (`h`, `v`, `hv`), after the EXIF orientation; held as one rotation and at
/// most one mirror, so every spelling of one turn is one value. Key ` o=<degrees>[m]`; the query writes `rotate`
/// then `flip=h`.
enum OrientationOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.rotate, .flip]

    static let rotateReason = "must be 0, 90, 180 or 270"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .rotate:
            guard let degrees = ThumbValue.integer(text) else { throw SpecError(field: "rotate", reason: rotateReason) }
            values.rotate = degrees
        default:
            switch text {
            case "h": values.flip = ThumbnailSpec.Flip(horizontal: true, vertical: false)
            case "v": values.flip = ThumbnailSpec.Flip(horizontal: false, vertical: true)
            case "hv", "vh": values.flip = ThumbnailSpec.Flip(horizontal: true, vertical: true)
            default: throw SpecError(field: "flip", reason: "must be h, v or hv")
            }
        }
    }

    /// `rotate`, then `flip`, as one orientation (each may come from another layer).
    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard values.rotate != nil || values.flip != nil else { return }
        let degrees = values.rotate ?? 0
        guard [0, 90, 180, 270].contains(degrees),
            let orientation = ThumbnailSpec.Orientation.rotated(
                degrees, flippedHorizontally: values.flip?.horizontal ?? false,
                vertically: values.flip?.vertical ?? false)
        else { throw SpecError(field: "rotate", reason: rotateReason) }
        operations.orientation = orientation
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard operations.orientation != .none else { return }
        text += " o=\(operations.orientation.degrees)"
        if operations.orientation.mirrored { text += "m" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        let orientation = operations.orientation
        if orientation.degrees != 0 { fields.append(CanonicalField(.rotate, String(orientation.degrees))) }
        // `Orientation.rotated(d, h, false)` is the rotation then the mirror, exactly what the value holds.
        if orientation.mirrored { fields.append(CanonicalField(.flip, "h")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.rotate = Int32(operations.orientation.degrees)
        params.mirror = operations.orientation.mirrored ? 1 : 0
    }
}
