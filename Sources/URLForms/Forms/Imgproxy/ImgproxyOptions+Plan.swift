// SPDX-License-Identifier: Apache-2.0
import Thumbnailing

/// imgproxy's options compiled into the plan's typed values (docs/compatibility.md, "imgproxy", has the table).
///
/// Where thumbd's plan means exactly what imgproxy does, the option becomes the parameter; where the result would
/// depend on the source in a way the plan cannot say (its size), the option is refused by name rather than
/// approximated: `ex:1` on a `fill` without `el:1`. A `crop` the plan cannot place
/// without the picture's size is a placed crop, which the render resolves once it has read the header. (`rt:auto`, which depends on the source's orientation, is the plan's `fit=auto`.)
extension ImgproxyOptions {
    /// The plan of a parsed path.
    /// - Parameter rules: `/thumb`'s presets (what a named preset sets decides whether the URL needs a box of its
    ///   own) and `image.presets_only` (the presets-only form: presets, a source and a format, nothing else).
    /// - Throws: `RequestError` naming the option as written, or `preset`.
    package static func plan(
        _ components: ImgproxyPath.Components, rules: ThumbQueryRules
    ) throws(RequestError) -> ThumbnailPlan {
        var options = ImgproxyOptions()
        var plan = ThumbnailPlan()
        if let presets = components.presets {
            plan.presets = presets.joined(separator: ",")
        } else {
            for option in components.options { try options.apply(option) }
            if !options.presets.isEmpty { plan.presets = options.presets.joined(separator: ",") }
        }
        if let raw = options.raw, raw.value, components.presets == nil {
            try source(components.source, into: &plan)
            try options.compileRaw(raw.option, sourceExtension: components.sourceExtension, into: &plan)
            return plan
        }
        // The source's extension is imgproxy's last word on the format, after every option.
        if let text = components.sourceExtension {
            options.format = Given(value: try outputFormat(text, "extension"), option: "extension")
        }
        try source(components.source, into: &plan)
        if components.presets != nil {
            if let format = options.format {
                plan.set(.format, FormatChoice.exactly(format.value), option: format.option)
            }
            return plan
        }
        let base = try rules.presets.values(named: plan.presets)
        try options.compileBox(into: &plan, presetSize: (base.width != nil, base.height != nil))
        try options.compileCrop(into: &plan)
        try options.compileRest(into: &plan)
        return plan
    }

    /// The source: an absolute http(s) URL, or `s3://bucket/key` as imgproxy writes S3 objects (checked by `/thumb`'s
    /// rules as `url`: read from `s3.*` when the bucket is in `s3.source_buckets`); imgproxy's other storage schemes
    /// are refused by name.
    private static func source(_ url: String, into plan: inout ThumbnailPlan) throws(RequestError) {
        if let colon = url.firstIndex(of: ":"), url[colon...].hasPrefix("://") {
            let scheme = url[..<colon].lowercased()
            if ["local", "gs", "abs", "swift"].contains(scheme) { throw .unsupportedOption("\(scheme)://") }
        }
        plan.set(.url, url, option: "source")
    }

    // MARK: - Box

