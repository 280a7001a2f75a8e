// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Testing
import ThumbdTestSupport

/// The decoder sandbox's helper (Sources/thumbd-decoder) as a real process: jobs in on standard input, rasters out
/// on standard output (the wire format in Sources/thumbd-decoder/include/decoder.h). The server does not use it
/// yet (docs/threat-model.md, "What remains").
@Suite struct DecoderSandboxTests {
    /// What the helper answered to one job.
    enum Answer: Equatable {
        case raster(width: Int, height: Int, bands: Int, format: Int, pixels: [UInt8])
        case refused(String)
        /// The page asked for is past the last; the page count.
        case noPage(Int)
        /// The source is over the pixel limit; its size.
        case tooManyPixels(width: Int, height: Int)
        case none
    }

    /// Runs the helper on one job (`source` in a box of `box`) through a shell that redirects files; returns its
    /// answer and how it ended.
    static func decode(
        _ source: [UInt8], box: (Int, Int), page: UInt32 = 1, maxDPI: UInt32 = 300, pixelLimit: UInt64 = 100_000_000,
        arguments: [String] = [], timeout: Duration = .seconds(10)
    ) throws -> (Answer, ChildProcess.Termination?, Duration) {
        let decoder = try ChildProcess.builtExecutable(named: "thumbd-decoder")
        let directory = try TempDirectory(prefix: "thumbd-decoder-test")
        var job: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { job += $0 } }
        append(UInt32(0x626f_6a74))
        append(UInt32(box.0))
        append(UInt32(box.1))
        append(page)
        append(maxDPI)
        append(pixelLimit)
        append(UInt64(source.count))
        job += source
        try Data(job).write(to: URL(fileURLWithPath: directory.appending("job")))
        let started = ContinuousClock.now
        let child = try ChildProcess(
            executable: "/bin/sh",
            arguments: [
                "-c", "exec \"$0\" \"$@\" < \"$JOB\" > \"$ANSWER\"", decoder,
            ] + arguments,
            environment: ["JOB": directory.appending("job"), "ANSWER": directory.appending("answer")]
        )
        let termination = child.wait(timeout: timeout)
        let elapsed = ContinuousClock.now - started
        if termination == nil { _ = child.kill(SIGKILL); _ = child.wait(timeout: .seconds(5)) }
        let answer = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory.appending("answer"))))
        return (parse(answer), termination, elapsed)
    }

    static func parse(_ bytes: [UInt8]) -> Answer {
        func integer(_ offset: Int, _ size: Int) -> UInt64? {
            guard bytes.count >= offset + size else { return nil }
            return (0..<size).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
        }
        guard integer(0, 4) == 0x736e_6174, let status = integer(4, 4) else { return .none }
        if status == 0 {
            guard let width = integer(8, 4), let height = integer(12, 4), let bands = integer(16, 4),
                let format = integer(20, 4), let length = integer(24, 8), bytes.count == 32 + Int(length)
            else { return .none }
            return .raster(
                width: Int(width), height: Int(height), bands: Int(bands), format: Int(format),
                pixels: Array(bytes[32...]))
        }
        guard let length = integer(8, 8), bytes.count == 16 + Int(length) else { return .none }
        if status == 2 { return length == 8 ? .noPage(Int(integer(16, 8) ?? 0)) : .none }
        if status == 3 {
            guard length == 8, let width = integer(16, 4), let height = integer(20, 4) else { return .none }
            return .tooManyPixels(width: Int(width), height: Int(height))
        }
        return .refused(String(decoding: bytes[16...], as: UTF8.self))
    }

    /// A listening loopback socket that nobody should connect to; `pendingConnections` polls its queue.
    final class Canary {
        let fd: Int32
        let port: Int
        init() throws {
            (fd, port) = try LoopbackSocket.listen(host: "127.0.0.1", backlog: 16)
        }
        deinit { close(fd) }
        var hasPendingConnection: Bool {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, 0) > 0
        }
    }

    @Test func svgWithExternalReferencesRendersAtTheBoxWithoutReadingOrConnecting() throws {
        let canary = try Canary()
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50">
            <rect width="100" height="50" fill="#ff0000"/>
            <image xlink:href="file:///etc/passwd" x="0" y="0" width="50" height="50"/>
            <image href="http://127.0.0.1:\(canary.port)/canary.png" x="50" y="0" width="50" height="50"/>
            <image xlink:href="http://10.0.0.1/private.png" x="0" y="0" width="100" height="50"/>
            </svg>
            """
        let (answer, termination, _) = try Self.decode(Array(svg.utf8), box: (400, 400))
        #expect(termination == .exited(0))
        guard case .raster(let width, let height, let bands, let format, let pixels) = answer else {
            Issue.record("no raster: \(answer)")
            return
        }
        // Rasterised at the box's size (scale 4), not at 100 x 50 and then enlarged.
        #expect(width == 400 && height == 200 && bands == 4 && format == 0)
        // Every pixel is the red rectangle: none of the references drew anything.
        let red = stride(from: 0, to: pixels.count, by: 4).allSatisfy {
            pixels[$0] == 255 && pixels[$0 + 1] == 0 && pixels[$0 + 2] == 0 && pixels[$0 + 3] == 255
        }
        #expect(red)
        #expect(!canary.hasPendingConnection)
    }

    @Test func svgOfOnlyAReferenceRendersBlank() throws {
        let canary = try Canary()
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">
            <image xlink:href="http://127.0.0.1:\(canary.port)/canary.png" width="64" height="64"/>
            <image xlink:href="file:///etc/passwd" width="64" height="64"/>
            </svg>
            """
        let (answer, _, _) = try Self.decode(Array(svg.utf8), box: (64, 64))
        guard case .raster(64, 64, 4, 0, let pixels) = answer else {
            Issue.record("no 64 x 64 raster: \(answer)")
            return
        }
        #expect(pixels.allSatisfy { $0 == 0 })
        #expect(!canary.hasPendingConnection)
    }

    @Test func billionLaughsIsRefusedQuickly() throws {
        var svg = "<?xml version=\"1.0\"?>\n<!DOCTYPE svg [\n<!ENTITY l0 \"lollollollollollollollollollol\">\n"
        for level in 1...9 {
            svg += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">\n"
        }
        svg +=
            "]>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\"><text y=\"20\">&l9;</text></svg>"
        let (answer, termination, elapsed) = try Self.decode(
            Array(svg.utf8), box: (200, 200), arguments: ["--memory-mb", "512"])
        #expect(termination == .exited(0))
        guard case .refused(let message) = answer else {
            Issue.record("not refused: \(answer)")
            return
        }
        #expect(message.contains("entity"))
        #expect(elapsed < .seconds(2))
    }

    @Test func aHugeSvgIsRefusedByThePixelLimit() throws {
        let svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100000\" height=\"100000\"/>"
        let (answer, _, elapsed) = try Self.decode(Array(svg.utf8), box: (0, 0), pixelLimit: 50_000_000)
        // Refused with the size it would have, read from its header (the parent's 422 names pixels).
        #expect(answer == .tooManyPixels(width: 100_000, height: 100_000))
        #expect(elapsed < .seconds(2))
    }

    @Test func aLoopingDecodeEndsAtTheCPULimit() throws {
        let (answer, termination, elapsed) = try Self.decode(
            Array("thumbd-test-loop".utf8), box: (0, 0), arguments: ["--test-loop-on-magic", "--cpu-seconds", "1"])
        #expect(answer == .none)
        #expect(termination == .signalled(SIGXCPU) || termination == .signalled(SIGKILL))
        #expect(elapsed < .seconds(5))
    }

    /// What one forbidden call does under the filter (`--test-call`, a test-only flag: after the filter the helper
    /// makes the call and answers what it returned). Calls on no list are killed too: the default is the kill.
    static let killedCalls = ["mkdir", "ptrace", "execve", "fork", "clone-process", "mmap-exec", "getcwd"]

    @Test(arguments: killedCalls) func aForbiddenCallKillsTheHelper(call: String) throws {
        let (answer, termination, _) = try Self.decode([0], box: (0, 0), arguments: ["--test-call", call])
        #expect(answer == .none)
        #expect(termination == .signalled(SIGSYS))
    }

    @Test(arguments: [
        ("socket", EACCES), ("openat", EACCES), ("clone3", ENOSYS),
        // A thread started before the filter (as libvips's workers are) is under it too (TSYNC).
        ("early-thread-openat", EACCES),
    ])
    func aRefusedCallFailsWithItsError(call: String, error: Int32) throws {
        let (answer, termination, _) = try Self.decode([0], box: (0, 0), arguments: ["--test-call", call])
        #expect(answer == .refused("\(call) returned -1, errno \(error)"))
        #expect(termination == .exited(0))
    }

    @Test func aThreadStartsUnderTheFilter() throws {
        let (answer, termination, _) = try Self.decode([0], box: (0, 0), arguments: ["--test-call", "thread"])
        #expect(answer == .refused("thread returned 0, errno 0"))
        #expect(termination == .exited(0))
    }

    @Test func aGifDecodesInTheHelper() throws {
        // 1 x 1, one red pixel (palette entry 0).
        let gif: [UInt8] = [
            0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x01, 0x00, 0x01, 0x00, 0x80, 0x00, 0x00, 0xff, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x21, 0xf9, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
            0x01, 0x00, 0x00, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b,
        ]
        let (answer, termination, _) = try Self.decode(gif, box: (0, 0))
        guard case .raster(let width, let height, let bands, _, let pixels) = answer else {
            Issue.record("no raster: \(answer)")
            return
        }
        #expect(width == 1 && height == 1 && bands >= 3)
        #expect(Array(pixels.prefix(3)) == [255, 0, 0])
        #expect(termination == .exited(0))
    }
}
