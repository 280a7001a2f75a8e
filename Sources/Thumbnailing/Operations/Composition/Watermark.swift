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
        /// Output pixels from the edge(s) the position names; for `centre`, a shift right and down; for `tile`, the
        /// space between the tiles.
        package var offsetX = 0
        package var offsetY = 0
        /// The same as a fraction (0...1, exclusive) of the output's width and height, in place of the pixels
        /// (imgproxy's relative offsets); zero: none.
        package var relativeOffsetX = FixedDecimal.zero
        package var relativeOffsetY = FixedDecimal.zero
        /// 0...1; 0 removes the watermark (normalisation drops it).
        package var opacity = FixedDecimal.one
        /// Width as a fraction of the output's width, 0...1; 0 keeps the image's own size.
        package var scale = FixedDecimal.zero
        /// Height at most this fraction of the output's height, 0...1 (thumbor's `h_ratio`); 0: none.
        package var heightScale = FixedDecimal.zero
        /// thumbor's placement, axis by axis, in place of ``position`` and the offsets.
        package var place: Place?
        /// 0...100: 255 × fade / 100 subtracted from each alpha value of the mark before it is sized (thumbor's
        /// `alpha`, which fades a half-transparent pixel more than ``opacity``'s product does); 0: none.
        package var fade = 0

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
        /// Most watermarks in one plan (thumbor's URLs may carry several `watermark()` filters): the shim's.
        package static let maxCount = Int(THUMBD_VIPS_MAX_WATERMARKS)

        package init(image: Image) { self.image = image }
    }
}

/// A watermark's offset as `wm_x`/`wm_y` write it: CSS pixels (× dpr), or a fraction of the output's side.
package enum WatermarkOffset: Hashable, Sendable {
    case pixels(Int)
    /// Above 0 and below 1.
    case fraction(FixedDecimal)
}

/// The `/thumb` values of one watermark, as written (offsets in CSS pixels, the URL not yet canonical).
package struct WatermarkValues: Hashable, Sendable {
    package var name: String?
    package var url: String?
    package var position: ThumbnailSpec.Watermark.Position?
    package var x: WatermarkOffset?
    package var y: WatermarkOffset?
    package var opacity: FixedDecimal?
    package var scale: FixedDecimal?
    package var heightScale: FixedDecimal?
    package var place: ThumbnailSpec.Watermark.Place?
    package var fade: Int?

    package init() {}

    /// Nothing set.
    var isEmpty: Bool { self == WatermarkValues() }

    /// `upper`'s values over these, field by field.
    mutating func layer(_ upper: WatermarkValues) {
        name = upper.name ?? name
        url = upper.url ?? url
        position = upper.position ?? position
        x = upper.x ?? x
        y = upper.y ?? y
        opacity = upper.opacity ?? opacity
        scale = upper.scale ?? scale
        heightScale = upper.heightScale ?? heightScale
        place = upper.place ?? place
        fade = upper.fade ?? fade
    }
}

/// The watermark slots of a plan's values, `wm*` (slot 0) to `wm4*` (slot 3): stored apart, not in an array, so
/// that a plan without watermarks allocates nothing and a key path can name one slot's field.
package struct WatermarkSlots: Hashable, Sendable {
    private var first = WatermarkValues()
    private var second = WatermarkValues()
    private var third = WatermarkValues()
    private var fourth = WatermarkValues()

    package init() {}

    package subscript(slot: Int) -> WatermarkValues {
        get {
            switch slot {
            case 0: first
            case 1: second
            case 2: third
            default: fourth
            }
        }
        set {
            switch slot {
            case 0: first = newValue
            case 1: second = newValue
            case 2: third = newValue
            default: fourth = newValue
            }
        }
    }

    /// The configured watermarks the slots name (`wm=`).
    package var names: [String] { [first.name, second.name, third.name, fourth.name].compactMap { $0 } }

    /// `upper`'s values over these, slot by slot and field by field.
    mutating func layer(_ upper: WatermarkSlots) {
        first.layer(upper.first)
        second.layer(upper.second)
        third.layer(upper.third)
        fourth.layer(upper.fourth)
    }
}

/// One field of a watermark slot: which `/thumb` parameter it is in each slot.
enum WatermarkField: Int, CaseIterable {
    case name, url, position, x, y, opacity, scale, heightScale, place, fade

