// SPDX-License-Identifier: Apache-2.0
import Glibc
import Synchronization

/// A request from any thread to the fetch thread.
enum Command: Sendable {
    /// Start or join a fetch. The URL was parsed on the caller's thread; a parse error is
    /// still delivered from the fetch thread, like every other result.
    case start(Waiter, Result<SourceURL, FetchError>, Validators?)
    /// Start a request to an object store (the shared cache tier): GETs of one object coalesce, PUTs never.
    case object(Waiter, ObjectRequest)
    /// Send a request to an operator's endpoint (a purge pushed downstream): never joined with another.
    case notification(Waiter, NotificationRequest)
    /// Remove the waiter holding this ticket id (its ticket was already claimed by `cancel`).
    case cancel(ticketID: UInt64)
    /// Use this configuration for transfers started from now on (config hot reload).
    case reconfigure(OriginFetcher.Configuration)
    /// Raise the transfer of this ticket to interactive if it still waits for a per-host slot.
    case promote(ticketID: UInt64)
    /// Cancel everything and leave the loop.
    case shutdown
}

/// The fetch thread's inbox: a Mutex-guarded command list plus an eventfd write.
///
/// A wakeup is sent only when the list goes from empty to non-empty: the thread drains the
/// whole list each time it is woken, so a non-empty list means a wakeup is already pending.
/// Wakeups are written while holding the lock and the thread closes the box (under the lock)
/// before it closes the eventfd, so no write can reach a closed (or reused) descriptor.
final class Mailbox: Sendable {
    private struct State: ~Copyable {
        var commands: [Command] = []
        var isClosed = false
        let wakeupFD: Int32  // eventfd owned by FetchReactor
    }

    private let state: Mutex<State>

    init(wakeupFD: Int32) {
        state = Mutex(State(wakeupFD: wakeupFD))
    }

    /// Queues `command` for the fetch thread. Returns false (and queues nothing) once closed.
    func post(_ command: Command) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.commands.append(command)
            if state.commands.count == 1 {
                var one: UInt64 = 1
                _ = write(state.wakeupFD, &one, 8)
            }
            return true
        }
    }

    /// Takes every queued command (fetch thread).
    func drain(into buffer: inout [Command]) {
        state.withLock { state in swap(&state.commands, &buffer) }
    }

    /// Refuses further commands and returns those still queued (fetch thread, on exit).
    func close() -> [Command] {
        state.withLock { state in
            state.isClosed = true
            defer { state.commands = [] }
            return state.commands
        }
    }
}
