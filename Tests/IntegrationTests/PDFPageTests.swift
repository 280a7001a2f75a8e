// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

/// PDF pages (`page=`, imgproxy's `pg:`) and the DPI cap (`image.pdf_max_dpi`): hand-written PDFs through the helper
/// directly (the job's page and cap, the raster's size) and through a thumbd child (pixels, the 422 naming the page,
/// one cache entry for the two URL forms).
@Suite struct PDFPageTests {
    /// A PDF of one page per entry: `width` x `height` points filled with `colour` (0...1 each), plus `bars` black
    /// rectangles (x, y, width, height in points) on it. Written by hand; poppler reads it without an xref table.
    static func pdf(_ pages: [(width: Int, height: Int, colour: (Double, Double, Double))], bars: [[Int]] = [])
        -> [UInt8]
    {
        let count = pages.count
        var objects: [String] = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [\((0..<count).map { "\(3 + 2 * $0) 0 R" }.joined(separator: " "))] /Count \(count) >>",
        ]
        for (index, page) in pages.enumerated() {
            let (red, green, blue) = page.colour
            var content = "\(red) \(green) \(blue) rg 0 0 \(page.width) \(page.height) re f"
            if index == 0 { for bar in bars { content += " 0 0 0 rg \(bar[0]) \(bar[1]) \(bar[2]) \(bar[3]) re f" } }
            objects.append(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(page.width) \(page.height)] /Contents \(4 + 2 * index) 0 R >>"
            )
            objects.append("<< /Length \(content.utf8.count) >> stream\n\(content)\nendstream")
        }
        var text = "%PDF-1.4\n"
        for (index, object) in objects.enumerated() { text += "\(index + 1) 0 obj \(object) endobj\n" }
        text += "trailer << /Root 1 0 R >>\n%%EOF\n"
        return Array(text.utf8)
    }

    static let red = (1.0, 0.0, 0.0)
    static let green = (0.0, 1.0, 0.0)
    static let blue = (0.0, 0.0, 1.0)
    /// Three A6-ish pages, red, green and blue.
    static let threePages = pdf([(300, 200, red), (300, 200, green), (300, 200, blue)])

    // MARK: - The helper

    @Test func theHelperDecodesThePageAskedFor() throws {
        for (page, expected) in [(1, RGB(255, 0, 0)), (2, RGB(0, 255, 0)), (3, RGB(0, 0, 255))] {
            let (answer, _, _) = try DecoderSandboxTests.decode(Self.threePages, box: (150, 150), page: UInt32(page))
            guard case .raster(let width, let height, let bands, _, let pixels) = answer else {
                Issue.record("page \(page): \(answer)")
                continue
            }
            #expect(width == 150 && height == 100, "page \(page)")
            let centre = (50 * width + 75) * bands
            #expect(RGB(pixels[centre], pixels[centre + 1], pixels[centre + 2]).isClose(to: expected, tolerance: 2))
        }
    }

    @Test func aPagePastTheLastAnswersThePageCount() throws {
        #expect(try DecoderSandboxTests.decode(Self.threePages, box: (150, 150), page: 4).0 == .noPage(3))
        // Any other source has one page.
        let png = try FlatImage.make(width: 20, height: 10, as: .png)
        #expect(try DecoderSandboxTests.decode(png, box: (0, 0), page: 2).0 == .noPage(1))
    }

    @Test func aJobOutOfRangeIsRefusedNotDecoded() throws {
        for (page, dpi) in [(UInt32(0), UInt32(300)), (100_001, 300), (1, 0), (1, 2401)] {
            let (answer, _, _) = try DecoderSandboxTests.decode(
                Self.threePages, box: (150, 150), page: page, maxDPI: dpi)
            #expect(answer == .refused("page or DPI cap out of range"), "page \(page), dpi \(dpi)")
        }
    }

    /// A half-inch page asked at 1000 px: drawn at the cap (300 DPI: 150 px), not at 2000 DPI.
    @Test func aTinyPageStopsAtTheDPICap() throws {
        let tiny = Self.pdf([(36, 36, Self.green)])
        for (cap, side) in [(UInt32(300), 150), (72, 36), (2400, 1000)] {
            guard
                case .raster(let width, let height, _, _, _) = try DecoderSandboxTests.decode(
                    tiny, box: (1000, 1000), maxDPI: cap
                ).0
            else {
                Issue.record("cap \(cap): no raster")
                continue
            }
            #expect(width == side && height == side, "cap \(cap): \(width)x\(height)")
        }
    }

    /// An A4 page (595 x 842 pt) in thumbd's box for w=256 (the 512 px intermediate band): drawn to fill the box, at
    /// 44 DPI, not at 72 and not at the cap.
    @Test func anA4PageFillsTheBox() throws {
        let a4 = Self.pdf([(595, 842, (1, 1, 1))])
        guard case .raster(let width, let height, _, _, _) = try DecoderSandboxTests.decode(a4, box: (512, 512)).0
        else {
            Issue.record("no raster")
            return
        }
        #expect(height == 512 && abs(width - 362) <= 1, "\(width)x\(height)")
    }

    /// The 100,000 pt page in a box larger than the pixel limit allows: lowered to fit, not refused.
    @Test func aHugePageIsLoweredToThePixelLimit() throws {
        let huge = Self.pdf([(100_000, 100_000, Self.blue)])
        let (answer, _, elapsed) = try DecoderSandboxTests.decode(huge, box: (2000, 2000), pixelLimit: 1_000_000)
        guard case .raster(let width, let height, _, _, _) = answer else {
            Issue.record("\(answer)")
            return
        }
        #expect(width * height <= 1_000_000 && width >= 990, "\(width)x\(height)")
        #expect(elapsed < .seconds(2))
    }

    // MARK: - Through thumbd

    static func start(_ directory: TempDirectory) async throws -> ThumbdChild {
        let configuration = directory.appending("thumbd.yaml")
        try ThumbdChild.writeConfiguration(to: configuration, extraYAML: "imgproxy:\n  enabled: true\n")
        let cache = directory.appending("cache")
        return try await blocking { try ThumbdChild(configuration: configuration, cacheDirectory: cache) }
    }

    @Test(.timeLimit(.minutes(1))) func thePageComesThroughBothURLFormsAsOneVariant() async throws {
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        origin.route("/three.pdf", .ok(Self.threePages, contentType: "application/pdf"))
        origin.route("/tiny.pdf", .ok(Self.pdf([(36, 36, Self.green)]), contentType: "application/pdf"))
        // An A4 page, white, a black bar across its top quarter.
        origin.route(
            "/a4.pdf",
            .ok(Self.pdf([(595, 842, (1, 1, 1))], bars: [[0, 632, 595, 210]]), contentType: "application/pdf"))
        origin.route("/flat.png", .ok(try FlatImage.make(width: 40, height: 30, as: .png), contentType: "image/png"))
        let directory = try TempDirectory(prefix: "thumbd-pdf-pages")
        let child = try await Self.start(directory)
        defer { _ = child.stop() }
        func thumb(_ path: String, _ query: String) -> String { SandboxPoolTests.thumb(origin, path, query) }
        func imgproxy(_ path: String, _ options: String) -> String {
            "/imgproxy/insecure/\(options)/plain/\(Harness.percentEncoded(origin.url(path)))"
        }
        func get(_ target: String) async throws -> RawHTTPClient.Response {
            try await blocking { try child.get(target) }
        }
        func colour(_ answer: RawHTTPClient.Response) throws -> RGB {
            let image = try DecodedImage(decoding: answer.body)
            return image.colour(x: image.width / 2, y: image.height / 2)
        }

        // Page 2 through /thumb, rendered; then through imgproxy's pg:1 (from 0), the same variant from memory.
        let second = try await get(thumb("/three.pdf", "w=100&page=2&format=png"))
        #expect(second.status == 200)
        #expect(second.header("x-cache") == "MISS")
        #expect(try colour(second).isClose(to: RGB(0, 255, 0), tolerance: 2))
        let viaImgproxy = try await get(imgproxy("/three.pdf", "w:100/pg:1/f:png"))
        #expect(viaImgproxy.status == 200)
        #expect(viaImgproxy.header("x-cache") == "HIT-MEMORY")
        #expect(viaImgproxy.body == second.body)
        // Page 1 (the default, also page=1 and pg:0) and page 3: pictures of their own.
        let first = try await get(thumb("/three.pdf", "w=100&format=png"))
        #expect(first.header("x-cache") == "MISS")
        #expect(try colour(first).isClose(to: RGB(255, 0, 0), tolerance: 2))
        let firstAgain = try await get(thumb("/three.pdf", "w=100&page=1&format=png"))
        #expect(firstAgain.header("x-cache") == "HIT-MEMORY")
        let third = try await get(imgproxy("/three.pdf", "w:100/page:2/f:png"))
        #expect(try colour(third).isClose(to: RGB(0, 0, 255), tolerance: 2))

        // Past the last page: 422 naming the page and the count, in both forms.
        for target in [thumb("/three.pdf", "w=100&page=4"), imgproxy("/three.pdf", "w:100/pg:3")] {
            let past = try await get(target)
            #expect(past.status == 422)
            let body = String(decoding: past.body, as: UTF8.self)
            #expect(body.contains("invalid page: 4 is past the last page of the source (3 pages"), "\(body)")
        }
        // A source without pages: page 2 is refused, never its one picture.
        let png = try await get(thumb("/flat.png", "w=20&page=2"))
        #expect(png.status == 422)
        #expect(String(decoding: png.body, as: UTF8.self).contains("(1 page;"))
        // Out of range in the URL: 400 naming the parameter.
        #expect(try await get(thumb("/three.pdf", "w=100&page=0")).status == 400)

        // A half-inch page at w=1000: 150 px (300 DPI), no upscale.
        let tiny = try await get(thumb("/tiny.pdf", "w=1000&format=png"))
        #expect(tiny.status == 200)
        let tinyImage = try DecodedImage(decoding: tiny.body)
        #expect(tinyImage.width == 150 && tinyImage.height == 150, "\(tinyImage.width)x\(tinyImage.height)")

        // A4 at w=256: 256 x 362, the bar black and sharp-edged at its place (top quarter), the rest white.
        let a4 = try await get(thumb("/a4.pdf", "w=256&format=png"))
        #expect(a4.status == 200)
        let a4Image = try DecodedImage(decoding: a4.body)
        #expect(a4Image.width == 256 && abs(a4Image.height - 362) <= 1, "\(a4Image.width)x\(a4Image.height)")
        #expect(a4Image.colour(x: 128, y: 40).isClose(to: RGB(0, 0, 0), tolerance: 2))
        #expect(a4Image.colour(x: 128, y: 200).isClose(to: RGB(255, 255, 255), tolerance: 2))
        // The bar ends at 210/842 of the height (90.3 px): a sharp edge, its blend (the resampling kernel's) within
        // three rows of it.
        #expect(a4Image.colour(x: 128, y: 87).isClose(to: RGB(0, 0, 0), tolerance: 2))
        #expect(a4Image.colour(x: 128, y: 94).isClose(to: RGB(255, 255, 255), tolerance: 2))
    }
}
