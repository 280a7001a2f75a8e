// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `equalize=1`: thumbor's histogram equalisation, each colour band on its own (an alpha band unchanged). Key
/// ` equalize`.
enum EqualizeOperation: FlagOperation {
    static let parameter = ThumbParameter.equalize
    static var value: WritableKeyPath<PlanValues, Bool?> { \.equalize }
    static var operation: WritableKeyPath<ThumbnailSpec.Operations, Bool> { \.equalize }
    static let token = "equalize"

    static func fill(_ on: Bool, into params: inout ThumbdVipsThumbnailParams) { params.equalize = on ? 1 : 0 }
}
