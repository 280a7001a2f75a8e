// SPDX-License-Identifier: Apache-2.0
import Thumbnailing

/// A thumbor URL compiled into the plan's typed values (docs/compatibility.md, "thumbor", has the table and the
/// differences that remain).
///
/// thumbor flips (negative sizes) and turns (`rotate`) after its crop and resize; thumbd turns first. So the turn is
/// composed into one orientation, the box trades sides when the turn does, and the crop region (fractions), the
/// alignment and the focal point are carried into the turned picture (``DialectGeometry``): the output is the same
/// picture. What cannot be carried without the source's size (a crop in pixels with a turn or flip) is refused.
extension ThumborPath {
    /// The plan this URL names.
    /// - Throws: `RequestError` naming the thumbor option: `.unsupportedOption` for what thumbd cannot honour,
    ///   `.invalidValue` for a bad argument.
    package func plan() throws(RequestError) -> ThumbnailPlan {
        try plan(refusingSkipped: false).plan
    }

    /// The plan this URL names and the filters thumbor would skip in it (``ThumborFilters/skipped``).
    /// - Parameter refusingSkipped: refuse such a filter (a 400 naming it) instead of skipping it.
    /// - Parameter exactCrop: the crop mode with both sides crops as thumbor does (`thumbor.exact_crop`).
    package func plan(refusingSkipped: Bool, exactCrop: Bool = false) throws(RequestError) -> (
        plan: ThumbnailPlan, skipped: [String]
    ) {
        if debug { throw .unsupportedOption("debug") }
        var filters = try ThumborFilters(self.filters, refusingSkipped: refusingSkipped)
        var plan = ThumbnailPlan()
        var source = try Self.imageURL(image)
        if filters.extractsFocal, let extracted = ThumborFilters.extractedFocal(from: source) {
            // thumbor's extract_focal(): the inner image of an image URL that is itself a thumbor URL with a crop.
            source = Self.withScheme(extracted.image)
            filters.setExtractedFocal(x: extracted.x, y: extracted.y, weight: extracted.weight)
        }
        plan.set(.url, source, option: "image")

        // The turn: thumbor's flips, then its rotate filter (counter-clockwise), as one clockwise orientation.
        guard
            let flips = ThumbnailSpec.Orientation.rotated(
                0, flippedHorizontally: flipsHorizontally, vertically: flipsVertically),
            let rotation = ThumbnailSpec.Orientation(degrees: 360 - filters.counterClockwiseDegrees)
        else { throw .invalidValue("rotate", reason: "must be a multiple of 90") }
        let turn = flips.then(rotation)
        if turn.degrees != 0 { plan.set(.rotate, turn.degrees, option: filters.rotateName ?? "size") }
        if turn.mirrored { plan.set(.flip, ThumbnailSpec.Flip(horizontal: true, vertical: false), option: "size") }

        try setBox(into: &plan, turn: turn, filters: &filters, exactCrop: exactCrop)
        try setRegion(into: &plan, turn: turn)
        try filters.apply(to: &plan, fitIn: fitIn != nil)
        return (plan, filters.skipped)
    }