    /// Each slot's parameters, in ``WatermarkField``'s order.
    static let slots: [[ThumbParameter]] = [
        [.wm, .wm_url, .wm_pos, .wm_x, .wm_y, .wm_opacity, .wm_scale, .wm_hscale, .wm_place, .wm_fade],
        [.wm2, .wm2_url, .wm2_pos, .wm2_x, .wm2_y, .wm2_opacity, .wm2_scale, .wm2_hscale, .wm2_place, .wm2_fade],
        [.wm3, .wm3_url, .wm3_pos, .wm3_x, .wm3_y, .wm3_opacity, .wm3_scale, .wm3_hscale, .wm3_place, .wm3_fade],
        [.wm4, .wm4_url, .wm4_pos, .wm4_x, .wm4_y, .wm4_opacity, .wm4_scale, .wm4_hscale, .wm4_place, .wm4_fade],
    ]

    /// The slot and field of each watermark parameter.
    static let owners: [ThumbParameter: (slot: Int, field: WatermarkField)] = Dictionary(
        uniqueKeysWithValues: slots.enumerated().flatMap { slot, parameters in
            parameters.enumerated().map { ($1, (slot, WatermarkField(rawValue: $0)!)) }
        })

    /// This field's parameter in `slot`.
    func parameter(_ slot: Int) -> ThumbParameter { Self.slots[slot][rawValue] }
}

extension PlanField {
    /// Slot `slot`'s field at `path` (for a foreign form's second `watermark()`, say).
    fileprivate static func watermark(
        _ slot: Int, _ field: WatermarkField, _ path: WritableKeyPath<WatermarkValues, Value?>
    ) -> Self {
        let slotPath: WritableKeyPath<PlanValues, WatermarkValues> = \.watermarks[slot]
        return Self(parameter: field.parameter(slot), keyPath: slotPath.appending(path: path))
    }
}

extension PlanField where Value == String {
    package static func wm(slot: Int) -> Self { watermark(slot, .name, \.name) }
    package static func wm_url(slot: Int) -> Self { watermark(slot, .url, \.url) }
}

extension PlanField where Value == Int {
    package static func wm_fade(slot: Int) -> Self { watermark(slot, .fade, \.fade) }
}

extension PlanField where Value == WatermarkOffset {
    package static var wm_x: Self { wm_x(slot: 0) }
    package static var wm_y: Self { wm_y(slot: 0) }
    package static func wm_x(slot: Int) -> Self { watermark(slot, .x, \.x) }
    package static func wm_y(slot: Int) -> Self { watermark(slot, .y, \.y) }
}

extension PlanField where Value == FixedDecimal {
    package static func wm_opacity(slot: Int) -> Self { watermark(slot, .opacity, \.opacity) }
    package static func wm_scale(slot: Int) -> Self { watermark(slot, .scale, \.scale) }
    package static func wm_hscale(slot: Int) -> Self { watermark(slot, .heightScale, \.heightScale) }
}

extension PlanField where Value == ThumbnailSpec.Watermark.Position {
    package static func wm_pos(slot: Int) -> Self { watermark(slot, .position, \.position) }
}

extension PlanField where Value == ThumbnailSpec.Watermark.Place {
    package static func wm_place(slot: Int) -> Self { watermark(slot, .place, \.place) }
}

/// `wm=<name>` or `wm_url=<url>`, placed by `wm_pos` (a compass point or `tile`; default `southeast`), `wm_x`/`wm_y`
/// (CSS px inward from the edges, × dpr, or a fraction of the output's side; with `tile`, the space between the
/// tiles) or `wm_place` (thumbor's axes), `wm_opacity` (0...1; 0 removes it),
/// `wm_scale` (0...1 of the output's width) and `wm_hscale` (at most 0...1 of its height); `wm2*`...`wm4*` the same
/// for more watermarks, laid in order over the first, each slot given only when the one before it is. The `wm_*`
/// options without an image are refused, not ignored. Key ` wm=n:<name>:<digest>,…` for a named one (the digest of
/// its file, so a replaced file makes new keys), ` wm=u:<length>:<url>,…` for one from a URL (the length first, so
/// that no URL can end early and imitate the fields after it); ` wm2=…` to ` wm4=…` for the others.
enum WatermarkOperation: OperationDescriptor {
    static let parameters: [ThumbParameter] = WatermarkField.slots.flatMap { $0 }
    static let placeReason =
        "must be X,Y, each N, -N, Np or -Np (whole N: pixels up to 4096, percent up to 1000), center or repeat"

