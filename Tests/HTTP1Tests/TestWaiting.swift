// SPDX-License-Identifier: Apache-2.0
import Synchronization
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
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var values: [Element] { items.withLock { $0 } }
    var count: Int { items.withLock { $0.count } }
}