    /// The box, fit and enlargement, the gravity or smart crop.
    private func setBox(
        into plan: inout ThumbnailPlan, turn: ThumbnailSpec.Orientation, filters: inout ThumborFilters, exactCrop: Bool
    ) throws(RequestError) {
        func pixels(_ side: Side) -> Int? {
            guard case .pixels(let value) = side else { return nil }
            return value
        }
        if let proportion = filters.proportion {
            // thumbor scales its output after the resize (a post-transform filter), not the box.
            // Four decimals, as `/thumb`'s `scale` holds it.
            let units = Int((proportion * Double(FixedDecimal.unitsPerOne)).rounded())
            plan.set(.scale, FixedDecimal(units: max(1, units)), option: "proportion")
        }
        var (width, height) = (pixels(self.width), pixels(self.height))
        if width == nil && height == nil {
            // No size, `orig` or 0: the picture at its own size (up to thumbd's largest side).
            plan.set(.w, ThumbnailSpec.maxDimension, option: "size")
            plan.set(.h, ThumbnailSpec.maxDimension, option: "size")
            plan.set(.enlarge, false, option: "size")
            return
        }
        // `orig` beside a number: that side is the picture's (after orientation, trim and crop), which the render
        // knows once it reads the header; the box holds thumbd's largest side for it.
        var original = (width: self.width == .original, height: self.height == .original)
        if original.width || original.height {
            if original.width { width = ThumbnailSpec.maxDimension }
            if original.height { height = ThumbnailSpec.maxDimension }
        }
        if turn.swapsSides {
            (width, height) = (height, width)
            original = (original.height, original.width)
        }
        if original.width || original.height {
            var sides: ThumbnailSpec.Operations.OriginalSides = []
            if original.width { sides.insert(.width) }
            if original.height { sides.insert(.height) }
            plan.set(.orig, sides, option: "size")
        }
        if fitIn == .fitIn || fitIn == .adaptiveFitIn, !filters.upscale, !filters.stretch, !filters.fills {
            // Inside the box, never enlarged: the picture's own size at most, so a box beyond thumbd's largest side
            // is that side (the result is bounded there, not the box refused).
            width = width.map { min($0, ThumbnailSpec.maxDimension) }
            height = height.map { min($0, ThumbnailSpec.maxDimension) }
        }
        if let width { plan.set(.w, width, option: "width") }
        if let height { plan.set(.h, height, option: "height") }

        if let fitIn {
            // full-fit-in covers the box without cropping, and thumbor enlarges a smaller picture to do it;
            // adaptive- turns the box to the picture's orientation first.
            let full = fitIn == .fullFitIn || fitIn == .adaptiveFullFitIn
            let name = Self.fitInNames[fitIn] ?? "fit-in"
            // thumbor's no_upscale() bounds full-fit-in's box by the picture (resolved by the render: `enlarge=0`
            // beside thumbor's rounding).
            plan.set(.enlarge, (full && !(filters.noUpscale && !filters.fills)) || filters.upscale, option: name)
            if full { plan.set(.fit, Fit.outside, option: name) }
            if fitIn == .adaptiveFitIn || fitIn == .adaptiveFullFitIn { plan.set(.adaptive, true, option: name) }
            // thumbor's own arithmetic for the size (a side derived and rounded, then fit-in's rounding, its
            // upscale() and adaptive turn), which the render applies once it knows the picture's. A plain fit-in with
            // both sides is thumbd's contain (the two differ only where a side is exactly half a pixel, and this way
            // it stays one entry with /thumb's and imgproxy's); a letterbox (fill) is thumbd's, the canvas the box.
            let adaptive = fitIn == .adaptiveFitIn || fitIn == .adaptiveFullFitIn
            let sized = full || adaptive || filters.upscale || width == nil || height == nil
            if (!filters.fills && sized) || (filters.fills && filters.noUpscale && !full && !filters.upscale) {
                // (with fill(), only no_upscale() changes thumbd's letterbox: the box at most the picture)
                plan.set(.rounding, full ? .thumborFullFitIn : .thumborFitIn, option: name)
            }
            // thumbor reads stretch() only in its crop mode: beside fit-in it changes nothing.
            return
        }
        // thumbor's crop mode resizes to the box whatever the source's size, unless no_upscale.
        plan.set(.enlarge, !filters.noUpscale, option: "no_upscale")
        guard width != nil && height != nil else {
            // The missing side is the picture's aspect rounded half to even, as thumbor derives it.
            plan.set(.rounding, .thumborCrop, option: "size")
            return
        }
        if filters.stretch {
            plan.set(.fit, Fit.fill, option: "stretch")
            return
        }
        plan.set(.fit, Fit.cover, option: "size")
        if exactCrop {
            // thumbor's region: it crops whole pixels of the picture to the box's aspect (one side whole, the other
            // rounded) around its point, then stretches them to the box; thumbd's cover keeps the aspect exactly,
            // which moves a narrow crop by up to half a pixel of the picture (many pixels of the output once
            // enlarged). Off by default: the plain crop mode stays one entry with /thumb's and imgproxy's cover.
            plan.set(.rounding, .thumborCrop, option: "size")
        }
        if let focal = filters.focal(within: focalCrop) {
            if turn == .none && trim == nil {
                plan.set(.gravity, PlanGravity.focalPixels(x: focal.x, y: focal.y), option: "focal")
            } else {
                // thumbor measures the point in its trimmed picture before it turns the output; thumbd turns, then
                // trims: the point is measured from the corner of the trimmed picture the turn takes the top-left
                // corner to, which the render resolves once it knows the picture's size.
                let corner = DialectGeometry.map(.northWest, through: turn)
                let (x, y) = turn.swapsSides ? (focal.y, focal.x) : (focal.x, focal.y)
                plan.set(.gravity, PlanGravity.focalPixels(x: x, y: y, corner: corner), option: "focal")
            }
        } else if smart {
            // thumbor's detectors (faces, then features) choose the focal point once the render knows the source.
            plan.set(.gravity, PlanGravity.gravity(.smart), option: "smart")
        } else {
            let x = [.left: -1, .center: 0, .right: 1][horizontalAlignment] ?? 0
            let y = [.top: -1, .middle: 0, .bottom: 1][verticalAlignment] ?? 0
            let gravity = DialectGeometry.map(DialectGeometry.compass(x, y), through: turn)
            if gravity != .centre { plan.set(.gravity, PlanGravity.gravity(gravity), option: "halign") }
        }
    }

