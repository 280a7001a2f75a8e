// SPDX-License-Identifier: Apache-2.0
import CVipsShims
import Synchronization

/// Proof that libvips has been started with thumbd's policy, and what it can do.
///
/// Obtain it once with `Vips.initialize()` on the main thread before any render thread starts, then hand
/// it to `Thumbnailer`. The policy: operation cache off, vips concurrency 1 (parallelism comes from the
/// render threads), only the JPEG, PNG, WebP, GIF, HEIF/AVIF and TIFF loaders allowed, and every operation
/// libvips marks untrusted blocked (SVG, PDF, ImageMagick, ...).
///
/// ```swift
/// let vips = try Vips.initialize()
/// let thumbnailer = try Thumbnailer(configuration: config, vips: vips)
/// // on each render thread, just before it exits:
/// Vips.shutdownCurrentThread()
/// ```
package struct Vips: Hashable, Sendable {
    /// libvips's version string, e.g. `8.14.1`.
    package let version: String
    /// Whether this libvips can write AVIF (libheif with an AV1 encoder). `format=auto` offers AVIF only
    /// when this is true.
    package let canSaveAVIF: Bool
    /// Whether this libvips can write JPEG XL (jxlsave with libjxl). `format=jxl` is refused and `format=auto`
    /// never offers JPEG XL when this is false.
    package let canSaveJXL: Bool
    /// Whether this libvips can write HEIC (heifsave with libheif's HEVC encoder). `format=heic` is refused when
    /// this is false; `format=auto` never answers HEIC.
    package let canSaveHEIC: Bool

    /// Whether this libvips can write `format` (AVIF, JPEG XL and HEIC depend on the build; the others always can).
    package func canSave(_ format: ImageFormat) -> Bool {
        switch format {
        case .avif: canSaveAVIF
        case .jxl: canSaveJXL
        case .heif: canSaveHEIC
        default: true
        }
    }

    private static let started = Mutex<Vips?>(nil)

    /// Starts libvips for this process and applies thumbd's policy. Idempotent: later calls return the
    /// first result without touching libvips.
    /// - Parameter programName: passed to `VIPS_INIT` (libvips uses it to locate its data files).
    /// - Throws: `VipsInitializationError` when libvips cannot start.
    package static func initialize(programName: String = "thumbd") throws(VipsInitializationError) -> Vips {
        try started.withLock { (started: inout Vips?) throws(VipsInitializationError) -> Vips in
            if let started { return started }
            var detail: UnsafeMutablePointer<CChar>?
            let status = thumbd_vips_init(programName, &detail)
            defer { thumbd_vips_free(detail) }
            guard status == 0 else {
                throw VipsInitializationError(detail: detail.map { String(cString: $0) } ?? "unknown error")
            }
            let vips = Vips(
                version: String(cString: thumbd_vips_version()),
                canSaveAVIF: thumbd_vips_can_save_avif() == 1,
                canSaveJXL: thumbd_vips_can_save_jxl() == 1,
                canSaveHEIC: thumbd_vips_can_save_heic() == 1
            )
            started = vips
            return vips
        }
    }

    /// Frees libvips's per-thread state. Every thread that rendered calls this once, right before it exits
    /// (libvips keeps per-thread buffers that are otherwise leaked).
    package static func shutdownCurrentThread() {
        thumbd_vips_thread_shutdown()
    }
}
