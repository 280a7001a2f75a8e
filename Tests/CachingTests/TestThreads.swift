// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Runs `body(threadIndex)` on `count` new OS threads at once and waits for all of them.
///
/// Real threads, not the cooperative pool: the caches are built for the app's own threads, and
/// blocking the pool's two threads here would stall other suites.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    var threads: [pthread_t] = []
    for index in 0..<count {
        let job = Unmanaged.passRetained(ThreadJob(index: index, body: body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread,
            nil,
            { argument in
                let job = Unmanaged<ThreadJob>.fromOpaque(argument!).takeRetainedValue()
                job.body(job.index)
                return nil
            },
            job
        )
        precondition(rc == 0, "pthread_create failed: \(rc)")
        threads.append(thread)
    }
    for thread in threads {
        pthread_join(thread, nil)
    }
}

private final class ThreadJob: Sendable {
    let index: Int
    let body: @Sendable (Int) -> Void

    init(index: Int, body: @escaping @Sendable (Int) -> Void) {
        self.index = index
        self.body = body
    }
}
