// SPDX-License-Identifier: Apache-2.0
import OriginFetch
package import Thumbnailing

/// The pipeline's steps (docs/api.md): `autorotate`, `rotate`, `flip`, `trim`, `crop`, `brightness`, `contrast`,
/// `saturation`, `grayscale`, `blur`, `sharpen`, `pixelate`, `padding`, `bg`, the watermark's and the encoder's. Each
/// operation's descriptor (Sources/Thumbnailing/Operations) reads its parameters' text into the plan's typed fields,
/// builds its step from them and checks its range; anything else is a 400 naming the parameter.
extension ThumbnailRequest {
    /// The steps the plan's values ask for. `dpr` scales the values given in CSS pixels (`padding`, `wm_x`, `wm_y`);
    /// an encoder option the explicitly asked `format` cannot honour is refused.
    package static func operations(
        _ values: PlanValues, dpr: Double, format: FormatRequest, watermarks: any WatermarkNames = .none
    ) throws(RequestError) -> ThumbnailSpec.Operations {
        let explicit: ImageFormat? = if case .exactly(let format) = format { format } else { nil }
        let context = OperationContext(dpr: dpr, explicitFormat: explicit, watermarks: watermarks)
        do {
            return try ThumbnailSpec.Operations.build(values, context: context)
        } catch {
            throw .invalidValue(error.field, reason: error.reason)
        }
    }
}
