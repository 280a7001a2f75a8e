// SPDX-License-Identifier: Apache-2.0
import CVipsShims
import FoundationEssentials

/// Which sources the decoder sandbox decodes (`image.sandbox`).
package enum SandboxMode: String, Sendable, Hashable, CaseIterable {
    /// SVG, PDF, JPEG XL, BMP and ICO go through the helpers; the rest is decoded in thumbd (the default).
    case untrusted
    /// Every source goes through the helpers.
    case all
    /// No helper: SVG, PDF, JPEG XL, BMP and ICO are refused, as libvips's loaders for them are blocked in thumbd.
    case off
}

/// The formats only the decoder sandbox reads: their loaders are blocked in thumbd's own address space.
package enum SandboxedFormat: String, Sendable, Hashable, CaseIterable {
    case svg
    case pdf
    case jxl
    case bmp
    case ico

    /// The format `bytes` start with (magic numbers), if it is one of these.
    package init?(sniffing bytes: UnsafeRawBufferPointer) {
        func matches(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            return prefix.indices.allSatisfy { bytes[offset + $0] == prefix[$0] }
        }
        if matches(Array("%PDF-".utf8)) {
            self = .pdf
        } else if matches([0xFF, 0x0A]) || matches([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            self = .jxl  // the bare codestream and the ISO BMFF container's signature box
        } else if matches(Array("BM".utf8)) {
            self = .bmp
        } else if matches([0, 0, 1, 0]) {
            self = .ico
        } else if Self.looksLikeSVG(bytes) {
            self = .svg
        } else {
            return nil
        }
    }

    /// XML (after a byte-order mark and white space, `<`) with an `<svg` element in its first 4 KiB.
    private static func looksLikeSVG(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var start = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.count, bytes[start] == UInt8(ascii: "<") else { return false }
        let head = bytes[start..<min(bytes.count, start + 4096)]
        let needle = Array("<svg".utf8)
        guard head.count >= needle.count else { return false }
        for offset in head.startIndex...(head.endIndex - needle.count)
        where needle.indices.allSatisfy({ bytes[offset + $0] == needle[$0] }) {
            return true
        }
        return false
    }
}

/// The pool of helpers and which sources it decodes, as a `Thumbnailer` holds them.
package struct SourceSandbox: Sendable {
    /// The helpers.
    package let pool: DecoderPool
    /// `all`: every source; otherwise only the ``SandboxedFormat``s.
    package let mode: SandboxMode

    /// `pool` decoding the sources `mode` names.
    package init(pool: DecoderPool, mode: SandboxMode) {
        self.pool = pool
        self.mode = mode
    }
}

/// A source the sandbox decoded, as the uncompressed PNG the pipeline reads. Never sent to the sandbox again.
package struct SandboxDecodedSource: ContiguousBytes, Sendable {
    /// The PNG.
    package let png: [UInt8]

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try png.withUnsafeBytes(body)
    }
}

extension Thumbnailer {
    /// The sandboxed formats' box: a vector source is drawn to fit a square of the spec's longer side, at least the
    /// largest intermediate band, so that every box an intermediate serves sees the same raster (and the same bytes).
    func sandboxBox(for spec: ThumbnailSpec) -> Int {
        max(spec.width ?? 0, spec.height ?? 0, configuration.intermediateBands.max() ?? 0)
    }

    /// `source` decoded by the sandbox (a PNG) when its format goes there, else `nil`: the caller goes on with the
    /// source itself. `box`: the square a vector source is drawn to fit (0: its own size). `page`: the page of a PDF
    /// (from 1); any other source has one page only, so a later page is `.noSuchPage` whoever decodes it. Blocks for
    /// the job.
    /// - Throws: `ThumbnailError` for a source the sandbox could not decode, a page past the last, a deadline, or no
    ///   sandbox for a format only the sandbox reads (`.unsupportedFormat`).
    func sandboxed(
        _ source: some ContiguousBytes, box: Int, page: Int = 1
    ) throws(ThumbnailError) -> SandboxDecodedSource? {
        if source is SandboxDecodedSource { return nil }
        let sandbox = self.sandbox
        let limit = configuration.maxSourcePixels
        let maxDPI = configuration.pdfMaxDPI
        let outcome = source.withUnsafeBytes { (bytes) -> Result<SandboxDecodedSource, ThumbnailError>? in
            let format = SandboxedFormat(sniffing: bytes)
            guard let sandbox else {
                // No sandbox: the in-process loaders are blocked, libvips refuses these as it always did (a PDF with
                // a later page too: the format's refusal says more than the page's).
                if page > 1 && format == nil { return .failure(.noSuchPage(page: page, pages: 1)) }
                return nil
            }
            guard format != nil || (sandbox.mode == .all && ImageFormat.sniff(bytes) != nil) else {
                // In process: no loader thumbd runs there reads pages (an animation's frames are not pages).
                return page > 1 ? .failure(.noSuchPage(page: page, pages: 1)) : nil
            }
            let raster: DecoderPool.Raster
            do throws(DecoderPool.DecodeError) {
                raster = try sandbox.pool.decode(bytes, box: (box, box), page: page, maxDPI: maxDPI, pixelLimit: limit)
            } catch {
                return .failure(ThumbnailError(sandbox: error, page: page))
            }
            return Result { () throws(ThumbnailError) -> SandboxDecodedSource in try Self.png(of: raster) }
        }
        return try outcome?.get()
    }

    /// The raster as an uncompressed PNG (thumbd_vips_raster_to_png).
    private static func png(of raster: DecoderPool.Raster) throws(ThumbnailError) -> SandboxDecodedSource {
        var data: UnsafeMutableRawPointer?
        var length = 0
        var detail: UnsafeMutablePointer<CChar>?
        defer { thumbd_vips_free(detail) }
        let failed = raster.pixels.withUnsafeBytes {
            thumbd_vips_raster_to_png(
                $0.baseAddress, $0.count, Int32(clamping: raster.width), Int32(clamping: raster.height),
                Int32(clamping: raster.bands), Int32(clamping: raster.bandFormat), &data, &length, &detail)
        }
        guard failed == 0, let data else {
            throw .decodeFailed(detail.map { String(cString: $0) } ?? "sandbox raster unusable")
        }
        defer { thumbd_vips_free(data) }
        return SandboxDecodedSource(png: Array(UnsafeRawBufferPointer(start: data, count: length)))
    }

    /// The allowed-sources mask for `source`: a decoded one is a PNG thumbd wrote, whatever the configuration allows.
    func sourceMask(for source: some ContiguousBytes) -> UInt32 {
        source is SandboxDecodedSource ? sourceMask | (1 << ImageFormat.png.vipsFormat.rawValue) : sourceMask
    }
}

extension ThumbnailError {
    /// A sandbox job's failure as a render's: a source over the pixel limit is `.tooManyPixels`, a page past the last
    /// `.noSuchPage` (of `page`, the one the job asked for), another refusal or a crash `.sandboxFailed`, the deadline
    /// `.sandboxTimedOut`, no helper `.sandboxUnavailable`.
    init(sandbox error: DecoderPool.DecodeError, page: Int) {
        switch error {
        case .tooManyPixels(let width, let height): self = .tooManyPixels(width: width, height: height)
        case .refused(let message): self = .sandboxFailed(message)
        case .crashed(let how): self = .sandboxFailed(how)
        case .timedOut: self = .sandboxTimedOut
        case .unavailable(let why): self = .sandboxUnavailable(why)
        case .noSuchPage(let pages): self = .noSuchPage(page: page, pages: pages)
        }
    }
}
