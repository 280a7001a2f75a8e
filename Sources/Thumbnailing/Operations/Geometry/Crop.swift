// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// A region of the picture, in source pixels or in fractions of its size; what overhangs the picture is
    /// dropped, and a region that misses it entirely fails the render (`ThumbnailError.cropOutsidePicture`).
    package enum Crop: Hashable, Sendable {
        case pixels(left: Int, top: Int, width: Int, height: Int)
        case fractions(left: FixedDecimal, top: FixedDecimal, width: FixedDecimal, height: FixedDecimal)
        /// A region of a size placed by a gravity, resolved once the picture's size is known (imgproxy's
        /// `c:W:H:gravity:x:y`): each side in pixels (clamped to the picture) or a fraction of the picture's.
        case placed(width: CropLength, height: CropLength, gravity: CropGravity)
        /// A region in source pixels of the picture before the trim (`crop_frame=source`): the part inside the
        /// trimmed frame is kept, the whole frame when none is (thumbor's `trim` beside a manual crop: it trims,
        /// then moves the crop by the frame's corner and clamps it). Without a trim it is ``pixels``.
        case untrimmed(left: Int, top: Int, width: Int, height: Int)
        /// A placed crop (``placed``) in the picture before the trim (`crop_frame=source`), then cut to the trimmed
        /// frame, the whole frame when nothing is left (thumbor's `trim` beside a manual crop and a flip or rotate:
        /// the crop measured from the corner the turn takes the top-left to). Without a trim it is ``placed``.
        case untrimmedPlaced(width: CropLength, height: CropLength, gravity: CropGravity)

        /// Largest pixel coordinate accepted.
        package static let maxPixels = 1_000_000

        var isWholePicture: Bool {
            self == .fractions(left: .zero, top: .zero, width: .one, height: .one)
                || (self == .placed(width: .fraction(.one), height: .fraction(.one), gravity: .centre))
        }
    }

    /// A length of a placed crop: source pixels, or a fraction of the picture's side (written with a `.`).
    package enum CropLength: Hashable, Sendable {
        case pixels(Int)
        case fraction(FixedDecimal)

        package static let zero = Self.pixels(0)

        /// A whole number (pixels, signed) or a decimal written with a `.` (a fraction, signed); a fraction 0 is
        /// 0 pixels. `crop`, `crop_offset` and `gravity_offset` read their lengths with it.
        init?(_ text: Substring) {
            let negative = text.hasPrefix("-")
            let digits = negative ? text.dropFirst() : text
            if !digits.contains(".") {
                guard let value = ThumbValue.integer(String(digits)) else { return nil }
                self = .pixels(negative ? -value : value)
                return
            }
            guard let value = FixedDecimal(parsing: digits) else { return nil }
            self = value == .zero ? .zero : .fraction(negative ? FixedDecimal(units: -value.units) : value)
        }
    }

    /// Where a placed crop goes: a compass point with offsets inward from the edges it names (at the centre, a shift
    /// right and down), or centred on a focal point (fractions of the picture), kept inside the picture.
    package enum CropGravity: Hashable, Sendable {
        case compass(Gravity, x: CropLength, y: CropLength)
        case focalPoint(x: FixedDecimal, y: FixedDecimal)

        package static let centre = Self.compass(.centre, x: .zero, y: .zero)
    }

    /// `crop_offset`: a placed crop's offsets from its compass gravity.
    package struct CropOffset: Hashable, Sendable {
        package var x: CropLength
        package var y: CropLength

        package init(x: CropLength, y: CropLength) {
            self.x = x
            self.y = y
        }
    }
}

