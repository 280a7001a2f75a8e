// SPDX-License-Identifier: Apache-2.0
import CVipsShims
package import FoundationEssentials

/// A source decoded once at a reduced size: it fits `band` x `band` (never enlarged), upright, 8-bit sRGB
/// or grey with alpha kept, metadata stripped, held in memory by libvips.
///
/// Made by `Thumbnailer.render(_:spec:intermediates:)` when a box is small enough; a cache may keep it and
/// hand it back for other boxes of the same source, which then skip decoding the source. Immutable: any
/// number of threads may render from it at once. The pixels are released when the last reference goes.
package final class IntermediateImage: @unchecked Sendable {
    // Sendable: the C object is never modified after it is made (libvips only reads its pixels), and
    // releasing it happens once, in deinit, when no thread holds a reference.
    let pointer: OpaquePointer
    /// The band it was made for.
    package let band: Int
    /// Bytes of pixels held (width x height x bands): the cost to charge a cache.
    package let byteCount: Int

    init(pointer: OpaquePointer, band: Int) {
        self.pointer = pointer
        self.band = band
        byteCount = thumbd_vips_intermediate_bytes(pointer)
    }

    deinit { thumbd_vips_intermediate_release(pointer) }

    /// The header of the source it was made from, as ``Thumbnailer/probe(_:)`` reads it (`nil` for a format this
    /// build does not name).
    package var probe: ImageProbe? {
        var result = ThumbdVipsProbeResult()
        thumbd_vips_intermediate_probe(pointer, &result)
        guard let format = ImageFormat(result.format) else { return nil }
        return ImageProbe(probed: result, format: format)
    }
}

extension Thumbnailer {
    /// Where `render(_:spec:intermediates:)` gets an intermediate for a band: return a cached one for this
    /// source and band, or call `make` (which decodes the source) and perhaps keep its result. Called at
    /// most once per render, on the rendering thread, before `render` returns.
    package typealias IntermediateProvider = (
        _ band: Int, _ make: () throws(ThumbnailError) -> IntermediateImage
    ) throws(ThumbnailError) -> IntermediateImage

    /// Renders one thumbnail, taking the intermediate for small boxes from `intermediates`.
    ///
    /// Which boxes go through an intermediate depends only on the spec and the source's header (see
    /// `Configuration.intermediateBands`; a plan with a trim always does, and so does one that enlarges and then
    /// cuts or overflows the box, through an intermediate made for it alone when no configured band is large
    /// enough), and the intermediate only on the source and the band, so the
    /// output bytes are the same whether `intermediates` returns a kept intermediate or a new one, provided
    /// it keeps them per source bytes. Checks and errors are those of `render(_:spec:)`: the header and
    /// the pixel limit are checked on every call, and a damaged source fails with `.decodeFailed` while its
    /// intermediate is made.
    /// - Parameter watermarks: the encoded image of each of the spec's watermarks, in order (borrowed for the call).
    /// - Parameter frame: the encoded nine-patch when the spec has a frame (borrowed for the call).
    /// - Parameter regions: the source's detections when the spec needs them (``ThumbnailSpec/needsDetection``).
    package func render(
        _ source: some ContiguousBytes,
        spec: ThumbnailSpec,
        watermarks: [[UInt8]] = [],
        frame: [UInt8]? = nil,
        regions: DetectedRegions? = nil,
        intermediates: IntermediateProvider
    ) throws(ThumbnailError) -> RenderedThumbnail {
        // `raw` answers the source's own bytes: a format only the sandbox reads is refused there as before (the
        // in-process loaders are blocked), never answered as the PNG of its raster.
        if !spec.operations.raw,
            let decoded = try sandboxed(source, box: sandboxBox(for: spec), page: spec.operations.page)
        {
            return try render(
                decoded, spec: spec, watermarks: watermarks, frame: frame, regions: regions,
                intermediates: intermediates)
        }
        var params = try parameters(for: spec, regions: regions)
        params.allowed_sources = sourceMask(for: source)
        // `skip` neither: a decoded source is rendered, whatever its (PNG) format.
        if source is SandboxDecodedSource { params.skip_formats = 0 }
        if spec.operations.watermarks.count != watermarks.count { throw .watermarkUnusable }
        if spec.operations.frame != nil && frame == nil { throw .frameUnusable }
        let bands = configuration.intermediateBands.map { Int32($0) }
        let margin = configuration.intermediateMargin
        let outcome = Self.withEveryBytes(watermarks) { marks in
            Self.withOptionalBytes(frame) { patch in
                withUnsafeMutableBytes(of: &params.watermarks) { raw in
                    let slots = raw.bindMemory(to: ThumbdVipsWatermark.self)
                    for (slot, mark) in marks.enumerated() {
                        slots[slot].image = mark.baseAddress
                        slots[slot].length = mark.count
                    }
                }
                params.frame = patch?.baseAddress
                params.frame_length = patch?.count ?? 0
                return source.withUnsafeBytes {
                    (bytes: UnsafeRawBufferPointer) -> Result<RenderedThumbnail, ThumbnailError> in
                    // One C call: the shim reads the header once and, when the plan goes through an intermediate,
                    // asks for it through `provide` (below) during the call.
                    withoutActuallyEscaping(intermediates) { intermediates in
                        let request = IntermediateRequest(provider: intermediates, bytes: bytes)
                        var result = ThumbdVipsThumbnailResult()
                        let step = withExtendedLifetime(request) {
                            bands.withUnsafeBufferPointer {
                                thumbd_vips_render(
                                    bytes.baseAddress, bytes.count, params, $0.baseAddress, Int32($0.count), margin,
                                    Self.provide, Unmanaged.passUnretained(request).toOpaque(), &result)
                            }
                        }
                        let outcome = Self.outcome(step, &result, bytes)
                        // The provider's own error (a failed decode of the intermediate, say) is the render's.
                        if let error = request.error { return .failure(error) }
                        return outcome
                    }
                }
            }
        }
        return try outcome.get()
    }

