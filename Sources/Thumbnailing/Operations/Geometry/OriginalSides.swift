// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec.Operations {
    /// The box's sides that are the picture's own (`orig=w`, `orig=h`, `orig=wh`).
    package struct OriginalSides: OptionSet, Hashable, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }
        package static let width = Self(rawValue: 1)
        package static let height = Self(rawValue: 2)

        /// `w`, `h` or `wh`: the parameter's text and the key's.
        var text: String { (contains(.width) ? "w" : "") + (contains(.height) ? "h" : "") }
    }
}

/// `orig=w|h|wh`: that side of the box is the picture's own, after orientation, trim and crop, at most the `w`
/// or `h` given (thumbor's `orig` beside a number, `300xorig`). The render resolves it once the header is read
/// (`thumbd_box_settled`), so the key holds the request as written. Key ` orig=w`.
enum OriginalSidesOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.orig]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let sides: [String: ThumbnailSpec.Operations.OriginalSides] = [
            "w": .width, "h": .height, "wh": [.width, .height],
        ]
        guard let value = sides[text] else { throw SpecError(field: "orig", reason: "must be w, h or wh") }
        values.originalSides = value
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let sides = values.originalSides { operations.originalSides = sides }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if !operations.originalSides.isEmpty { text += " orig=" + operations.originalSides.text }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if !operations.originalSides.isEmpty { fields.append(CanonicalField(.orig, operations.originalSides.text)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.original_sides = Int32(operations.originalSides.rawValue)
    }
}