/// `crop=left,top,width,height`: all whole numbers (source pixels) or all written with a decimal point (fractions
/// 0...1 of the picture). Key ` crop=px:…` or ` crop=fr:…`; the query writes fractions always with a `.`.
///
/// `crop=width,height` (two values, each pixels or a fraction) is a placed crop: `crop_gravity` (a compass point,
/// `attention` (libvips's attention point, found by the render on the pixels) or
/// `fp:x,y`, centre by default) and `crop_offset=x,y` place it once the picture's size is known. Key
/// ` crop=sz:W,H@gravity[+x,y]`.
enum CropOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.crop, .crop_gravity, .crop_offset, .crop_frame]

    static let pixelReason = "pixels must be whole numbers 0...\(ThumbnailSpec.Crop.maxPixels), sizes ≥ 1"
    static let fractionReason = "fractions must be 0...1, sizes above 0"

    static let lengthReason = "sides must be whole pixels 1...\(ThumbnailSpec.Crop.maxPixels) or fractions above 0...1"
    static let offsetReason =
        "offsets must be whole pixels -\(ThumbnailSpec.Crop.maxPixels)...\(ThumbnailSpec.Crop.maxPixels) or fractions above -1 and below 1"
    static let gravityReason = "must be centre, a compass point, attention or fp:x,y"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .crop_gravity:
            values.cropGravity = try gravity(text)
            return
        case .crop_offset:
            let parts = text.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = length(parts[0]), let y = length(parts[1]) else {
                throw SpecError(field: "crop_offset", reason: "must be x,y (\(offsetReason))")
            }
            values.cropOffset = ThumbnailSpec.CropOffset(x: x, y: y)
            return
        case .crop_frame:
            switch text {
            case "source": values.cropFrameIsSource = true
            case "trimmed": values.cropFrameIsSource = false
            default: throw SpecError(field: "crop_frame", reason: "must be trimmed or source")
            }
            return
        default: break
        }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let width = length(parts[0]), let height = length(parts[1]) else {
                throw SpecError(field: "crop", reason: lengthReason)
            }
            values.crop = .placed(width: width, height: height, gravity: .centre)
            return
        }
        guard parts.count == 4 else {
            throw SpecError(field: "crop", reason: "must be left,top,width,height or width,height")
        }
        let fractional = parts.map { $0.contains(".") }
        if fractional.allSatisfy({ !$0 }) {
            let pixels = parts.compactMap { ThumbValue.integer(String($0)) }
            guard pixels.count == 4 else { throw SpecError(field: "crop", reason: pixelReason) }
            values.crop = .pixels(left: pixels[0], top: pixels[1], width: pixels[2], height: pixels[3])
        } else {
            guard fractional.allSatisfy({ $0 }) else {
                throw SpecError(
                    field: "crop", reason: "write all four as pixels or all four as fractions (with a '.')")
            }
            let fractions = parts.compactMap { FixedDecimal(parsing: $0) }
            guard fractions.count == 4 else { throw SpecError(field: "crop", reason: fractionReason) }
            values.crop = .fractions(left: fractions[0], top: fractions[1], width: fractions[2], height: fractions[3])
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.crop = values.crop
        if values.cropFrameIsSource == true {
            switch values.crop {
            case .pixels(let left, let top, let width, let height)?:
                operations.crop = .untrimmed(left: left, top: top, width: width, height: height)
            case .placed?: break
            default:
                throw SpecError(
                    field: "crop_frame", reason: "needs crop=left,top,width,height in pixels or crop=width,height")
            }
        }
        guard case .placed(let width, let height, _)? = values.crop else {
            if values.cropGravity != nil { throw SpecError(field: "crop_gravity", reason: "needs crop=width,height") }
            if values.cropOffset != nil { throw SpecError(field: "crop_offset", reason: "needs crop=width,height") }
            return
        }
        var gravity = values.cropGravity ?? .centre
        if let offset = values.cropOffset, offset.x != .zero || offset.y != .zero {
            guard case .compass(let point, _, _) = gravity else {
                throw SpecError(field: "crop_offset", reason: "not with a focal point")
            }
            gravity = .compass(point, x: offset.x, y: offset.y)
        }
        operations.crop =
            values.cropFrameIsSource == true
            ? .untrimmedPlaced(width: width, height: height, gravity: gravity)
            : .placed(width: width, height: height, gravity: gravity)
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if let crop = operations.crop { try check(crop) }
    }

    private static func length(_ text: Substring) -> ThumbnailSpec.CropLength? { ThumbnailSpec.CropLength(text) }

    /// `crop_gravity`: `centre` (`center`), a compass point, or `fp:x,y`.
    private static func gravity(_ text: String) throws(SpecError) -> ThumbnailSpec.CropGravity {
        if text.hasPrefix("fp:") {
            let parts = text.dropFirst(3).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = FixedDecimal(parsing: parts[0]), let y = FixedDecimal(parsing: parts[1])
            else { throw SpecError(field: "crop_gravity", reason: gravityReason) }
            return .focalPoint(x: x, y: y)
        }
        let name = text == "center" ? "centre" : text
        guard let point = Gravity(rawValue: name), point != .entropy, !point.needsDetection else {
            throw SpecError(field: "crop_gravity", reason: gravityReason)
        }
        return .compass(point, x: .zero, y: .zero)
    }

    private static func check(_ crop: ThumbnailSpec.Crop) throws(SpecError) {
        switch crop {
        case .placed(let width, let height, let gravity), .untrimmedPlaced(let width, let height, let gravity):
            for side in [width, height] {
                switch side {
                case .pixels(let count):
                    guard (1...ThumbnailSpec.Crop.maxPixels).contains(count) else {
                        throw SpecError(field: "crop", reason: lengthReason)
                    }
                case .fraction(let value):
                    guard value > .zero, value <= .one else { throw SpecError(field: "crop", reason: lengthReason) }
                }
            }
            switch gravity {
            case .compass(let point, let x, let y):
                guard point != .entropy, !point.needsDetection else {
                    throw SpecError(field: "crop_gravity", reason: gravityReason)
                }
                if point == .attention && (x != .zero || y != .zero) {
                    throw SpecError(field: "crop_offset", reason: "not with attention")
                }
                for offset in [x, y] {
                    switch offset {
                    case .pixels(let count):
                        guard abs(count) <= ThumbnailSpec.Crop.maxPixels else {
                            throw SpecError(field: "crop_offset", reason: offsetReason)
                        }
                    case .fraction(let value):
                        guard abs(value.units) < FixedDecimal.unitsPerOne else {
                            throw SpecError(field: "crop_offset", reason: offsetReason)
                        }
                    }
                }
            case .focalPoint(let x, let y):
                let unit = FixedDecimal.zero...FixedDecimal.one
                guard unit.contains(x), unit.contains(y) else {
                    throw SpecError(field: "crop_gravity", reason: "fp:x,y needs fractions 0...1")
                }
            }
        case .pixels(let left, let top, let width, let height),
            .untrimmed(let left, let top, let width, let height):
            let range = 0...ThumbnailSpec.Crop.maxPixels
            guard [left, top, width, height].allSatisfy(range.contains), width >= 1, height >= 1 else {
                throw SpecError(field: "crop", reason: pixelReason)
            }
        case .fractions(let left, let top, let width, let height):
            let unit = FixedDecimal.zero...FixedDecimal.one
            guard [left, top, width, height].allSatisfy(unit.contains), width > .zero, height > .zero else {
                throw SpecError(field: "crop", reason: fractionReason)
            }
        }
    }

    /// A crop of the whole picture is no crop.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if operations.crop?.isWholePicture == true { operations.crop = nil }
        // Without a trim the picture is its own frame: the region is a plain one.
        if case .untrimmed(let left, let top, let width, let height)? = operations.crop, operations.trim == nil {
            operations.crop = .pixels(left: left, top: top, width: width, height: height)
        }
        if case .untrimmedPlaced(let width, let height, let gravity)? = operations.crop, operations.trim == nil {
            operations.crop = .placed(width: width, height: height, gravity: gravity)
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        switch operations.crop {
        case nil: break
        case .pixels(let left, let top, let width, let height)?:
            text += " crop=px:\(left),\(top),\(width),\(height)"
        case .untrimmed(let left, let top, let width, let height)?:
            text += " crop=un:\(left),\(top),\(width),\(height)"
        case .fractions(let left, let top, let width, let height)?:
            text += " crop=fr:\(left),\(top),\(width),\(height)"
        case .placed(let width, let height, let gravity)?, .untrimmedPlaced(let width, let height, let gravity)?:
            if case .untrimmedPlaced? = operations.crop { text += " crop=un" } else { text += " crop=" }
            text += "sz:\(lengthText(width)),\(lengthText(height))@"
            switch gravity {
            case .compass(let point, let x, let y):
                text += point.rawValue
                if x != .zero || y != .zero { text += "+\(lengthText(x)),\(lengthText(y))" }
            case .focalPoint(let x, let y):
                text += "fp:\(x),\(y)"
            }
        }
    }

    /// A placed crop's length: pixels as a whole number, a fraction always with a `.`.
    private static func lengthText(_ length: ThumbnailSpec.CropLength) -> String {
        switch length {
        case .pixels(let count): String(count)
        case .fraction(let value): fraction(value)
        }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        switch operations.crop {
        case nil: break
        case .pixels(let left, let top, let width, let height)?:
            fields.append(CanonicalField(.crop, [left, top, width, height].map(String.init).joined(separator: ",")))
        case .untrimmed(let left, let top, let width, let height)?:
            fields.append(CanonicalField(.crop, [left, top, width, height].map(String.init).joined(separator: ",")))
            fields.append(CanonicalField(.crop_frame, "source"))
        case .fractions(let left, let top, let width, let height)?:
            fields.append(CanonicalField(.crop, [left, top, width, height].map(fraction).joined(separator: ",")))
        case .placed(let width, let height, let gravity)?, .untrimmedPlaced(let width, let height, let gravity)?:
            fields.append(CanonicalField(.crop, "\(lengthText(width)),\(lengthText(height))"))
            switch gravity {
            case .compass(let point, let x, let y):
                if point != .centre { fields.append(CanonicalField(.crop_gravity, point.rawValue)) }
                if x != .zero || y != .zero {
                    fields.append(CanonicalField(.crop_offset, "\(lengthText(x)),\(lengthText(y))"))
                }
            case .focalPoint(let x, let y):
                fields.append(CanonicalField(.crop_gravity, "fp:\(x),\(y)"))
            }
            if case .untrimmedPlaced? = operations.crop { fields.append(CanonicalField(.crop_frame, "source")) }
        }
    }

    /// A crop fraction with the `.` that tells it from a pixel count (`0.0`, `1.0`, `0.25`).
    private static func fraction(_ value: FixedDecimal) -> String {
        value.isWhole ? "\(value).0" : value.description
    }

    /// Which of a placed crop's values are fractions (the C side's `crop_fractions` bits).
    private static func fractionBit(_ length: ThumbnailSpec.CropLength, _ bit: Int32) -> Int32 {
        if case .fraction = length { bit } else { 0 }
    }

    private static func number(_ length: ThumbnailSpec.CropLength) -> Double {
        switch length {
        case .pixels(let count): Double(count)
        case .fraction(let value): value.value
        }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        switch operations.crop {
        case nil:
            params.crop_unit = THUMBD_VIPS_CROP_NONE
        case .pixels(let left, let top, let width, let height)?:
            params.crop_unit = THUMBD_VIPS_CROP_PIXELS
            (params.crop_left, params.crop_top) = (Double(left), Double(top))
            (params.crop_width, params.crop_height) = (Double(width), Double(height))
        case .untrimmed(let left, let top, let width, let height)?:
            params.crop_unit = THUMBD_VIPS_CROP_UNTRIMMED
            (params.crop_left, params.crop_top) = (Double(left), Double(top))
            (params.crop_width, params.crop_height) = (Double(width), Double(height))
        case .fractions(let left, let top, let width, let height)?:
            params.crop_unit = THUMBD_VIPS_CROP_FRACTIONS
            (params.crop_left, params.crop_top) = (left.value, top.value)
            (params.crop_width, params.crop_height) = (width.value, height.value)
        case .placed(let width, let height, let gravity)?, .untrimmedPlaced(let width, let height, let gravity)?:
            params.crop_unit = THUMBD_VIPS_CROP_PLACED
            if case .untrimmedPlaced? = operations.crop { params.crop_before_trim = 1 }
            (params.crop_width, params.crop_height) = (number(width), number(height))
            var bits = fractionBit(width, Int32(THUMBD_VIPS_CROP_FRACTION_WIDTH))
            bits |= fractionBit(height, Int32(THUMBD_VIPS_CROP_FRACTION_HEIGHT))
            switch gravity {
            case .compass(let point, let x, let y):
                params.crop_gravity = point.vipsGravity
                (params.crop_left, params.crop_top) = (number(x), number(y))
                bits |= fractionBit(x, Int32(THUMBD_VIPS_CROP_FRACTION_LEFT))
                bits |= fractionBit(y, Int32(THUMBD_VIPS_CROP_FRACTION_TOP))
            case .focalPoint(let x, let y):
                params.crop_gravity = THUMBD_VIPS_GRAVITY_FOCAL
                (params.crop_left, params.crop_top) = (x.value, y.value)
            }
            params.crop_fractions = bits
        }
    }
}
