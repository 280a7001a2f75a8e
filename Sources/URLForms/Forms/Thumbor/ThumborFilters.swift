// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// thumbor's `filters:` read into what they ask, then set into a plan (``apply(to:fitIn:)``). A filter thumbor 7.8
/// itself skips (an unknown name, or arguments that do not match its pattern: ``ThumborFilterPatterns``) is skipped
/// and named in ``skipped`` (or refused under `thumbor.skipped_filters: refuse`). Every other filter is one of
/// three kinds (docs/compatibility.md): mapped onto the plan's typed values, accepted because it is what thumbd does
/// anyway (`strip_exif`, `strip_icc`, `autojpg`), or refused (`RequestError.unsupportedOption`, a 400 naming it).
/// A filter given twice is refused, except `rotate` (the turns add up), so one URL cannot mean two plans.
package struct ThumborFilters {
    /// The sum of the `rotate` filters' angles, counter-clockwise as thumbor turns, 0...359.
    package private(set) var counterClockwiseDegrees = 0
    /// The name the turn is reported under in errors.
    package private(set) var rotateName: String?
    package private(set) var noUpscale = false
    package private(set) var upscale = false
    package private(set) var stretch = false
    /// `proportion(p)`: the output's sides times p after the resize (0 < p ≤ 1).
    package private(set) var proportion: Double?
    /// Each `focal(AxB:CxD)` (and `extract_focal()`'s crop): the centre of its box, in source pixels (after the EXIF
    /// orientation), weighted by the box's area, as thumbor's `FocalPoint.from_square` makes them.
    private var focalPoints: [(x: Int, y: Int, weight: Int)] = []
    /// The focal point: the points' centre of mass, floored, as thumbor's `get_center_of_mass` finds it.
    package var focal: (x: Int, y: Int)? { focal(within: nil) }

    /// The focal point of the points inside `crop` (left, top, right, bottom, edges included: thumbor drops the
    /// others before it averages), nil when none is.
    package func focal(within crop: (left: Int, top: Int, right: Int, bottom: Int)?) -> (x: Int, y: Int)? {
        let focalPoints = self.focalPoints.filter { point in
            guard let crop else { return true }
            return (crop.left...crop.right).contains(point.x) && (crop.top...crop.bottom).contains(point.y)
        }
        guard !focalPoints.isEmpty else { return nil }
        let total = focalPoints.reduce(0.0) { $0 + Double($1.weight) }
        // (A degenerate extracted crop weighs nothing, which thumbor divides by: the plain mean instead.)
        guard total > 0 else {
            let count = Double(focalPoints.count)
            return (
                Int((focalPoints.reduce(0.0) { $0 + Double($1.x) } / count).rounded(.down)),
                Int((focalPoints.reduce(0.0) { $0 + Double($1.y) } / count).rounded(.down))
            )
        }
        let x = focalPoints.reduce(0.0) { $0 + Double($1.x) * Double($1.weight) } / total
        let y = focalPoints.reduce(0.0) { $0 + Double($1.y) * Double($1.weight) } / total
        return (Int(x.rounded(.down)), Int(y.rounded(.down)))
    }

    /// Adds a focal point (a box's centre and area).
    mutating func addFocalPoint(x: Int, y: Int, weight: Int) { focalPoints.append((x, y, weight)) }
    /// `extract_focal()`: the image URL may be a thumbor URL whose crop is the focal point
    /// (``extractedFocal(from:)``).
    package private(set) var extractsFocal = false
    /// What the remaining filters set, each under the filter's name.
    private var plan = ThumbnailPlan()
    /// `fill(colour[, fill_transparent])`: the colour (nil: transparent) and whether transparency is filled.
    private var fill: (colour: RGBAColour?, transparent: Bool)?
    /// `max_bytes(n)`: set by ``apply(to:fitIn:)`` unless the format is one thumbor does not lower (PNG, GIF).
    private var maxBytes: Int?
    /// Whether `fill()` was given (with fit-in it pads to the box, so the box is the output).
    package var fills: Bool { fill != nil }
    /// `fill(auto)` / `fill(blur)`: the background is taken from the picture (`fill.colour` is then nil).
    private var fillFrom: ThumbnailSpec.BackgroundFill?
    /// How many `watermark()` filters were read (the next one's slot).
    private var watermarks = 0

    /// thumbor's filter names that thumbd refuses: they need a step its pipeline does not have (none left).
    package static let refused: Set<String> = []

    /// The filters thumbor itself would skip (``ThumborFilterPatterns``), by name, in URL order: the answer names them
    /// (`X-Thumbd-Skipped-Filters`).
    package private(set) var skipped: [String] = []

    /// - Parameter refusingSkipped: `thumbor.skipped_filters: refuse`: a filter thumbor would skip is a 400 naming it
    ///   instead of being skipped.
    package init(_ filters: [(name: String, arguments: String)], refusingSkipped: Bool = false) throws(RequestError) {
        var seen = Set<String>()
        var order: [ThumbnailSpec.PixelFilter] = []
        for (name, text) in filters {
            // thumbor's `cover()` is no filter but a look for that text: a GIF source's first frame only.
            if name == "cover" && text.isEmpty {
                plan.set(.animated, false, option: "cover")
                continue
            }
            guard let arguments = ThumborFilterPatterns.arguments(of: name, text) else {
                guard !refusingSkipped else {
                    guard ThumborFilterPatterns.declarations[name] != nil else {
                        throw .unsupportedOption("filter \(RequestError.printable(name.prefix(40)))")
                    }
                    throw .invalidValue(name, reason: "its arguments do not match thumbor's (thumbor skips it)")
                }
                skipped.append(name)
                continue
            }
            // thumbor's rotate turns by multiples of 90 only and leaves the picture alone at any other angle: a skip.
            if name == "rotate", let degrees = Int(arguments[0]), degrees % 90 != 0 {
                guard !refusingSkipped else {
                    throw .invalidValue(name, reason: "must be a multiple of 90 (thumbor leaves other angles alone)")
                }
                skipped.append(name)
                continue
            }
            // Turns add up, watermarks are laid one over another and focal points averaged (as thumbor does); any
            // other filter given twice is refused.
            guard ["rotate", "watermark", "focal"].contains(name) || seen.insert(name).inserted else {
                throw .duplicateParameter("filters:\(name)")
            }
            try read(name, arguments, refusingSkipped: refusingSkipped)
            if let filter = Self.pixelFilters[name] { order.append(filter) }
        }
        // thumbor runs its filters in the URL's order; the plan's `order` says it (nothing when it is the table's).
        if order.count > 1 { plan.set(.order, order, option: "filters") }
    }

    /// thumbor's filters that are a pixel filter of thumbd's, which the plan runs in the URL's order.
    private static let pixelFilters: [String: ThumbnailSpec.PixelFilter] = [
        "saturation": .saturation, "contrast": .contrast, "brightness": .brightness, "grayscale": .grayscale,
        "blur": .blur, "sharpen": .sharpen, "rgb": .rgb, "colorize": .colorize, "curve": .curve,
        "equalize": .equalize, "convolution": .convolution, "noise": .noise,
    ]

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func read(_ name: String, _ arguments: [String], refusingSkipped: Bool) throws(RequestError) {
        func count(_ range: ClosedRange<Int>) throws(RequestError) {
            guard range.contains(arguments.count) else {
                throw .invalidValue(name, reason: "takes \(range.lowerBound)…\(range.upperBound) arguments")
            }
        }
        func number(_ index: Int, _ range: ClosedRange<Double>) throws(RequestError) -> Double {
            guard index < arguments.count, let value = Self.decimal(arguments[index]), range.contains(value) else {
                throw .invalidValue(
                    name, reason: "argument \(index + 1) must be a number \(range.lowerBound)…\(range.upperBound)")
            }
            return value
        }
        func boolean(_ index: Int, _ absent: Bool = false) throws(RequestError) -> Bool {
            guard index < arguments.count else { return absent }
            switch arguments[index].lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: throw .invalidValue(name, reason: "argument \(index + 1) must be true, false, 1 or 0")
            }
        }
        switch name {
        case "quality":
            try count(1...1)
            // thumbor passes any whole number to Pillow, whose JPEG scale stops at 0 (worst) and 100: thumbd's is 1...100.
            plan.set(.q, min(100, max(1, Int(try number(0, 0...1_000_000)))), option: name)
        case "format":
            try count(1...1)
            let format = arguments[0].lowercased()
            // thumbor's format filter leaves a name outside its list (bmp, tiff, …) alone: the default format.
            guard Self.thumborFormats.contains(format) else {
                guard !refusingSkipped else {
                    throw .invalidValue(name, reason: "not a format thumbor writes (thumbor ignores it)")
                }
                skipped.append(name)
                return
            }
            guard let output = Self.formats[format] else {
                throw .unsupportedOption("format(\(RequestError.printable(format.prefix(16))))")
            }
            plan.set(.format, FormatChoice.exactly(output), option: name)
        case "blur":
            try count(1...2)
            // thumbor's sigma is the radius unless given; its kernel stops at 150 px, so a larger sigma blurs
            // little more, and thumbd's sigma stops at 100 (docs/compatibility.md).
            let radius = try number(0, 1...1e9)
            let sigma = arguments.count > 1 ? try number(1, 0...1e9) : 0
            plan.set(.blur, DialectGeometry.decimal(min(100, sigma == 0 ? radius : sigma)), option: name)
        case "sharpen":
            // thumbor's sharpen(amount, radius, luminance_only): thumbd's sharpen takes the radius as its sigma
            // (libvips's unsharp mask works on lightness); the amount is not modelled (docs/compatibility.md).
            try count(3...3)
            _ = try number(0, 0...10)
            let radius = try number(1, 0...10)
            _ = try boolean(2)
            plan.set(.sharpen, DialectGeometry.decimal(radius), option: name)
        case "grayscale":
            try count(0...0)
            // Pillow's Rec. 601 luma, as thumbor's PIL engine converts (`grayscale=rec601`).
            plan.set(.grayscale, ThumbnailSpec.Greyscale.rec601, option: name)
        case "brightness":
            try count(1...1)
            // thumbor adds 255 × n / 100 (C's integer division) to each band; beyond ±255 every band is clamped anyway.
            let delta = Int(try number(0, -1_000_000...1_000_000)) * 255 / 100
            plan.set(.brightness, max(-255, min(255, delta)), option: name)
        case "contrast":
            try count(1...1)
            // thumbor's factor is (n + 100)² / 100 (integer division), then / 100: contrast(50) is 2.25, (-50) 0.25.
            // thumbd's contrast goes up to 10: n from -416 to 216.
            let shifted = Int(try number(0, -416...216)) + 100
            plan.set(.contrast, DialectGeometry.decimal(Double(shifted * shifted / 100) / 100), option: name)
        case "saturation":
            try count(1...1)
            // thumbor's argument is the factor itself (saturation(1.5) is 1.5 times the colour), with thumbor's formula
            // (`saturation_model=hsp`): its negative factors invert the colours about the HSP brightness.
            plan.set(.saturation, DialectGeometry.decimal(try number(0, -1000...1000)), option: name)
            plan.set(.saturation_model, ThumbnailSpec.Operations.SaturationModel.hsp, option: name)
        case "rotate":
            try count(1...1)
            guard let degrees = Int(arguments[0]), degrees % 90 == 0 else {
                throw .invalidValue(name, reason: "must be a multiple of 90 (thumbd does not turn by other angles)")
            }
            counterClockwiseDegrees = ((counterClockwiseDegrees + degrees) % 360 + 360) % 360
            rotateName = name
        case "no_upscale":
            try count(0...0)
            noUpscale = true
        case "upscale":
            try count(0...0)
            upscale = true
        case "stretch":
            try count(0...0)
            stretch = true
        case "proportion":
            try count(1...1)
            let value = try number(0, 0...1)
            guard value > 0 else { throw .invalidValue(name, reason: "must be above 0") }
            proportion = value
        case "max_age":
            // The answer's `Cache-Control` lifetime in seconds (thumbor's `max-age=N,public`; 0: see api.md).
            try count(1...1)
            guard let seconds = ThumbnailRequest.integer(arguments[0]) else {
                throw .invalidValue(name, reason: "argument 1 must be a whole number of seconds")
            }
            plan.set(.max_age, seconds, option: name)
        case "max_bytes":
            try count(1...1)
            // thumbor: 0 is no limit; a limit it cannot reach leaves its lowest quality, as thumbd's floor does.
            let limit = Int(try number(0, 0...1e15))
            let range = ThumbnailSpec.Operations.maxBytesRange
            if limit > 0 { maxBytes = min(range.upperBound, max(range.lowerBound, limit)) }
        case "background_color":
            try count(1...1)
            // thumbor pastes the picture over a canvas of that colour; a transparent canvas changes nothing.
            guard arguments[0].lowercased() != "transparent" else { break }
            plan.set(.bg, try Self.colour(arguments[0], filter: name), option: name)
        case "fill":
            try count(1...2)
            let colour = arguments[0].lowercased()
            if let from = ThumbnailSpec.BackgroundFill(rawValue: colour) {
                // fill(blur, true) composites the picture over its blurred copy: thumbd lays it on unchanged.
                if from == .blur, try boolean(1) { throw .unsupportedOption("fill(blur) with fill_transparent") }
                fillFrom = from
                fill = (nil, try boolean(1))
                break
            }
            fill = (colour == "transparent" ? nil : try Self.colour(colour, filter: name), try boolean(1))
        case "watermark":
            try readWatermark(arguments)
        case "frame":
            // frame(url): the nine-patch, fetched after the source through the same guard as a watermark. thumbor
            // 7.8 draws nothing with any image (its C reads RGBA as one byte a pixel) and answers 200, so an image
            // that is no usable nine-patch is skipped as thumbor's skipped filters are (`frame_optional`: the
            // render names it in X-Thumbd-Skipped-Filters), unless they are refused. A failed fetch stays an error,
            // as in thumbor (a 500 there).
            try count(1...1)
            plan.set(.frame_url, try ThumborPath.imageURL(Substring(arguments[0])), option: name)
            if !refusingSkipped { plan.set(.frame_optional, true, option: name) }
        case "round_corner":
            // round_corner(a|b, r, g, b[, transparent]): radii in output pixels (clamped to half the output by the
            // step, as thumbor clamps); thumbor's C reads each channel as a byte and fails above 255.
            try count(4...5)
            let radii = arguments[0].split(separator: "|").map {
                min(Int($0) ?? 0, ThumbnailSpec.RoundCorner.maxRadius)
            }
            let channels = try (1...3).map { index throws(RequestError) in UInt8(try number(index, 0...255)) }
            let corner = ThumbnailSpec.RoundCorner(horizontal: radii[0], vertical: radii.last ?? radii[0])
            plan.set(.radius, corner, option: name)
            let colour = RGBAColour(
                red: channels[0], green: channels[1], blue: channels[2], alpha: try boolean(4) ? 0 : 255)
            plan.set(.radius_bg, colour, option: name)
        case "rgb":
            // rgb(r,g,b): thumbor adds 255 × v / 100 (C's integer division) to each band.
            try count(3...3)
            let levels = try (0...2).map { index throws(RequestError) in
                Int(try number(index, -100_000...100_000)) * 255 / 100
            }
            let clamped = levels.map { max(-255, min(255, $0)) }
            plan.set(
                .rgb, ThumbnailSpec.ChannelShift(red: clamped[0], green: clamped[1], blue: clamped[2]), option: name)
        case "colorize":
            // colorize(r%,g%,b%,fill): fill is 6 hexadecimal digits (thumbor's bytes.fromhex; anything else is its 500).
            try count(4...4)
            let percents = try (0...2).map { index throws(RequestError) in
                Int(try number(index, 0...Double(ThumbnailSpec.Colorize.maxPercent)))
            }
            guard arguments[3].utf8.count == 6, let colour = RGBAColour(hex: arguments[3]) else {
                throw .invalidValue(name, reason: "the fill colour must be 6 hexadecimal digits")
            }
            let value = ThumbnailSpec.Colorize(red: percents[0], green: percents[1], blue: percents[2], colour: colour)
            plan.set(.colorize, value, option: name)
        case "curve":
            // curve(all, r, g, b): four lists [(x,y),…] (the pattern has checked their form). thumbor's C wraps values
            // above 255 and reads nothing from an empty list: a 400 here, as are x not increasing.
            try count(4...4)
            let lists = arguments.map { list in
                let numbers = list.split(whereSeparator: { !$0.isNumber }).map { Int($0) ?? Int.max }
                return stride(from: 0, to: numbers.count - 1, by: 2).map {
                    ThumbnailSpec.Curve.Point(numbers[$0], numbers[$0 + 1])
                }
            }
            for points in lists {
                if let problem = ThumbnailSpec.Curve.problem(points) { throw .invalidValue(name, reason: problem) }
            }
            let curve = ThumbnailSpec.Curve(all: lists[0], red: lists[1], green: lists[2], blue: lists[3])
            plan.set(.curve, curve, option: name)
        case "equalize":
            try count(0...0)
            plan.set(.equalize, true, option: name)
        case "extract_focal":
            try count(0...0)
            extractsFocal = true
        case "noise":
            // noise(amount[, seed]): a seed of 0 (thumbor's default: not seeded) is glibc's default sequence here.
            try count(1...2)
            let amount = Int(try number(0, 0...Double(ThumbnailSpec.Noise.maxAmount)))
            let seed = arguments.count > 1 ? Int(try number(1, 0...Double(ThumbnailSpec.Noise.maxSeed))) : 0
            plan.set(.noise, ThumbnailSpec.Noise(amount: amount, seed: seed), option: name)
        case "convolution":
            // convolution(matrix, columns[, normalize]): thumbor's C refuses (a 500) a kernel whose size or rows are
            // not odd multiples of the columns: a 400 here, as is a kernel above 11 x 11.
            try count(2...3)
            let values = arguments[0].split(separator: ";").compactMap { Double($0.hasSuffix(".") ? $0 + "0" : $0) }
                .map(DialectGeometry.decimal)
            let columns = Int(try number(1, 1...Double(ThumbnailSpec.Convolution.maxSide)))
            if let problem = ThumbnailSpec.Convolution.problem(count: values.count, columns: columns) {
                throw .invalidValue(name, reason: problem)
            }
            let kernel = ThumbnailSpec.Convolution(values: values, columns: columns, normalize: try boolean(2, true))
            plan.set(.convolution, kernel, option: name)
        case "focal":
            // thumbor's focal(left x top : right x bottom), in source pixels: its centre is the focal point.
            try count(1...1)
            let corners = arguments[0].split(separator: ":", omittingEmptySubsequences: false)
                .flatMap { $0.split(separator: "x", omittingEmptySubsequences: false) }
                .compactMap { ThumbnailRequest.integer(String($0)) }
            guard corners.count == 4, corners[2] > corners[0], corners[3] > corners[1] else {
                throw .invalidValue(name, reason: "must be LEFTxTOP:RIGHTxBOTTOM with right > left, bottom > top")
            }
            let (width, height) = (corners[2] - corners[0], corners[3] - corners[1])
            addFocalPoint(x: corners[0] + width / 2, y: corners[1] + height / 2, weight: width * height)
        case "strip_exif", "strip_icc":
            try count(0...0)  // thumbd strips metadata and converts to sRGB anyway
        case "autojpg":
            try count(0...1)  // with no format, thumbd answers JPEG for opaque pictures a client cannot take better
        default:
            throw .unsupportedOption(
                Self.refused.contains(name) ? name : "filter \(RequestError.printable(name.prefix(40)))")
        }
    }

    /// `watermark(url, x, y, alpha[, w_ratio[, h_ratio]])`, each one into the next watermark slot (`wm`, `wm2`…).
    private mutating func readWatermark(_ arguments: [String]) throws(RequestError) {
        let name = "watermark"
        guard (4...6).contains(arguments.count) else { throw .invalidValue(name, reason: "takes 4…6 arguments") }
        let slot = watermarks
        guard slot < ThumbnailSpec.Watermark.maxCount else {
            throw .invalidValue(name, reason: "at most \(ThumbnailSpec.Watermark.maxCount) watermarks")
        }
        watermarks += 1
        plan.set(.wm_url(slot: slot), try ThumborPath.imageURL(Substring(arguments[0])), option: name)
        // Each axis: a number from the left/top edge, a negative one (`-0` too) from the right/bottom edge,
        // `center`, a percentage of the output's side (`20p`, `-20p`) or `repeat` (thumbor's spread tiles).
        typealias Axis = ThumbnailSpec.Watermark.PlaceAxis
        guard let x = Axis(arguments[1]), let y = Axis(arguments[2]) else {
            throw .invalidValue(name, reason: "a position must be a whole number, a percentage (Np), center or repeat")
        }
        // Numbers and `center` are a compass point and offsets (the form shared with /thumb's wm_pos); percentages
        // and repeats are thumbor's own placement (wm_place), resolved once the output's size is known.
        func compass(_ axis: Axis) -> (side: Int, offset: Int)? {
            switch axis {
            case .centre: (0, 0)
            case .start(let offset): (-1, offset)
            case .end(let offset): (1, offset)
            case .startPercent, .endPercent, .spread: nil
            }
        }
        if let cx = compass(x), let cy = compass(y) {
            let gravity = DialectGeometry.compass(cx.side, cy.side)
            plan.set(.wm_pos(slot: slot), ThumbnailSpec.Watermark.Position.gravity(gravity), option: name)
            if cx.offset != 0 { plan.set(.wm_x(slot: slot), .pixels(cx.offset), option: name) }
            if cy.offset != 0 { plan.set(.wm_y(slot: slot), .pixels(cy.offset), option: name) }
        } else {
            plan.set(.wm_place(slot: slot), ThumbnailSpec.Watermark.Place(x: x, y: y), option: name)
        }
        guard let alpha = ThumbnailRequest.integer(arguments[3]), alpha <= 100 else {
            throw .invalidValue(name, reason: "alpha must be 0…100")
        }
        // thumbor's alpha subtracts a level from every alpha value of the mark: `wm_fade`, not the opacity's product.
        if alpha != 0 { plan.set(.wm_fade(slot: slot), alpha, option: name) }
        let widthRatio = arguments.count > 4 ? arguments[4] : "none"
        let heightRatio = arguments.count > 5 ? arguments[5] : "none"
        if heightRatio != "none" {
            guard let percent = ThumbnailRequest.integer(heightRatio), (1...100).contains(percent) else {
                throw .invalidValue(name, reason: "h_ratio must be 1…100 or none")
            }
            plan.set(.wm_hscale(slot: slot), DialectGeometry.decimal(Double(percent) / 100), option: name)
        }
        if widthRatio != "none" {
            guard let percent = ThumbnailRequest.integer(widthRatio), (1...100).contains(percent) else {
                throw .invalidValue(name, reason: "w_ratio must be 1…100 or none")
            }
            plan.set(.wm_scale(slot: slot), DialectGeometry.decimal(Double(percent) / 100), option: name)
        }
    }

    /// Sets what the filters ask into `plan`, after the box (`fill` depends on `fit-in`).
    package func apply(to plan: inout ThumbnailPlan, fitIn: Bool) throws(RequestError) {
        plan.layer(self.plan)
        // thumbor lowers only JPEG's and WebP's quality for max_bytes: a PNG or GIF answer keeps its bytes.
        let lossless: [FormatChoice] = [.exactly(.png), .exactly(.gif)]
        if let maxBytes, !lossless.contains(where: { plan.values.format == $0 }) {
            plan.set(.max_bytes, maxBytes, option: "max_bytes")
        }
        if let fill {
            // With fit-in, fill pads the picture to the exact box; without, the picture fills the box already and
            // only transparency can be filled.
            if fitIn && plan.values.fit == nil { plan.set(.fit, Fit.pad, option: "fill") }
            if let colour = fill.colour, fitIn || fill.transparent {
                if plan.values.background != nil { throw .unsupportedOption("fill with background_color") }
                plan.set(.bg, colour, option: "fill")
            }
            if let fillFrom, fitIn || fill.transparent {
                if plan.values.background != nil { throw .unsupportedOption("fill with background_color") }
                plan.set(.bg_fill, fillFrom, option: "fill")
            }
        }
    }

    // MARK: - Arguments

    /// thumbor's arguments: split at commas, blanks around each dropped, `'quoted'` text unquoted.
    package static func arguments(_ text: String) -> [String] {
        guard !text.isEmpty else { return [] }
        return text.split(separator: ",", omittingEmptySubsequences: false).map { argument in
            let trimmed = argument.trimmingCharacters(in: " ")
            if trimmed.count >= 2, trimmed.hasPrefix("'"), trimmed.hasSuffix("'") {
                return String(trimmed.dropFirst().dropLast())
            }
            return String(trimmed)
        }
    }

    /// A plain decimal (`-12`, `0.5`, `.5`).
    package static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 16,
            text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") })
        else { return nil }
        return Double(text)
    }

    /// The CSS basic colour names thumbor users write most, besides hexadecimal.
    package static let namedColours: [String: String] = [
        "black": "000000", "white": "ffffff", "red": "ff0000", "green": "008000", "blue": "0000ff",
        "yellow": "ffff00", "gray": "808080", "grey": "808080", "silver": "c0c0c0", "maroon": "800000",
        "purple": "800080", "fuchsia": "ff00ff", "lime": "00ff00", "olive": "808000", "navy": "000080",
        "teal": "008080", "aqua": "00ffff", "orange": "ffa500",
    ]

    /// A colour: a name above, or 3 or 6 hexadecimal digits.
    package static func colour(_ text: String, filter: String) throws(RequestError) -> RGBAColour {
        let lowered = text.lowercased()
        let reason = "colour must be a basic colour name or hexadecimal"
        let digits = namedColours[lowered] ?? lowered
        let hex: String =
            switch digits.utf8.count {
            case 3: digits.map { "\($0)\($0)" }.joined()
            case 6: digits
            default: ""
            }
        guard digits.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
            let colour = RGBAColour(hex: hex)
        else { throw .invalidValue(filter, reason: reason) }
        return colour
    }

    /// thumbor 7.8's ALLOWED_FORMATS, and `jxl`, which thumbor's filter ignores (it has no JPEG XL engine) and thumbd
    /// writes: any other name is ignored by the format filter.
    private static let thumborFormats: Set<String> = [
        "png", "jpeg", "jpg", "gif", "webp", "avif", "heic", "heif", "jxl",
    ]

    /// The output formats `format()` names (`heic` and `heif` are HEIC, written when `image.heic_output` is on).
    private static let formats: [String: ImageFormat] = [
        "jpeg": .jpeg, "jpg": .jpeg, "png": .png, "webp": .webp, "gif": .gif, "avif": .avif, "jxl": .jxl,
        "heic": .heif, "heif": .heif,
    ]
}

extension StringProtocol {
    /// Without `character` at either end.
    fileprivate func trimmingCharacters(in character: Character) -> Substring {
        var text = self[...]
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return Substring(text)
    }
}
