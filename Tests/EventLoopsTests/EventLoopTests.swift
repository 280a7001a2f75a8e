// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Synchronization
import Testing
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test func executeRunsTasksOnTheLoopInSubmissionOrder() throws {
        // Given a running loop
        let group = try EventLoopGroup(threads: 1, name: "test")
        defer { group.shutdown() }
        let loop = group.next()
        let seen = Recorder<Int>()
        // When another thread submits 1000 tasks
        for i in 0..<1000 {
            loop.execute {
                precondition(loop.inEventLoop)
                seen.append(i)
            }
        }
        // Then they all run, on the loop, in order
        #expect(waitUntil { seen.count == 1000 })
        #expect(seen.values == Array(0..<1000))
        #expect(!loop.inEventLoop)
    }

    @Test func tasksFromManyThreadsAreAllRun() throws {
        let group = try EventLoopGroup(threads: 1, name: "test")
        defer { group.shutdown() }
        let loop = group.next()
        let count = Atomic<Int>(0)
        let threads = 4
        let perThread = 5000
        let done = Recorder<Int>()
        for t in 0..<threads {
            let pool = try WorkerPool(configuration: .init(threads: 1, interactiveQueueCapacity: 1, name: "submitter"))
            try pool.submit {
                for _ in 0..<perThread { loop.execute { count.add(1, ordering: .relaxed) } }
                done.append(t)
            }
            pool.shutdown()
        }
        #expect(waitUntil { count.load(ordering: .relaxed) == threads * perThread })
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() throws {
        let group = try EventLoopGroup(threads: 1, name: "test")
        defer { group.shutdown() }
        let loop = group.next()
        let fired = Recorder<Int>()
        try loop.runAndWait {
            loop.scheduleTimer(after: .milliseconds(60)) { fired.append(3) }
            loop.scheduleTimer(after: .milliseconds(20)) { fired.append(1) }
            let cancelled = loop.scheduleTimer(after: .milliseconds(30)) { fired.append(99) }
            loop.scheduleTimer(after: .milliseconds(40)) { fired.append(2) }
            loop.cancelTimer(cancelled)
        }
        #expect(waitUntil { fired.count == 3 })
        usleep(50_000)
        #expect(fired.values == [1, 2, 3])
        #expect(try loop.runAndWait { loop.scheduledTimerCount } == 0)
    }

    @Test func timerDoesNotFireEarly() throws {
        let group = try EventLoopGroup(threads: 1, name: "test")
        defer { group.shutdown() }
        let loop = group.next()
        let start = LoopInstant.now()
        let firedAt = Mutex<LoopInstant?>(nil)
        try loop.runAndWait {
            loop.scheduleTimer(after: .milliseconds(50)) { firedAt.withLock { $0 = LoopInstant.now() } }
        }
        #expect(waitUntil { firedAt.withLock { $0 } != nil })
        let elapsed = start.duration(to: firedAt.withLock { $0 }!)
        #expect(elapsed >= .milliseconds(50))
    }

    @Test func runAndWaitReturnsValuesAndRethrows() throws {
        struct Boom: Error {}
        let group = try EventLoopGroup(threads: 2, name: "test")
        defer { group.shutdown() }
        let loop = group.loops[1]
        #expect(try loop.runAndWait { loop.inEventLoop } == true)
        #expect(throws: Boom.self) { try loop.runAndWait { throw Boom() } }
    }

    @Test func readinessIsDeliveredAndStaleRegistrationsAreIgnored() throws {
        final class Handler: EventLoopSelectable, @unchecked Sendable {  // Sendable: used on the loop only.
            let events = Recorder<UInt32>()
            func handleEvents(_ events: IOEvents) { self.events.append(events.rawValue) }
        }
        let group = try EventLoopGroup(threads: 1, name: "test")
        defer { group.shutdown() }
        let loop = group.next()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        _ = fcntl(fds[0], F_SETFL, O_NONBLOCK)
        defer { close(fds[1]) }
        let handler = Handler()
        let readFD = fds[0]
        let registration = try loop.runAndWait { try loop.register(fd: readFD, events: .readable, handler: handler) }
        // When data arrives, the handler hears about it
        #expect(write(fds[1], "x", 1) == 1)
        #expect(waitUntil { handler.events.count >= 1 })
        #expect(IOEvents(rawValue: handler.events.values[0]).contains(.readable))
        // After deregistration, nothing more reaches it, even though the pipe stays readable
        try loop.runAndWait { loop.deregister(registration, fd: readFD) }
        let before = handler.events.count
        #expect(write(fds[1], "y", 1) == 1)
        usleep(50_000)
        #expect(handler.events.count == before)
        close(readFD)
    }

    @Test func groupRoundRobinsOverItsLoops() throws {
        let group = try EventLoopGroup(threads: 3, name: "test")
        defer { group.shutdown() }
        let picked = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(Set(picked).count == 3)
        #expect(picked[0] == picked[3])
    }

    @Test func zeroThreadsIsRefused() {
        #expect(throws: EventLoopError.invalidThreadCount(0)) { try EventLoopGroup(threads: 0, name: "x") }
    }
}

@Suite struct LoopInstantTests {
    @Test func arithmeticRoundTrips() {
        let a = LoopInstant(nanoseconds: 1_000_000_000)
        let b = a.advanced(by: .milliseconds(1500))
        #expect(b.nanoseconds == 2_500_000_000)
        #expect(a.duration(to: b) == .milliseconds(1500))
        #expect(b.duration(to: a) == .milliseconds(-1500))
        #expect(a.advanced(by: .seconds(-5)).nanoseconds == 0)
        #expect(a < b)
    }
}

@Suite struct RingBufferTests {
    @Test func behavesAsAFIFOAcrossGrowthAndWraparound() {
        var ring = RingBuffer<Int>(initialCapacity: 2)
        var model: [Int] = []
        for round in 0..<50 {
            for i in 0..<(round % 7) {
                ring.append(round * 10 + i)
                model.append(round * 10 + i)
            }
            for _ in 0..<(round % 5) {
                #expect(ring.popFirst() == (model.isEmpty ? nil : model.removeFirst()))
            }
            if round % 11 == 0, !model.isEmpty {
                #expect(ring.popLast() == model.removeLast())
            }
            #expect(ring.count == model.count)
            for (offset, value) in model.enumerated() { #expect(ring[offset] == value) }
        }
    }
}
