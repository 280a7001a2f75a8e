// SPDX-License-Identifier: Apache-2.0
import CVipsShims
package import FoundationEssentials
import Synchronization

/// Turns source bytes into a thumbnail with libvips: shrink-on-load, EXIF orientation applied, ICC profiles
/// converted to sRGB, 8-bit output, metadata stripped, first frame of animations.
///
/// Synchronous and blocking (tens of milliseconds): call it on a render worker thread, never on an event
/// loop or Swift's cooperative pool. It keeps no mutable state, so one value can be shared by every render
/// thread; libvips itself is thread-safe. It creates no threads of its own (vips concurrency is 1).
///
/// Damaged sources: decoding uses libvips's `fail_on=error`, so a truncated or corrupt file fails with
/// `ThumbnailError.decodeFailed` instead of rendering with grey or black rows. Browsers do show a partial
/// JPEG, but a thumbnail is cached for a long time (a year by default) and would keep the damage after the
/// origin fixes the file, while an error is not cached and the next request tries again. Mere decoder
/// warnings (such as libjpeg's "extraneous bytes before marker") still render.
///
/// ```swift
/// let thumbnailer = try Thumbnailer(configuration: .init(), vips: try Vips.initialize())
/// let spec = try ThumbnailSpec(width: 256, height: 256, format: .auto(accepting: [.webp]))
/// let thumbnail = try thumbnailer.render(sourceBytes, spec: spec)   // on a render thread
/// ```
package struct Thumbnailer: Sendable {
    /// The validated configuration in force. Read it once per job (each read takes a lock): a job sees one
    /// configuration from start to end even when ``update(configuration:)`` runs meanwhile.
    package var configuration: Configuration { shared.current.withLock { $0 } }
    /// The libvips instance and its capabilities.
    package let vips: Vips
    /// Shared by every copy of this value, so that a reload reaches the copies each component holds.
    private let shared: Shared
    /// The decoder sandbox's helpers, when `image.sandbox` is not `off`: the sources they decode reach the pipeline
    /// as the PNG of their raster (`Thumbnailer+Sandbox.swift`).
    package let sandbox: SourceSandbox?

    /// The configuration every copy of one thumbnailer reads (a `Mutex`: renders read it on many threads).
    private final class Shared: Sendable {
        let current: Mutex<Configuration>
        init(_ configuration: Configuration) { current = Mutex(configuration) }
    }

    /// - Throws: `ConfigurationError` when `configuration` is invalid.
    package init(
        configuration: Configuration = Configuration(), vips: Vips, sandbox: SourceSandbox? = nil
    ) throws(ConfigurationError) {
        try configuration.validate()
        shared = Shared(configuration)
        self.vips = vips
        self.sandbox = sandbox
    }

    /// Replaces the configuration of this thumbnailer and every copy of it (config hot reload: pixel limit,
    /// default quality, output formats). Renders already running finish with the old one. Any thread.
    /// - Throws: `ConfigurationError` when `configuration` is invalid; nothing changes then.
    package func update(configuration: Configuration) throws(ConfigurationError) {
        try configuration.validate()
        shared.current.withLock { $0 = configuration }
    }

    /// Output formats this thumbnailer writes: the allowed ones that libvips can write.
    package var writableFormats: Set<ImageFormat> {
        configuration.allowedOutputFormats.filter { vips.canSave($0) }
    }

    /// Renders one thumbnail. Blocks the calling thread for the whole job; `source` is borrowed (libvips
    /// does not copy it) and released when this returns; the output is copied once into the result.
    /// Small boxes go through an intermediate made for this call and dropped after it (see
    /// `render(_:spec:intermediates:)`), so the bytes equal those of a render that reuses a cached one.
    /// - Throws: `ThumbnailError`; the case says which step failed (see its documentation).
    /// - Parameter watermarks: the encoded image of each of the spec's watermarks, in order (borrowed for the call).
    /// - Parameter frame: the encoded nine-patch when the spec has a frame (borrowed for the call).
    package func render(
        _ source: some ContiguousBytes,
        spec: ThumbnailSpec,
        watermarks: [[UInt8]] = [],
        frame: [UInt8]? = nil,
        regions: DetectedRegions? = nil
    ) throws(ThumbnailError)
        -> RenderedThumbnail
    {
        try render(source, spec: spec, watermarks: watermarks, frame: frame, regions: regions) {
            (_, make) throws(ThumbnailError) -> IntermediateImage in try make()
        }
    }

    /// Reads format, upright dimensions, orientation, page count and alpha from the header, without
    /// decoding pixels (microseconds to a millisecond). Does not apply `maxSourcePixels`.
    /// - Throws: `ThumbnailError.notAnImage`, `.unsupportedFormat` or `.decodeFailed` (unreadable header).
    package func probe(_ source: some ContiguousBytes) throws(ThumbnailError) -> ImageProbe {
        if let decoded = try sandboxed(source, box: 0) { return try probe(decoded) }
        let allowed = sourceMask(for: source)
        let outcome = source.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Result<ImageProbe, ThumbnailError> in
            var result = ThumbdVipsProbeResult()
            let step = thumbd_vips_probe(bytes.baseAddress, bytes.count, allowed, &result)
            defer { thumbd_vips_free(result.error_detail) }
            guard step == THUMBD_VIPS_STEP_OK, let format = ImageFormat(result.format) else {
                return .failure(
                    ThumbnailError(
                        step: step,
                        detail: result.error_detail,
                        loader: result.loader,
                        sourceFormat: result.format,
                        width: result.width,
                        height: result.height,
                        sniffed: ImageFormat.sniff(bytes)
                    )
                )
            }
            let probe = ImageProbe(probed: result, format: format)
            return .success(probe)
        }
        return try outcome.get()
    }

    /// The canonical form of `spec` for this thumbnailer: equivalent specs become equal, so use it in cache
    /// and coalescing keys. Fills in the default quality, drops the gravity unless the fit is `cover` or
    /// `pad` (and the focal point unless it is `cover`),
    /// turns a one-sided box into `contain`, removes from `auto` the formats this thumbnailer cannot
    /// write, and ignores the quality of PNG and GIF output (no quality setting: every `q` gives the same bytes, so they
    /// share one key). A `raw` spec is ``ThumbnailSpec/raw`` (nothing else in it is read), and `skip` beside a format
    /// asked by name keeps that format only. Rendering a spec or its normalised form gives the same output.
    package func normalized(_ spec: ThumbnailSpec) -> ThumbnailSpec {
        if spec.operations.raw { return .raw }
        let configuration = self.configuration
        let writableFormats = configuration.allowedOutputFormats.filter { vips.canSave($0) }
        let oneSided = spec.width == nil || spec.height == nil
        // fill-down with enlarge is cover (the box is never larger than what the picture may become).
        let fit = oneSided ? Fit.contain : spec.fit == .coverDown && spec.enlarge ? .cover : spec.fit
        let crops = fit == .cover || fit == .auto || fit == .coverDown
        // A point measured from the top-left corner of a picture nothing trims is one spelling (`fpx:x,y`).
        let focalPoint = crops ? spec.focalPoint?.measuredFromTopLeft(trimmed: spec.operations.trim != nil) : nil
        // pad places the picture by a compass point; the smart gravities choose a crop, and pad crops nothing.
        let placesByGravity =
            (crops && focalPoint == nil)
            || (fit == .pad && !spec.gravity.looksAtPixels)
        var format = spec.format
        if case .auto(let accepted) = format {
            format = .auto(accepting: Self.negotiable(accepted, configuration.autoFormats, writableFormats))
        }
        var quality = spec.quality
        if quality == nil, !spec.formatQuality.isEmpty {
            // The format a still renders into (PNG and GIF have no quality).
            let output: ImageFormat =
                switch format {
                case .exactly(let format): format
                case .auto(let accepted):
                    Self.stillFormat(accepted, configuration.autoFormats, writableFormats) ?? .jpeg
                }
            quality = spec.formatQuality[output]
        }
        return ThumbnailSpec(
            validatedWidth: spec.width,
            height: spec.height,
            fit: fit,
            gravity: placesByGravity ? spec.gravity : .centre,
            quality: format == .exactly(.png) || format == .exactly(.gif)
                ? configuration.defaultQuality : (quality ?? configuration.defaultQuality),
            enlarge: spec.enlarge,
            format: format,
            focalPoint: focalPoint,
            operations: normalized(
                spec.operations, configuration, box: (spec.width, spec.height), format: format,
                offsetMatters: placesByGravity && crops && !spec.gravity.looksAtPixels,
                facesCrop: placesByGravity && crops && spec.gravity == .face && !oneSided)
        )
    }

    /// `operations.normalized`, and the encoder options that equal the configuration's removed.
    private func normalized(
        _ operations: ThumbnailSpec.Operations, _ configuration: Configuration, box: (width: Int?, height: Int?),
        format: FormatRequest, offsetMatters: Bool, facesCrop: Bool
    ) -> ThumbnailSpec.Operations {
        var result = operations.normalized
        // face_zoom and face_pad choose a cover crop around the faces: nothing for any other gravity or fit.
        if !facesCrop { result.faceCrop = nil }
        // A source skips its render only into its own format: beside a format asked by name, the others never do.
        if case .exactly(let output) = format, !result.skipProcessing.isEmpty {
            result.skipProcessing = result.skipProcessing.contains(output) ? [output] : []
        }
        // A gravity's offset moves only the cover crop of a compass point.
        if !offsetMatters { result.gravityOffset = nil }
        // A one-sided or square box has no orientation to adapt.
        if box.width == nil || box.height == nil || (box.width == box.height && result.originalSides.isEmpty) {
            result.adaptive = false
        }
        if result.progressive == configuration.jpegProgressive { result.progressive = nil }
        if result.avifEffort == configuration.avifEffort { result.avifEffort = nil }
        if result.jxlEffort == configuration.jxlEffort { result.jxlEffort = nil }
        return result
    }

    /// What of `accepted` can change an `auto` render: the still's format (the first of `order` accepted and
    /// writable), and WebP for an animation when listed, accepted and writable. Everything else is dropped, so that
    /// the variant key (`auto+webp+avif`, `auto+jxl`, ...) names the negotiated format and clients whose `Accept`
    /// differs only in formats that would not be chosen share one variant.
    static func negotiable(
        _ accepted: AcceptedFormats, _ order: [ImageFormat], _ writable: Set<ImageFormat>
    ) -> AcceptedFormats {
        var result: AcceptedFormats = []
        if let still = stillFormat(accepted, order, writable), let member = AcceptedFormats(still) {
            result.insert(member)
        }
        if order.contains(.webp), accepted.contains(.webp), writable.contains(.webp) { result.insert(.webp) }
        return result
    }

    /// The format a still renders into under `auto` with `accepted`, JPEG or PNG (`nil`) aside: the first of `order`
    /// that the client accepts and this thumbnailer writes.
    static func stillFormat(
        _ accepted: AcceptedFormats, _ order: [ImageFormat], _ writable: Set<ImageFormat>
    ) -> ImageFormat? {
        order.first { format in
            AcceptedFormats(format).map { accepted.contains($0) } == true && writable.contains(format)
        }
    }

    /// The format an animated source renders into for `request`, or `nil` for its first frame only: WebP or GIF
    /// when asked for exactly; under `auto`, WebP when accepted (and in `autoFormats`), else GIF. AVIF, JPEG XL,
    /// HEIC, JPEG and PNG hold one frame.
    package func animatedFormat(for request: FormatRequest) -> ImageFormat? {
        let configuration = self.configuration
        let writable = configuration.allowedOutputFormats.filter { vips.canSave($0) }
        switch request {
        case .exactly(let format):
            return (format == .webp || format == .gif) && writable.contains(format) ? format : nil
        case .auto(let accepted):
            if accepted.contains(.webp) && writable.contains(.webp) && configuration.autoFormats.contains(.webp) {
                return .webp
            }
            return writable.contains(.gif) ? .gif : nil
        }
    }

    /// The output format for a thumbnail without / with transparent pixels, following the negotiation rules
    /// of `FormatRequest`.
    /// - Throws: `ThumbnailError.outputFormatUnavailable` for an explicit format this thumbnailer cannot write.
    package func outputFormats(
        for request: FormatRequest
    ) throws(ThumbnailError)
        -> (opaque: ImageFormat, transparent: ImageFormat)
    {
        let configuration = self.configuration
        let writable = configuration.allowedOutputFormats.filter { vips.canSave($0) }
        switch request {
        case .exactly(let format):
            guard writable.contains(format) else { throw .outputFormatUnavailable(format) }
            return (format, format)
        case .auto(let accepted):
            if let still = Self.stillFormat(accepted, configuration.autoFormats, writable) { return (still, still) }
            return (.jpeg, .png)
        }
    }
}

extension ImageProbe {
    /// What libvips's header reading found (`thumbd_vips_probe`, or the one an intermediate remembers), the sides
    /// made upright.
    init(probed result: ThumbdVipsProbeResult, format: ImageFormat) {
        let swapsSides = (5...8).contains(result.orientation)
        self.init(
            format: format,
            width: Int(swapsSides ? result.height : result.width),
            height: Int(swapsSides ? result.width : result.height),
            orientation: Int(result.orientation),
            pageCount: Int(result.pages),
            hasAlpha: result.has_alpha != 0,
            hasICCProfile: result.has_icc_profile != 0
        )
        bands = Int(result.bands)
        bitsPerChannel = Int(result.bits)
        colourSpace = result.colour_space.map { String(cString: $0) } ?? ""
        cameraMake = Self.text(result.make)
        cameraModel = Self.text(result.model)
        takenAt = Self.text(result.taken_at)
    }

    /// A NUL-terminated C character array as a string; `nil` when empty.
    private static func text<T>(_ tuple: T) -> String? {
        let value = withUnsafeBytes(of: tuple) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return value.isEmpty ? nil : value
    }
}
