// SPDX-License-Identifier: Apache-2.0
import Foundation
import OriginFetch
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp
@testable import ThumbdSettings

/// `image.fallback`: which errors it replaces (source errors only), and how the file is checked when the
/// configuration is loaded (a bad file is a configuration error naming `image.fallback`).
@Suite struct FallbackImageTests {
    static func thumbnailer(maxSourcePixels: Int = 50_000_000) throws -> Thumbnailer {
        var configuration = Thumbnailer.Configuration()
        configuration.maxSourcePixels = maxSourcePixels
        return try Thumbnailer(configuration: configuration, vips: Vips.initialize())
    }

    @Test func itReplacesSourceErrorsOnlyNeverRequestErrorsOverloadOrOwnFailures() {
        // Given every service error and its status (ErrorResponseTests' table), then exactly the source's faults
        // get the fallback: 404 (but an expired URL's), 413, 502, 504, and the 422s about the source itself
        // (and not the plan's, the watermark's or the frame's)
        let planErrors: [ThumbnailError] = [
            .cropOutsidePicture, .canvasTooLarge, .notAnimatable("trim"), .watermarkUnusable,
        ]
        for (error, status) in ErrorResponseTests.serviceErrors {
            var expected = [404, 413, 422, 502, 504].contains(status)
            if case .thumbnail(let thumbnailError) = error, planErrors.contains(thumbnailError) { expected = false }
            if case .watermark = error { expected = false }
            if case .frame = error { expected = false }
            // (An expired URL's 404 is the URL's deadline, not the source's fault.)
            if case .expired = error { expected = false }
            #expect(FallbackImage.replaces(error) == expected, "\(error) (\(status))")
        }
        // And the table covers each class at least once
        let replaced = Set(ErrorResponseTests.serviceErrors.filter { FallbackImage.replaces($0.error) }.map(\.status))
        #expect(replaced == [404, 413, 422, 502, 504])
    }

    @Test func aGoodFileIsLoadedWithItsStatusAndCacheControl() throws {
        let image = try FallbackImage(
            path: Fixtures.url("grey.png").path, status: 200, ttl: .seconds(300), maxBytes: 1 << 20,
            thumbnailer: Self.thumbnailer())
        #expect(image.bytes == Fixtures.bytes("grey.png"))
        #expect(image.status?.code == 200)
        #expect(image.cacheControl == "public, max-age=300")
        #expect(image.source.string.hasPrefix("https://fallback.thumbd.invalid/"))
    }

    @Test(arguments: [
        ("page.html", "is not an image thumbd can render: source is not an image"),
        ("truncated.jpg", "is not an image thumbd can render: source image is damaged"),
        ("image.svg", "is not an image thumbd can render: source format not supported"),
        ("bomb.png", "is not an image thumbd can render: source has too many pixels"),
    ])
    func aFileThatIsNotARenderableImageIsRefused(name: String, message: String) throws {
        #expect(throws: FallbackImage.LoadError.self) {
            try FallbackImage(
                path: Fixtures.url(name).path, status: nil, ttl: .seconds(60), maxBytes: 1 << 20,
                thumbnailer: Self.thumbnailer())
        }
        do {
            _ = try FallbackImage(
                path: Fixtures.url(name).path, status: nil, ttl: .seconds(60), maxBytes: 1 << 20,
                thumbnailer: Self.thumbnailer())
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test func aMissingADirectoryOrTooLargeFileIsAConfigurationErrorNamingTheKey() throws {
        var settings = Settings()
        let thumbnailer = try Self.thumbnailer()
        for (path, reason) in [
            ("/nonexistent/fallback.png", "cannot read /nonexistent/fallback.png"),
            ("/tmp", "/tmp is not a regular file"),
        ] {
            settings.image.fallback = path
            do {
                _ = try settings.fallbackImage(thumbnailer: thumbnailer)
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.key == "image.fallback")
                #expect(error.reason.contains(reason), "\(error.reason)")
            }
        }
        settings.image.fallback = Fixtures.url("progressive.jpg").path
        settings.fetch.maxSourceBytes = 1000
        #expect(throws: SettingsError.self) { try settings.fallbackImage(thumbnailer: thumbnailer) }
        // And no file means no fallback
        settings.image.fallback = ""
        #expect(try settings.fallbackImage(thumbnailer: thumbnailer) == nil)
    }

    @Test func checkConfigRefusesABadFallbackNamingTheKeyAndLine() throws {
        let files = try ConfigTestFiles()
        let html = Fixtures.url("page.html").path
        let path = try files.write("image:\n  fallback: \(html)\n")
        let report = try ThumbdCommand.parse(["--check-config", "--config", path]).checkConfigReport(environment: [:])
        #expect(report.status == ThumbdCommand.configurationErrorStatus)
        #expect(report.output.contains("image.fallback (\(path):2): \(html) is not an image"), "\(report.output)")
    }
}
