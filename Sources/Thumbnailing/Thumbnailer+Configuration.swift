// SPDX-License-Identifier: Apache-2.0

extension Thumbnailer {
    /// Limits and encoder settings. Defaults are careful-operator values, measured on the peers' corpus
    /// (see docs/architecture.md, "Rendering").
    package struct Configuration: Hashable, Sendable {
        /// Largest source accepted, in pixels of one page (width x height from the header, checked before
        /// decoding). Default 50 M: a 12 MP phone photo passes, a header-only bomb is refused in microseconds.
        package var maxSourcePixels = 50_000_000
        /// Quality when a spec has none, 1...100.
        package var defaultQuality = 80
        /// Source formats accepted. Default: all of `ImageFormat`.
        package var allowedSourceFormats = Set(ImageFormat.allCases)
        /// Output formats offered. Must contain JPEG and PNG (the `auto` fallbacks); AVIF is also subject to
        /// `Vips.canSaveAVIF`.
        package var allowedOutputFormats: Set<ImageFormat> = [.jpeg, .png, .webp, .avif]
        /// Progressive JPEG output. Off: at thumbnail sizes it is slower to encode and rarely smaller.
        package var jpegProgressive = false
        /// zlib level for PNG output, 0...9.
        package var pngCompression = 6
        /// libwebp effort ("method"), 0...6.
        package var webpEffort = 4
        /// libheif/aom effort for AVIF, 0...9.
        package var avifEffort = 4

        package init() {}

        /// Checks every value; called by `Thumbnailer.init`.
        /// - Throws: `ConfigurationError` naming the first invalid property.
        package func validate() throws(ConfigurationError) {
            guard maxSourcePixels >= 1 else {
                throw ConfigurationError(key: "maxSourcePixels", reason: "must be at least 1")
            }
            guard ThumbnailSpec.qualityRange.contains(defaultQuality) else {
                throw ConfigurationError(key: "defaultQuality", reason: "must be 1...100")
            }
            guard !allowedSourceFormats.isEmpty else {
                throw ConfigurationError(key: "allowedSourceFormats", reason: "must not be empty")
            }
            if let bad = allowedOutputFormats.first(where: { !$0.isEncodable }) {
                throw ConfigurationError(key: "allowedOutputFormats", reason: "\(bad) cannot be written")
            }
            guard allowedOutputFormats.isSuperset(of: [.jpeg, .png]) else {
                throw ConfigurationError(key: "allowedOutputFormats", reason: "must contain jpeg and png")
            }
            guard (0...9).contains(pngCompression) else {
                throw ConfigurationError(key: "pngCompression", reason: "must be 0...9")
            }
            guard (0...6).contains(webpEffort) else {
                throw ConfigurationError(key: "webpEffort", reason: "must be 0...6")
            }
            guard (0...9).contains(avifEffort) else {
                throw ConfigurationError(key: "avifEffort", reason: "must be 0...9")
            }
        }
    }
}
