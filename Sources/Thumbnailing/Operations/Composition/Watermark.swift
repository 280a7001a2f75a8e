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
        /// Height at most this fraction of the output's height, 0...1 (thumbor's `h_ratio`); 0: none.
        package var heightScale = FixedDecimal.zero
        /// thumbor's placement, axis by axis, in place of ``position`` and the offsets.
        package var place: Place?

        /// Where thumbor puts the mark on one axis (`wm_place`), written as thumbor writes it.
        package enum PlaceAxis: Hashable, Sendable {
            /// `N`: output pixels from the left/top edge.
            case start(Int)
            /// `-N`: the mark's far side N output pixels from the right/bottom edge (`-0`: flush).
            case end(Int)
            /// `Np`: percent of the output's side from the left/top edge.
            case startPercent(Int)
            /// `-Np`: percent of the output's side from the right/bottom edge.
            case endPercent(Int)
            /// `center`.
            case centre
            /// `repeat`: as many marks as fit, the space left spread between them (thumbor's arithmetic).
            case spread

            /// Parses thumbor's text for one axis.
            package init?(_ text: some StringProtocol) {
                if text == "center" || text == "centre" {
                    self = .centre
                    return
                }
                if text == "repeat" {
                    self = .spread
                    return
                }
                var digits = Substring(text)
                let end = digits.hasPrefix("-")
                if end { digits = digits.dropFirst() }
                let percent = digits.hasSuffix("p")
                if percent { digits = digits.dropLast() }
                guard let value = ThumbValue.integer(String(digits)) else { return nil }
                switch (end, percent) {
                case (false, false): self = .start(value)
                case (true, false): self = .end(value)
                case (false, true): self = .startPercent(value)
                case (true, true): self = .endPercent(value)
                }
            }

            /// thumbor's text.
            package var text: String {
                switch self {
                case .start(let value): "\(value)"
                case .end(let value): "-\(value)"
                case .startPercent(let value): "\(value)p"
                case .endPercent(let value): "-\(value)p"
                case .centre: "center"
                case .spread: "repeat"
                }
            }

            var value: Int {
                switch self {
                case .start(let value), .end(let value), .startPercent(let value), .endPercent(let value): value
                case .centre, .spread: 0
                }
            }

            var vipsKind: Int32 {
                switch self {
                case .start: Int32(THUMBD_VIPS_WM_START.rawValue)
                case .end: Int32(THUMBD_VIPS_WM_END.rawValue)
                case .startPercent: Int32(THUMBD_VIPS_WM_START_PERCENT.rawValue)
                case .endPercent: Int32(THUMBD_VIPS_WM_END_PERCENT.rawValue)
                case .centre: Int32(THUMBD_VIPS_WM_CENTRE.rawValue)
                case .spread: Int32(THUMBD_VIPS_WM_REPEAT.rawValue)
                }
            }
        }

        /// Both axes of thumbor's placement.
        package struct Place: Hashable, Sendable {
            package var x: PlaceAxis
            package var y: PlaceAxis

            package init(x: PlaceAxis, y: PlaceAxis) {
                self.x = x
                self.y = y
            }

            /// `x,y` as `wm_place` writes it.
            package var text: String { "\(x.text),\(y.text)" }
        }

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
    static let parameters: [ThumbParameter] = [
        .wm, .wm_url, .wm_pos, .wm_x, .wm_y, .wm_opacity, .wm_scale, .wm_hscale, .wm_place,
    ]
    static let placeReason =
        "must be X,Y, each N, -N, Np or -Np (whole N: pixels up to 4096, percent up to 1000), center or repeat"

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
        case .wm_hscale: values.watermarkHeightScale = try ThumbValue.decimal(text, .wm_hscale, within: unit)
        case .wm_place:
            let axes = text.split(separator: ",", omittingEmptySubsequences: false)
            guard axes.count == 2, let x = ThumbnailSpec.Watermark.PlaceAxis(axes[0]),
                let y = ThumbnailSpec.Watermark.PlaceAxis(axes[1])
            else { throw SpecError(field: "wm_place", reason: placeReason) }
            values.watermarkPlace = ThumbnailSpec.Watermark.Place(x: x, y: y)
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
                (.wm_scale, values.watermarkScale != nil), (.wm_hscale, values.watermarkHeightScale != nil),
                (.wm_place, values.watermarkPlace != nil),
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
        if let heightScale = values.watermarkHeightScale { watermark.heightScale = heightScale }
        if let place = values.watermarkPlace {
            let placed: [(ThumbParameter, Bool)] = [
                (.wm_pos, values.watermarkPosition != nil), (.wm_x, values.watermarkX != nil),
                (.wm_y, values.watermarkY != nil),
            ]
            if let (parameter, _) = placed.first(where: { $0.1 }) {
                throw SpecError(field: parameter.rawValue, reason: "give wm_place or wm_pos, wm_x and wm_y, not both")
            }
            watermark.place = place
        }
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
        _ = try ThumbValue.checked(watermark.heightScale, .wm_hscale, in: unit)
        if let place = watermark.place {
            for axis in [place.x, place.y] {
                let limit: Int
                switch axis {
                case .startPercent, .endPercent: limit = 1000
                default: limit = ThumbnailSpec.Watermark.maxOffset
                }
                guard (0...limit).contains(axis.value) else { throw SpecError(field: "wm_place", reason: placeReason) }
            }
        }
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
        // Appended only when set, so that the keys written before they existed stay.
        if watermark.heightScale != .zero { text += ",h=\(watermark.heightScale)" }
        if let place = watermark.place { text += ",place=\(place.text)" }
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
        if watermark.heightScale != .zero {
            fields.append(CanonicalField(.wm_hscale, watermark.heightScale.description))
        }
        if let place = watermark.place { fields.append(CanonicalField(.wm_place, place.text)) }
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
        params.watermark_height_scale = watermark.heightScale.value
        if let place = watermark.place {
            params.watermark_place = 1
            params.watermark_place_kind = (place.x.vipsKind, place.y.vipsKind)
            params.watermark_place_value = (Int32(place.x.value), Int32(place.y.value))
        }
    }
}
