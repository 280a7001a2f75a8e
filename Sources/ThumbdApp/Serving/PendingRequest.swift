// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A request's link to work started for it on other threads, so that its client leaving cancels it.
/// The client may leave before the work exists (during a disk lookup); the cancel then runs when it does.
final class PendingRequest: Sendable {
    private let state = Mutex<(isGone: Bool, leave: (@Sendable () -> Void)?)>((false, nil))

    /// Whether the client has gone.
    var isGone: Bool { state.withLock { $0.isGone } }

    /// The client went away: runs the registered cancel, once.
    func clientLeft() {
        let leave = state.withLock { state -> (@Sendable () -> Void)? in
            state.isGone = true
            defer { state.leave = nil }
            return state.leave
        }
        leave?()
    }

    /// Registers how to cancel the work; runs it at once if the client has already gone.
    func onLeave(_ leave: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.isGone { return true }
            state.leave = leave
            return false
        }
        if runNow { leave() }
    }
}
