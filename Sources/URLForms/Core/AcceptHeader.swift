// SPDX-License-Identifier: Apache-2.0
package import Thumbnailing

/// Reads which optional image formats a client accepts from its `Accept` header.
///
/// Only explicit media types count (`image/avif`, `image/jxl`, `image/webp`), with a quality above 0: browsers
/// that can decode these formats name them, while `*/*` or `image/*` is sent by clients that cannot
/// (imgproxy and thumbor follow the same rule). Parameters other than `q` are ignored.
package enum AcceptHeader {
    package static func acceptedFormats(_ header: String?) -> AcceptedFormats {
        guard let header, !header.isEmpty else { return [] }
        var accepted: AcceptedFormats = []
        for range in header.utf8.split(separator: UInt8(ascii: ",")) {
            let fields = range.split(separator: UInt8(ascii: ";"))
            guard let type = fields.first else { continue }
            let format: AcceptedFormats
            switch lowercasedTrimmed(type) {
            case "image/avif": format = .avif
            case "image/webp": format = .webp
            case "image/jxl": format = .jxl
            default: continue
            }
            if fields.dropFirst().contains(where: isZeroQuality) { continue }
            accepted.insert(format)
        }
        return accepted
    }

    private static func lowercasedTrimmed(_ bytes: Substring.UTF8View.SubSequence) -> String {
        String(decoding: bytes, as: UTF8.self).trimmingSpaces.lowercased()
    }

    /// `q=0`, `q=0.0`, `q=0.00`, `q=0.000` (RFC 9110 qvalue syntax).
    private static func isZeroQuality(_ parameter: Substring.UTF8View.SubSequence) -> Bool {
        let text = lowercasedTrimmed(parameter).replacingSpaces
        guard text.hasPrefix("q=") else { return false }
        let value = text.dropFirst(2)
        return value == "0" || (value.hasPrefix("0.") && value.dropFirst(2).allSatisfy { $0 == "0" })
    }
}

extension String {
    /// The string without any space or tab (`q = 0` reads `q=0`).
    fileprivate var replacingSpaces: String { String(unicodeScalars.filter { $0 != " " && $0 != "\t" }) }
}
