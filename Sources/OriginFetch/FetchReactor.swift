// SPDX-License-Identifier: Apache-2.0
import CCurl
import CLinuxShims
import Glibc

/// The fetch loop's readiness sources, like curl's `ephiperfifo.c`: one epoll set watching
/// libcurl's sockets (as its socket callback asks), a timerfd armed by its timer callback, and
/// an eventfd that other threads write to wake the loop (``Mailbox``).
///
/// Confined to the fetch thread, except `wakeupFD`, which ``Mailbox`` writes under its lock
/// while open; the descriptors are closed only after the mailbox is closed.
final class FetchReactor {
    /// epoll token of the timerfd.
    static let timerToken = UInt64.max
    /// epoll token of the eventfd; sockets use their descriptor as token.
    static let wakeupToken = UInt64.max - 1

    private let epoll: Int32
    private let timer: Int32
    /// Written (8 bytes) by ``Mailbox/post(_:)`` to wake the loop.
    let wakeupFD: Int32
    private var watched: Set<Int32> = []

    init() throws(FetchError) {
        let epoll = thumbd_epoll_create()
        let timer = thumbd_timerfd_create()
        let wakeup = thumbd_eventfd_create()
        guard epoll >= 0, timer >= 0, wakeup >= 0,
            thumbd_epoll_ctl(epoll, thumbd_epoll_ctl_add, timer, thumbd_epoll_in, Self.timerToken) == 0,
            thumbd_epoll_ctl(epoll, thumbd_epoll_ctl_add, wakeup, thumbd_epoll_in, Self.wakeupToken) == 0
        else {
            let detail = String(cString: strerror(errno))
            for fd in [epoll, timer, wakeup] where fd >= 0 { Glibc.close(fd) }
            throw .internalFailure(detail: "fetch reactor set-up failed: \(detail)")
        }
        self.epoll = epoll
        self.timer = timer
        self.wakeupFD = wakeup
    }

    /// Applies libcurl's socket callback request (`CURL_POLL_IN/OUT/INOUT/REMOVE`) to the epoll set.
    func update(socket fd: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            // libcurl may already have closed it (EBADF); a closed descriptor leaves epoll by itself.
            if watched.remove(fd) != nil { _ = thumbd_epoll_ctl(epoll, thumbd_epoll_ctl_del, fd, 0, 0) }
            return
        }
        var events: UInt32 = 0
        if what & CURL_POLL_IN != 0 { events |= thumbd_epoll_in }
        if what & CURL_POLL_OUT != 0 { events |= thumbd_epoll_out }
        let isNew = watched.insert(fd).inserted
        var status = thumbd_epoll_ctl(
            epoll, isNew ? thumbd_epoll_ctl_add : thumbd_epoll_ctl_mod, fd, events, UInt64(fd))
        // A descriptor number can be reused before libcurl's REMOVE for the old socket arrives.
        if status != 0 && errno == EEXIST {
            status = thumbd_epoll_ctl(epoll, thumbd_epoll_ctl_mod, fd, events, UInt64(fd))
        } else if status != 0 && errno == ENOENT {
            status = thumbd_epoll_ctl(epoll, thumbd_epoll_ctl_add, fd, events, UInt64(fd))
        }
    }

    /// Applies libcurl's timer callback request: -1 disarms, 0 means "as soon as possible".
    func armTimer(milliseconds: Int) {
        let nanoseconds: Int64 = milliseconds < 0 ? 0 : max(1, Int64(milliseconds) * 1_000_000)
        _ = thumbd_timerfd_arm(timer, nanoseconds)
    }

    /// Waits for readiness (no timeout: the timerfd carries libcurl's timeouts).
    /// Returns how many entries of `events` were filled.
    func wait(_ events: inout [ThumbdEpollEvent]) -> Int {
        while true {
            let count = events.withUnsafeMutableBufferPointer { buffer in
                thumbd_epoll_wait(epoll, buffer.baseAddress, Int32(buffer.count), -1)
            }
            if count >= 0 { return Int(count) }
            precondition(errno == EINTR, "epoll_wait failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Consumes a timerfd or eventfd readiness (both are non-blocking 8-byte counters).
    func drain(token: UInt64) {
        var counter: UInt64 = 0
        _ = read(token == Self.timerToken ? timer : wakeupFD, &counter, 8)
    }

    /// Closes every descriptor (after the mailbox is closed and the multi handle cleaned up).
    func close() {
        for fd in [epoll, timer, wakeupFD] { Glibc.close(fd) }
    }
}
