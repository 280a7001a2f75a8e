// SPDX-License-Identifier: Apache-2.0

extension ThumborFilters {
    /// thumbor's `extract_focal()` (a pre-load filter): when the image URL is itself a thumbor URL with a manual crop
    /// (`host/unsafe/AxB:CxD/…/inner`, or a signature of 28 characters or more in place of `unsafe`), the source is
    /// the inner image and the crop's centre is the focal point. Nested thumbor URLs are followed up to 10 levels, as
    /// thumbor follows them; without a crop the URL is left as it is.
    /// - Parameter imageURL: the image URL as thumbor's router hands it over (percent-decoded once).
    /// - Returns: the inner image (as written there, not decoded again), the crop's centre in its pixels and its
    /// area (the point's weight), or nil.
    package static func extractedFocal(from imageURL: String) -> (image: String, x: Int, y: Int, weight: Int)? {
        var url = Substring(imageURL)
        for _ in 0..<10 {
            // thumbor's `^(https?://)?.*?/`: the scheme and the host go.
            var rest = url
            if rest.hasPrefix("http://") {
                rest = rest.dropFirst(7)
            } else if rest.hasPrefix("https://") {
                rest = rest.dropFirst(8)
            }
            guard let slash = rest.firstIndex(of: "/") else { return nil }
            rest = rest[rest.index(after: slash)...]
            // thumbor's URL expression, with `unsafe` or a signature ([^/]{28,}) before the options.
            guard let path = try? ThumborPath(afterPrefix: rest), !path.image.isEmpty else { return nil }
            if let signature = path.signature, signature.count < 28 { return nil }
            if let crop = path.crop, let left = Int(crop.left), let top = Int(crop.top), let right = Int(crop.right),
                let bottom = Int(crop.bottom)
            {
                return (
                    String(path.image), left + (right - left) / 2, top + (bottom - top) / 2,
                    (right - left) * (bottom - top)
                )
            }
            url = path.image
        }
        return nil
    }

    /// Adds the focal point `extract_focal()` found, weighted by its crop's area: beside `focal()` filters, the
    /// centre of mass of them all, as thumbor finds it.
    package mutating func setExtractedFocal(x: Int, y: Int, weight: Int) {
        addFocalPoint(x: x, y: y, weight: weight)
    }
}