    /// `w`, `h`, `fit`, `enlarge`, `dpr` and `gravity` from the resizing options.
    private func compileBox(into plan: inout ThumbnailPlan, presetSize: (width: Bool, height: Bool))
        throws(RequestError)
    {
        // min-width / min-height raise the scale (enlarging even without `el`): resolved by the render once the
        // picture's size is known (`min_w`, `min_h`).
        if let minWidth, minWidth.value > 0 { plan.set(.min_w, minWidth.value, option: minWidth.option) }
        if let minHeight, minHeight.value > 0 { plan.set(.min_h, minHeight.value, option: minHeight.option) }
        var boxWidth = width?.value ?? 0
        var boxHeight = height?.value ?? 0
        if let zoom, zoom.value.x != .one || zoom.value.y != .one {
            // Zoom multiplies the box, so it needs one the URL gives.
            guard boxWidth > 0 || boxHeight > 0, !presetSize.width, !presetSize.height else {
                throw .unsupportedOption(zoom.option)
            }
            guard zoom.value.x == zoom.value.y || (resizingType?.value == .force && boxWidth > 0 && boxHeight > 0)
            else { throw .unsupportedOption("\(zoom.option):x:y") }
            if boxWidth > 0 { boxWidth = max(1, Int((Double(boxWidth) * zoom.value.x.value).rounded())) }
            if boxHeight > 0 { boxHeight = max(1, Int((Double(boxHeight) * zoom.value.y.value).rounded())) }
        }
        let enlarges = enlarge?.value ?? false
        let hasWidth = boxWidth > 0 || presetSize.width
        let hasHeight = boxHeight > 0 || presetSize.height
        guard hasWidth || hasHeight else {
            try compileNoBox(into: &plan, enlarges: enlarges)
            return
        }
        let type = resizingType?.value ?? .fit
        let extending = extend.flatMap { $0.value.isEnabled ? $0 : nil }
        if !enlarges && extending == nil && (type == .fit || (!(hasWidth && hasHeight) && type != .force)) {
            // Inside the box, never enlarged: at most the picture's own size, so a box beyond thumbd's largest side
            // (times dpr) is that side: the result is bounded there, not the box refused (`rs:fit:5000:5000`).
            let limit = Int(Double(ThumbnailSpec.maxDimension) / (dpr?.value.value ?? 1))
            boxWidth = min(boxWidth, max(limit, 1))
            boxHeight = min(boxHeight, max(limit, 1))
        }
        if boxWidth > 0 { plan.set(.w, boxWidth, option: width?.option ?? "w") }
        if boxHeight > 0 { plan.set(.h, boxHeight, option: height?.option ?? "h") }
        if let dpr { plan.set(.dpr, dpr.value, option: dpr.option) }
        if let enlarge { plan.set(.enlarge, enlarge.value, option: enlarge.option) }
        // Without `el`, imgproxy lowers the dpr until the box asks no more of the picture than it has; only a box
        // that is the output (a crop or a canvas) shows it: contain's picture is the same either way.
        let extendsCanvas = extending != nil || extendAspectRatio?.value.isEnabled == true
        if let dpr, dpr.value > .one, !enlarges, hasWidth && hasHeight, type != .fit || extendsCanvas {
            plan.set(.dpr_limit, FixedDecimal.one, option: dpr.option)
        }

        let typeOption = resizingType?.option ?? "rt"
        let toAspect = extendAspectRatio.flatMap { $0.value.isEnabled ? $0 : nil }
        // Extending to the box or its aspect ratio changes nothing when the picture always reaches the box (with
        // `el`); without it, the canvas is extended after the fit (`extend=box|aspect`), placed by the extension's
        // gravity, which is then the plan's (a `g:` that differs is refused: thumbd has one gravity).
        func extendUnlessEnlarged(cropGravity: Bool) throws(RequestError) {
            guard !enlarges, let canvas = extending ?? toAspect else {
                try compileGravity(into: &plan)
                return
            }
            let placement = canvas.value.gravity ?? .compass(.centre)
            guard case .compass(let point) = placement else { throw .unsupportedOption("\(canvas.option):fp") }
            if cropGravity {
                // The cover crop and the extension are placed by one gravity in thumbd.
                let crop = gravity?.value ?? .compass(.centre)
                if crop != placement || gravityOffset.x != .zero || gravityOffset.y != .zero {
                    throw .unsupportedOption("\(canvas.option) placed otherwise than \(gravity?.option ?? "g")")
                }
            }
            plan.set(.extend, extending != nil ? PlanExtend.box : PlanExtend.aspect, option: canvas.option)
            plan.set(.gravity, PlanGravity.gravity(point), option: canvas.option)
        }
        guard hasWidth && hasHeight else {
            // One side: the other follows the aspect ratio (thumbd's one-sided box is `contain` whatever the fit);
            // an extension pads the given side only (the aspect ratio needs both).
            if type == .force { throw .unsupportedOption("\(typeOption):force") }
            if let resizingType { plan.set(.fit, Fit.contain, option: resizingType.option) }
            if let extending, !enlarges {
                plan.set(.extend, PlanExtend.box, option: extending.option)
                let placement = extending.value.gravity ?? .compass(.centre)
                guard case .compass(let point) = placement else { throw .unsupportedOption("\(extending.option):fp") }
                plan.set(.gravity, PlanGravity.gravity(point), option: extending.option)
                return
            }
            try compileGravity(into: &plan)
            return
        }
        switch type {
        case .fit:
            if let canvas = extending ?? (enlarges ? toAspect : nil) {
                let placement = canvas.value.gravity ?? .compass(.centre)
                guard case .compass(let point) = placement else { throw .unsupportedOption("\(canvas.option):fp") }
                plan.set(.fit, Fit.pad, option: canvas.option)
                plan.set(.gravity, PlanGravity.gravity(point), option: canvas.option)
                return
            }
            if let resizingType { plan.set(.fit, Fit.contain, option: resizingType.option) }
            if let toAspect {
                // Not enlarged: the canvas grows around the picture to the box's aspect ratio.
                plan.set(.extend, PlanExtend.aspect, option: toAspect.option)
                let placement = toAspect.value.gravity ?? .compass(.centre)
                guard case .compass(let point) = placement else { throw .unsupportedOption("\(toAspect.option):fp") }
                plan.set(.gravity, PlanGravity.gravity(point), option: toAspect.option)
                return
            }
        case .fill:
            plan.set(.fit, Fit.cover, option: typeOption)
            try extendUnlessEnlarged(cropGravity: true)
            return
        case .fillDown:
            // fill-down differs from fill only when the picture is smaller than the box and not enlarged: then
            // `fit=cover-down` shrinks the box, keeping its aspect, once the render knows the picture's size.
            plan.set(.fit, enlarges ? Fit.cover : Fit.coverDown, option: typeOption)
            try extendUnlessEnlarged(cropGravity: true)
            return
        case .force:
            plan.set(.fit, Fit.fill, option: typeOption)
            try extendUnlessEnlarged(cropGravity: false)
            return
        case .auto:
            // fill or fit by the picture's orientation against the box's: decided by the render (`fit=auto`). An
            // extension would apply to one of the two only.
            if let option = extending?.option ?? toAspect?.option { throw .unsupportedOption(option) }
            plan.set(.fit, Fit.auto, option: typeOption)
        }
        try compileGravity(into: &plan)
    }

