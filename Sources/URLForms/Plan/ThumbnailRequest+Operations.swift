// SPDX-License-Identifier: Apache-2.0
import OriginFetch
package import Thumbnailing

/// The `/thumb` parameters of the pipeline's steps (docs/api.md): `autorotate`, `rotate`, `flip`, `trim`,
/// `crop`, `brightness`, `contrast`, `saturation`, `grayscale`, `blur`, `sharpen`, `pixelate`, `padding`, `bg`, the
/// watermark's and the encoder's. Each operation's descriptor (Sources/Thumbnailing/Operations) parses and checks its
/// own; anything else is a 400 naming the parameter.
extension ThumbnailRequest {
    /// The steps the parameters ask for. `dpr` scales the values given in CSS pixels (`padding`, `wm_x`, `wm_y`); an
    /// encoder option the explicitly asked `format` cannot honour is refused.
    package static func operations(
        _ values: [Parameter: String], dpr: Double, format: FormatRequest, watermarks: any WatermarkNames = .none
    ) throws(RequestError) -> ThumbnailSpec.Operations {
        let explicit: ImageFormat? = if case .exactly(let format) = format { format } else { nil }
        let context = OperationContext(dpr: dpr, explicitFormat: explicit, watermarks: watermarks)
        do {
            return try ThumbnailSpec.Operations.parse(values, context: context)
        } catch {
            throw .invalidValue(error.field, reason: error.reason)
        }
    }

    /// `fp:x,y` (fractions 0...1) or `fpx:x,y` (whole pixels of the turned picture): the focal point of `gravity`.
    package static func focalPoint(_ text: String) throws(RequestError) -> FocalPoint {
        if text.hasPrefix("fpx:") {
            let parts = text.dropFirst(4).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let x = integer(String(parts[0])), let y = integer(String(parts[1])),
                let point = FocalPoint(pixelX: x, pixelY: y)
            else { throw .invalidValue("gravity", reason: "fpx:x,y needs two whole numbers 0...1000000") }
            return point
        }
        let parts = text.dropFirst(3).split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == 2, let x = FixedDecimal(parsing: parts[0]), let y = FixedDecimal(parsing: parts[1]),
            let point = FocalPoint(x: x, y: y)
        else { throw .invalidValue("gravity", reason: "fp:x,y needs two fractions 0...1") }
        return point
    }
}
