// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// Where points of a picture go when it is turned or mirrored, for the forms whose turns and flips come after the
/// crop and resize (thumbor's flips and `rotate` filter): thumbd turns first, so their crop region, gravity and focal
/// point are carried into the turned picture's frame, and the box trades sides.
package enum DialectGeometry {
    /// `point` (fractions 0...1 of the picture, x right, y down) once the picture is turned by `orientation`
    /// (clockwise by its degrees, then mirrored left-right when it says so).
    package static func map(_ point: (x: Double, y: Double), through orientation: ThumbnailSpec.Orientation) -> (
        x: Double, y: Double
    ) {
        var (u, v) = (point.x * 2 - 1, point.y * 2 - 1)
        for _ in 0..<(orientation.degrees / 90) { (u, v) = (-v, u) }
        if orientation.mirrored { u = -u }
        return ((u + 1) / 2, (v + 1) / 2)
    }

    /// A region (fractions: left, top, width, height) once the picture is turned by `orientation`.
    package static func map(
        region: (left: Double, top: Double, width: Double, height: Double),
        through orientation: ThumbnailSpec.Orientation
    ) -> (left: Double, top: Double, width: Double, height: Double) {
        let a = map((region.left, region.top), through: orientation)
        let b = map((region.left + region.width, region.top + region.height), through: orientation)
        return (min(a.x, b.x), min(a.y, b.y), abs(a.x - b.x), abs(a.y - b.y))
    }

    /// A compass gravity once the picture is turned by `orientation` (`attention` and `entropy` stay as they are).
    package static func map(_ gravity: Gravity, through orientation: ThumbnailSpec.Orientation) -> Gravity {
        guard let (x, y) = compassVector(gravity) else { return gravity }
        let mapped = map(((Double(x) + 1) / 2, (Double(y) + 1) / 2), through: orientation)
        return compass(Int((mapped.x * 2 - 1).rounded()), Int((mapped.y * 2 - 1).rounded()))
    }

    /// A compass point as (x, y), each -1, 0 or 1 (west/north is -1).
    package static func compassVector(_ gravity: Gravity) -> (Int, Int)? {
        switch gravity {
        case .centre: (0, 0)
        case .north: (0, -1)
        case .northEast: (1, -1)
        case .east: (1, 0)
        case .southEast: (1, 1)
        case .south: (0, 1)
        case .southWest: (-1, 1)
        case .west: (-1, 0)
        case .northWest: (-1, -1)
        case .attention, .entropy, .face, .smart: nil
        }
    }

    /// The compass point of (x, y), each -1, 0 or 1.
    package static func compass(_ x: Int, _ y: Int) -> Gravity {
        switch (x, y) {
        case (0, -1): .north
        case (1, -1): .northEast
        case (1, 0): .east
        case (1, 1): .southEast
        case (0, 1): .south
        case (-1, 1): .southWest
        case (-1, 0): .west
        case (-1, -1): .northWest
        default: .centre
        }
    }

    /// `value` as a fraction or a factor of the plan: rounded to 4 decimals, as ``FixedDecimal`` holds them.
    package static func decimal(_ value: Double) -> FixedDecimal {
        FixedDecimal(units: Int((value * Double(FixedDecimal.unitsPerOne)).rounded()))
    }
}