    /// The manual crop in pixels, as thumbor drops the focal points outside it (nil without one, or with a trim,
    /// which moves the crop but not the points: thumbd cannot know by how much before the render).
    private var focalCrop: (left: Int, top: Int, right: Int, bottom: Int)? {
        guard trim == nil, let crop, let left = Int(crop.left), let top = Int(crop.top), let right = Int(crop.right),
            let bottom = Int(crop.bottom), right > left, bottom > top
        else { return nil }
        return (left, top, right, bottom)
    }

    /// The manual crop and the trim.
    private func setRegion(into plan: inout ThumbnailPlan, turn: ThumbnailSpec.Orientation) throws(RequestError) {
        if let trim {
            // thumbd trims the turned picture: thumbor's corner, wherever the turn puts it.
            let corner = DialectGeometry.map(trim.corner == .topLeft ? .northWest : .southEast, through: turn)
            let corners: [Gravity: ThumbnailSpec.Trim.Corner] = [
                .northEast: .topRight, .southWest: .bottomLeft, .southEast: .bottomRight,
            ]
            // thumbor's own measure (_bounding_box.c): the Euclidean distance over R, G, B (and alpha), unsmoothed.
            let value = ThumbnailSpec.Trim(
                threshold: trim.tolerance, colour: nil, corner: corners[corner] ?? .topLeft, euclidean: true)
            plan.set(.trim, value, option: "trim")
        }
        guard let crop, !isEmptyCrop else { return }
        if [crop.left, crop.top, crop.right, crop.bottom].contains(where: { $0.contains(".") }) {
            guard let left = Double(crop.left), let top = Double(crop.top), let right = Double(crop.right),
                let bottom = Double(crop.bottom), right > left, bottom > top, right <= 1, bottom <= 1
            else {
                throw .invalidValue("crop", reason: "fractions need left < right ≤ 1 and top < bottom ≤ 1")
            }
            let region = DialectGeometry.map(
                region: (left, top, right - left, bottom - top), through: turn)
            let fraction = DialectGeometry.decimal
            let value = ThumbnailSpec.Crop.fractions(
                left: fraction(region.left), top: fraction(region.top), width: fraction(region.width),
                height: fraction(region.height))
            plan.set(.crop, value, option: "crop")
            return
        }
        guard let left = Int(crop.left), let top = Int(crop.top), let right = Int(crop.right),
            let bottom = Int(crop.bottom)
        else { throw .invalidValue("crop", reason: "needs whole numbers") }
        // thumbor drops a crop whose right or bottom is not beyond its left or top, and renders the rest.
        guard right > left, bottom > top else { return }
        guard turn != .none else {
            let region = ThumbnailSpec.Crop.pixels(left: left, top: top, width: right - left, height: bottom - top)
            plan.set(.crop, region, option: "crop")
            // thumbor 7.8 trims first, then moves the crop by the trimmed frame's corner and clamps it to the frame:
            // the region is measured in the untrimmed picture (its documentation says the crop comes first).
            if trim != nil { plan.set(.crop_frame, true, option: "crop") }
            return
        }
        // thumbor crops before it turns; thumbd after. Its region, measured from the picture's top-left corner, is
        // measured in the turned picture from the corner the turn takes that one to: a placed crop, which the
        // render resolves once it knows the picture's size.
        let corner = DialectGeometry.map(.northWest, through: turn)
        let swaps = turn.swapsSides
        let size = swaps ? (bottom - top, right - left) : (right - left, bottom - top)
        let offset = swaps ? (top, left) : (left, top)
        plan.set(
            .crop, ThumbnailSpec.Crop.placed(width: .pixels(size.0), height: .pixels(size.1), gravity: .centre),
            option: "crop")
        plan.set(.crop_gravity, ThumbnailSpec.CropGravity.compass(corner, x: .zero, y: .zero), option: "crop")
        if offset != (0, 0) {
            plan.set(.crop_offset, ThumbnailSpec.CropOffset(x: .pixels(offset.0), y: .pixels(offset.1)), option: "crop")
        }
        // With a trim, thumbor moves the crop by the trimmed frame's corner: placed before the trim, cut to it.
        if trim != nil { plan.set(.crop_frame, true, option: "crop") }
        // thumbor's arithmetic also clamps the region to the picture (cut at its edges, not moved inside it).
        if plan.values.rounding == nil {
            plan.set(.rounding, fitIn == nil ? .thumborCrop : .thumborFitIn, option: "crop")
        }
    }

