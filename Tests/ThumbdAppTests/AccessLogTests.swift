// SPDX-License-Identifier: Apache-2.0

import Foundation
import Testing
import ThumbdTestSupport

@testable import ThumbdApp
@testable import ThumbdSettings

@Suite(.timeLimit(.minutes(1))) struct AccessLogTests {
    /// Runs `body(index)` on `count` new threads at once and waits (bounded) for all of them.
    private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        for index in 0..<count {
            let thread = Thread {
                body(index)
                done.signal()
            }
            thread.start()
        }
        for _ in 0..<count {
            #expect(done.wait(timeout: .now() + 30) == .success)
        }
    }

    private func readLines(_ path: String) throws -> [Substring] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast()
            .map { $0 }
    }

    @Test func concurrentCallersWriteEveryLineIntact() throws {
        // Given 8 threads recording 2,000 lines each into buffers big enough to never drop,
        // when all are done and the log is flushed, then the file holds each line exactly once, whole.
        let files = try ConfigTestFiles()
        let path = files.path("access.log")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        defer { close(fd) }
        let accessLog = AccessLog(
            format: .text,
            fileDescriptor: fd,
            shardCount: 4,
            bufferBytes: 4 << 20,
            flushInterval: .milliseconds(5)
        )
        let threads = 8
        let perThread = 2_000
        try onThreads(threads) { thread in
            for index in 0..<perThread {
                accessLog.record(
                    method: "GET",
                    path: "/thumb?url=https%3A%2F%2Fexample.com%2F\(thread)-\(index).jpg&w=256&sig=secret",
                    status: 200,
                    bytes: index,
                    duration: .microseconds(index),
                    note: "HIT-MEMORY"
                )
            }
        }
        accessLog.shutdown()

        let lines = try readLines(path)
        #expect(accessLog.droppedLines == 0)
        #expect(accessLog.writtenLines == threads * perThread)
        #expect(lines.count == threads * perThread)
        var seen = Set<String>()
        let shape =
            #/
            \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z
            \ method=GET
            \ path=/thumb\?url=https%3A%2F%2Fexample\.com%2F(\d+-\d+)\.jpg&w=256&sig=REDACTED
            \ status=200 \ bytes=(\d+) \ duration_ms=(\d+)\.(\d{3}) \ note=HIT-MEMORY
            /#
        for line in lines {
            guard let match = line.wholeMatch(of: shape) else {
                Issue.record("malformed line: \(line)")
                continue
            }
            let id = String(match.1)
            let index = Int(id.split(separator: "-")[1])!
            #expect(Int(match.2) == index)
            #expect(Int(match.3)! * 1_000 + Int(match.4)! == index)
            seen.insert(id)
        }
        #expect(seen.count == threads * perThread)
    }

    @Test func aStalledWriterDropsLinesInsteadOfBlockingCallers() throws {
        // Given an access log whose output is a pipe nobody reads (the writer blocks once it is full),
        // when a caller records far more than the buffers hold, then every call returns, lines are dropped
        // and counted, and once the pipe is drained every written line arrives intact.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let accessLog = AccessLog(
            format: .json,
            fileDescriptor: ends[1],
            shardCount: 1,
            bufferBytes: 8_192,
            flushInterval: .milliseconds(5)
        )
        let total = 20_000
        let started = ContinuousClock.now
        for index in 0..<total {
            accessLog.record(method: "GET", path: "/p/\(index)", status: 404, bytes: 0, duration: .zero, note: "")
        }
        #expect(ContinuousClock.now - started < .seconds(20))
        #expect(accessLog.droppedLines > 0)

        // Drain the pipe on another thread, then stop the log and close the write end to end the reader.
        let collected = Collected()
        let readerDone = DispatchSemaphore(value: 0)
        let readEnd = ends[0]
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count <= 0 { break }
                collected.append(buffer[..<count])
            }
            readerDone.signal()
        }.start()
        accessLog.shutdown()
        close(ends[1])
        #expect(readerDone.wait(timeout: .now() + 30) == .success)
        close(ends[0])

        let lines = String(decoding: collected.bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == accessLog.writtenLines)
        #expect(accessLog.writtenLines + accessLog.droppedLines == total)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object?["status"] as? Int == 404, "\(line)")
            #expect((object?["path"] as? String)?.hasPrefix("/p/") == true)
        }
    }

    @Test func jsonLinesCarryTypedFieldsAndNeutralisedText() throws {
        let files = try ConfigTestFiles()
        let path = files.path("access.json")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        defer { close(fd) }
        let accessLog = AccessLog(format: .json, fileDescriptor: fd, shardCount: 1)
        accessLog.record(
            method: "GET",
            path: "/a b\"c\\d\u{1}é?SIG=x",
            status: 503,
            bytes: 12,
            duration: .milliseconds(1_234),
            note: "queue \"full\""
        )
        accessLog.flush()
        let lines = try readLines(path)
        #expect(lines.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(object["method"] as? String == "GET")
        #expect(object["path"] as? String == "/a%20b%22c%5Cd%01%C3%A9?SIG=REDACTED")
        #expect(object["status"] as? Int == 503)
        #expect(object["bytes"] as? Int == 12)
        #expect(object["duration_ms"] as? Double == 1_234)
        #expect(object["note"] as? String == "queue \"full\"")
    }

    @Test func textNotesWithSpacesAreQuoted() throws {
        let files = try ConfigTestFiles()
        let path = files.path("access.txt")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        defer { close(fd) }
        let accessLog = AccessLog(format: .text, fileDescriptor: fd, shardCount: 1)
        accessLog.record(
            method: "HEAD",
            path: "/health",
            status: 200,
            bytes: 0,
            duration: .microseconds(5),
            note: "origin said \"no\""
        )
        accessLog.record(method: "GET", path: "/ready", status: 503, bytes: 40, duration: .zero, note: "")
        accessLog.flush()
        let lines = try readLines(path)
        #expect(lines.count == 2)
        #expect(
            lines[0].hasSuffix(
                #" method=HEAD path=/health status=200 bytes=0 duration_ms=0.005 note="origin said \"no\"""#
            )
        )
        #expect(lines[1].hasSuffix(" method=GET path=/ready status=503 bytes=40 duration_ms=0.000"))
    }

    @Test func disabledLogWritesNothingUntilEnabled() throws {
        let files = try ConfigTestFiles()
        let path = files.path("access.off")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        defer { close(fd) }
        var settings = Settings.Log()
        settings.isAccessLogEnabled = false
        let accessLog = AccessLog(format: settings.format, isEnabled: settings.isAccessLogEnabled, fileDescriptor: fd)
        accessLog.record(method: "GET", path: "/off", status: 200, bytes: 1, duration: .zero, note: "")
        accessLog.flush()
        #expect(try readLines(path).isEmpty)
        accessLog.isEnabled = true
        accessLog.record(method: "GET", path: "/on", status: 200, bytes: 1, duration: .zero, note: "")
        accessLog.flush()
        #expect(try readLines(path).count == 1)
    }
}

/// Bytes gathered by a reader thread.
private final class Collected: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var storage: [UInt8] = []

    func append(_ bytes: ArraySlice<UInt8>) {
        lock.lock()
        storage += bytes
        lock.unlock()
    }

    var bytes: [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}
