// SPDX-License-Identifier: Apache-2.0

extension ImgproxyForm {
    /// The secrets of an imgproxy path (`/[info/]<signature>/<options>/(plain/<url>|<base64url>)`): the signature
    /// segment, `wmu:`/`watermark_url:`'s URL (base64url) and the source's secret query values: a plain source's are
    /// read as thumbor's image is; a base64url one (or a watermark URL) is decoded, and redacted whole when its URL's
    /// query holds a secret (its bytes give no place to cut).
    package static func secretRanges(in path: UnsafeBufferPointer<UInt8>, after start: Int) -> [Range<Int>] {
        let start = PathSecrets.has("info/", in: path, at: start) ? start + 5 : start
        guard let (signature, rest) = PathSecrets.signatureSegment(in: path, at: start) else { return [] }
        var ranges: [Range<Int>] = []
        if let signature { ranges.append(signature) }
        ranges += sources(in: path, rest)
        return ranges
    }

    /// The watermark URLs' and the source's ranges after the signature.
    private static func sources(in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var segmentStart = range.lowerBound
        while segmentStart < range.upperBound {
            let segmentEnd =
                bytes[segmentStart..<range.upperBound].firstIndex(of: UInt8(ascii: "/")) ?? range.upperBound
            let segment = UnsafeBufferPointer(rebasing: bytes[segmentStart..<segmentEnd])
            if let colon = segment.firstIndex(of: UInt8(ascii: ":")) {
                // An option; only a watermark URL's carries a URL.
                let name = UnsafeBufferPointer(rebasing: segment[..<colon])
                if name.elementsEqual("wmu".utf8) || name.elementsEqual("watermark_url".utf8),
                    PathSecrets.holdsSecret(base64URL: UnsafeBufferPointer(rebasing: segment[(colon + 1)...]))
                {
                    ranges.append((segmentStart + colon + 1)..<segmentEnd)
                }
                segmentStart = segmentEnd + 1
                continue
            }
            if segment.elementsEqual("plain".utf8) {
                return ranges
                    + PathSecrets.encodedQueryValues(
                        in: bytes, (segmentEnd + 1)..<max(segmentEnd + 1, range.upperBound))
            }
            // The base64url source, possibly cut by `/`, up to its `.ext`.
            let sourceEnd = bytes[segmentStart..<range.upperBound].firstIndex(of: UInt8(ascii: ".")) ?? range.upperBound
            let encoded = bytes[segmentStart..<sourceEnd].filter { $0 != UInt8(ascii: "/") }
            let holds = encoded.withUnsafeBufferPointer { PathSecrets.holdsSecret(base64URL: $0) }
            if holds { ranges.append(segmentStart..<sourceEnd) }
            return ranges
        }
        return ranges
    }
}
