// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Synchronization
import Testing
import ThumbdTestSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.timeLimit(.minutes(1)))
struct WorkerPoolTests {
    /// Blocks the single worker until released, so queue contents can be inspected.
    final class Gate: Sendable {
        private let open = Atomic<Bool>(false)
        let entered = Atomic<Bool>(false)
        func wait() {
            entered.store(true, ordering: .sequentiallyConsistent)
            while !open.load(ordering: .sequentiallyConsistent) { usleep(1_000) }
        }
        func release() { open.store(true, ordering: .sequentiallyConsistent) }
    }

    @Test func interactiveJobsRunBeforeBackgroundJobs() throws {
        // Given one worker busy with a job
        let pool = try WorkerPool(configuration: .init(threads: 1, name: "test"))
        defer { pool.shutdown() }
        let gate = Gate()
        let order = Recorder<String>()
        try pool.submit { gate.wait() }
        #expect(waitUntil { gate.entered.load(ordering: .sequentiallyConsistent) })
        // When background jobs are queued before interactive ones
        try pool.submit(priority: .background) { order.append("b1") }
        try pool.submit(priority: .background) { order.append("b2") }
        try pool.submit(priority: .interactive) { order.append("i1") }
        try pool.submit(priority: .interactive) { order.append("i2") }
        #expect(pool.queueDepth == .init(interactive: 2, background: 2))
        gate.release()
        // Then the interactive ones still run first, each class in FIFO order
        #expect(waitUntil { order.count == 4 })
        #expect(order.values == ["i1", "i2", "b1", "b2"])
    }

    @Test func promotedBackgroundJobRunsBeforeOlderBackgroundJobs() throws {
        // Given one busy worker and three background jobs queued
        let pool = try WorkerPool(configuration: .init(threads: 1, name: "test"))
        defer { pool.shutdown() }
        let gate = Gate()
        let order = Recorder<String>()
        try pool.submit { gate.wait() }
        #expect(waitUntil { gate.entered.load(ordering: .sequentiallyConsistent) })
        try pool.submit(priority: .background) { order.append("b1") }
        let b2 = try pool.submit(priority: .background) { order.append("b2") }
        try pool.submit(priority: .background) { order.append("b3") }
        // When the second is promoted (a client now waits for it), once
        #expect(pool.promote(b2))
        #expect(!pool.promote(b2))
        #expect(pool.queueDepth == .init(interactive: 1, background: 2))
        gate.release()
        // Then it runs first, exactly once, and the others keep their order
        #expect(waitUntil { order.count == 3 })
        usleep(20_000)
        #expect(order.values == ["b2", "b1", "b3"])
        #expect(!pool.promote(b2))  // ran already
    }

    @Test func backgroundJobsNeverTakeMoreThanTheirShareOfThreads() throws {
        // Given two workers and no background thread, so at most one background job at a time
        let pool = try WorkerPool(configuration: .init(threads: 2, name: "test"))
        defer { pool.shutdown() }
        let gate = Gate()
        let secondRan = Atomic<Bool>(false)
        // When two background jobs are queued, the first holding its worker
        try pool.submit(priority: .background) { gate.wait() }
        #expect(waitUntil { gate.entered.load(ordering: .sequentiallyConsistent) })
        try pool.submit(priority: .background) { secondRan.store(true, ordering: .sequentiallyConsistent) }
        // Then the second waits although a worker is idle, and that worker still takes interactive work
        usleep(50_000)
        let ranEarly = secondRan.load(ordering: .sequentiallyConsistent)
        #expect(!ranEarly)
        let interactiveRan = Atomic<Bool>(false)
        try pool.submit { interactiveRan.store(true, ordering: .sequentiallyConsistent) }
        #expect(waitUntil { interactiveRan.load(ordering: .sequentiallyConsistent) })
        #expect(pool.queueDepth == .init(interactive: 0, background: 1))
        // And it runs once the first background job ends
        gate.release()
        #expect(waitUntil { secondRan.load(ordering: .sequentiallyConsistent) })
    }

