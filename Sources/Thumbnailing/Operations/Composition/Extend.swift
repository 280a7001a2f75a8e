// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// The canvas extended after any fit (imgproxy's `extend` and `extend_aspect_ratio`, which never enlarge the
    /// picture to do it).
    package enum Extend: Hashable, Sendable {
        /// To the box's sides the plan gives (a side it does not give stays the picture's).
        case box(width: Bool, height: Bool)
        /// Around the picture to the box's aspect ratio (nothing without both sides).
        case aspect
    }
}

/// `extend=box` / `extend=aspect`: after the fit, the canvas is extended to the box's given sides, or around the
/// picture to the box's aspect ratio, placed by `gravity`, the area added `bg`'s colour (transparent without it;
/// `bg=blur` is the picture blurred). Which sides the box gives is read from the plan (`w`, `h`), so a one-sided
/// box extends that side only. Key ` ext=w`, ` ext=h`, ` ext=wh` or ` ext=aspect`.
enum ExtendOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.extend]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch text {
        case "box": values.extend = .box
        case "aspect": values.extend = .aspect
        default: throw SpecError(field: "extend", reason: "must be box or aspect")
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        switch values.extend {
        case .box?: operations.extend = .box(width: values.width != nil, height: values.height != nil)
        case .aspect?: operations.extend = .aspect
        case nil: break
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        switch operations.extend {
        case .box(let width, let height)?: text += " ext=" + (width ? "w" : "") + (height ? "h" : "")
        case .aspect?: text += " ext=aspect"
        case nil: break
        }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        switch operations.extend {
        case .box?: fields.append(CanonicalField(.extend, "box"))
        case .aspect?: fields.append(CanonicalField(.extend, "aspect"))
        case nil: break
        }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        switch operations.extend {
        case .box(let width, let height)?:
            params.extend =
                (width ? Int32(THUMBD_VIPS_EXTEND_WIDTH) : 0) | (height ? Int32(THUMBD_VIPS_EXTEND_HEIGHT) : 0)
        case .aspect?: params.extend = Int32(THUMBD_VIPS_EXTEND_ASPECT)
        case nil: break
        }
    }
}

/// `extend` as a plan states it (which sides the box gives is known once the plan is put together).
package enum PlanExtend: Hashable, Sendable {
    case box
    case aspect
}