    static let unit = FixedDecimal.zero...FixedDecimal.one
    static let fadeRange = 0...100
    static let positionReason = "must be centre, a compass point or tile"
    static let offsetReason =
        "must be a whole number 0...\(ThumbnailSpec.Watermark.maxOffset) (× dpr) or a fraction 0...1 of the output's side"

    static func parse(_ parameter: ThumbParameter, _ text: String, into values: inout PlanValues) throws(SpecError) {
        guard let (slot, field) = WatermarkField.owners[parameter] else { return }
        var mark = values.watermarks[slot]
        switch field {
        case .name: mark.name = text
        case .url: mark.url = text
        case .position:
            if text == "tile" {
                mark.position = .tile
            } else if let gravity = Gravity(rawValue: text == "center" ? "centre" : text) {
                mark.position = .gravity(gravity)
            } else {
                throw SpecError(field: parameter.rawValue, reason: positionReason)
            }
        case .x, .y:
            let value: WatermarkOffset
            if let pixels = ThumbValue.integer(text) {
                value = .pixels(pixels)
            } else if text.hasPrefix("0."), let fraction = FixedDecimal(parsing: text) {
                value = .fraction(fraction)
            } else {
                throw SpecError(field: parameter.rawValue, reason: offsetReason)
            }
            if field == .x { mark.x = value } else { mark.y = value }
        case .opacity: mark.opacity = try ThumbValue.decimal(text, parameter, within: unit)
        case .heightScale: mark.heightScale = try ThumbValue.decimal(text, parameter, within: unit)
        case .place:
            let axes = text.split(separator: ",", omittingEmptySubsequences: false)
            guard axes.count == 2, let x = ThumbnailSpec.Watermark.PlaceAxis(axes[0]),
                let y = ThumbnailSpec.Watermark.PlaceAxis(axes[1])
            else { throw SpecError(field: parameter.rawValue, reason: placeReason) }
            mark.place = ThumbnailSpec.Watermark.Place(x: x, y: y)
        case .scale: mark.scale = try ThumbValue.decimal(text, parameter, within: unit)
        case .fade: mark.fade = try ThumbValue.integer(text, parameter, within: fadeRange)
        }
        values.watermarks[slot] = mark
    }

    /// Each slot's image (a configured name's digest, a URL made canonical), then its options, offsets times the dpr.
    static func build(
        _ values: PlanValues, _ context: OperationContext, into operations: inout ThumbnailSpec.Operations
    ) throws(SpecError) {
        var marks: [ThumbnailSpec.Watermark] = []
        for slot in 0..<ThumbnailSpec.Watermark.maxCount {
            let slotValues = values.watermarks[slot]
            if slotValues.isEmpty { continue }
            // A slot after an empty one would be read as that one: refused, so one plan has one spelling.
            if marks.count < slot {
                throw SpecError(field: WatermarkField.name.parameter(slot).rawValue, reason: slotReason(slot - 1))
            }
            guard let mark = try build(slot, slotValues, context) else { continue }
            marks.append(mark)
        }
        operations.watermarks = marks
    }

    private static func slotReason(_ slot: Int) -> String {
        "needs \(WatermarkField.name.parameter(slot).rawValue) or \(WatermarkField.url.parameter(slot).rawValue) first"
    }

