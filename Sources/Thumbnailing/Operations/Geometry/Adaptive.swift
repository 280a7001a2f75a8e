// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `adaptive=1`: the box turns to the picture's orientation (thumbor's `adaptive-fit-in`). Key ` adaptive`.
enum AdaptiveOperation: FlagOperation {
    static let parameter = ThumbParameter.adaptive
    static var value: WritableKeyPath<PlanValues, Bool?> { \.adaptive }
    static var operation: WritableKeyPath<ThumbnailSpec.Operations, Bool> { \.adaptive }
    static let token = "adaptive"

    static func fill(_ on: Bool, into params: inout ThumbdVipsThumbnailParams) { params.adaptive = on ? 1 : 0 }
}
