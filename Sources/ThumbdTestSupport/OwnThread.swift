// SPDX-License-Identifier: Apache-2.0
import EventLoops
package import Testing

/// A suite trait: each test case of the suite (and of its nested suites) runs its task on a thread of its own,
/// not on Swift's cooperative pool.
///
/// Swift Testing runs every test on the cooperative pool, which has one thread per core: two on a small machine.
/// A synchronous test holds its pool thread from start to end, and synchronous tests start together with the
/// rest, so renders, a 100,000-entry disk cache and socket tests that wait can hold the whole pool for tens of
/// seconds on a loaded machine (a whole run once showed tests of one `#expect` on a float "passing after 10.5 s").
/// An async test whose other side keeps time meanwhile (a fetch timeout, an origin gate the test must open
/// first, a deadline it measures across an `await`) then resumes too late: every OriginFetchTests test once
/// waited 28 s, and a fetch timeout of 10 s had fired before the test opened the gate it was waiting on.
/// With this trait an async test's continuations resume at once on its own thread, whatever the pool is doing.
///
/// ```swift
/// @Suite(.ownThread, .timeLimit(.minutes(1))) struct CoalescingTests { … }
/// ```
package struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = try TestThreadExecutor(name: "test-case")
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test case of the suite on a thread of its own (``OwnThreadTrait``).
    package static var ownThread: Self { Self() }
}

/// A task executor with one OS thread that runs its jobs in order, for one test case (``OwnThreadTrait``).
final class TestThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `isFinished` are guarded by `lock`.
    private let lock = ConditionLock()
    private var jobs: [UnownedJob] = []
    private var isFinished = false

    init(name: String) throws {
        // The thread keeps the executor alive until `finish()` and the last job.
        try OSThread.spawn(name: name) { [self] in run() }.detach()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let accepted = lock.withLock {
            guard !isFinished else { return false }
            jobs.append(job)
            lock.signal()
            return true
        }
        // Nothing of a finished test should still run; if something does, the pool takes it rather than nobody.
        if !accepted { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Lets the thread end once it has run every job enqueued so far.
    func finish() {
        lock.withLock {
            isFinished = true
            lock.signal()
        }
    }

    private func run() {
        while true {
            lock.lock()
            while jobs.isEmpty && !isFinished { lock.wait() }
            let batch = jobs
            jobs.removeAll()
            let isLast = isFinished
            lock.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if isLast && batch.isEmpty { return }
        }
    }
}
