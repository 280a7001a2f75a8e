// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// Levels added to the red, green and blue bands, each -255...255 (thumbor's `rgb`).
    package struct ChannelShift: Hashable, Sendable {
        package var red: Int
        package var green: Int
        package var blue: Int

        package init(red: Int, green: Int, blue: Int) {
            self.red = red
            self.green = green
            self.blue = blue
        }

        package static let zero = ChannelShift(red: 0, green: 0, blue: 0)
    }
}

/// `rgb=<r>,<g>,<b>`: levels -255...255 added to each colour band, clamped (an alpha band unchanged; a grey picture
/// becomes sRGB unless the three are equal). Key ` rgb=r,g,b`.
enum ChannelShiftOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.rgb]

    static let range = -255...255
    static let reason = "must be three whole numbers -255…255 (red,green,blue)"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let levels = parts.compactMap { ThumbValue.signedInteger(String($0)) }
        guard parts.count == 3, levels.count == 3 else { throw SpecError(field: "rgb", reason: reason) }
        values.channelShift = ThumbnailSpec.ChannelShift(red: levels[0], green: levels[1], blue: levels[2])
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let shift = values.channelShift { operations.channelShift = shift }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        let shift = operations.channelShift
        guard [shift.red, shift.green, shift.blue].allSatisfy({ range.contains($0) }) else {
            throw SpecError(field: "rgb", reason: reason)
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        let shift = operations.channelShift
        if shift != .zero { text += " rgb=\(shift.red),\(shift.green),\(shift.blue)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        let shift = operations.channelShift
        if shift != .zero { fields.append(CanonicalField(.rgb, "\(shift.red),\(shift.green),\(shift.blue)")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        let shift = operations.channelShift
        params.rgb_shift = (Int32(shift.red), Int32(shift.green), Int32(shift.blue))
    }
}
