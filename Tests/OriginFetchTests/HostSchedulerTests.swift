// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import OriginFetch

@Suite struct HostSchedulerTests {
    @Test func admitsUpToTheLimitPerHost() {
        var scheduler = HostScheduler(limit: 2)
        let admitted = [
            scheduler.admit(1, host: "a", priority: .interactive),
            scheduler.admit(2, host: "a", priority: .interactive),
            scheduler.admit(3, host: "a", priority: .interactive),
            scheduler.admit(4, host: "b", priority: .interactive),
        ]
        #expect(admitted == [true, true, false, true])  // other hosts are independent
        #expect(scheduler.running(on: "a") == 2)
        #expect(scheduler.queued(on: "a") == 1)
    }

    @Test func releaseHandsTheSlotToTheNextInFIFOOrderInteractiveFirst() {
        var scheduler = HostScheduler(limit: 1)
        _ = scheduler.admit(1, host: "a", priority: .interactive)
        for id in [2, 3] as [UInt64] { _ = scheduler.admit(id, host: "a", priority: .background) }
        for id in [4, 5] as [UInt64] { _ = scheduler.admit(id, host: "a", priority: .interactive) }
        #expect(scheduler.queued(on: "a") == 4)
        var order: [UInt64] = []
        while let next = scheduler.release(host: "a", isWaiting: { _ in true }) { order.append(next) }
        #expect(order == [4, 5, 2, 3])
        #expect(scheduler.isIdle)
    }

    @Test func aLoweredLimitGivesReleasedSlotsAwayUntilTheHostIsBelowIt() {
        // Given three transfers running on a host with limit 3, and two queued behind a fourth limit
        var scheduler = HostScheduler(limit: 3)
        for id in 1...5 as ClosedRange<UInt64> { _ = scheduler.admit(id, host: "a", priority: .interactive) }
        #expect(scheduler.running(on: "a") == 3)

        // When the limit drops to 1
        scheduler.limit = 1
        // Then the first two releases start nothing, and the third hands its slot to the next queued one
        #expect(scheduler.release(host: "a", isWaiting: { _ in true }) == nil)
        #expect(scheduler.release(host: "a", isWaiting: { _ in true }) == nil)
        #expect(scheduler.running(on: "a") == 1)
        #expect(scheduler.release(host: "a", isWaiting: { _ in true }) == 4)
        #expect(scheduler.running(on: "a") == 1)
    }

    @Test func aRaisedLimitAdmitsQueuedTransfersAtOnce() {
        // Given one transfer running and three queued on a host with limit 1, and one queued on another host
        var scheduler = HostScheduler(limit: 1)
        for id in 1...4 as ClosedRange<UInt64> { _ = scheduler.admit(id, host: "a", priority: .interactive) }
        _ = scheduler.admit(10, host: "b", priority: .interactive)
        _ = scheduler.admit(11, host: "b", priority: .background)

        // When the limit rises to 3 (with 3 cancelled meanwhile)
        scheduler.limit = 3
        let admitted = scheduler.admitQueued(isWaiting: { $0 != 3 })

        // Then the queued ones that still wait start, up to the new limit per host, in queue order
        #expect(admitted.sorted() == [2, 4, 11])
        #expect(scheduler.running(on: "a") == 3)
        #expect(scheduler.running(on: "b") == 2)
        #expect(scheduler.queued(on: "a") == 0)
    }

    @Test func skipsEntriesThatNoLongerWait() {
        var scheduler = HostScheduler(limit: 1)
        _ = scheduler.admit(1, host: "a", priority: .interactive)
        _ = scheduler.admit(2, host: "a", priority: .interactive)
        _ = scheduler.admit(3, host: "a", priority: .interactive)
        // 2 was cancelled while queued
        let next = scheduler.release(host: "a", isWaiting: { $0 != 2 })
        let none = scheduler.release(host: "a", isWaiting: { _ in true })
        #expect(next == 3)
        #expect(none == nil)
        #expect(scheduler.isIdle)
    }

    @Test func promotionMovesABackgroundEntryAhead() {
        var scheduler = HostScheduler(limit: 1)
        _ = scheduler.admit(1, host: "a", priority: .interactive)
        _ = scheduler.admit(2, host: "a", priority: .interactive)
        _ = scheduler.admit(3, host: "a", priority: .background)
        scheduler.promote(3, host: "a")
        var started: Set<UInt64> = []
        var order: [UInt64] = []
        while let next = scheduler.release(host: "a", isWaiting: { !started.contains($0) }) {
            started.insert(next)
            order.append(next)
        }
        #expect(order == [2, 3])
    }

    @Test func longQueuesStayInOrder() {
        var scheduler = HostScheduler(limit: 1)
        _ = scheduler.admit(0, host: "a", priority: .interactive)
        for id in 1...1000 as ClosedRange<UInt64> { _ = scheduler.admit(id, host: "a", priority: .background) }
        var order: [UInt64] = []
        while let next = scheduler.release(host: "a", isWaiting: { _ in true }) { order.append(next) }
        #expect(order == Array(1...1000))
    }
}
