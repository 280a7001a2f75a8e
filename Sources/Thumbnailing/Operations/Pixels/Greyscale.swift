// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// `grayscale`: off, libvips's grey (`1`), or Pillow's Rec. 601 luma (`rec601`: thumbor's `grayscale()`,
    /// L = (R × 19595 + G × 38470 + B × 7471 + 0x8000) >> 16). A Boolean literal is off or libvips's grey.
    package enum Greyscale: Hashable, Sendable, ExpressibleByBooleanLiteral {
        case off, luminance, rec601

        package init(booleanLiteral value: Bool) { self = value ? .luminance : .off }
    }
}

/// `grayscale=1` or `grayscale=rec601`: one grey channel (plus alpha). Keys ` grey`, ` grey=rec601`.
enum GreyscaleOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.grayscale]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        guard text != "rec601" else {
            values.greyscale = .rec601
            return
        }
        do {
            values.greyscale = try ThumbValue.boolean(text, .grayscale) ? .luminance : .off
        } catch {
            throw SpecError(field: ThumbParameter.grayscale.rawValue, reason: "must be 0, 1, true, false or rec601")
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let greyscale = values.greyscale { operations.greyscale = greyscale }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        switch operations.greyscale {
        case .off: break
        case .luminance: text += " grey"
        case .rec601: text += " grey=rec601"
        }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        switch operations.greyscale {
        case .off: break
        case .luminance: fields.append(CanonicalField(.grayscale, "1"))
        case .rec601: fields.append(CanonicalField(.grayscale, "rec601"))
        }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        switch operations.greyscale {
        case .off: params.greyscale = 0
        case .luminance: params.greyscale = 1
        case .rec601: params.greyscale = 2
        }
    }
}
