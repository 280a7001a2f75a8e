// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// thumbor's `frame`: an Android nine-patch drawn around the output (after padding, before the watermark). The
    /// picture grows by the nine-patch's content margins (opaque white), then the nine-patch's inside is drawn over
    /// the whole, its stretching runs resized to fit.
    package struct Frame: Hashable, Sendable {
        /// Which image: one named in the configuration (`image.watermarks`, with a digest of its bytes, so that
        /// replacing the file makes new variants), or one fetched from a URL (canonical, absolute http or https).
        package var image: Watermark.Image
        /// `frame_optional=1` (thumbor's form sets it for `frame(url)`): when the image is no usable nine-patch
        /// (no stretch markers, not an allowed image, outside the size limits) the render goes on without the frame
        /// and says so (`RenderedThumbnail.isFrameSkipped`) instead of failing with `.frameUnusable`. A failed
        /// fetch still fails the request.
        package var isOptional: Bool

        package init(image: Watermark.Image, isOptional: Bool = false) {
            self.image = image
            self.isOptional = isOptional
        }
    }
}

/// `frame=<name>` (an image of `image.watermarks`) or `frame_url=<url>` (fetched after the source, through the same
/// guard as `wm_url`). Key ` frame=n:<name>:<digest>` for a named one (the digest of its file, so a replaced file
/// makes new keys), ` frame=u:<length>:<url>` for one from a URL (the length first, as the watermark's), then
/// ` frame_optional` when `frame_optional=1` (the one place that decides is the shim's frame step: `frame_optional`).
enum FrameOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.frame, .frame_url, .frame_optional]

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .frame: values.frameName = text
        case .frame_optional: values.frameOptional = try ThumbValue.boolean(text, parameter)
        default: values.frameURL = text
        }
    }

    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        let isOptional = values.frameOptional ?? false
        switch (values.frameName, values.frameURL) {
        case (nil, nil):
            if isOptional { throw SpecError(field: "frame_optional", reason: "only beside frame or frame_url") }
            return
        case (.some, .some): throw SpecError(field: "frame_url", reason: "give frame or frame_url, not both")
        case (let name?, nil):
            guard let digest = context.watermarks.digest(named: name) else {
                throw SpecError(field: "frame", reason: "no image of that name is configured (image.watermarks)")
            }
            operations.frame = ThumbnailSpec.Frame(image: .named(name, digest: digest), isOptional: isOptional)
        case (nil, let text?):
            guard let url = context.watermarks.canonicalURL(text) else {
                throw SpecError(field: "frame_url", reason: "must be an absolute http(s) URL or s3://bucket/key")
            }
            operations.frame = ThumbnailSpec.Frame(image: .url(url), isOptional: isOptional)
        }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let frame = operations.frame else { return }
        switch frame.image {
        case .named(let name, let digest): text += " frame=n:\(name):" + String(digest, radix: 16)
        case .url(let url): text += " frame=u:\(url.utf8.count):\(url)"
        }
        if frame.isOptional { text += " frame_optional" }
    }

    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let frame = operations.frame else { return }
        switch frame.image {
        case .named(let name, _): fields.append(CanonicalField(.frame, name))
        case .url(let url): fields.append(CanonicalField(.frame_url, url, isURL: true))
        }
        if frame.isOptional { fields.append(CanonicalField(.frame_optional, "1")) }
    }

    /// The image's bytes are the render's (`Thumbnailer.render(_:spec:watermark:frame:)`), not the plan's.
    /// Only whether it may be left out is the plan's.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        params.frame_optional = operations.frame?.isOptional == true ? 1 : 0
    }
}