    @Test func aBackgroundThreadRunsOnlyBackgroundJobsAtALowerPriority() throws {
        // Given one regular worker and one background thread
        let pool = try WorkerPool(configuration: .init(threads: 1, name: "test", backgroundThreads: 1))
        defer { pool.shutdown() }
        let own = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        // When a background job holds the background thread
        let background = Gate()
        let niceValues = Recorder<Int32>()
        try pool.submit(priority: .background) {
            niceValues.append(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
            background.wait()
        }
        #expect(waitUntil { background.entered.load(ordering: .sequentiallyConsistent) })
        // Then it runs with a higher nice value than this thread
        #expect(niceValues.values == [min(19, own + 10)])
        // And the regular worker still takes interactive jobs, never background ones
        let interactiveRan = Atomic<Bool>(false)
        let secondBackgroundRan = Atomic<Bool>(false)
        try pool.submit(priority: .background) { secondBackgroundRan.store(true, ordering: .sequentiallyConsistent) }
        try pool.submit { interactiveRan.store(true, ordering: .sequentiallyConsistent) }
        #expect(waitUntil { interactiveRan.load(ordering: .sequentiallyConsistent) })
        let ranEarly = secondBackgroundRan.load(ordering: .sequentiallyConsistent)
        #expect(!ranEarly)
        background.release()
        #expect(waitUntil { secondBackgroundRan.load(ordering: .sequentiallyConsistent) })
    }

    @Test func aBackgroundThreadWaitsWhileInteractiveJobsRun() throws {
        // Given one regular worker busy with an interactive job, and an idle background thread
        let pool = try WorkerPool(configuration: .init(threads: 1, name: "test", backgroundThreads: 1))
        defer { pool.shutdown() }
        let gate = Gate()
        try pool.submit { gate.wait() }
        #expect(waitUntil { gate.entered.load(ordering: .sequentiallyConsistent) })
        // When a background job is queued
        let backgroundRan = Atomic<Bool>(false)
        try pool.submit(priority: .background) { backgroundRan.store(true, ordering: .sequentiallyConsistent) }
        // Then it waits until no client job runs
        usleep(50_000)
        let ranEarly = backgroundRan.load(ordering: .sequentiallyConsistent)
        #expect(!ranEarly)
        gate.release()
        #expect(waitUntil { backgroundRan.load(ordering: .sequentiallyConsistent) })
    }

    @Test func fullQueueThrowsOverloadedPerClass() throws {
        let pool = try WorkerPool(
            configuration: .init(threads: 1, interactiveQueueCapacity: 2, backgroundQueueCapacity: 1, name: "test"))
        defer { pool.shutdown() }
        let gate = Gate()
        try pool.submit { gate.wait() }
        #expect(waitUntil { gate.entered.load(ordering: .sequentiallyConsistent) })
        try pool.submit {}
        try pool.submit {}
        #expect(throws: WorkerPool.Overloaded(priority: .interactive, queueDepth: 2)) { try pool.submit {} }
        try pool.submit(priority: .background) {}
        #expect(throws: WorkerPool.Overloaded(priority: .background, queueDepth: 1)) {
            try pool.submit(priority: .background) {}
        }
        gate.release()
        #expect(waitUntil { pool.queueDepth == .init(interactive: 0, background: 0) })
    }

    @Test func changedQueueCapacitiesApplyToTheNextSubmissions() throws {
        // Given one busy worker and an interactive queue of 1 that is full
        let pool = try WorkerPool(
            configuration: .init(threads: 1, interactiveQueueCapacity: 1, backgroundQueueCapacity: 1, name: "test"))
        defer { pool.shutdown() }
        let gate = Gate()
        try pool.submit { gate.wait() }
        #expect(waitUntil { gate.entered.load(ordering: .sequentiallyConsistent) })
        try pool.submit {}
        #expect(throws: WorkerPool.Overloaded.self) { try pool.submit {} }

        // When the capacity grows to 3, then two more fit and the next is refused
        pool.setQueueCapacities(interactive: 3, background: 1)
        #expect(pool.configuration.interactiveQueueCapacity == 3)
        try pool.submit {}
        try pool.submit {}
        #expect(throws: WorkerPool.Overloaded(priority: .interactive, queueDepth: 3)) { try pool.submit {} }

        // When it shrinks to 1, then the queued jobs stay queued and nothing new is taken
        pool.setQueueCapacities(interactive: 1, background: 1)
        #expect(pool.queueDepth.interactive == 3)
        #expect(throws: WorkerPool.Overloaded.self) { try pool.submit {} }
        gate.release()
        #expect(waitUntil { pool.queueDepth == .init(interactive: 0, background: 0) })
    }

    @Test func threadHooksRunOncePerThreadOnThatThread() throws {
        let started = Recorder<Int>()
        let exited = Recorder<Int>()
        let pool = try WorkerPool(
            configuration: .init(threads: 3, name: "test"),
            onThreadStart: { started.append($0) },
            onThreadExit: { exited.append($0) })
        let ran = Atomic<Int>(0)
        for _ in 0..<30 { try pool.submit { ran.add(1, ordering: .relaxed) } }
        pool.shutdown()
        #expect(ran.load(ordering: .relaxed) == 30)  // shutdown drains the queue first
        #expect(started.values.sorted() == [0, 1, 2])
        #expect(exited.values.sorted() == [0, 1, 2])
        #expect(throws: WorkerPool.Overloaded.self) { try pool.submit {} }
    }
}

@Suite(.timeLimit(.minutes(1)))
struct LoopBoundTests {
    @Test func valueTravelsThroughSendableClosuresToItsLoop() throws {
        final class Counter { var value = 0 }  // not Sendable on purpose
        let group = try EventLoopGroup(threads: 1, name: "test")
        defer { group.shutdown() }
        let loop = group.next()
        let box = try loop.runAndWait { LoopBoundBox(0, loop: loop) }
        let bound = try loop.runAndWait { LoopBound(Counter(), loop: loop) }
        for _ in 0..<100 {
            loop.execute {
                box.value += 1
                bound.value.value += 1
            }
        }
        #expect(waitUntil { (try? loop.runAndWait { box.value }) == 100 })
        #expect(try loop.runAndWait { bound.value.value } == 100)
    }
}
