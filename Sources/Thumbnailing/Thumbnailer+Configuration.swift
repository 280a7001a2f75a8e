// SPDX-License-Identifier: Apache-2.0

extension Thumbnailer {
    /// Limits and encoder settings. Defaults are careful-operator values; the encoder settings were measured
    /// on 256 px thumbnails of the peers' photo corpus (figures in bench/README.md).
    package struct Configuration: Hashable, Sendable {
        /// Largest source accepted, in pixels of one page (width x height from the header, checked before
        /// decoding). Default 50 M: a 12 MP phone photo passes, a header-only bomb is refused in under a millisecond.
        package var maxSourcePixels = 50_000_000
        /// Most frames an animation may have to be rendered animated (`ThumbnailError.tooManyFrames` beyond),
        /// checked from the header. A still render reads the first frame only and is not limited.
        package var maxFrames = 100
        /// Highest resolution a PDF page is rasterised at, 1...2400 dots per inch (`image.pdf_max_dpi`): the page is
        /// drawn at the DPI that fits the sandbox's box, never above this, lowered to stay within `maxSourcePixels`.
        /// 300 (print resolution): an A4 page is then at most 2480 x 3508 px.
        package var pdfMaxDPI = 300
        /// Quality when a spec has none, 1...100.
        package var defaultQuality = 80
        /// Source formats accepted. Default: all of `ImageFormat`.
        package var allowedSourceFormats = Set(ImageFormat.allCases)
        /// Output formats offered. Must contain JPEG and PNG (the `auto` fallbacks); AVIF is also subject to
        /// `Vips.canSaveAVIF`, JPEG XL to `Vips.canSaveJXL`, HEIF (HEIC) to `Vips.canSaveHEIC`. HEIF is not in the
        /// default: HEVC is patent-encumbered, so an operator opts in (`image.heic_output`).
        package var allowedOutputFormats: Set<ImageFormat> = [.jpeg, .png, .webp, .avif, .gif, .jxl]
        /// The formats `format=auto` may answer besides JPEG and PNG, most preferred first: the first one the client
        /// accepts and this process writes is chosen for a still. Only AVIF, JPEG XL and WebP (``autoCandidates``),
        /// each once. An animation takes WebP when it is listed and accepted, else GIF.
        package var autoFormats: [ImageFormat] = [.avif, .jxl, .webp]
        /// Progressive JPEG output. Off: measured at 256 px it made files 0.2 % larger for the same CPU.
        package var jpegProgressive = false
        /// zlib level for PNG output, 0...9. libvips's default 6: levels 1 to 6 measured 8.3 to 10.3 ms per job
        /// in no order by level (±1 ms between repetitions), and 6 gives the smallest files.
        package var pngCompression = 6
        /// libwebp effort ("method"), 0...6. 2: about 2 ms less CPU per 256 px thumbnail than libvips's
        /// default 4, for files 3 % larger; 1 saves nothing more and costs 15 % in size.
        package var webpEffort = 2
        /// libheif/aom effort for AVIF, 0...9. 2: about 27 ms of CPU per 256 px thumbnail against 148 ms at
        /// libvips's default 4, for files 0.3 % larger; 0 takes 10 ms but files grow by 12 %.
        package var avifEffort = 2
        /// libjxl effort for JPEG XL, 3...9 (libvips 8.14 refuses 1 and 2). 4: on 256 px thumbnails of three photos
        /// (bench/encode_formats.c, BENCHMARKS.md "JPEG XL and HEIC output"), 4 to 17 ms of CPU per encode against
        /// 19 to 26 ms for AVIF at its effort 2, and 12 to 24 ms at libjxl's default 7, for files within 4 % of 7's
        /// (and about 25 % smaller than AVIF's at the same `q`). 3 costs the same as 4.
        package var jxlEffort = 4
        /// Sizes (bands) of the intermediate renders boxes go through: a box that fits `intermediateMargin`
        /// times into the smallest band's intermediate of its source (on each axis) is resized from that
        /// intermediate (the source decoded once to fit band x band) instead of from the source, so other
        /// boxes of the same source can reuse it (`Thumbnailer.render(_:spec:intermediates:)`). Empty: every
        /// render starts from the source. Default 512: every box up to 512 px. Measured on the peers' ZIPF
        /// run (boxes 64-512): one 512 band with margin 1 gave 1,726 req/s; adding a 1024 band or margin 2
        /// was slower than no intermediates (645 and 978 req/s against about 1,000), because a 1024 px
        /// intermediate costs a near-full decode and is rarely reused before the cache evicts it.
        package var intermediateBands = [512]
        /// How many times the box's size (per axis) an intermediate must hold for the box to be resized from
        /// it, 1...16. 1 (default): a box as large as the intermediate uses it (resampled twice; on 34 photos
        /// of the corpus, 302 box/fit pairs, the mean absolute difference from a direct render is 0.9 of
        /// 255 levels). 2 keeps libvips's own shrink-on-load margin, but sends 320 and 512 px boxes direct.
        package var intermediateMargin = 1.0

        /// The formats `autoFormats` may list (JPEG and PNG are the fallbacks, GIF the animations', HEIC never).
        package static let autoCandidates: [ImageFormat] = [.avif, .jxl, .webp]

        /// The defaults described on each property.
        package init() {}

        /// Checks every value; called by `Thumbnailer.init`.
        /// - Throws: `ConfigurationError` naming the first invalid property.
        package func validate() throws(ConfigurationError) {
            guard maxSourcePixels >= 1 else {
                throw ConfigurationError(key: "maxSourcePixels", reason: "must be at least 1")
            }
            guard DecoderPool.dpiRange.contains(pdfMaxDPI) else {
                throw ConfigurationError(key: "pdfMaxDPI", reason: "must be 1...2400")
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
            guard intermediateBands.allSatisfy({ (64...ThumbnailSpec.maxDimension).contains($0) }) else {
                throw ConfigurationError(key: "intermediateBands", reason: "must be 64...\(ThumbnailSpec.maxDimension)")
            }
            guard intermediateMargin >= 1 && intermediateMargin <= 16 else {
                throw ConfigurationError(key: "intermediateMargin", reason: "must be 1...16")
            }
            guard (0...9).contains(avifEffort) else {
                throw ConfigurationError(key: "avifEffort", reason: "must be 0...9")
            }
            guard JXLEffortOperation.range.contains(jxlEffort) else {
                throw ConfigurationError(key: "jxlEffort", reason: "must be 3...9")
            }
            if let bad = autoFormats.first(where: { !Self.autoCandidates.contains($0) }) {
                throw ConfigurationError(key: "autoFormats", reason: "\(bad) cannot be negotiated (avif, jxl or webp)")
            }
            guard Set(autoFormats).count == autoFormats.count else {
                throw ConfigurationError(key: "autoFormats", reason: "must not name a format twice")
            }
        }
    }
}
