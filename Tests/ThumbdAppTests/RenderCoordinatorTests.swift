// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Foundation
import OriginFetch
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp

/// The coordinator on its own (real fetcher, real render threads, real libvips, a loopback origin), hammered
/// from several threads with waiters that come and go at random: every waiter is answered at most once, every
/// waiter that stays is answered exactly once with its own thumbnail, and nothing is left in the table.
/// Runs under `swift test --sanitize=thread` too.
@Suite(.timeLimit(.minutes(2))) struct RenderCoordinatorTests {
    /// A coordinator wired to an origin on 127.0.0.2 (the only internal address its fetcher may reach).
    final class Fixture: Sendable {
        let origin: LoopbackOrigin
        let fetcher: OriginFetcher
        let pool: WorkerPool
        let thumbnailer: Thumbnailer
        let coordinator: RenderCoordinator

        init(renderThreads: Int = 2, queueLimit: Int = 64, intermediates: IntermediateCache? = nil) throws {
            origin = try LoopbackOrigin(host: "127.0.0.2")
            var configuration = OriginFetcher.Configuration()
            configuration.allowedNetworks = [IPNetwork("127.0.0.2/32")!]
            fetcher = try OriginFetcher(configuration: configuration)
            pool = try WorkerPool(
                configuration: .init(
                    threads: renderThreads, interactiveQueueCapacity: queueLimit, backgroundQueueCapacity: queueLimit,
                    name: "test-render"),
                onThreadExit: { _ in Vips.shutdownCurrentThread() })
            thumbnailer = try Thumbnailer(vips: Vips.initialize())
            coordinator = RenderCoordinator(
                fetcher: fetcher, renderPool: pool, thumbnailer: thumbnailer, intermediates: intermediates)
        }

        deinit {
            coordinator.shutdown()
            fetcher.shutdown()
            pool.shutdown()
        }

        func key(_ path: String, width: Int) throws -> VariantKey {
            let spec = try ThumbnailSpec(width: width, height: nil, format: .exactly(.png))
            return VariantKey(source: try SourceURL(origin.url(path)), spec: thumbnailer.normalized(spec))
        }
    }

    /// What happened to each waiter.
    final class Ledger: Sendable {
        struct Entry {
            var completions = 0
            var left = false
            var result: Result<RenderedVariant, ServiceError>?
        }
        private let entries = Mutex<[Int: Entry]>([:])

        func complete(_ id: Int, _ result: Result<RenderedVariant, ServiceError>) {
            entries.withLock {
                $0[id, default: Entry()].completions += 1
                $0[id, default: Entry()].result = result
            }
        }
        func markLeft(_ id: Int) { entries.withLock { $0[id, default: Entry()].left = true } }
        var all: [Int: Entry] { entries.withLock { $0 } }
    }

    @Test func waitersComingAndGoingFromManyThreadsAreEachAnsweredAtMostOnceWithTheirOwnThumbnail() throws {
        // Given 8 sources behind small random delays, and 16 variant keys (two widths of each)
        let fixture = try Fixture()
        let body = Fixtures.bytes("quadrants.png")
        for index in 0..<8 {
            fixture.origin.route("/s\(index).png", .delay(.milliseconds(5 * index), then: .ok(body)))
        }
        let widths = [16, 32]
        let ledger = Ledger()
        let perThread = 100
        let threads = 4

        // When 4 threads ask for 100 thumbnails each, and a third of the waiters leave, some at once and
        // some a little later (racing the fetch, the render and the answer)
        let done = DispatchSemaphore(value: 0)
        for thread in 0..<threads {
            let worker = Thread {
                var random = SystemRandomNumberGenerator()
                for index in 0..<perThread {
                    let id = thread * perThread + index
                    let width = widths[id % 2]
                    guard let key = try? fixture.key("/s\(id % 8).png", width: width) else { continue }
                    let (ticket, _) = fixture.coordinator.request(key, priority: .interactive) { result, _ in
                        ledger.complete(id, result)
                    }
                    if id % 3 == 0 {
                        if Bool.random(using: &random) { usleep(UInt32.random(in: 0...20_000, using: &random)) }
                        ledger.markLeft(id)
                        fixture.coordinator.leave(ticket)
                    }
                }
                done.signal()
            }
            worker.start()
        }
        for _ in 0..<threads { #expect(done.wait(timeout: .now() + 60) == .success) }

        // Then every waiter that stayed is answered (answers go out after a flight leaves the table, so wait
        // for them rather than for the table), and the table is empty
        let total = threads * perThread
        let settled = waitUntil {
            let entries = ledger.all
            let allAnswered = (0..<total).allSatisfy { id in
                entries[id].map { $0.left || $0.completions > 0 } ?? false
            }
            return allAnswered && fixture.coordinator.inFlightCount == 0
                && fixture.coordinator.outstandingFlightCount == 0  // abandoned flights are forgotten too
        }
        #expect(settled)
        // And no waiter was answered twice; every waiter that stayed was answered once, with its own size
        let entries = ledger.all
        for id in 0..<total {
            let entry = entries[id] ?? Ledger.Entry()
            #expect(entry.completions <= 1, "waiter \(id) answered \(entry.completions) times")
            if !entry.left { #expect(entry.completions == 1, "waiter \(id) never answered") }
            if let result = entry.result {
                let variant = try result.get()
                let image = try DecodedImage(decoding: variant.bytes)
                #expect(image.width == widths[id % 2], "waiter \(id) got another waiter's thumbnail")
            }
        }
        // And the counters add up
        let counters = fixture.coordinator.counters
        #expect(counters.flightsStarted + counters.coalescedJoins == total)
        #expect(counters.waitersLeft <= total / 3 + 1)
        #expect(counters.renderFailures == 0 && counters.renderQueueRejections == 0)
    }

    @Test func lastWaiterLeavingBeforeTheSourceArrivesCancelsTheFetch() throws {
        // Given one waiter for a source the origin holds back
        let fixture = try Fixture()
        fixture.origin.route("/held.png", .hang)
        let key = try fixture.key("/held.png", width: 16)
        let ledger = Ledger()
        let (ticket, admission) = fixture.coordinator.request(key, priority: .interactive) { result, _ in
            ledger.complete(0, result)
        }
        #expect(admission == .started)
        #expect(waitUntil { fixture.origin.hits("/held.png") == 1 })

        // When it leaves
        fixture.coordinator.leave(ticket)

        // Then the transfer is closed, the key is free, and the waiter is never called
        #expect(waitUntil { fixture.origin.clientCloses("/held.png") == 1 })
        #expect(fixture.coordinator.inFlightCount == 0)
        #expect(fixture.coordinator.outstandingFlightCount == 0)  // the cancel won: no answer will come
        #expect(fixture.coordinator.counters.fetchCancellations == 1)
        #expect(ledger.all.isEmpty)

        // And leaving twice changes nothing
        fixture.coordinator.leave(ticket)
        #expect(fixture.coordinator.counters.waitersLeft == 1)
    }

    @Test func otherSizesOfASourceAreRenderedFromItsKeptIntermediateWithTheSameBytes() throws {
        // Given a coordinator with an intermediate cache, and one without
        let intermediates = try IntermediateCache(maxBytes: 16 << 20)
        let cached = try Fixture(intermediates: intermediates)
        let plain = try Fixture()
        let body = Fixtures.bytes("progressive.jpg")
        for fixture in [cached, plain] { fixture.origin.route("/photo.jpg", .ok(body)) }

        // When three sizes of the source are asked for, one after the other
        var outputs: [[[UInt8]]] = [[], []]
        for (index, fixture) in [cached, plain].enumerated() {
            for width in [40, 80, 160] {
                let ledger = Ledger()
                _ = fixture.coordinator.request(try fixture.key("/photo.jpg", width: width), priority: .interactive) {
                    result, _ in ledger.complete(0, result)
                }
                #expect(waitUntil(timeout: .seconds(30)) { ledger.all[0]?.completions == 1 })
                guard case .success(let variant)? = ledger.all[0]?.result else {
                    Issue.record("expected a thumbnail, got \(String(describing: ledger.all[0]?.result))")
                    return
                }
                outputs[index].append(variant.bytes)
            }
        }

        // Then the source was decoded once for all three, and the bytes are those of renders without the cache
        #expect(intermediates.counters == .init(hits: 2, made: 1, joined: 0))
        #expect(outputs[0] == outputs[1])
    }

    @Test func requestAfterShutdownIsAnsweredAtOnce() throws {
        let fixture = try Fixture()
        fixture.coordinator.shutdown()
        let key = try fixture.key("/late.png", width: 16)
        let ledger = Ledger()
        let (ticket, _) = fixture.coordinator.request(key, priority: .interactive) { outcome, _ in
            ledger.complete(0, outcome)
        }
        // Answered synchronously, 503-style, with nothing started
        let entry = ledger.all[0]
        guard case .failure(.shuttingDown)? = entry?.result, entry?.completions == 1 else {
            Issue.record("expected one shuttingDown answer, got \(String(describing: entry?.result))")
            return
        }
        fixture.coordinator.leave(ticket)  // harmless
        #expect(fixture.coordinator.counters.flightsStarted == 0)
        #expect(fixture.origin.hits("/late.png") == 0)
    }
}
