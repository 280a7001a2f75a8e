// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

/// The decoder sandbox in the server (`image.sandbox`, docs/threat-model.md): a thumbd child with its pool of
/// `thumbd-decoder` helpers and a loopback origin; SVG, PDF, JPEG XL, BMP and ICO sources rendered through the
/// helpers, and the failures of a helper (killed, past its deadline) costing one request only.
@Suite struct SandboxPoolTests {
    /// A thumbd child on `extraYAML`'s image settings, with an origin; stopped by the caller.
    static func start(
        _ directory: TempDirectory, image: String = "", environment: [String: String] = [:]
    ) async throws -> ThumbdChild {
        let configuration = directory.appending("thumbd.yaml")
        try ThumbdChild.writeConfiguration(to: configuration)
        if !image.isEmpty {
            // The base has an `image:` section: its keys are appended to it.
            var yaml = try String(contentsOfFile: configuration, encoding: .utf8)
            yaml = yaml.replacingOccurrences(of: "image:\n", with: "image:\n" + image)
            try Data(yaml.utf8).write(to: URL(fileURLWithPath: configuration))
        }
        let cache = directory.appending("cache")
        return try await blocking {
            try ThumbdChild(configuration: configuration, cacheDirectory: cache, environment: environment)
        }
    }

    static func thumb(_ origin: LoopbackOrigin, _ path: String, _ query: String) -> String {
        "/thumb?url=\(Harness.percentEncoded(origin.url(path)))&\(query)"
    }

    /// A file made by Debian's `vips` command line (libvips-tools) from a flat PNG: `arguments` after the input.
    static func converted(
        _ png: [UInt8], _ directory: TempDirectory, to name: String, _ arguments: [String]
    ) throws -> [UInt8] {
        let input = directory.appending("flat.png")
        try Data(png).write(to: URL(fileURLWithPath: input))
        let output = directory.appending(name)
        let vips = try ChildProcess(
            executable: "/usr/bin/vips", arguments: [arguments[0], input, output] + arguments.dropFirst())
        #expect(vips.wait(timeout: .seconds(20)) == .exited(0))
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
    }

