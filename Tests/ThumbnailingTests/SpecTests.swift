// SPDX-License-Identifier: Apache-2.0
import Testing
import Thumbnailing

/// Spec validation and normalisation, configuration validation: no libvips work except one start.
@Suite struct SpecTests {
    @Test(arguments: [0, -1, 4097])
    func outOfRangeSidesAreRejected(_ side: Int) {
        #expect(throws: SpecError.self) { try ThumbnailSpec(width: side, height: 10) }
        #expect(throws: SpecError.self) { try ThumbnailSpec(width: 10, height: side) }
    }

    @Test func rangeBoundsAreAccepted() throws {
        _ = try ThumbnailSpec(width: 1, height: 4096)
        _ = try ThumbnailSpec(width: 4096, height: nil)
        _ = try ThumbnailSpec(width: nil, height: 1, quality: 1)
        _ = try ThumbnailSpec(width: 1, height: nil, quality: 100)
    }

    @Test func theRejectedFieldIsNamed() {
        #expect(throws: SpecError(field: "width", reason: "width or height is required")) {
            try ThumbnailSpec(width: nil, height: nil)
        }
        #expect(throws: SpecError(field: "quality", reason: "must be 1...100")) {
            try ThumbnailSpec(width: 10, height: 10, quality: 101)
        }
        #expect(throws: SpecError(field: "format", reason: "tiff cannot be written")) {
            try ThumbnailSpec(width: 10, height: 10, format: .exactly(.tiff))
        }
    }

    @Test func normalisationMakesEquivalentSpecsEqual() throws {
        let thumbnailer = try TestThumbnailer.make()
        // Gravity without cover, explicit default quality, one-sided cover
        let a = try ThumbnailSpec(width: 100, height: 100, fit: .contain, gravity: .north)
        let b = try ThumbnailSpec(width: 100, height: 100, quality: 80)
        let c = try ThumbnailSpec(width: 100, height: nil, fit: .cover, gravity: .east)
        let d = try ThumbnailSpec(width: 100, height: nil)
        #expect(a != b)
        #expect(thumbnailer.normalized(a) == thumbnailer.normalized(b))
        #expect(thumbnailer.normalized(c) == thumbnailer.normalized(d))
        // Cover keeps its gravity
        let e = try ThumbnailSpec(width: 100, height: 100, fit: .cover, gravity: .east)
        #expect(thumbnailer.normalized(e).gravity == .east)
        // PNG is lossless: its quality is not part of the key; a lossy format's quality is.
        let png30 = try ThumbnailSpec(width: 100, height: 100, quality: 30, format: .exactly(.png))
        let png90 = try ThumbnailSpec(width: 100, height: 100, quality: 90, format: .exactly(.png))
        #expect(thumbnailer.normalized(png30) == thumbnailer.normalized(png90))
        let webp30 = try ThumbnailSpec(width: 100, height: 100, quality: 30, format: .exactly(.webp))
        let webp90 = try ThumbnailSpec(width: 100, height: 100, quality: 90, format: .exactly(.webp))
        #expect(thumbnailer.normalized(webp30) != thumbnailer.normalized(webp90))
    }

    @Test func normalisationDropsFormatsThatCannotBeWritten() throws {
        let thumbnailer = try TestThumbnailer.make { $0.allowedOutputFormats = [.jpeg, .png, .webp] }
        let spec = try ThumbnailSpec(width: 10, height: 10, format: .auto(accepting: [.avif, .webp]))
        #expect(thumbnailer.normalized(spec).format == .auto(accepting: [.webp]))
    }

    @Test func defaultConfigurationIsValid() throws {
        try Thumbnailer.Configuration().validate()
    }

    @Test func invalidConfigurationsNameTheKey() {
        let cases: [(String, (inout Thumbnailer.Configuration) -> Void)] = [
            ("maxSourcePixels", { $0.maxSourcePixels = 0 }),
            ("defaultQuality", { $0.defaultQuality = 0 }),
            ("allowedSourceFormats", { $0.allowedSourceFormats = [] }),
            ("allowedOutputFormats", { $0.allowedOutputFormats = [.jpeg] }),
            ("allowedOutputFormats", { $0.allowedOutputFormats = [.jpeg, .png, .tiff] }),
            ("pngCompression", { $0.pngCompression = 10 }),
            ("webpEffort", { $0.webpEffort = 7 }),
            ("avifEffort", { $0.avifEffort = -1 }),
        ]
        for (key, change) in cases {
            var configuration = Thumbnailer.Configuration()
            change(&configuration)
            let error = #expect(throws: ConfigurationError.self) { try configuration.validate() }
            #expect(error?.key == key)
        }
    }

    @Test func initializeIsIdempotent() throws {
        let first = try Vips.initialize()
        let second = try Vips.initialize()
        #expect(first == second)
        #expect(first.version.hasPrefix("8."))
    }
}