    /// No size anywhere: imgproxy keeps the source's size. thumbd's box is then 4096×4096 `contain`, not
    /// enlarged: the same picture up to thumbd's limit of 4096 px a side. `dpr` changes nothing there unless the
    /// picture may be enlarged (then it scales the source, which the plan cannot say).
    private func compileNoBox(into plan: inout ThumbnailPlan, enlarges: Bool) throws(RequestError) {
        if let dpr {
            if dpr.value < .one {
                plan.set(.dpr, dpr.value, option: dpr.option)  // refused by the plan's range
            } else if dpr.value > .one && enlarges {
                throw .unsupportedOption(dpr.option)
            }
        }
        let side = ThumbnailSpec.maxDimension
        plan.set(.w, side, option: width?.option ?? "w")
        plan.set(.h, side, option: height?.option ?? "h")
        plan.set(.fit, Fit.contain, option: resizingType?.option ?? "rt")
        plan.set(.enlarge, false, option: enlarge?.option ?? "el")
    }

    /// `gravity`, for the cover crop (ignored by the other fits, as in imgproxy).
    private func compileGravity(into plan: inout ThumbnailPlan) throws(RequestError) {
        guard let gravity else { return }
        let value: PlanGravity =
            switch gravity.value {
            case .compass(let point): .gravity(point)
            case .smart: .gravity(.attention)
            case .faces: .gravity(.face)
            case .focalPoint(let x, let y): .focalPoint(x: x, y: y)
            }
        plan.set(.gravity, value, option: gravity.option)
        if case .compass = gravity.value, gravityOffset.x != .zero || gravityOffset.y != .zero {
            let offset = ThumbnailSpec.CropOffset(x: Self.offset(gravityOffset.x), y: Self.offset(gravityOffset.y))
            plan.set(.gravity_offset, offset, option: gravity.option)
        }
    }

