// SPDX-License-Identifier: Apache-2.0
package import HTTP1
import Thumbnailing

/// The client hints `/thumb` reads when `image.client_hints` is on (docs/api.md, "Client hints"): the device's pixel
/// ratio (`Sec-CH-DPR`), the image's layout width in physical pixels (`Sec-CH-Width`) and the viewport's width in CSS
/// pixels (`Sec-CH-Viewport-Width`), as the request sent them.
///
/// A hint fills in what the request's plan leaves out (its own parameters and its presets'): `dpr` from
/// `Sec-CH-DPR`; with neither `w` nor `h`, the width from `Sec-CH-Width`, else from `Sec-CH-Viewport-Width` × dpr.
/// Hints are advice (RFC 8942): one that does not read as a number is ignored, as if it had not been sent, and a
/// value out of range is clamped. Which hints a plan consulted is ``Used``: what the answer's `Vary` names.
package struct ClientHints: Sendable, Equatable {
    /// The raw values (several lines joined with `, `; the last one counts); nil when not sent.
    package let dpr: String?
    package let width: String?
    package let viewportWidth: String?

    /// The hints `/thumb` asks for in `Accept-CH`, in `Vary`'s order.
    package static let acceptCH = "Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width"

    /// A request without any hint.
    package static let none = ClientHints(dpr: nil, width: nil, viewportWidth: nil)

    package init(dpr: String?, width: String?, viewportWidth: String?) {
        self.dpr = dpr
        self.width = width
        self.viewportWidth = viewportWidth
    }

    /// The hints `request` carries.
    package init(_ request: HTTPRequest) {
        dpr = request.listValue(of: "sec-ch-dpr")
        width = request.listValue(of: "sec-ch-width")
        viewportWidth = request.listValue(of: "sec-ch-viewport-width")
    }

    /// The hints a plan consulted because it lacked the parameter: the answer varies on each of them, sent or not.
    package struct Used: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8

        package init(rawValue: UInt8) { self.rawValue = rawValue }

        package static let dpr = Used(rawValue: 1)
        package static let width = Used(rawValue: 2)
        package static let viewportWidth = Used(rawValue: 4)

        /// Their header names, in `Accept-CH`'s order.
        package var headerNames: [String] {
            var names: [String] = []
            if contains(.dpr) { names.append("Sec-CH-DPR") }
            if contains(.width) { names.append("Sec-CH-Width") }
            if contains(.viewportWidth) { names.append("Sec-CH-Viewport-Width") }
            return names
        }
    }

    /// `Vary` and `Accept-CH` of an answer whose format is negotiated (`variesOnAccept`) and whose plan consulted
    /// `used` (nil: hints are not read, and the answer is as it was before them: `Vary: Accept` or nothing).
    package static func responseFields(variesOnAccept: Bool, used: Used?) -> [HTTPField] {
        guard let used else { return variesOnAccept ? [HTTPField(name: "Vary", value: "Accept")] : [] }
        let vary = (variesOnAccept ? ["Accept"] : []) + used.headerNames
        var fields = [HTTPField(name: "Accept-CH", value: acceptCH)]
        if !vary.isEmpty { fields.append(HTTPField(name: "Vary", value: vary.joined(separator: ", "))) }
        return fields
    }

    // MARK: - Values

    /// `Sec-CH-DPR`, clamped to 1...4 and rounded to 2 decimals (as `dpr` allows); nil when absent or not a number.
    package var devicePixelRatio: Double? {
        guard let value = dpr.flatMap(Self.lastNumber) else { return nil }
        return (min(max(value, 1), 4) * 100).rounded() / 100
    }

    /// `Sec-CH-Width`: physical pixels, rounded up and clamped to 1...4096; nil when absent or not a number.
    package var physicalWidth: Int? {
        width.flatMap(Self.lastNumber).map { Self.clampedDimension($0) }
    }

    /// `Sec-CH-Viewport-Width` in CSS pixels times `dpr`, rounded up and clamped to 1...4096; nil when absent or not a
    /// number.
    package func viewportPixels(dpr: Double) -> Int? {
        viewportWidth.flatMap(Self.lastNumber).map { Self.clampedDimension($0 * dpr) }
    }

    private static func clampedDimension(_ value: Double) -> Int {
        Int(min(max(value.rounded(.up), 1), Double(ThumbnailSpec.maxDimension)))
    }

    /// The last comma-separated item as a non-negative decimal (`2`, `2.625`, `1280`): digits, optionally a point
    /// and more digits, at most 12 characters; nil for anything else.
    private static func lastNumber(_ text: String) -> Double? {
        let item = text.split(separator: ",", omittingEmptySubsequences: false).last.map { String($0).trimmingSpaces }
        guard let item, !item.isEmpty, item.utf8.count <= 12 else { return nil }
        let parts = item.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let isDecimal = parts.allSatisfy { part in
            !part.isEmpty && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
        }
        guard isDecimal else { return nil }
        return Double(item)
    }

    // MARK: - Identity

    /// What follows the target in the request's identity when hints are read: the `Accept` and each hint, each
    /// written `=value` or `-` (not sent), on lines of their own. A field value holds no line break, so this never
    /// equals an identity made without hints (the `Accept` alone).
    package func identityText(accept: String?) -> String {
        var text = accept.map { "=" + $0 } ?? "-"
        for value in [dpr, width, viewportWidth] {
            text += value.map { "\n=" + $0 } ?? "\n-"
        }
        return text
    }
}
