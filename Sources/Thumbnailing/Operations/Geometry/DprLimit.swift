// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `dpr_limit=1`: without `enlarge`, the `dpr` is lowered (to 1 at least) until the box asks no more pixels of the
/// picture than it has, as imgproxy lowers its dpr for a small source: `w=80&h=80&dpr=2&fit=cover` on a 200x100
/// picture is 100x100 (dpr 1.25), not 160x100. The box the fit gives (cover's and fill's the smaller shrink,
/// contain's and pad's the larger) is scaled by min(1, max(shrink, 1/dpr)) once the picture's size is known
/// (`thumbd_box_settled`). Nothing with `enlarge` or a dpr of 1. Key ` dprlim=<dpr>`.
enum DprLimitOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.dpr_limit]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.dprLimit = try ThumbValue.boolean(text, parameter)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if values.dprLimit == true && context.dpr > 1 && values.enlarge != true {
            operations.dprLimit = FixedDecimal(units: Int((context.dpr * Double(FixedDecimal.unitsPerOne)).rounded()))
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.dprLimit != .zero { text += " dprlim=\(operations.dprLimit)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.dprLimit != .zero { fields.append(CanonicalField(.dpr_limit, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.dpr_limit = operations.dprLimit.value
    }
}
