// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// A failed system call: which call and the `errno` it left.
///
/// Produced at the C boundary by ``syscall(_:_:)`` so that callers see the call name next to the
/// error text (like NIO's `IOError`).
package struct SystemError: Error, Equatable, CustomStringConvertible {
    /// The `errno` value the call left.
    package let errno: Int32
    /// The name of the failing call, e.g. `"epoll_ctl"`.
    package let call: String

    /// Creates an error for `call` that failed with `errno`.
    package init(errno: Int32, call: String) {
        self.errno = errno
        self.call = call
    }

    /// `"<call> failed: <strerror> (errno N)"`.
    package var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

extension WorkerPool {
    /// Thrown by ``WorkerPool/submit(priority:_:)`` when the queue of that priority class is full.
    ///
    /// Callers turn it into `503 Service Unavailable` with `Retry-After` rather than queueing
    /// without bound (imgproxy `workers/`).
    package struct Overloaded: Error, Equatable, CustomStringConvertible {
        /// The priority class whose queue was full.
        package let priority: Priority
        /// How many jobs that queue held when the job was refused.
        package let queueDepth: Int

        /// Creates the error.
        package init(priority: Priority, queueDepth: Int) {
            self.priority = priority
            self.queueDepth = queueDepth
        }

        /// Human-readable summary for logs.
        package var description: String { "worker pool overloaded (\(priority) queue holds \(queueDepth))" }
    }
}

/// Misuse of an ``EventLoop`` or ``EventLoopGroup`` that is not a system-call failure.
package enum EventLoopError: Error, Equatable {
    /// The loop was asked to start twice.
    case alreadyRunning
    /// A group was asked for zero or a negative number of loops.
    case invalidThreadCount(Int)
}