    /// The thumbd child's children: its helpers.
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0) }
        }
    }

    /// User + system CPU ticks of `pid` (/proc/pid/stat fields 14 and 15), or nil once it is gone.
    static func cpuTicks(_ pid: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After ")": state is field 3, so utime (14) and stime (15) are at 11 and 12.
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    @Test func untrustedSourcesRenderThroughTheHelpers() async throws {
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        let canary = try DecoderSandboxTests.Canary()
        let directory = try TempDirectory(prefix: "thumbd-sandbox-pool")
        // An SVG whose references would read a file, connect to the canary and to a private address.
        origin.route(
            "/refs.svg",
            .ok(
                Array(
                    """
                    <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50">
                    <rect width="100" height="50" fill="#ff0000"/>
                    <image xlink:href="file:///etc/passwd" x="0" y="0" width="50" height="50"/>
                    <image href="http://127.0.0.1:\(canary.port)/canary.png" x="50" y="0" width="50" height="50"/>
                    <image xlink:href="http://10.0.0.1/private.png" x="0" y="0" width="100" height="50"/>
                    </svg>
                    """.utf8), contentType: "image/svg+xml"))
        origin.route(
            "/only-refs.svg",
            .ok(
                Array(
                    """
                    <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">
                    <image xlink:href="http://127.0.0.1:\(canary.port)/canary.png" width="64" height="64"/>
                    <image xlink:href="file:///etc/passwd" width="64" height="64"/>
                    </svg>
                    """.utf8), contentType: "image/svg+xml"))
        var laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n<!ENTITY l0 \"lollollollollollollollollollol\">\n"
        for level in 1...9 {
            laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">\n"
        }
        laughs += "]>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><text>&l9;</text></svg>"
        origin.route("/laughs.svg", .ok(Array(laughs.utf8), contentType: "image/svg+xml"))
        origin.route("/huge.pdf", .ok(Self.pdf(width: 100_000, height: 100_000), contentType: "application/pdf"))
        origin.route("/blue.pdf", .ok(Self.pdf(width: 200, height: 100), contentType: "application/pdf"))
        // JPEG XL, BMP and ICO of one flat colour, made now from a PNG by libvips's command line.
        let flat = try FlatImage.make(width: 40, height: 30, as: .png)
        let flatColour = try DecodedImage(decoding: flat).colour(x: 0, y: 0)
        origin.route(
            "/flat.jxl", .ok(try Self.converted(flat, directory, to: "flat.jxl", ["copy"]), contentType: "image/jxl"))
        origin.route(
            "/flat.bmp",
            .ok(
                try Self.converted(flat, directory, to: "flat.bmp", ["magicksave", "--format", "BMP"]),
                contentType: "image/bmp"))
        origin.route(
            "/flat.ico",
            .ok(
                try Self.converted(flat, directory, to: "flat.ico", ["magicksave", "--format", "ICO"]),
                contentType: "image/x-icon"))

        let child = try await Self.start(directory)
        defer { _ = child.stop() }

        // The SVG: drawn at the box (400 x 200 from 100 x 50), red only, served as PNG; nobody connected.
        let started = ContinuousClock.now
        let svg = try await blocking { try child.get(Self.thumb(origin, "/refs.svg", "w=400&format=png")) }
        let svgLatency = ContinuousClock.now - started
        #expect(svg.status == 200)
        #expect(svg.header("Content-Type") == "image/png")
        let image = try DecodedImage(decoding: svg.body)
        #expect(image.width == 400 && image.height == 200)
        let notRed = (0..<image.height).flatMap { y in (0..<image.width).map { x in (x, y) } }
            .first { !image.colour(x: $0.0, y: $0.1).isClose(to: RGB(255, 0, 0), tolerance: 2) }
        #expect(notRed == nil, "a pixel not red at \(String(describing: notRed))")
        // Only references: blank (every pixel transparent).
        let blank = try await blocking { try child.get(Self.thumb(origin, "/only-refs.svg", "w=64&format=png")) }
        #expect(blank.status == 200)
        let blankImage = try DecodedImage(decoding: blank.body)
        #expect(blankImage.bands == 4 && blankImage.width == 64)
        #expect((0..<64).allSatisfy { y in (0..<64).allSatisfy { x in blankImage.alpha(x: x, y: y) == 0 } })
        #expect(!canary.hasPendingConnection)

        // Billion laughs: refused quickly with a short JSON body, nothing else affected.
        let laughsStart = ContinuousClock.now
        let refused = try await blocking { try child.get(Self.thumb(origin, "/laughs.svg", "w=100")) }
        #expect(ContinuousClock.now - laughsStart < .seconds(2))
        #expect(refused.status == 422)
        #expect(refused.header("Content-Type")?.hasPrefix("application/json") == true)
        #expect(refused.text.contains("could not be decoded"))
        // A 100,000 x 100,000 pt PDF page: drawn at the box, not at its size, in well under 2 s.
        let hugeStart = ContinuousClock.now
        let huge = try await blocking { try child.get(Self.thumb(origin, "/huge.pdf", "w=200&format=png")) }
        #expect(ContinuousClock.now - hugeStart < .seconds(2))
        #expect(huge.status == 200)
        let hugeImage = try DecodedImage(decoding: huge.body)
        #expect(hugeImage.width == 200 && hugeImage.height == 200)
        #expect(hugeImage.colour(x: 100, y: 100).isClose(to: RGB(0, 0, 255), tolerance: 2))
        // A PDF page of 200 x 100 pt, blue: 100 x 50 and blue.
        let pdf = try await blocking { try child.get(Self.thumb(origin, "/blue.pdf", "w=100&format=png")) }
        #expect(pdf.status == 200)
        let pdfImage = try DecodedImage(decoding: pdf.body)
        #expect(pdfImage.width == 100 && pdfImage.height == 50)
        #expect(pdfImage.colour(x: 50, y: 25).isClose(to: RGB(0, 0, 255), tolerance: 2))

        // JPEG XL, BMP, ICO: their size and colour.
        for path in ["/flat.jxl", "/flat.bmp", "/flat.ico"] {
            let answer = try await blocking { try child.get(Self.thumb(origin, path, "w=20&format=png")) }
            #expect(answer.status == 200, "\(path): \(answer.status) \(answer.text.prefix(200))")
            guard answer.status == 200 else { continue }
            let decoded = try DecodedImage(decoding: answer.body)
            #expect(decoded.width == 20 && decoded.height == 15, "\(path): \(decoded.width) x \(decoded.height)")
            #expect(decoded.colour(x: 10, y: 7).isClose(to: flatColour, tolerance: 4), "\(path)")
        }
        // Every job counted by its result.
        let ok = try await blocking { try child.metric("thumbd_sandbox_jobs_total", labels: "result=\"ok\"") }
        let refusedJobs = try await blocking {
            try child.metric("thumbd_sandbox_jobs_total", labels: "result=\"refused\"")
        }
        #expect((ok ?? 0) >= 7)
        #expect(refusedJobs == 1)
        print("SandboxPoolTests: one SVG thumbnail through the pool (miss, fetch included): \(svgLatency)")
    }

    @Test func aKilledOrHungHelperCostsOneRequestOnly() async throws {
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        let directory = try TempDirectory(prefix: "thumbd-sandbox-pool-failures")
        let square =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><rect width=\"10\" "
            + "height=\"10\" fill=\"#00ff00\"/></svg>"
        origin.route("/ok.svg", .ok(Array(square.utf8), contentType: "image/svg+xml"))
        // The helper's test-only looping mode spins on this marker (in a comment: thumbd sniffs an SVG).
        let loop = "<svg xmlns=\"http://www.w3.org/2000/svg\"><!-- thumbd-test-loop --></svg>"
        origin.route("/loop.svg", .ok(Array(loop.utf8), contentType: "image/svg+xml"))
        origin.route("/loop2.svg", .ok(Array(loop.utf8), contentType: "image/svg+xml"))
        let child = try await Self.start(
            directory, image: "  sandbox_helpers: 1\n  sandbox_deadline: 3s\n",
            environment: ["THUMBD_TEST_DECODER_LOOP": "1"])
        defer { _ = child.stop() }
        let pid = child.process.pid

        // One helper, started with thumbd.
        let helpers = Self.children(of: pid)
        #expect(helpers.count == 1)
        guard let helper = helpers.first, let idleTicks = Self.cpuTicks(helper) else { return }

        // Killed mid-decode: once the helper spins on the looping source, SIGKILL it.
        async let killedAnswer = blocking { try child.get(Self.thumb(origin, "/loop.svg", "w=50")) }
        let killed = try await blocking { () -> Bool in
            // The request's task may start late when the suite's other tests hold the cooperative threads: the
            // helper is watched only once the origin has served the source (the job follows the fetch).
            let sent = ContinuousClock.now + .seconds(30)
            while origin.hits("/loop.svg") == 0 {
                if ContinuousClock.now > sent { return false }
                usleep(10_000)
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while ContinuousClock.now < deadline {
                if let ticks = Self.cpuTicks(helper), ticks >= idleTicks + 5 { return kill(helper, SIGKILL) == 0 }
                usleep(10_000)
            }
            return false
        }
        #expect(killed)
        let crashed = try await killedAnswer
        #expect(crashed.status == 422)
        #expect(crashed.text.contains("could not be decoded"))
        // The next request of the same kind succeeds, on a new helper; the old one was reaped (no zombie).
        let after = try await blocking { try child.get(Self.thumb(origin, "/ok.svg", "w=10&format=png")) }
        #expect(after.status == 200)
        #expect(try DecodedImage(decoding: after.body).colour(x: 5, y: 5).isClose(to: RGB(0, 255, 0), tolerance: 2))
        #expect(!Self.children(of: pid).contains(helper))

        // Hung past the deadline (3 s): 504 in about the deadline, the helper killed and reaped.
        let hungStart = ContinuousClock.now
        let hung = try await blocking { try child.get(Self.thumb(origin, "/loop2.svg", "w=50")) }
        let hungTime = ContinuousClock.now - hungStart
        #expect(hung.status == 504)
        #expect(hung.text.contains("took too long"))
        #expect(hungTime >= .seconds(3) && hungTime < .seconds(6))
        let again = try await blocking { try child.get(Self.thumb(origin, "/ok.svg", "w=8&format=png")) }
        #expect(again.status == 200)
        // Errors are not cached: the same failing URL is decoded again (and fails again) rather than served.
        let stillFails = try await blocking { try child.get(Self.thumb(origin, "/loop.svg", "w=50")) }
        #expect(stillFails.status == 504)

        let metrics = try await blocking { () -> [String: Int?] in
            var values: [String: Int?] = [:]
            for result in ["ok", "crashed", "timeout"] {
                values[result] = try child.metric("thumbd_sandbox_jobs_total", labels: "result=\"\(result)\"")
            }
            return values
        }
        #expect(metrics["crashed"] == 1)
        #expect(metrics["timeout"] == 2)
        #expect((metrics["ok"] ?? 0) ?? 0 >= 2)
        // Still the same server: no restart, and no helper left unreaped.
        #expect(child.process.exitStatus == nil)
        let zombies = Self.children(of: pid).filter { child in
            ((try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)) ?? "").contains(") Z ")
        }
        #expect(zombies.isEmpty)
    }

    @Test func offRefusesTheUntrustedFormatsAsBefore() async throws {
        let origin = try LoopbackOrigin(host: originHost)
        defer { origin.stop() }
        let directory = try TempDirectory(prefix: "thumbd-sandbox-off")
        let square = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"/>"
        origin.route("/a.svg", .ok(Array(square.utf8), contentType: "image/svg+xml"))
        let child = try await Self.start(directory, image: "  sandbox: off\n")
        defer { _ = child.stop() }
        #expect(Self.children(of: child.process.pid).isEmpty)
        let answer = try await blocking { try child.get(Self.thumb(origin, "/a.svg", "w=10")) }
        #expect(answer.status == 422)
        #expect(answer.text.contains("format not supported"))
    }

    /// A one-page PDF of `width` x `height` pt filled blue (no cross-reference table: poppler rebuilds it).
    static func pdf(width: Int, height: Int) -> [UInt8] {
        let content = "0 0 1 rg 0 0 \(width) \(height) re f"
        let text = """
            %PDF-1.4
            1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
            2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj
            3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 \(width) \(height)] /Contents 4 0 R >> endobj
            4 0 obj << /Length \(content.utf8.count) >> stream
            \(content)
            endstream endobj
            trailer << /Root 1 0 R >>
            %%EOF

            """
        return Array(text.utf8)
    }
}
