// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Glibc

/// Polls `condition` every 2 ms on the calling thread until it holds or `timeout` passes; returns
/// whether it held. Every wait in the tests is bounded by this or `eventually`, so a broken
/// implementation fails its test instead of hanging the run. Blocks the thread: use it from
/// synchronous tests or from threads of the test's own, never from an async test.
package func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// Like `waitUntil`, for async tests: sleeps between polls without holding a thread of Swift's
/// cooperative pool (which has only two threads on the CI machine).
package func eventually(
    timeout: Duration = .seconds(15), every interval: Duration = .milliseconds(5), _ condition: () -> Bool
) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: interval)
    }
    return true
}

/// A thread-safe list that tests append to from loops, workers and callbacks.
///
/// Guarded by a pthread lock, not `Synchronization.Mutex`: ThreadSanitizer does not see the stdlib
/// Mutex's contended path and would report false races (`swift test --sanitize=thread`).
package final class Recorder<Element: Sendable>: @unchecked Sendable {  // Sendable: `items` is guarded by `lock`.
    private let lock = ConditionLock()
    private var items: [Element] = []
    package init() {}
    package func append(_ item: Element) { lock.withLock { items.append(item) } }
    package var values: [Element] { lock.withLock { items } }
    package var count: Int { lock.withLock { items.count } }
}
