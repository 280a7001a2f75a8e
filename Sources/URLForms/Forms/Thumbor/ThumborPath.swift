// SPDX-License-Identifier: Apache-2.0

/// One thumbor URL taken apart by thumbor's grammar, nothing interpreted yet:
///
///     /<signature | unsafe>/[meta/][trim[:top-left|bottom-right][:tolerance]/][AxB:CxD/]
///     [adaptive-][full-]fit-in/][-]Wx[-]H/[halign/][valign/][smart/][filters:name(args):…/]<image>
///
/// Each optional part is taken when the next path segment matches it, in this order, as thumbor's own regular
/// expression does; whatever is left is the image. ``signedPart`` is the path after the signature segment exactly as
/// sent (still percent-encoded): what thumbor's HMAC covers.
package struct ThumborPath: Sendable {
    /// The signature segment, percent-decoded; nil for `unsafe`.
    package var signature: String?
    /// The raw path after the signature segment and its `/`.
    package var signedPart: Substring
    package var meta = false
    package var debug = false
    /// `trim`: which corner's colour (`top-left` by default) and the tolerance (0 by default).
    package var trim: (corner: TrimCorner, tolerance: Int)?
    /// `AxB:CxD`: left, top, right, bottom, as written (whole numbers: pixels; decimals: fractions).
    package var crop: (left: String, top: String, right: String, bottom: String)?
    package var fitIn: FitIn?
    /// `WxH`: each side `nil` (absent or 0: proportional), a number, or `orig`.
    package var width: Side = .proportional
    package var height: Side = .proportional
    package var flipsHorizontally = false
    package var flipsVertically = false
    package var horizontalAlignment: HorizontalAlignment = .center
    package var verticalAlignment: VerticalAlignment = .middle
    package var smart = false
    /// The filters, in order: name and raw argument text.
    package var filters: [(name: String, arguments: String)] = []
    /// The image as written (still percent-encoded).
    package var image: Substring
    /// The last optional part the grammar took before the image (nil: none): what follows it can no longer be an
    /// earlier part, so an image may begin with a segment of a size's shape only when this is ``Part/size`` or later.
    package private(set) var lastPart: Part?

    /// The optional parts, in the grammar's order.
    package enum Part: Int, Sendable, Comparable {
        case debug, meta, trim, crop, fitIn, size, horizontalAlignment, verticalAlignment, smart, filters

        package static func < (a: Part, b: Part) -> Bool { a.rawValue < b.rawValue }
    }

    package enum TrimCorner: String, Sendable { case topLeft = "top-left", bottomRight = "bottom-right" }
    package enum FitIn: Sendable, Hashable { case fitIn, fullFitIn, adaptiveFitIn, adaptiveFullFitIn }
    package enum Side: Sendable, Equatable {
        case proportional
        case pixels(Int)
        case original
    }
    package enum HorizontalAlignment: String, Sendable { case left, center, right }
    package enum VerticalAlignment: String, Sendable { case top, middle, bottom }

    /// The most bytes of a thumbor path accepted (the image URL's limit, 8 KiB, plus options).
    package static let maxBytes = 16 * 1024

    /// Takes apart the part of a request's path after the form's prefix (`<signature>/<rest>`).
    /// - Throws: `RequestError.malformedPath` when there is no signature segment or no image, or the path is too
    ///   long; `.missingSignature` for an empty signature segment.
    package init(afterPrefix path: Substring) throws(RequestError) {
        guard path.utf8.count <= Self.maxBytes else { throw .malformedPath("longer than \(Self.maxBytes) bytes") }
        guard let slash = path.firstIndex(of: "/") else {
            throw .malformedPath("expected /<signature or unsafe>/[options/]<image>")
        }
        let first = path[..<slash]
        if first == "unsafe" {
            signature = nil
        } else {
            guard !first.isEmpty else { throw .missingSignature }
            guard let decoded = QueryParameters.percentDecode(first.utf8) else { throw .invalidSignature }
            signature = decoded
        }
        signedPart = path[path.index(after: slash)...]
        image = signedPart
        try parseOptions()
    }

    /// Reads the optional parts at the front of ``signedPart`` in the grammar's order; the rest is ``image``.
    private mutating func parseOptions() throws(RequestError) {
        var rest = signedPart
        /// The next segment (up to `/`), and the text after its `/`; nil when no `/` follows (the image's last part).
        func segment(_ text: Substring) -> (Substring, Substring)? {
            guard let slash = text.firstIndex(of: "/") else { return nil }
            return (text[..<slash], text[text.index(after: slash)...])
        }
        if let (next, after) = segment(rest), next == "debug" {
            debug = true
            rest = after
            lastPart = .debug
        }
        if let (next, after) = segment(rest), next == "meta" {
            meta = true
            rest = after
            lastPart = .meta
        }
        if let (next, after) = segment(rest), let trim = try Self.trim(next) {
            self.trim = trim
            rest = after
            lastPart = .trim
        }
        if let (next, after) = segment(rest), let crop = Self.crop(next) {
            self.crop = crop
            rest = after
            lastPart = .crop
        }
        if let (next, after) = segment(rest), let fitIn = Self.fitIn(next) {
            self.fitIn = fitIn
            rest = after
            lastPart = .fitIn
        }
        if let (next, after) = segment(rest), let size = try Self.size(next) {
            (flipsHorizontally, width, flipsVertically, height) = size
            rest = after
            lastPart = .size
        }
        if let (next, after) = segment(rest), let alignment = HorizontalAlignment(rawValue: String(next)) {
            horizontalAlignment = alignment
            rest = after
            lastPart = .horizontalAlignment
        }
        if let (next, after) = segment(rest), let alignment = VerticalAlignment(rawValue: String(next)) {
            verticalAlignment = alignment
            rest = after
            lastPart = .verticalAlignment
        }
        if let (next, after) = segment(rest), next == "smart" {
            smart = true
            rest = after
            lastPart = .smart
        }
        if rest.hasPrefix("filters:"), let end = rest.firstRange(of: ")/") {
            // thumbor's expression: `filters:(.+?\))/`, up to the first `)/` (a filter's argument may hold `/`).
            let text = rest[rest.index(rest.startIndex, offsetBy: 8)..<rest.index(after: end.lowerBound)]
            filters = try Self.filters(text)
            rest = rest[end.upperBound...]
            lastPart = .filters
        }
        guard !rest.isEmpty else { throw .malformedPath("no image after the options") }
        image = rest
    }

    // MARK: - Parts

    /// `trim[:corner][:tolerance]`; nil when `text` is not of that shape. `trim:<digits>` is thumbor 7.8's
    /// bottom-right trim at tolerance 0 (below).
    /// - Throws: `RequestError` naming `trim` for a tolerance of more than ``maxSideDigits`` digits (like a size's
    ///   side, it is still the trim of thumbor's grammar, never part of the image).
    private static func trim(_ text: Substring) throws(RequestError) -> (corner: TrimCorner, tolerance: Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.first == "trim", parts.count <= 3 else { return nil }
        var corner = TrimCorner.topLeft
        var tolerance = 0
        var index = 1
        if index < parts.count, let named = TrimCorner(rawValue: String(parts[index])) {
            corner = named
            index += 1
        } else if parts.count == 2, !parts[1].isEmpty, parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            // `trim:10`: thumbor's grammar takes the digits as the tolerance, but thumbor 7.8 reads the part after
            // `trim:` as the corner (context.py), and any corner but `top-left` is the bottom right one
            // (_bounding_box.c): thumbor trims by the bottom-right pixel at tolerance 0, and so does its URL here.
            return (.bottomRight, 0)
        }
        if index < parts.count {
            let digits = parts[index]
            if digits.utf8.count > maxSideDigits, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
                throw .invalidValue("trim", reason: "the tolerance has more than \(maxSideDigits) digits")
            }
            guard let value = ThumbnailRequest.integer(String(digits)) else { return nil }
            tolerance = value
            index += 1
        }
        return index == parts.count ? (corner, tolerance) : nil
    }

    private static func crop(_ text: Substring) -> (left: String, top: String, right: String, bottom: String)? {
        let corners = text.split(separator: ":", omittingEmptySubsequences: false)
        guard corners.count == 2 else { return nil }
        let values = corners.flatMap { $0.split(separator: "x", omittingEmptySubsequences: false) }
        guard values.count == 4, values.allSatisfy(isUnsignedDecimal) else { return nil }
        return (String(values[0]), String(values[1]), String(values[2]), String(values[3]))
    }

    private static func isUnsignedDecimal(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return !text.isEmpty && parts.count <= 2
            && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }
    }

    private static func fitIn(_ text: Substring) -> FitIn? {
        switch text {
        case "fit-in": .fitIn
        case "full-fit-in": .fullFitIn
        case "adaptive-fit-in": .adaptiveFitIn
        case "adaptive-full-fit-in": .adaptiveFullFitIn
        default: nil
        }
    }

    /// The most digits a side may have: more could not be a size thumbd renders, and an unbounded run of digits
    /// overflows `Int`.
    package static let maxSideDigits = 9

    /// `[-][W|orig]x[-][H|orig]` (each side may be empty); nil when `text` is not of that shape (then it is part of
    /// the image, as in thumbor's grammar).
    /// - Throws: `RequestError` naming `size` when it is of that shape with a side longer than ``maxSideDigits``:
    ///   thumbor's grammar takes any run of digits as a side, so such a segment is a size, never part of the image.
    private static func size(_ text: Substring) throws(RequestError) -> (Bool, Side, Bool, Side)? {
        let sides = text.split(separator: "x", omittingEmptySubsequences: false)
        guard sides.count == 2 else { return nil }
        /// A side's flip and its text after the flip, when the side is of the grammar's shape.
        func shape(_ text: Substring) -> (flipped: Bool, text: Substring)? {
            let flipped = text.first == "-"
            let rest = flipped ? text.dropFirst() : text
            guard rest == "orig" || rest.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return (flipped, rest)
        }
        // Both sides are of the shape before either is read: `1x.example.com` is an image, not a size.
        guard let first = shape(sides[0]), let second = shape(sides[1]) else { return nil }
        func side(_ shape: (flipped: Bool, text: Substring)) throws(RequestError) -> (Bool, Side) {
            if shape.text.isEmpty { return (shape.flipped, .proportional) }
            if shape.text == "orig" { return (shape.flipped, .original) }
            guard shape.text.utf8.count <= maxSideDigits, let value = Int(shape.text) else {
                throw .invalidValue("size", reason: "a side has more than \(maxSideDigits) digits")
            }
            return (shape.flipped, value == 0 ? .proportional : .pixels(value))
        }
        let (horizontal, width) = try side(first)
        let (vertical, height) = try side(second)
        return (horizontal, width, vertical, height)
    }

    /// `name(args):name(args)…`: split where thumbor splits, at each `):`.
    private static func filters(_ text: Substring) throws(RequestError) -> [(name: String, arguments: String)] {
        var filters: [(name: String, arguments: String)] = []
        var rest = text
        while !rest.isEmpty {
            let end = rest.firstRange(of: "):").map { rest.index(after: $0.lowerBound) } ?? rest.endIndex
            let filter = rest[..<end]
            guard let open = filter.firstIndex(of: "("), filter.last == ")" else {
                throw .malformedPath("filter \(RequestError.printable(filter.prefix(40))) is not name(arguments)")
            }
            let name = filter[..<open]
            guard !name.isEmpty, name.utf8.allSatisfy({ (0x61...0x7A).contains($0 | 0x20) || $0 == 0x5F }) else {
                throw .malformedPath("filter name \(RequestError.printable(name.prefix(40))) is not a name")
            }
            filters.append(
                (String(name), String(filter[filter.index(after: open)..<filter.index(before: filter.endIndex)])))
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
        }
        return filters
    }
}