    // MARK: - Crop

    /// `crop` → the plan's crop region, placed by the crop's gravity or `gravity`.
    ///
    /// Fractions (and whole sides) without offsets are placed exactly for any compass point or focal point, and
    /// pixel sizes from the left (west) or top (north) edge are a region from the corner: both keep the regions
    /// they had before placed crops existed (their keys). Everything else (pixels from any other gravity, pixels
    /// with fractions, offsets) is a placed crop (`crop=W,H&crop_gravity=…&crop_offset=x,y`), resolved by the
    /// render once the picture's size is known, as imgproxy places it. `sm` is refused.
    private func compileCrop(into plan: inout ThumbnailPlan) throws(RequestError) {
        guard let crop else { return }
        let (width, height) = (crop.value.width, crop.value.height)
        guard width != .whole || height != .whole else { return }
        let placement = crop.value.gravity ?? gravity?.value ?? .compass(.centre)
        if placement == .smart {
            // libvips's attention picks the region on the source, once the render has its pixels
            // (`crop_gravity=attention`), as imgproxy's smart crop does before the resize.
            func side(_ side: CropSide) -> ThumbnailSpec.CropLength {
                switch side {
                case .whole: .fraction(.one)
                case .fraction(let value): .fraction(value)
                case .pixels(let count): .pixels(count)
                }
            }
            let region = ThumbnailSpec.Crop.placed(width: side(width), height: side(height), gravity: .centre)
            plan.set(.crop, region, option: crop.option)
            plan.set(
                .crop_gravity, ThumbnailSpec.CropGravity.compass(.attention, x: .zero, y: .zero), option: crop.option)
            return
        }
        // A region of a given size placed on the faces is not what gravity=face does (it chooses the cover's crop).
        if placement == .faces { throw .unsupportedOption("\(crop.option) with obj:face") }
        let sides = [width, height]
        let hasFraction = sides.contains { if case .fraction = $0 { true } else { false } }
        let hasPixels = sides.contains { if case .pixels = $0 { true } else { false } }
        // Without a gravity of its own the crop takes `gravity`'s, offsets included (imgproxy copies both).
        let offsets =
            crop.value.gravity != nil ? (x: crop.value.offsetX, y: crop.value.offsetY) : gravityOffset
        let hasOffsets = offsets.x != .zero || offsets.y != .zero
        if hasFraction && !hasPixels && !hasOffsets {
            let whole = FixedDecimal.unitsPerOne
            func length(_ side: CropSide) -> Int { if case .fraction(let value) = side { value.units } else { whole } }
            let (x, y) = Self.origin(placement, free: (whole - length(width), whole - length(height)))
            let region = ThumbnailSpec.Crop.fractions(
                left: FixedDecimal(units: x), top: FixedDecimal(units: y), width: FixedDecimal(units: length(width)),
                height: FixedDecimal(units: length(height)))
            plan.set(.crop, region, option: crop.option)
            return
        }
        let atEdge: (x: Bool, y: Bool) =
            switch placement {
            case .compass(let point):
                ([.west, .northWest, .southWest].contains(point), [.north, .northWest, .northEast].contains(point))
            case .focalPoint(let x, let y): (x == .zero, y == .zero)
            case .smart, .faces: (false, false)
            }
        // From the left and top edges (or over a whole side) a pixel region is a region from the corner.
        if !hasFraction && !hasOffsets && (width == .whole || atEdge.x) && (height == .whole || atEdge.y) {
            func pixels(_ side: CropSide) -> Int {
                if case .pixels(let count) = side { count } else { ThumbnailSpec.Crop.maxPixels }
            }
            let region = ThumbnailSpec.Crop.pixels(left: 0, top: 0, width: pixels(width), height: pixels(height))
            plan.set(.crop, region, option: crop.option)
            return
        }
        func length(_ side: CropSide) -> ThumbnailSpec.CropLength {
            switch side {
            case .whole: .fraction(.one)
            case .fraction(let value): .fraction(value)
            case .pixels(let count): .pixels(count)
            }
        }
        plan.set(
            .crop, ThumbnailSpec.Crop.placed(width: length(width), height: length(height), gravity: .centre),
            option: crop.option)
        switch placement {
        case .compass(let point):
            if point != .centre {
                plan.set(
                    .crop_gravity, ThumbnailSpec.CropGravity.compass(point, x: .zero, y: .zero), option: crop.option)
            }
            if hasOffsets {
                let offset = ThumbnailSpec.CropOffset(x: Self.offset(offsets.x), y: Self.offset(offsets.y))
                plan.set(.crop_offset, offset, option: crop.option)
            }
        case .focalPoint(let x, let y):
            plan.set(.crop_gravity, ThumbnailSpec.CropGravity.focalPoint(x: x, y: y), option: crop.option)
        case .smart, .faces:
            break  // refused above
        }
    }

