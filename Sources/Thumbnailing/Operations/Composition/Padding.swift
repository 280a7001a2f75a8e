// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// Output pixels added on each side.
    package struct Padding: Hashable, Sendable {
        package var top: Int
        package var right: Int
        package var bottom: Int
        package var left: Int

        /// None.
        package static let zero = Padding(top: 0, right: 0, bottom: 0, left: 0)

        package init(top: Int, right: Int, bottom: Int, left: Int) {
            self.top = top
            self.right = right
            self.bottom = bottom
            self.left = left
        }

        /// In the order top, right, bottom, left.
        package var sides: [Int] { [top, right, bottom, left] }
    }
}

/// `padding=<CSS shorthand>` in CSS pixels × dpr: `all`, `vertical,horizontal`, `top,horizontal,bottom` or
/// `top,right,bottom,left`, each side at most ``ThumbnailSpec/Operations/maxPadding`` output pixels. Key
/// ` pad=t,r,b,l`; the query writes the shortest shorthand.
enum PaddingOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.padding]

    static let reason = "each side × dpr must be at most \(ThumbnailSpec.Operations.maxPadding)"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        let s = parts.compactMap { ThumbValue.integer(String($0)) }
        guard (1...4).contains(parts.count), s.count == parts.count else {
            throw SpecError(field: "padding", reason: "must be 1 to 4 whole numbers (top,right,bottom,left)")
        }
        values.padding =
            switch s.count {
            case 1: .init(top: s[0], right: s[0], bottom: s[0], left: s[0])
            case 2: .init(top: s[0], right: s[1], bottom: s[0], left: s[1])
            case 3: .init(top: s[0], right: s[1], bottom: s[2], left: s[1])
            default: .init(top: s[0], right: s[1], bottom: s[2], left: s[3])
            }
    }

    /// The plan's CSS pixels times the dpr.
    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard let padding = values.padding else { return }
        let s = padding.sides.map { ThumbValue.scaled($0, dpr: context.dpr) }
        operations.padding = .init(top: s[0], right: s[1], bottom: s[2], left: s[3])
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) { try check(operations.padding) }

    private static func check(_ padding: ThumbnailSpec.Padding) throws(SpecError) {
        guard padding.sides.allSatisfy({ (0...ThumbnailSpec.Operations.maxPadding).contains($0) }) else {
            throw SpecError(field: "padding", reason: reason)
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.padding != .zero {
            text += " pad=" + operations.padding.sides.map(String.init).joined(separator: ",")
        }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.padding != .zero { fields.append(CanonicalField(.padding, shortest(operations.padding))) }
    }

    /// CSS shorthand: `all`, `vertical,horizontal`, `top,horizontal,bottom` or `top,right,bottom,left`.
    private static func shortest(_ padding: ThumbnailSpec.Padding) -> String {
        let sides: [Int]
        if padding.left != padding.right {
            sides = padding.sides
        } else if padding.top != padding.bottom {
            sides = [padding.top, padding.right, padding.bottom]
        } else if padding.top != padding.right {
            sides = [padding.top, padding.right]
        } else {
            sides = [padding.top]
        }
        return sides.map(String.init).joined(separator: ",")
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.padding_top = Int32(operations.padding.top)
        params.padding_right = Int32(operations.padding.right)
        params.padding_bottom = Int32(operations.padding.bottom)
        params.padding_left = Int32(operations.padding.left)
    }
}