    /// Slot `slot`'s watermark, nil when only options without an image are given there.
    private static func build(
        _ slot: Int, _ values: WatermarkValues, _ context: OperationContext
    ) throws(SpecError) -> ThumbnailSpec.Watermark? {
        func name(_ field: WatermarkField) -> String { field.parameter(slot).rawValue }
        var watermark: ThumbnailSpec.Watermark
        switch (values.name, values.url) {
        case (nil, nil):
            let given: [(WatermarkField, Bool)] = [
                (.position, values.position != nil), (.x, values.x != nil), (.y, values.y != nil),
                (.opacity, values.opacity != nil), (.scale, values.scale != nil),
                (.heightScale, values.heightScale != nil), (.place, values.place != nil), (.fade, values.fade != nil),
            ]
            if let (field, _) = given.first(where: { $0.1 }) {
                throw SpecError(field: name(field), reason: "needs \(name(.name)) or \(name(.url))")
            }
            return nil
        case (.some, .some):
            throw SpecError(field: name(.url), reason: "give \(name(.name)) or \(name(.url)), not both")
        case (let named?, nil):
            guard let digest = context.watermarks.digest(named: named) else {
                throw SpecError(field: name(.name), reason: "no watermark of that name is configured")
            }
            watermark = ThumbnailSpec.Watermark(image: .named(named, digest: digest))
        case (nil, let text?):
            guard let url = context.watermarks.canonicalURL(text) else {
                throw SpecError(field: name(.url), reason: "must be an absolute http(s) URL or s3://bucket/key")
            }
            watermark = ThumbnailSpec.Watermark(image: .url(url))
        }
        if let position = values.position { watermark.position = position }
        switch values.x {
        case .pixels(let x)?: watermark.offsetX = ThumbValue.scaled(x, dpr: context.dpr)
        case .fraction(let x)?: watermark.relativeOffsetX = x
        case nil: break
        }
        switch values.y {
        case .pixels(let y)?: watermark.offsetY = ThumbValue.scaled(y, dpr: context.dpr)
        case .fraction(let y)?: watermark.relativeOffsetY = y
        case nil: break
        }
        if let opacity = values.opacity { watermark.opacity = opacity }
        if let scale = values.scale { watermark.scale = scale }
        if let heightScale = values.heightScale { watermark.heightScale = heightScale }
        if let fade = values.fade { watermark.fade = fade }
        if let place = values.place {
            let placed: [(WatermarkField, Bool)] = [
                (.position, values.position != nil), (.x, values.x != nil), (.y, values.y != nil),
            ]
            if let (field, _) = placed.first(where: { $0.1 }) {
                throw SpecError(
                    field: name(field),
                    reason: "give \(name(.place)) or \(name(.position)), \(name(.x)) and \(name(.y)), not both")
            }
            watermark.place = place
        }
        return watermark
    }

    static func validate(_ operations: ThumbnailSpec.Operations) throws(SpecError) {
        guard operations.watermarks.count <= ThumbnailSpec.Watermark.maxCount else {
            throw SpecError(field: "wm", reason: "at most \(ThumbnailSpec.Watermark.maxCount) watermarks")
        }
        for (slot, watermark) in operations.watermarks.enumerated() {
            func parameter(_ field: WatermarkField) -> ThumbParameter { field.parameter(slot) }
            try checkPosition(watermark.position, parameter(.position))
            let offsets = [
                (watermark.offsetX, watermark.relativeOffsetX, WatermarkField.x),
                (watermark.offsetY, watermark.relativeOffsetY, .y),
            ]
            for (offset, fraction, field) in offsets {
                _ = try checkedOffset(offset, parameter(field))
                guard fraction == .zero || (offset == 0 && fraction > .zero && fraction < .one) else {
                    throw SpecError(field: parameter(field).rawValue, reason: offsetReason)
                }
                if watermark.place != nil && (offset != 0 || fraction != .zero) {
                    throw SpecError(
                        field: parameter(field).rawValue,
                        reason: "give \(parameter(.place).rawValue) or \(parameter(.position).rawValue), "
                            + "\(parameter(.x).rawValue) and \(parameter(.y).rawValue), not both")
                }
            }
            _ = try ThumbValue.checked(watermark.opacity, parameter(.opacity), in: unit)
            _ = try ThumbValue.checked(watermark.scale, parameter(.scale), in: unit)
            _ = try ThumbValue.checked(watermark.heightScale, parameter(.heightScale), in: unit)
            _ = try ThumbValue.checked(watermark.fade, parameter(.fade), in: fadeRange)
            if let place = watermark.place {
                for axis in [place.x, place.y] {
                    let limit: Int
                    switch axis {
                    case .startPercent, .endPercent: limit = 1000
                    default: limit = ThumbnailSpec.Watermark.maxOffset
                    }
                    guard (0...limit).contains(axis.value) else {
                        throw SpecError(field: parameter(.place).rawValue, reason: placeReason)
                    }
                }
            }
        }
    }

    /// Smart gravities find a region of the picture; they are not places to put a watermark.
    private static func checkPosition(
        _ position: ThumbnailSpec.Watermark.Position, _ parameter: ThumbParameter
    ) throws(SpecError) {
        if case .gravity(let gravity) = position, gravity.looksAtPixels {
            throw SpecError(field: parameter.rawValue, reason: positionReason)
        }
    }

    private static func checkedOffset(_ offset: Int, _ parameter: ThumbParameter) throws(SpecError) -> Int {
        guard (0...ThumbnailSpec.Watermark.maxOffset).contains(offset) else {
            throw SpecError(field: parameter.rawValue, reason: offsetReason)
        }
        return offset
    }

