// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A fixed set of ``EventLoop``s, each running on its own OS thread.
///
/// The HTTP server runs one loop per thread (`server.threads`, default: the number of cores) and
/// binds one `SO_REUSEPORT` listen socket per loop, so the kernel spreads connections.
package final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    package let loops: [EventLoop]
    private let threads: Mutex<[OSThread]>
    private let nextIndex = Atomic<Int>(0)

    /// Creates `threads` loops named `<name>-0`, `<name>-1`, … and starts their threads.
    /// - Throws: ``EventLoopError/invalidThreadCount(_:)`` or ``SystemError`` if a loop or thread
    ///   cannot be created (loops already started are stopped again).
    package init(threads count: Int, name: String) throws {
        guard count > 0 else { throw EventLoopError.invalidThreadCount(count) }
        var loops: [EventLoop] = []
        for i in 0..<count {
            loops.append(try EventLoop(name: "\(name)-\(i)"))
        }
        self.loops = loops
        var started: [OSThread] = []
        do {
            for loop in loops {
                started.append(
                    try OSThread.spawn(name: loop.name) {
                        // A loop is run exactly once, by this thread.
                        try! loop.run()
                    })
            }
        } catch {
            for loop in loops { loop.stop() }
            for thread in started { thread.join() }
            throw error
        }
        threads = Mutex(started)
    }

    /// The number of CPUs this process may use (at least 1): its affinity mask's count, lowered to its cgroup's
    /// CPU quota (``CPUAllowance/current``, read once). Every default thread count is made from it.
    package static var coreCount: Int { CPUAllowance.current.count }

    /// Round-robin choice of a loop.
    package func next() -> EventLoop {
        let i = nextIndex.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[(i & Int.max) % loops.count]
    }

    /// Stops every loop and waits for their threads. Must not be called from one of the loops.
    /// Calling it again does nothing.
    package func shutdown() {
        precondition(!loops.contains { $0.inEventLoop }, "EventLoopGroup.shutdown() called on one of its loops")
        for loop in loops { loop.stop() }
        let toJoin = threads.withLock { threads -> [OSThread] in
            defer { threads.removeAll() }
            return threads
        }
        for thread in toJoin { thread.join() }
    }

    deinit {
        shutdown()
    }
}
