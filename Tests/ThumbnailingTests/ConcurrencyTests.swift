// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

/// Rendering from several OS threads at once, as the render pool does: no shared state between jobs.
@Suite(.timeLimit(.minutes(1)))
struct ConcurrencyTests {
    struct Job: Sendable {
        let fixture: String
        let spec: ThumbnailSpec
        let width: Int
        let height: Int
        let format: ImageFormat
    }

    /// Failures collected from the worker threads.
    final class Failures: Sendable {
        let list = Mutex<[String]>([])
        func record(_ failure: String) { list.withLock { $0.append(failure) } }
    }

    @Test func twoThreadsRenderDifferentJobsCorrectly() throws {
        // Given one thumbnailer shared by two OS threads, and four different jobs
        let thumbnailer = try TestThumbnailer.make()
        let jobs = [
            Job(
                fixture: "orientation-6.jpg",
                spec: try TestThumbnailer.spec(32, 32, format: .exactly(.jpeg)),
                width: 32,
                height: 24,
                format: .jpeg
            ),
            Job(
                fixture: "grid.png",
                spec: try TestThumbnailer.spec(100, 300, fit: .cover, gravity: .east),
                width: 100,
                height: 300,
                format: .png
            ),
            Job(
                fixture: "rgba.png",
                spec: try TestThumbnailer.spec(32, 32, format: .auto(accepting: [.webp])),
                width: 32,
                height: 24,
                format: .webp
            ),
            Job(fixture: "truncated.jpg", spec: try TestThumbnailer.spec(64, 64), width: 0, height: 0, format: .png),
            Job(
                fixture: "progressive.jpg",
                spec: try TestThumbnailer.spec(200, 50, fit: .fill),
                width: 200,
                height: 50,
                format: .png
            ),
        ]
        let failures = Failures()
        let finished = DispatchSemaphore(value: 0)
        let threadCount = 2
        let rounds = 20

        // When each thread renders the jobs repeatedly, out of phase with the other (one job always fails)
        for index in 0..<threadCount {
            let thread = Thread {
                for round in 0..<rounds {
                    Self.run(jobs[(round + index) % jobs.count], on: thumbnailer, failures: failures)
                }
                Vips.shutdownCurrentThread()
                finished.signal()
            }
            thread.name = "render-test-\(index)"
            thread.start()
        }
        for _ in 0..<threadCount {
            #expect(finished.wait(timeout: .now() + 50) == .success)
        }

        // Then every output is right, and every failure is the expected one
        #expect(failures.list.withLock { $0 } == [])
    }

    static func run(_ job: Job, on thumbnailer: Thumbnailer, failures: Failures) {
        do {
            let thumbnail = try thumbnailer.render(Fixtures.bytes(job.fixture), spec: job.spec)
            let image = try DecodedImage(decoding: thumbnail.bytes)
            if image.width != job.width || image.height != job.height || thumbnail.format != job.format {
                failures.record("\(job.fixture): \(image.width)x\(image.height) \(thumbnail.format)")
            }
            if job.fixture == "orientation-6.jpg",
                let mismatch = image.mismatch(in: Fixtures.quadrantProbes(width: 32, height: 24))
            {
                failures.record("\(job.fixture): \(mismatch)")
            }
        } catch let error as ThumbnailError {
            if job.fixture == "truncated.jpg", case .decodeFailed = error { return }
            failures.record("\(job.fixture): \(error)")
        } catch {
            failures.record("\(job.fixture): \(error)")
        }
    }
}