    /// A gravity offset as imgproxy reads it: pixels when |v| ≥ 1 (rounded half to even), else a fraction of the
    /// picture's side.
    static func offset(_ value: FixedDecimal) -> ThumbnailSpec.CropLength {
        if value == .zero { return .zero }
        if abs(value.units) >= FixedDecimal.unitsPerOne { return .pixels(Int(value.value.rounded(.toNearestOrEven))) }
        return .fraction(value)
    }

    /// Where a region with `free` units left over on each axis starts, in those units: 0 at the west/north edge,
    /// all of it at the east/south edge, half in the middle; a focal point centres the region on it as far as the
    /// picture allows.
    private static func origin(_ placement: Gravity, free: (Int, Int)) -> (Int, Int) {
        switch placement {
        case .compass(let point):
            let west: Set<Thumbnailing.Gravity> = [.west, .northWest, .southWest]
            let east: Set<Thumbnailing.Gravity> = [.east, .northEast, .southEast]
            let north: Set<Thumbnailing.Gravity> = [.north, .northWest, .northEast]
            let south: Set<Thumbnailing.Gravity> = [.south, .southWest, .southEast]
            let x = west.contains(point) ? 0 : east.contains(point) ? free.0 : free.0 / 2
            let y = north.contains(point) ? 0 : south.contains(point) ? free.1 : free.1 / 2
            return (x, y)
        case .focalPoint(let fx, let fy):
            let whole = FixedDecimal.unitsPerOne
            func start(_ centre: Int, _ free: Int) -> Int { min(max(centre - (whole - free) / 2, 0), free) }
            return (start(fx.units, free.0), start(fy.units, free.1))
        case .smart, .faces:
            return (0, 0)  // refused before
        }
    }

    // MARK: - Raw

    /// `raw:1`: the source's own bytes (`/thumb`'s `raw=1`). imgproxy ignores every other option beside it, and the
    /// source's extension; thumbd refuses what would change the picture, naming it, so nothing is dropped unseen.
    /// What only changes the answer's headers (`exp`, `fn`, `att`, and `cb`, which changes only the URL) is honoured.
    private func compileRaw(
        _ option: String, sourceExtension: String?, into plan: inout ThumbnailPlan
    ) throws(RequestError) {
        let picture: [String?] = [
            resizingType?.option, width?.option, height?.option, minWidth?.option, minHeight?.option, zoom?.option,
            dpr?.option, enlarge?.option, extend?.option, extendAspectRatio?.option, gravity?.option, crop?.option,
            paddingOption, flipHorizontal?.option, flipVertical?.option, watermark?.option, watermarkURL?.option,
            quality?.option, formatQualityOption, format?.option, sourceExtension.map { _ in "extension" },
        ]
        if let given = picture.lazy.compactMap({ $0 }).first {
            throw .invalidValue(given, reason: ThumbnailRequest.notWithRawReason)
        }
        // The answer's options; a picture option set here is refused by name when the request is built.
        plan.layer(direct)
        plan.set(.raw, true, option: option)
    }