    /// The fit-in segments as written, for errors.
    package static let fitInNames: [FitIn: String] = [
        .fitIn: "fit-in", .fullFitIn: "full-fit-in", .adaptiveFitIn: "adaptive-fit-in",
        .adaptiveFullFitIn: "adaptive-full-fit-in",
    ]

    /// `0x0:0x0`: thumbor's spelling of no crop.
    private var isEmptyCrop: Bool {
        guard let crop else { return true }
        return [crop.left, crop.top, crop.right, crop.bottom].allSatisfy { Double($0) == 0 }
    }

    /// The image part as a source URL: percent-decoded once (as thumbor's router does), `http://` put in front of
    /// a URL without a scheme, and a scheme's `//` that a proxy merged into one `/` restored.
    package static func imageURL(_ image: Substring) throws(RequestError) -> String {
        guard let decoded = QueryParameters.percentDecode(image.utf8) else {
            throw .malformedPath("the image has a malformed percent-escape")
        }
        return withScheme(decoded)
    }

    /// A decoded image URL with thumbor's scheme rules (``imageURL(_:)``).
    package static func withScheme(_ decoded: String) -> String {
        let lowered = decoded.prefix(8).lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") { return decoded }
        for scheme in ["http:/", "https:/"] where lowered.hasPrefix(scheme) {
            return scheme + "/" + decoded.dropFirst(scheme.count)
        }
        // Another scheme stays as written (and is refused as a source); a bare host gets thumbor's `http://`.
        if let colon = decoded.firstRange(of: "://"), !decoded[..<colon.lowerBound].contains("/") { return decoded }
        return "http://" + decoded
    }
}
