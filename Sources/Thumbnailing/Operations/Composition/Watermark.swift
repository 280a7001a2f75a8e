// SPDX-License-Identifier: Apache-2.0
import CVipsShims

extension ThumbnailSpec {
    /// An image laid over the output (after padding), placed by a compass point and offsets or tiled, with
    /// an opacity and a width relative to the output's.
    package struct Watermark: Hashable, Sendable {
        /// Which image: one named in the configuration (with a digest of its bytes, so that replacing the file
        /// makes new variants), or one fetched from a URL (canonical, absolute http or https).
        package enum Image: Hashable, Sendable {
            case named(String, digest: UInt64)
            case url(String)
        }

        /// Where it goes.
        package enum Position: Hashable, Sendable {
            /// At a compass point (smart gravities are not positions), moved inward by the offsets.
            case gravity(Gravity)
            /// Repeated across the whole output from the top-left corner.
            case tile
        }

        package var image: Image
        package var position = Position.gravity(.southEast)
        /// Output pixels from the edge(s) the position names; for `centre`, a shift right and down.
        package var offsetX = 0
        package var offsetY = 0
        /// 0...1; 0 removes the watermark (normalisation drops it).
        package var opacity = FixedDecimal.one
        /// Width as a fraction of the output's width, 0...1; 0 keeps the image's own size.
        package var scale = FixedDecimal.zero

        /// Largest offset, in output pixels.
        package static let maxOffset = 4096

        package init(image: Image) { self.image = image }
    }
}

