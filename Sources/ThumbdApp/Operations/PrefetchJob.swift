// SPDX-License-Identifier: Apache-2.0
import Foundation

/// One `POST /prefetch` job: its thumbnails and how far they got. Every mutable field is read and written only
/// inside ``PrefetchService``'s lock.
final class PrefetchJob: @unchecked Sendable {
    // Sendable: every mutable field is guarded by PrefetchService.state's lock.

    /// The random, unguessable id (32 hex digits, 128 bits from the system's CSPRNG).
    let id: String
    /// Thumbnails asked for; emptied once the job has finished (only the counts are kept).
    var keys: [VariantKey]
    /// Items asked for.
    let total: Int
    /// Items before this index have been started (or cancelled before they started).
    var nextIndex = 0
    var done = 0
    var failed = 0
    var cancelled = 0
    /// Items started and not settled yet, by index.
    var running: [Int: Slot] = [:]
    /// Set by `DELETE /prefetch/<id>` (or shutdown): nothing more starts.
    var isCancelled = false
    /// When the last item settled; finished jobs are forgotten after ``PrefetchService/Limits/retention``.
    var finishedAt: ContinuousClock.Instant?

    init(id: String, keys: [VariantKey]) {
        self.id = id
        self.keys = keys
        total = keys.count
    }

    /// Items neither done, failed nor cancelled (waiting to start or under way).
    var pending: Int { total - done - failed - cancelled }

    /// Marks the job finished if nothing is pending (and drops the keys it no longer needs).
    func finishIfSettled(now: ContinuousClock.Instant) {
        guard pending == 0, finishedAt == nil else { return }
        finishedAt = now
        keys = []
    }

    /// `{"id": ..., "total": N, "done": d, "failed": f, "pending": p, "cancelled": c, "state": ...}`.
    var statusJSON: String {
        let state = finishedAt == nil ? "running" : (isCancelled ? "cancelled" : "finished")
        return "{\"id\": \"\(id)\", \"total\": \(total), \"done\": \(done), \"failed\": \(failed), "
            + "\"pending\": \(pending), \"cancelled\": \(cancelled), \"state\": \"\(state)\"}"
    }

    /// One started item: its coordinator ticket once it has one, and whether it still holds one of the
    /// service's in-flight places.
    final class Slot: @unchecked Sendable {
        // Sendable: guarded by PrefetchService.state's lock.
        var ticket: RenderCoordinator.Ticket?
        /// Counted as cancelled by a DELETE; its late result (if any) is ignored.
        var isCancelled = false
        /// Counted as done or failed.
        var isSettled = false
        /// Gave its in-flight place back (exactly once).
        var isReleased = false
    }

    /// 32 lowercase hex digits from `SystemRandomNumberGenerator` (getrandom(2) on Linux).
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return hex(high) + hex(low)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Whether `text` has the shape of an id (so a malformed path is a 404 without a lookup).
    static func isWellFormedID(_ text: Substring) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
