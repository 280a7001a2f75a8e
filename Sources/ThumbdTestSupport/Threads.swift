// SPDX-License-Identifier: Apache-2.0
import EventLoops

/// Runs `body(threadIndex)` on `count` new OS threads at once and waits for all of them.
///
/// Real threads, not the cooperative pool: the components under test are built for the app's own
/// threads, and blocking the pool's two threads here would stall other suites.
package func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    var threads: [OSThread] = []
    for index in 0..<count {
        do {
            threads.append(try OSThread.spawn(name: "test-\(index)") { body(index) })
        } catch {
            preconditionFailure("cannot start a test thread: \(error)")
        }
    }
    for thread in threads { thread.join() }
}