    /// What the C render's intermediate callback works with, for one render: the provider, the source (for
    /// error messages) and, once given, the intermediate, kept alive here until `thumbd_vips_render` returns.
    private final class IntermediateRequest {
        let provider: IntermediateProvider
        let bytes: UnsafeRawBufferPointer
        var intermediate: IntermediateImage?
        var error: ThumbnailError?

        init(provider: @escaping IntermediateProvider, bytes: UnsafeRawBufferPointer) {
            self.provider = provider
            self.bytes = bytes
        }
    }

    /// The C render's intermediate callback: asks the provider for the intermediate of `band` (or makes one of
    /// this render's own, never offered to the cache, when `own`: a trim beyond the listed bands, an enlarged
    /// cover, crop or outside, or a kept colour profile, so it cannot fill the cache with odd sizes or hand
    /// unconverted pixels to another plan). Making one goes back into the same C job: no second header read.
    private static let provide: ThumbdVipsIntermediateCallback = { context, job, band, own, out in
        guard let context, let out else { return THUMBD_VIPS_STEP_THUMBNAIL }
        let request = Unmanaged<IntermediateRequest>.fromOpaque(context).takeUnretainedValue()
        let make = { () throws(ThumbnailError) -> IntermediateImage in
            var made: OpaquePointer?
            var result = ThumbdVipsThumbnailResult()
            let step = thumbd_vips_job_make_intermediate(job, band, &made, &result)
            guard step == THUMBD_VIPS_STEP_OK, let made else {
                throw Self.outcome(step, &result, request.bytes).failure ?? .renderFailed("no intermediate")
            }
            return IntermediateImage(pointer: made, band: Int(band))
        }
        do throws(ThumbnailError) {
            let intermediate = own == 0 ? try request.provider(Int(band), make) : try make()
            request.intermediate = intermediate
            out.pointee = intermediate.pointer
            return THUMBD_VIPS_STEP_OK
        } catch {
            request.error = error
            return THUMBD_VIPS_STEP_THUMBNAIL
        }
    }

    /// Runs `body` with `bytes`'s storage, or with `nil`.
    private static func withOptionalBytes<T>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> T) -> T {
        guard let bytes else { return body(nil) }
        return bytes.withUnsafeBytes { body($0) }
    }

    /// Runs `body` with the storage of every one of `arrays`, in order.
    private static func withEveryBytes<T>(_ arrays: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) -> T) -> T {
        func pin(_ index: Int, _ pinned: [UnsafeRawBufferPointer]) -> T {
            guard index < arrays.count else { return body(pinned) }
            return arrays[index].withUnsafeBytes { pin(index + 1, pinned + [$0]) }
        }
        return pin(0, [])
    }

    /// The result of a shim job, with its C memory released.
    private static func outcome(
        _ step: ThumbdVipsStep, _ result: inout ThumbdVipsThumbnailResult, _ bytes: UnsafeRawBufferPointer
    ) -> Result<RenderedThumbnail, ThumbnailError> {
        defer {
            thumbd_vips_free(result.data)
            thumbd_vips_free(result.error_detail)
            result.data = nil
            result.error_detail = nil
        }
        guard step == THUMBD_VIPS_STEP_OK, let data = result.data,
            let format = ImageFormat(result.format), let sourceFormat = ImageFormat(result.source_format)
        else {
            return .failure(
                ThumbnailError(
                    step: step,
                    detail: result.error_detail,
                    loader: result.loader,
                    sourceFormat: result.source_format,
                    width: result.source_width,
                    height: result.source_height,
                    sniffed: ImageFormat.sniff(bytes)
                )
            )
        }
        let output = [UInt8](UnsafeRawBufferPointer(start: data, count: result.length))
        var thumbnail = RenderedThumbnail(
            bytes: output,
            format: format,
            width: Int(result.width),
            height: Int(result.height),
            sourceFormat: sourceFormat,
            quality: result.quality > 0 ? Int(result.quality) : nil
        )
        thumbnail.isSourceBytes = result.passed_through != 0
        thumbnail.isFrameSkipped = result.frame_skipped != 0
        return .success(thumbnail)
    }
}

extension Result {
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
