// SPDX-License-Identifier: Apache-2.0
import EventLoops

#if canImport(Glibc)
    import Glibc
#endif

/// Polls `condition` every 2 ms until it holds or `timeout` passes; returns whether it held.
/// Bounded in time, so a broken implementation fails the test instead of hanging it.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(2_000)
    }
    return condition()
}

/// A thread-safe list that tests append to from loops and workers.
///
/// Guarded by a pthread lock, not `Synchronization.Mutex`: ThreadSanitizer does not see the stdlib
/// Mutex's contended path and would report false races (`swift test --sanitize=thread`).
final class Recorder<Element: Sendable>: @unchecked Sendable {  // Sendable: `items` is guarded by `lock`.
    private let lock = ConditionLock()
    private var items: [Element] = []
    func append(_ item: Element) { lock.withLock { items.append(item) } }
    var values: [Element] { lock.withLock { items } }
    var count: Int { lock.withLock { items.count } }
}
