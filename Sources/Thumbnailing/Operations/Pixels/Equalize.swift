// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `equalize=1`: thumbor's histogram equalisation, each colour band on its own (an alpha band unchanged). Key
/// ` equalize`.
enum EqualizeOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.equalize]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.equalize = try ThumbValue.boolean(text, .equalize)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let equalize = values.equalize { operations.equalize = equalize }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.equalize { text += " equalize" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.equalize { fields.append(CanonicalField(.equalize, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.equalize = operations.equalize ? 1 : 0
    }
}
