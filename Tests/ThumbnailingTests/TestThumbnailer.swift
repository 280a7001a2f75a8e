// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Shared set-up: one libvips start for the process, thumbnailers with a tweakable configuration, and a
/// render-then-decode helper so each test reads as given / when / then.
enum TestThumbnailer {
    static func make(_ configure: (inout Thumbnailer.Configuration) -> Void = { _ in }) throws -> Thumbnailer {
        var configuration = Thumbnailer.Configuration()
        configure(&configuration)
        return try Thumbnailer(configuration: configuration, vips: Vips.initialize())
    }

    /// Renders a fixture and decodes the output, checking that the reported size and format match what the
    /// encoded bytes say.
    static func render(
        _ fixture: String,
        _ spec: ThumbnailSpec,
        with thumbnailer: Thumbnailer? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (thumbnail: RenderedThumbnail, image: DecodedImage) {
        let thumbnailer = try thumbnailer ?? make()
        let thumbnail = try thumbnailer.render(Fixtures.bytes(fixture), spec: spec)
        let image = try DecodedImage(decoding: thumbnail.bytes)
        #expect(image.mimeType == thumbnail.format.mimeType, sourceLocation: sourceLocation)
        #expect(image.width == thumbnail.width, sourceLocation: sourceLocation)
        #expect(image.height == thumbnail.height, sourceLocation: sourceLocation)
        return (thumbnail, image)
    }

    /// A spec for tests, failing the test (not trapping) when it is invalid.
    static func spec(
        _ width: Int?,
        _ height: Int?,
        fit: Fit = .contain,
        gravity: Gravity = .centre,
        quality: Int? = nil,
        enlarge: Bool = false,
        format: FormatRequest = .exactly(.png),
        animated: Bool = true
    ) throws -> ThumbnailSpec {
        var operations = ThumbnailSpec.Operations()
        operations.animated = animated
        return try ThumbnailSpec(
            width: width,
            height: height,
            fit: fit,
            gravity: gravity,
            quality: quality,
            enlarge: enlarge,
            format: format,
            operations: operations
        )
    }
}
