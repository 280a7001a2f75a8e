// SPDX-License-Identifier: Apache-2.0
internal import CLinuxShims
package import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A joinable POSIX thread running one closure.
///
/// Loops and workers are plain OS threads so that blocking work and epoll never touch Swift's
/// cooperative pool. Foundation's `Thread` is avoided to keep the module free of Foundation.
package struct OSThread: @unchecked Sendable {  // Sendable: pthread_t is an opaque id, safe to join from any thread.
    private let handle: pthread_t

    private final class Start {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a thread named `name` (at most 15 bytes are kept) that runs `body` and exits.
    package static func spawn(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) -> OSThread {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var handle = pthread_t()
        let rc = pthread_create(
            &handle, nil,
            { argument in
                let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
                start.name.withCString { thumbd_set_thread_name($0) }
                start.body()
                return nil
            }, start)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SystemError(errno: rc, call: "pthread_create")
        }
        return OSThread(handle: handle)
    }

    /// Waits for the thread to finish. Call at most once, and not after `detach()`.
    package func join() {
        pthread_join(handle, nil)
    }

    /// Lets the thread release its resources by itself when it ends (nobody will join it).
    package func detach() {
        pthread_detach(handle)
    }

    /// True when called on this thread (a thread cannot join itself).
    package var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// The calling thread's pthread id as an integer, for cheap "am I on this thread" checks.
    static var currentID: UInt { UInt(pthread_self()) }
}

extension Mutex where Value == OSThread? {
    /// Takes the thread out (nil from then on) and joins it; nothing when it was already taken. The stop of a
    /// component that owns one thread: idempotent, and safe to call from several threads.
    package func takeAndJoin() {
        let running = withLock { thread -> OSThread? in
            defer { thread = nil }
            return thread
        }
        running?.join()
    }
}

/// The processors this process may run on: its CPU affinity mask (`taskset`, a container's cpuset), not
/// every online processor, so that a thumbd confined to one core starts one loop, not one per core of the
/// machine (`nproc` counts the same way; nginx 1.22's `worker_processes auto` does not). Thread counts
/// also heed a cgroup's CPU quota, which this count does not see: ``CPUAllowance``.
func availableCoreCount() -> Int {
    Int(thumbd_available_cpus())
}
