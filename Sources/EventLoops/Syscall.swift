// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// Runs a system call, retrying while it fails with `EINTR`, and throws ``SystemError`` on any
/// other failure (NIO's `syscall(blocking:where:_:)`).
///
/// A negative return value means failure with `errno` set; that is true of every call we wrap.
/// `EAGAIN` is thrown like any other error: non-blocking hot paths check `errno` themselves instead.
/// - Parameters:
///   - call: the call's name, kept in the error.
///   - body: performs the call once.
/// - Returns: the call's non-negative result.
/// - Throws: ``SystemError`` with the call name and `errno`.
@inline(__always)
package func syscall<Result: BinaryInteger>(
    _ call: StaticString,
    _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result >= 0 { return result }
        let error = errno
        if error == EINTR { continue }
        throw SystemError(errno: error, call: "\(call)")
    }
}

/// Closes `fd`, ignoring `EINTR`: on Linux the descriptor is released even when close is
/// interrupted, so retrying could close an fd that another thread just received.
package func closeDescriptor(_ fd: Int32) {
    _ = Glibc.close(fd)
}
