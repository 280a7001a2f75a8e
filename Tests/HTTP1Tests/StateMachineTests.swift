import EventLoops
import Testing

// SPDX-License-Identifier: Apache-2.0
@testable import HTTP1

/// A manual clock for the state machine: time moves only when the test says so.
struct ManualInstant: NanosecondInstant {
    var offset: Duration
    func advanced(by duration: Duration) -> ManualInstant { ManualInstant(offset: offset + duration) }
    func duration(to other: ManualInstant) -> Duration { other.offset - offset }
    static func < (lhs: ManualInstant, rhs: ManualInstant) -> Bool { lhs.offset < rhs.offset }
}

final class ManualClock {
    private(set) var now = ManualInstant(offset: .zero)
    func advance(_ duration: Duration) { now = now.advanced(by: duration) }
}

@Suite struct StateMachineTests {
    typealias Machine = Connection.StateMachine<ManualInstant>
    let timeouts = Machine.Timeouts(headerRead: .seconds(10), idle: .seconds(60), writeStall: .seconds(30))

    @Test func silentNewConnectionClosesAfterHeaderTimeoutWithoutResponse() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        #expect(machine.deadline == clock.now.advanced(by: .seconds(10)))
        clock.advance(.seconds(9))
        #expect(machine.timerFired(now: clock.now) == .none)
        clock.advance(.seconds(1))
        #expect(machine.timerFired(now: clock.now) == .close)
    }

    @Test func slowHeadGets408FromTheFirstByteOfAKeepAliveRequest() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        #expect(machine.requestReceived(now: clock.now, keepAlive: true) == .dispatch)
        machine.responseQueued(now: clock.now)
        #expect(machine.writeAttempted(now: clock.now, drained: true, progressed: true) == .none)
        clock.advance(.seconds(30))
        machine.bytesReceived(now: clock.now)  // next request starts trickling in
        clock.advance(.seconds(5))
        machine.bytesReceived(now: clock.now)  // more bytes do not extend the header deadline
        #expect(machine.deadline == ManualInstant(offset: .seconds(40)))
        clock.advance(.seconds(5))
        #expect(machine.timerFired(now: clock.now) == .respondAndClose(.requestTimeout))
        #expect(machine.reading == .stopped)
    }

    @Test func firstRequestHeaderTimeoutCountsFromAccept() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        clock.advance(.seconds(8))
        machine.bytesReceived(now: clock.now)
        #expect(machine.deadline == ManualInstant(offset: .seconds(10)))
    }

    @Test func idleKeepAliveConnectionClosesAfterIdleTimeout() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        _ = machine.requestReceived(now: clock.now, keepAlive: true)
        clock.advance(.seconds(1))
        machine.responseQueued(now: clock.now)
        _ = machine.writeAttempted(now: clock.now, drained: true, progressed: true)
        #expect(machine.deadline == clock.now.advanced(by: .seconds(60)))
        clock.advance(.seconds(60))
        #expect(machine.timerFired(now: clock.now) == .close)
    }

    @Test func aSlowHandlerIsNotAnIdleClient() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        _ = machine.requestReceived(now: clock.now, keepAlive: true)
        #expect(machine.deadline == nil)
        clock.advance(.seconds(600))
        #expect(machine.timerFired(now: clock.now) == .none)
        machine.responseQueued(now: clock.now)
        #expect(machine.writeAttempted(now: clock.now, drained: true, progressed: true) == .none)
        #expect(!machine.isClosed)
    }

    @Test func bodyTimeoutCountsFromLastProgress() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        machine.bytesReceived(now: clock.now)
        machine.headReceived(now: clock.now)
        for _ in 0..<5 {
            clock.advance(.seconds(9))
            machine.bytesReceived(now: clock.now)
            #expect(machine.timerFired(now: clock.now) == .none)
        }
        clock.advance(.seconds(10))
        #expect(machine.timerFired(now: clock.now) == .respondAndClose(.requestTimeout))
    }

    @Test func writeStallAbortsButProgressResetsTheClock() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        _ = machine.requestReceived(now: clock.now, keepAlive: true)
        machine.responseQueued(now: clock.now)
        #expect(machine.writeAttempted(now: clock.now, drained: false, progressed: true) == .none)
        clock.advance(.seconds(20))
        #expect(machine.writeAttempted(now: clock.now, drained: false, progressed: true) == .none)
        clock.advance(.seconds(20))
        #expect(machine.writeAttempted(now: clock.now, drained: false, progressed: false) == .none)
        #expect(machine.timerFired(now: clock.now) == .none)
        clock.advance(.seconds(10))
        #expect(machine.timerFired(now: clock.now) == .abort)
    }

    @Test func connectionCloseRequestClosesAfterItsResponseIsWritten() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        #expect(machine.requestReceived(now: clock.now, keepAlive: false) == .dispatch)
        #expect(machine.reading == .stopped)
        machine.responseQueued(now: clock.now)
        #expect(machine.writeAttempted(now: clock.now, drained: false, progressed: true) == .none)
        #expect(machine.writeAttempted(now: clock.now, drained: true, progressed: true) == .close)
    }

    @Test func parseErrorRespondsThenClosesAfterOwedResponses() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        _ = machine.requestReceived(now: clock.now, keepAlive: true)
        #expect(machine.parseFailed(.badRequest) == .respondAndClose(.badRequest))
        machine.outputQueued()
        // The earlier request is still owed: no close yet.
        #expect(machine.writeAttempted(now: clock.now, drained: true, progressed: true) == .none)
        machine.responseQueued(now: clock.now)
        #expect(machine.writeAttempted(now: clock.now, drained: true, progressed: true) == .close)
    }

    @Test func peerCloseWithUnansweredRequestsAbandonsThem() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        _ = machine.requestReceived(now: clock.now, keepAlive: true)
        _ = machine.requestReceived(now: clock.now, keepAlive: true)
        #expect(machine.peerClosed() == .abandonUnanswered)
        #expect(machine.unanswered == 0)
        #expect(machine.peerClosed() == .none)  // reported once
    }

    @Test func peerCloseWhenIdleClosesAndWithOutputWaitsForIt() {
        let clock = ManualClock()
        var idle = Machine(now: clock.now, timeouts: timeouts)
        #expect(idle.peerClosed() == .close)
        var busy = Machine(now: clock.now, timeouts: timeouts)
        _ = busy.requestReceived(now: clock.now, keepAlive: true)
        busy.responseQueued(now: clock.now)
        #expect(busy.peerClosed() == .none)
        #expect(busy.writeAttempted(now: clock.now, drained: true, progressed: true) == .close)
    }

    @Test func shutdownClosesIdleAndRejectsNewRequests() {
        let clock = ManualClock()
        var idle = Machine(now: clock.now, timeouts: timeouts)
        #expect(idle.shutdownBegan() == .close)

        var reading = Machine(now: clock.now, timeouts: timeouts)
        reading.bytesReceived(now: clock.now)
        #expect(reading.shutdownBegan() == .none)
        #expect(reading.requestReceived(now: clock.now, keepAlive: true) == .reject(.serviceUnavailable))

        var busy = Machine(now: clock.now, timeouts: timeouts)
        _ = busy.requestReceived(now: clock.now, keepAlive: true)
        #expect(busy.shutdownBegan() == .none)
        #expect(busy.reading == .stopped)
        busy.responseQueued(now: clock.now)
        #expect(busy.writeAttempted(now: clock.now, drained: true, progressed: true) == .close)
    }

    @Test func closedMachineIgnoresEverything() {
        let clock = ManualClock()
        var machine = Machine(now: clock.now, timeouts: timeouts)
        machine.closed()
        #expect(machine.deadline == nil)
        #expect(machine.requestReceived(now: clock.now, keepAlive: true) == .none)
        #expect(machine.timerFired(now: clock.now.advanced(by: .seconds(999))) == .none)
        #expect(machine.writeFailed() == .none)
    }
}
