// SPDX-License-Identifier: Apache-2.0
internal import CLinuxShims

/// The epoll event bits a registration asks for or receives.
package struct IOEvents: OptionSet, Sendable, Hashable {
    /// The `EPOLL*` bits.
    package let rawValue: UInt32
    /// Wraps `EPOLL*` bits.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Data (or a pending connection) can be read.
    package static let readable = IOEvents(rawValue: thumbd_epoll_in)
    /// The socket send buffer has room.
    package static let writable = IOEvents(rawValue: thumbd_epoll_out)
    /// The peer shut down its writing side (a FIN arrived), even if unread data precedes it.
    package static let readHangup = IOEvents(rawValue: thumbd_epoll_rdhup)
    /// Both directions are closed (always reported, never needs asking).
    package static let hangup = IOEvents(rawValue: thumbd_epoll_hup)
    /// An error is pending on the socket, e.g. a reset (always reported).
    package static let error = IOEvents(rawValue: thumbd_epoll_err)
    /// Edge-triggered: report a readiness change once, not while the condition lasts.
    package static let edgeTriggered = IOEvents(rawValue: thumbd_epoll_et)
    /// Any sign that the peer is gone or the socket failed: read hang-up, hang-up or error.
    package static let anyHangup = IOEvents(rawValue: thumbd_epoll_rdhup | thumbd_epoll_hup | thumbd_epoll_err)
    /// Anything that calls for a read: readable or any hang-up.
    package static let anyInput = IOEvents(
        rawValue: thumbd_epoll_in | thumbd_epoll_rdhup | thumbd_epoll_hup | thumbd_epoll_err)

    /// Whether any bit of `other` is set (a plain mask test; `isDisjoint` goes through generic code).
    @inline(__always)
    package func containsAny(_ other: IOEvents) -> Bool { rawValue & other.rawValue != 0 }
}

/// Something registered with an ``EventLoop`` that wants to hear about readiness of its fd.
///
/// Called on the loop's thread only.
package protocol EventLoopSelectable: AnyObject {
    /// Handles the ready events of one `epoll_wait` round.
    func handleEvents(_ events: IOEvents)
}

/// A registration with one loop's epoll set.
///
/// The generation is stored in `epoll_data` next to the slot index, so an event still in flight
/// for an fd that was closed and reused in the same round is recognised as stale and dropped.
package struct Registration: Hashable, Sendable, CustomStringConvertible {
    let index: UInt32
    let generation: UInt32

    var token: UInt64 { UInt64(generation) << 32 | UInt64(index) }

    package var description: String { "Registration(\(index)#\(generation))" }
}
