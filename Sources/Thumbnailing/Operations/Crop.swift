// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// A region of the picture, in source pixels or in fractions of its size; what overhangs the picture is
    /// dropped, and a region that misses it entirely fails the render (`ThumbnailError.cropOutsidePicture`).
    package enum Crop: Hashable, Sendable {
        case pixels(left: Int, top: Int, width: Int, height: Int)
        case fractions(left: FixedDecimal, top: FixedDecimal, width: FixedDecimal, height: FixedDecimal)

        /// Largest pixel coordinate accepted.
        package static let maxPixels = 1_000_000

        var isWholePicture: Bool {
            self == .fractions(left: .zero, top: .zero, width: .one, height: .one)
        }
    }
}

/// `crop=left,top,width,height`: all whole numbers (source pixels) or all written with a decimal point (fractions
/// 0...1 of the picture). Key ` crop=px:…` or ` crop=fr:…`; the query writes fractions always with a `.`.
enum CropOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.crop]

    static let pixelReason = "pixels must be whole numbers 0...\(ThumbnailSpec.Crop.maxPixels), sizes ≥ 1"
    static let fractionReason = "fractions must be 0...1, sizes above 0"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 4 else { throw SpecError(field: "crop", reason: "must be left,top,width,height") }
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
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if let crop = operations.crop { try check(crop) }
    }

    private static func check(_ crop: ThumbnailSpec.Crop) throws(SpecError) {
        switch crop {
        case .pixels(let left, let top, let width, let height):
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
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        switch operations.crop {
        case nil: break
        case .pixels(let left, let top, let width, let height)?:
            text += " crop=px:\(left),\(top),\(width),\(height)"
        case .fractions(let left, let top, let width, let height)?:
            text += " crop=fr:\(left),\(top),\(width),\(height)"
        }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        switch operations.crop {
        case nil: break
        case .pixels(let left, let top, let width, let height)?:
            fields.append(CanonicalField(.crop, [left, top, width, height].map(String.init).joined(separator: ",")))
        case .fractions(let left, let top, let width, let height)?:
            fields.append(CanonicalField(.crop, [left, top, width, height].map(fraction).joined(separator: ",")))
        }
    }

    /// A crop fraction with the `.` that tells it from a pixel count (`0.0`, `1.0`, `0.25`).
    private static func fraction(_ value: FixedDecimal) -> String {
        value.isWhole ? "\(value).0" : value.description
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        switch operations.crop {
        case nil:
            params.crop_unit = THUMBD_VIPS_CROP_NONE
        case .pixels(let left, let top, let width, let height)?:
            params.crop_unit = THUMBD_VIPS_CROP_PIXELS
            (params.crop_left, params.crop_top) = (Double(left), Double(top))
            (params.crop_width, params.crop_height) = (Double(width), Double(height))
        case .fractions(let left, let top, let width, let height)?:
            params.crop_unit = THUMBD_VIPS_CROP_FRACTIONS
            (params.crop_left, params.crop_top) = (left.value, top.value)
            (params.crop_width, params.crop_height) = (width.value, height.value)
        }
    }
}
