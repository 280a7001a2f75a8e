// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `gravity_offset=x,y`: moves the cover crop of a compass `gravity` inward from the edges it names (at the centre:
/// right and down), as imgproxy's `g:type:x:y` does. Each value is whole CSS pixels (times `dpr`; negative allowed) or
/// a fraction written with a `.` (above -1, below 1) of the resized picture's side; the crop stays inside the picture.
/// Key ` goff=x,y` (output pixels after `dpr`; fractions with a `.`).
enum GravityOffsetOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.gravity_offset]

    static let reason =
        "must be x,y: whole pixels -\(ThumbnailSpec.maxDimension)...\(ThumbnailSpec.maxDimension) (after dpr) or "
        + "fractions above -1 and below 1"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = length(parts[0]), let y = length(parts[1]) else {
            throw SpecError(field: "gravity_offset", reason: reason)
        }
        values.gravityOffset = ThumbnailSpec.CropOffset(x: x, y: y)
    }

    private static func length(_ text: Substring) -> ThumbnailSpec.CropLength? { ThumbnailSpec.CropLength(text) }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard let offset = values.gravityOffset else { return }
        func scaled(_ length: ThumbnailSpec.CropLength) -> ThumbnailSpec.CropLength {
            if case .pixels(let count) = length { return .pixels(ThumbValue.scaled(count, dpr: context.dpr)) }
            return length
        }
        operations.gravityOffset = ThumbnailSpec.CropOffset(x: scaled(offset.x), y: scaled(offset.y))
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let offset = operations.gravityOffset else { return }
        for value in [offset.x, offset.y] {
            switch value {
            case .pixels(let count):
                guard abs(count) <= ThumbnailSpec.maxDimension else {
                    throw SpecError(field: "gravity_offset", reason: reason)
                }
            case .fraction(let fraction):
                guard abs(fraction.units) < FixedDecimal.unitsPerOne else {
                    throw SpecError(field: "gravity_offset", reason: reason)
                }
            }
        }
    }

    /// No offset is no offset.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if let offset = operations.gravityOffset, offset.x == .zero, offset.y == .zero {
            operations.gravityOffset = nil
        }
    }

    private static func text(_ length: ThumbnailSpec.CropLength) -> String {
        switch length {
        case .pixels(let count): String(count)
        case .fraction(let value): value.isWhole ? "\(value).0" : value.description
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let offset = operations.gravityOffset else { return }
        text += " goff=\(Self.text(offset.x)),\(Self.text(offset.y))"
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let offset = operations.gravityOffset else { return }
        fields.append(CanonicalField(.gravity_offset, "\(text(offset.x)),\(text(offset.y))"))
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let offset = operations.gravityOffset else { return }
        var bits: Int32 = 0
        func number(_ length: ThumbnailSpec.CropLength, bit: Int32) -> Double {
            switch length {
            case .pixels(let count): return Double(count)
            case .fraction(let value):
                bits |= bit
                return value.value
            }
        }
        params.gravity_offset_x = number(offset.x, bit: Int32(THUMBD_VIPS_CROP_FRACTION_LEFT))
        params.gravity_offset_y = number(offset.y, bit: Int32(THUMBD_VIPS_CROP_FRACTION_TOP))
        params.gravity_offset_fractions = bits
    }
}
