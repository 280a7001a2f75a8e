// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `dpr_limit=1`: without `enlarge`, the `dpr` is lowered (to 1 at least) until the box asks no more pixels of the
/// picture than it has, as imgproxy lowers its dpr for a small source: `w=80&h=80&dpr=2&fit=cover` on a 200x100
/// picture is 100x100 (dpr 1.25), not 160x100. The box the fit gives (cover's and fill's the smaller shrink,
/// contain's and pad's the larger) is scaled by min(1, max(shrink, 1/dpr)) once the picture's size is known
/// (`thumbd_box_settled`). Nothing with `enlarge` or a dpr of 1. A number above 1 (`dpr_limit=2`) names the dpr
/// the sides were already multiplied by: the canonical query writes it so, since it writes the sides scaled and no
/// `dpr`. Key ` dprlim=<dpr>`.
enum DprLimitOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.dpr_limit]

    static let range = FixedDecimal.zero...FixedDecimal(units: 8 * FixedDecimal.unitsPerOne)

    /// `1`/`true`: the request's dpr; `0`/`false`: none; a number 1…8: that dpr, the sides already scaled by it.
    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch text {
        case "true": values.dprLimit = .one
        case "false": values.dprLimit = .zero
        default:
            let value = try ThumbValue.decimal(text, parameter, within: range)
            guard range.contains(value), value == .zero || value >= .one else {
                throw SpecError(field: parameter.rawValue, reason: "must be 0, 1, true, false or a dpr up to 8")
            }
            values.dprLimit = value
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard let limit = values.dprLimit, limit != .zero, values.enlarge != true else { return }
        if limit == .one {
            if context.dpr > 1 {
                operations.dprLimit = FixedDecimal(
                    units: Int((context.dpr * Double(FixedDecimal.unitsPerOne)).rounded()))
            }
        } else {
            operations.dprLimit = limit
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.dprLimit != .zero { text += " dprlim=\(operations.dprLimit)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        // The dpr itself: the canonical query's sides are already multiplied by it and it writes no `dpr`.
        if operations.dprLimit != .zero { fields.append(CanonicalField(.dpr_limit, operations.dprLimit.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.dpr_limit = operations.dprLimit.value
    }
}