/// `wm=<name>` or `wm_url=<url>`, placed by `wm_pos` (a compass point or `tile`; default `southeast`), `wm_x`/`wm_y`
/// (CSS px inward from the edges, × dpr), `wm_opacity` (0...1; 0 removes it) and `wm_scale` (0...1 of the output's
/// width). The `wm_*` options without an image are refused, not ignored. Key ` wm=n:<name>:<digest>,…` for a named
/// one (the digest of its file, so a replaced file makes new keys), ` wm=u:<length>:<url>,…` for one from a URL (the
/// length first, so that no URL can end early and imitate the fields after it).
enum WatermarkOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = [.wm, .wm_url, .wm_pos, .wm_x, .wm_y, .wm_opacity, .wm_scale]

    static let unit = FixedDecimal.zero...FixedDecimal.one
    static let positionReason = "must be centre, a compass point or tile"
    static let offsetReason = "must be a whole number 0...\(ThumbnailSpec.Watermark.maxOffset) (× dpr)"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        switch parameter {
        case .wm: values.watermarkName = text
        case .wm_url: values.watermarkURL = text
        case .wm_pos:
            if text == "tile" {
                values.watermarkPosition = .tile
            } else if let gravity = Gravity(rawValue: text == "center" ? "centre" : text) {
                values.watermarkPosition = .gravity(gravity)
            } else {
                throw SpecError(field: "wm_pos", reason: positionReason)
            }
        case .wm_x, .wm_y:
            guard let value = ThumbValue.integer(text) else {
                throw SpecError(field: parameter.rawValue, reason: offsetReason)
            }
            if parameter == .wm_x { values.watermarkX = value } else { values.watermarkY = value }
        case .wm_opacity: values.watermarkOpacity = try ThumbValue.decimal(text, .wm_opacity, within: unit)
        default: values.watermarkScale = try ThumbValue.decimal(text, .wm_scale, within: unit)
        }
    }

    /// The image (a configured name's digest, a URL made canonical), then the options, offsets times the dpr.
    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        var watermark: ThumbnailSpec.Watermark
        switch (values.watermarkName, values.watermarkURL) {
        case (nil, nil):
            let given: [(ThumbParameter, Bool)] = [
                (.wm_pos, values.watermarkPosition != nil), (.wm_x, values.watermarkX != nil),
                (.wm_y, values.watermarkY != nil), (.wm_opacity, values.watermarkOpacity != nil),
                (.wm_scale, values.watermarkScale != nil),
            ]
            if let (parameter, _) = given.first(where: { $0.1 }) {
                throw SpecError(field: parameter.rawValue, reason: "needs wm or wm_url")
            }
            return
        case (.some, .some):
            throw SpecError(field: "wm_url", reason: "give wm or wm_url, not both")
        case (let name?, nil):
            guard let digest = context.watermarks.digest(named: name) else {
                throw SpecError(field: "wm", reason: "no watermark of that name is configured")
            }
            watermark = ThumbnailSpec.Watermark(image: .named(name, digest: digest))
        case (nil, let text?):
            guard let url = context.watermarks.canonicalURL(text) else {
                throw SpecError(field: "wm_url", reason: "must be an absolute http(s) URL or s3://bucket/key")
            }
            watermark = ThumbnailSpec.Watermark(image: .url(url))
        }
        if let position = values.watermarkPosition { watermark.position = position }
        if let x = values.watermarkX { watermark.offsetX = ThumbValue.scaled(x, dpr: context.dpr) }
        if let y = values.watermarkY { watermark.offsetY = ThumbValue.scaled(y, dpr: context.dpr) }
        if let opacity = values.watermarkOpacity { watermark.opacity = opacity }
        if let scale = values.watermarkScale { watermark.scale = scale }
        operations.watermark = watermark
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard let watermark = operations.watermark else { return }
        try checkPosition(watermark.position)
        for (offset, parameter) in [(watermark.offsetX, ThumbParameter.wm_x), (watermark.offsetY, .wm_y)] {
            _ = try checkedOffset(offset, parameter)
            if watermark.position == .tile, offset != 0 {
                throw SpecError(field: parameter.rawValue, reason: "a tiled watermark has no offset")
            }
        }
        _ = try ThumbValue.checked(watermark.opacity, .wm_opacity, in: unit)
        _ = try ThumbValue.checked(watermark.scale, .wm_scale, in: unit)
    }

    /// Smart gravities find a region of the picture; they are not places to put a watermark.
    private static func checkPosition(_ position: ThumbnailSpec.Watermark.Position) throws(SpecError) {
        if case .gravity(let gravity) = position, gravity == .attention || gravity == .entropy {
            throw SpecError(field: "wm_pos", reason: positionReason)
        }
    }

    private static func checkedOffset(_ offset: Int, _ parameter: ThumbParameter) throws(SpecError) -> Int {
        guard (0...ThumbnailSpec.Watermark.maxOffset).contains(offset) else {
            throw SpecError(field: parameter.rawValue, reason: offsetReason)
        }
        return offset
    }

    /// An invisible watermark is none.
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        if operations.watermark?.opacity == .zero { operations.watermark = nil }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        guard let watermark = operations.watermark else { return }
        text += " wm="
        switch watermark.image {
        case .named(let name, let digest): text += "n:\(name):" + String(digest, radix: 16)
        case .url(let url): text += "u:\(url.utf8.count):\(url)"
        }
        switch watermark.position {
        case .tile: text += ",tile"
        case .gravity(let gravity): text += ",\(gravity.rawValue)"
        }
        text += ",\(watermark.offsetX),\(watermark.offsetY),\(watermark.opacity),\(watermark.scale)"
    }

    /// `wm` (a configured name; the digest is the configuration's) or `wm_url`, then the options that differ from
    /// their defaults.
    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        guard let watermark = operations.watermark else { return }
        switch watermark.image {
        case .named(let name, _): fields.append(CanonicalField(.wm, name))
        case .url(let url): fields.append(CanonicalField(.wm_url, url, isURL: true))
        }
        switch watermark.position {
        case .tile: fields.append(CanonicalField(.wm_pos, "tile"))
        case .gravity(let gravity) where gravity != .southEast: fields.append(CanonicalField(.wm_pos, gravity.rawValue))
        case .gravity: break
        }
        if watermark.offsetX != 0 { fields.append(CanonicalField(.wm_x, String(watermark.offsetX))) }
        if watermark.offsetY != 0 { fields.append(CanonicalField(.wm_y, String(watermark.offsetY))) }
        if watermark.opacity != .one { fields.append(CanonicalField(.wm_opacity, watermark.opacity.description)) }
        if watermark.scale != .zero { fields.append(CanonicalField(.wm_scale, watermark.scale.description)) }
    }

    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        guard let watermark = operations.watermark else { return }
        switch watermark.position {
        case .tile: params.watermark_tile = 1
        case .gravity(let gravity): params.watermark_gravity = gravity.vipsGravity
        }
        params.watermark_x = Int32(watermark.offsetX)
        params.watermark_y = Int32(watermark.offsetY)
        params.watermark_opacity = watermark.opacity.value
        params.watermark_scale = watermark.scale.value
    }
}
