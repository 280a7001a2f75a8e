// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// A background taken from the picture itself (thumbor's `fill(auto)` and `fill(blur)`).
    package enum BackgroundFill: String, Hashable, Sendable {
        /// The mean of the resized picture's red, green and blue over every pixel (alpha ignored), each truncated:
        /// used as an opaque `bg` colour.
        case auto
        /// The area `fit=pad` adds is the picture blurred (Gaussian sigma 50 cut at one sigma) and stretched to
        /// the box; the picture's own pixels, transparent ones too, are laid over it unchanged.
        case blur
    }
}

/// `bg=RRGGBB[AA]`: the colour of padded areas; when opaque, transparent pixels are flattened onto it. Key ` bg=`
/// (after the watermark's token, though the query writes `bg` before `wm`). `bg=auto`: that colour is the resized
/// picture's mean (key ` bg=auto`); `bg=blur`: the area `fit=pad` adds is the picture blurred (key ` bg=blur`;
/// `padding` is refused beside it).
enum BackgroundOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.bg]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        if let fill = ThumbnailSpec.BackgroundFill(rawValue: text) {
            values.backgroundFill = fill
            values.background = nil
            return
        }
        values.backgroundFill = nil
        guard let colour = RGBAColour(hex: text) else {
            throw SpecError(field: "bg", reason: "must be RRGGBB or RRGGBBAA (hexadecimal), auto or blur")
        }
        values.background = colour
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        operations.background = values.background
        operations.backgroundFill = values.background == nil ? values.backgroundFill : nil
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        if operations.backgroundFill == .blur && operations.padding != .zero {
            throw SpecError(field: "bg", reason: "blur fills only the area fit=pad adds: not with padding")
        }
        if operations.backgroundFill != nil && operations.background != nil {
            throw SpecError(field: "bg", reason: "is a colour or auto or blur, not two")
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if let background = operations.background { text += " bg=\(background)" }
        if let fill = operations.backgroundFill { text += " bg=\(fill.rawValue)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if let background = operations.background { fields.append(CanonicalField(.bg, background.description)) }
        if let fill = operations.backgroundFill { fields.append(CanonicalField(.bg, fill.rawValue)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        switch operations.backgroundFill {
        case .auto: params.background_fill = Int32(THUMBD_VIPS_BACKGROUND_AUTO)
        case .blur: params.background_fill = Int32(THUMBD_VIPS_BACKGROUND_BLUR)
        case nil: break
        }
        guard let background = operations.background else { return }
        params.has_background = 1
        params.background = (
            Double(background.red), Double(background.green), Double(background.blue), Double(background.alpha)
        )
    }
}
