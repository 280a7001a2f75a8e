// SPDX-License-Identifier: Apache-2.0
import CVipsShims

/// `page=1...100000`: the page of a PDF source that is rendered, counted from 1 as PDF viewers show it (imgproxy's
/// `pg:`/`page:` counts from 0 and compiles to it). Key ` page=<n>`; 1, the default, drops out of the key and the
/// canonical query. The page travels to the decoder sandbox's helper in its job (Sources/thumbd-decoder); a page past
/// the last is a 422 naming the page count. Only a PDF has pages: any other source has one, so `page=2` of a JPEG, a
/// multi-page TIFF or an animated GIF or WebP is that 422 too, never the first page silently (an animation's frames
/// are not pages: imgproxy's `page` picking a frame is not followed; docs/compatibility.md).
enum PageOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.page]

    static let range = 1...DecoderPool.maxPage

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        values.page = try ThumbValue.integer(text, .page, within: range)
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        guard let page = values.page else { return }
        operations.page = page
        guard page > 1 else { return }
        // The detections and the source's own bytes are the first page's (or the whole file's): never mixed with
        // another page's picture.
        if case .gravity(let gravity)? = values.gravity, gravity.needsDetection {
            throw SpecError(field: "page", reason: "a page after the first cannot be combined with gravity=\(gravity)")
        }
        if values.redact != nil {
            throw SpecError(field: "page", reason: "a page after the first cannot be combined with redact")
        }
        if values.raw == true {
            throw SpecError(field: "page", reason: "raw answers the whole source: no page after the first")
        }
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        _ = try ThumbValue.checked(operations.page, .page, in: range)
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        if operations.page != 1 { text += " page=\(operations.page)" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        if operations.page != 1 { fields.append(CanonicalField(.page, String(operations.page))) }
    }

    /// Nothing: the page is decoded by the sandbox (`Thumbnailer.sandboxed(_:box:page:)`), not by the C render.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {}
}