    // MARK: - Everything else

    private func compileRest(into plan: inout ThumbnailPlan) throws(RequestError) {
        let flips = (flipHorizontal?.value ?? false, flipVertical?.value ?? false)
        if flips.0 || flips.1 {
            let option = flipVertical?.option ?? flipHorizontal?.option ?? "fl"
            plan.set(.flip, ThumbnailSpec.Flip(horizontal: flips.0, vertical: flips.1), option: option)
        }
        if let paddingOption, padding.contains(where: { ($0 ?? 0) > 0 }) {
            let sides = padding.map { $0 ?? 0 }
            let value = ThumbnailSpec.Padding(top: sides[0], right: sides[1], bottom: sides[2], left: sides[3])
            plan.set(.padding, value, option: paddingOption)
        }
        plan.layer(direct)
        // imgproxy trims before it turns, against the untouched picture's top-left pixel; thumbd trims the turned
        // one, so it takes the corner the turn puts that pixel in. With a colour given, the corner does not matter.
        if let trim = direct.values.trim, trim.colour == nil,
            let turn = ThumbnailSpec.Orientation.rotated(
                direct.values.rotate ?? 0, flippedHorizontally: flips.0, vertically: flips.1)
        {
            let corner = DialectGeometry.map(.northWest, through: turn)
            let corners: [Thumbnailing.Gravity: ThumbnailSpec.Trim.Corner] = [
                .northEast: .topRight, .southWest: .bottomLeft, .southEast: .bottomRight,
            ]
            if let turned = corners[corner] {
                let value = ThumbnailSpec.Trim(threshold: trim.threshold, colour: nil, corner: turned)
                plan.set(.trim, value, option: direct.option(setting: .trim) ?? "trim")
            }
        }
        try compileWatermark(into: &plan)
        if let format { plan.set(.format, FormatChoice.exactly(format.value), option: format.option) }
        if let quality, quality.value > 0 {
            plan.set(.q, quality.value, option: quality.option)
        } else if let formatQualityOption {
            if let format {
                if let value = formatQuality[format.value], value > 0 {
                    plan.set(.q, value, option: formatQualityOption)
                }
            } else {
                // A negotiated format: the quality is chosen once it is (`/thumb`'s `fq`; 0 is the default's).
                let qualities = formatQuality.filter { $0.value > 0 }
                if !qualities.isEmpty { plan.set(.fq, qualities, option: formatQualityOption) }
            }
        }
    }

    /// `watermark` (the configured watermark named ``watermarkName``, or `watermark_url`'s) → `wm`/`wm_url` and
    /// `wm_*`.
    private func compileWatermark(into plan: inout ThumbnailPlan) throws(RequestError) {
        guard let watermark, watermark.value.opacity > .zero else {
            if let watermarkURL {
                throw .invalidValue(watermarkURL.option, reason: "needs wm (the watermark's opacity and position)")
            }
            return
        }
        let mark = watermark.value
        let option = watermark.option
        if let watermarkURL {
            plan.set(.wm_url, watermarkURL.value, option: watermarkURL.option)
        } else {
            plan.set(.wm, Self.watermarkName, option: option)
        }
        plan.set(.wm_pos, mark.position, option: option)
        plan.set(.wm_opacity, mark.opacity, option: option)
        // With `re`, the offsets are the space between the tiles, as `/thumb`'s `wm_x`/`wm_y` with `wm_pos=tile`.
        if mark.offsetX != .pixels(0) { plan.set(.wm_x, mark.offsetX, option: option) }
        if mark.offsetY != .pixels(0) { plan.set(.wm_y, mark.offsetY, option: option) }
        if mark.scale > .zero { plan.set(.wm_scale, mark.scale, option: option) }
    }
}