    /// An invisible watermark is none (the ones after it move up a slot).
    static func normalize(_ operations: inout ThumbnailSpec.Operations) {
        let invisible = { (mark: ThumbnailSpec.Watermark) in mark.opacity == .zero || mark.fade == fadeRange.upperBound
        }
        if operations.watermarks.contains(where: invisible) { operations.watermarks.removeAll(where: invisible) }
    }

    static func appendKey(_ operations: ThumbnailSpec.Operations, to text: inout String) {
        for (slot, watermark) in operations.watermarks.enumerated() {
            text += slot == 0 ? " wm=" : " wm\(slot + 1)="
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
            if watermark.relativeOffsetX != .zero { text += ",rx=\(watermark.relativeOffsetX)" }
            if watermark.relativeOffsetY != .zero { text += ",ry=\(watermark.relativeOffsetY)" }
            if watermark.fade != 0 { text += ",fade=\(watermark.fade)" }
        }
    }

    /// Each slot's `wm` (a configured name; the digest is the configuration's) or `wm_url`, then the options that
    /// differ from their defaults.
    static func appendQuery(_ operations: ThumbnailSpec.Operations, to fields: inout [CanonicalField]) {
        for (slot, watermark) in operations.watermarks.enumerated() {
            func parameter(_ field: WatermarkField) -> ThumbParameter { field.parameter(slot) }
            switch watermark.image {
            case .named(let name, _): fields.append(CanonicalField(parameter(.name), name))
            case .url(let url): fields.append(CanonicalField(parameter(.url), url, isURL: true))
            }
            switch watermark.position {
            case .tile: fields.append(CanonicalField(parameter(.position), "tile"))
            case .gravity(let gravity) where gravity != .southEast:
                fields.append(CanonicalField(parameter(.position), gravity.rawValue))
            case .gravity: break
            }
            if watermark.offsetX != 0 { fields.append(CanonicalField(parameter(.x), String(watermark.offsetX))) }
            if watermark.relativeOffsetX != .zero {
                fields.append(CanonicalField(parameter(.x), watermark.relativeOffsetX.description))
            }
            if watermark.offsetY != 0 { fields.append(CanonicalField(parameter(.y), String(watermark.offsetY))) }
            if watermark.relativeOffsetY != .zero {
                fields.append(CanonicalField(parameter(.y), watermark.relativeOffsetY.description))
            }
            if watermark.opacity != .one {
                fields.append(CanonicalField(parameter(.opacity), watermark.opacity.description))
            }
            if watermark.scale != .zero {
                fields.append(CanonicalField(parameter(.scale), watermark.scale.description))
            }
            if watermark.heightScale != .zero {
                fields.append(CanonicalField(parameter(.heightScale), watermark.heightScale.description))
            }
            if let place = watermark.place { fields.append(CanonicalField(parameter(.place), place.text)) }
            if watermark.fade != 0 { fields.append(CanonicalField(parameter(.fade), String(watermark.fade))) }
        }
    }

    /// Every field but the image, which the render sets while it holds the bytes.
    static func fill(_ operations: ThumbnailSpec.Operations, into params: inout ThumbdVipsThumbnailParams) {
        let count = min(operations.watermarks.count, ThumbnailSpec.Watermark.maxCount)
        params.watermark_count = Int32(count)
        withUnsafeMutableBytes(of: &params.watermarks) { raw in
            let marks = raw.bindMemory(to: ThumbdVipsWatermark.self)
            for (slot, watermark) in operations.watermarks.prefix(count).enumerated() {
                var mark = ThumbdVipsWatermark()
                switch watermark.position {
                case .tile: mark.tile = 1
                case .gravity(let gravity): mark.gravity = gravity.vipsGravity
                }
                mark.x = Int32(watermark.offsetX)
                mark.y = Int32(watermark.offsetY)
                mark.x_fraction = watermark.relativeOffsetX.value
                mark.y_fraction = watermark.relativeOffsetY.value
                mark.opacity = watermark.opacity.value
                mark.scale = watermark.scale.value
                mark.height_scale = watermark.heightScale.value
                mark.fade = Int32(watermark.fade)
                if let place = watermark.place {
                    mark.place = 1
                    mark.place_kind = (place.x.vipsKind, place.y.vipsKind)
                    mark.place_value = (Int32(place.x.value), Int32(place.y.value))
                }
                marks[slot] = mark
            }
        }
    }
}
