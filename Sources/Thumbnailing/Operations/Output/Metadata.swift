// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `keep_copyright=1`: keeps the source's EXIF copyright and artist (JPEG, WebP and AVIF output). Key ` kcr`.
enum KeepCopyrightOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.keep_copyright]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.keepCopyright = try ThumbValue.boolean(text, .keep_copyright)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let keepCopyright = values.keepCopyright { operations.keepCopyright = keepCopyright }
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.keepCopyright { try context.refuse(.keep_copyright, unless: [.jpeg, .webp, .avif], "EXIF") }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.keepCopyright { text += " kcr" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.keepCopyright { fields.append(CanonicalField(.keep_copyright, "1")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.keep_copyright = operations.keepCopyright ? 1 : 0
    }
}

/// `icc=srgb|keep`: `keep` keeps the source's ICC profile, pixels unconverted. Key ` icc=keep`.
enum ColourProfileOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.icc]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch text {
        case "srgb": values.keepColourProfile = false
        case "keep": values.keepColourProfile = true
        default: throw SpecError(field: "icc", reason: "must be srgb or keep")
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        if let keep = values.keepColourProfile { operations.keepColourProfile = keep }
    }

    static func check(_ operations: ThumbnailSpec.Operations, _ context: OperationContext) throws(SpecError) {
        if operations.keepColourProfile {
            try context.refuse(.icc, unless: [.jpeg, .png, .webp, .avif], "colour profile")
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.keepColourProfile { text += " icc=keep" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.keepColourProfile { fields.append(CanonicalField(.icc, "keep")) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.keep_icc = operations.keepColourProfile ? 1 : 0
    }
}
