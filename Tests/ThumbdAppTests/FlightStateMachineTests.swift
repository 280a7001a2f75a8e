// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch
import Testing
import Thumbnailing

@testable import ThumbdApp

/// A flight's machine driven as a value, one event at a time, in orders that the threads of the real coordinator
/// produce only by chance: tickets and render jobs are strings, a waiter's completion is its name.
@Suite struct FlightStateMachineTests {
    typealias Machine = Flight.StateMachine<String, String, String>

    static let everyStep = Flight.Route(sharedThumbnails: true, sharedSources: true, sourceCache: true, watermark: true)
    static let noOptionalStep = Flight.Route(
        sharedThumbnails: false, sharedSources: false, sourceCache: false, watermark: false)
    static let sourceCacheOnly = Flight.Route(
        sharedThumbnails: false, sharedSources: false, sourceCache: true, watermark: false)

    let source = FetchedSource(
        body: [1, 2, 3], requestedURL: "http://o/a.png", finalURL: "http://o/a.png", status: 200, contentType: nil,
        headers: FreshnessHeaders())
    let freshness = DiskCache.Freshness(validatedAt: Timestamp(millisecondsSinceEpoch: 784_111_777_000))
    let variant = RenderedVariant(bytes: [9], format: .png, freshness: nil)

    static func waiter(_ id: UInt64, _ admission: RenderCoordinator.Admission = .joined) -> Machine.Waiter {
        Machine.Waiter(id: id, admission: admission, completion: "w\(id)")
    }

    /// A machine started by waiter 1, with its first actions.
    static func started(
        _ route: Flight.Route, priority: FetchPriority = .interactive
    ) -> (machine: Machine, actions: [String]) {
        var machine = Machine(first: waiter(1, .started), priority: priority, route: route)
        let actions = machine.begin()
        return (machine, summary(actions))
    }

    /// A machine without optional steps, fetching the origin with ticket "origin".
    static func fetchingOrigin(priority: FetchPriority = .interactive) -> Machine {
        var (machine, _) = started(noOptionalStep, priority: priority)
        _ = machine.issued("origin", for: .origin)
        return machine
    }

    /// A machine without optional steps whose render is queued as job "job".
    func queued(priority: FetchPriority = .interactive) -> Machine {
        var machine = Self.fetchingOrigin(priority: priority)
        _ = machine.sourceArrived(source, keptFor: nil)
        _ = machine.renderQueued("job")
        return machine
    }

    // MARK: - The steps in order

    @Test func aFlightStartsAtTheFirstStepItsNodeHas() {
        #expect(Self.started(Self.everyStep).actions == ["lookUpSharedThumbnail"])
        #expect(Self.started(Self.sourceCacheOnly).actions == ["lookUpSourceCache"])
        #expect(Self.started(Self.noOptionalStep, priority: .background).actions == ["fetchOrigin(background)"])
    }

    @Test func everyStepRunsInOrderAndTheRenderIsSharedAfterTheAnswer() {
        var (machine, _) = Self.started(Self.everyStep)
        #expect(Self.summary(machine.issued("shared", for: .sharedThumbnail)).isEmpty)
        #expect(Self.summary(machine.sharedThumbnailLookedUp(.miss(replace: false))) == ["lookUpSourceCache"])
        #expect(Self.summary(machine.sourceCacheMissed()) == ["lookUpSharedSource"])
        #expect(Self.summary(machine.sharedSourceMissed(writeBack: .replace)) == ["fetchOrigin(interactive)"])
        #expect(Self.summary(machine.sourceArrived(source, keptFor: freshness)) == ["fetchWatermark(interactive)"])
        #expect(
            Self.summary(machine.watermarkArrived(.success(Overlays(watermarks: [[7]])))) == [
                "submitRender(interactive, watermarked)"
            ])
        #expect(Self.summary(machine.renderQueued("job")).isEmpty)
        machine.renderStarted()
        #expect(
            Self.summary(machine.rendered(.success(variant)))
                == ["answer(w1: thumbnail)", "share(variant: ifAbsent, source: replace)"])
        #expect(machine.isFinished && !machine.isJoinable)
    }

    @Test func aSkippedLookupPassesToTheNextStep() {
        var (machine, _) = Self.started(Self.everyStep)
        #expect(Self.summary(machine.skipped(.sharedThumbnail)) == ["lookUpSourceCache"])
        #expect(Self.summary(machine.skipped(.sourceCache)) == ["lookUpSharedSource"])
        #expect(Self.summary(machine.skipped(.sharedSource)) == ["fetchOrigin(interactive)"])
        // A skip reported for a step already passed changes nothing
        #expect(Self.summary(machine.skipped(.sharedThumbnail)).isEmpty)
    }

    @Test func aSharedTierThatFailedIsNotAskedForTheOriginalNorWrittenTo() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.sharedThumbnailLookedUp(.unavailable)
        #expect(Self.summary(machine.sourceCacheMissed()) == ["fetchOrigin(interactive)"])
        _ = machine.sourceArrived(source, keptFor: freshness)
        _ = machine.watermarkArrived(.success(Overlays(watermarks: [[7]])))
        #expect(Self.summary(machine.rendered(.success(variant))) == ["answer(w1: thumbnail)"])
    }

    @Test func aSourceFromTheSourceCacheOrTheSharedTierIsNotWrittenBack() {
        var (fromCache, _) = Self.started(Self.everyStep)
        _ = fromCache.sharedThumbnailLookedUp(.miss(replace: true))
        _ = fromCache.sourceArrived(source, keptFor: nil)
        _ = fromCache.watermarkArrived(.success(Overlays(watermarks: [[7]])))
        #expect(
            Self.summary(fromCache.rendered(.success(variant)))
                == ["answer(w1: thumbnail)", "share(variant: replace, source: none)"])

        var (fromSharedTier, _) = Self.started(Self.everyStep)
        _ = fromSharedTier.sharedThumbnailLookedUp(.miss(replace: false))
        _ = fromSharedTier.sourceCacheMissed()
        // (kept in this node's source cache, but the tier's lookup found it, so the source write stays none)
        _ = fromSharedTier.sourceArrived(source, keptFor: freshness)
        _ = fromSharedTier.watermarkArrived(.success(Overlays(watermarks: [[7]])))
        #expect(
            Self.summary(fromSharedTier.rendered(.success(variant)))
                == ["answer(w1: thumbnail)", "share(variant: ifAbsent, source: none)"])
    }

    // MARK: - Joining

    @Test func aClientJoiningDuringTheSharedLookupIsAnsweredWithTheSharedHitToo() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.issued("shared", for: .sharedThumbnail)
        #expect(Self.summary(machine.join(Self.waiter(2), priority: .interactive)).isEmpty)
        #expect(machine.waiters.map(\.id) == [1, 2])
        #expect(
            Self.summary(machine.sharedThumbnailLookedUp(.hit(variant))) == ["answer(w1 w2: thumbnail, shared)"])
        #expect(machine.isFinished && machine.waiters.isEmpty)
    }

    @Test func aClientJoiningABackgroundFlightPromotesTheRequestOfTheCurrentStep() {
        var (machine, _) = Self.started(Self.everyStep, priority: .background)
        _ = machine.issued("shared", for: .sharedThumbnail)
        #expect(Self.summary(machine.join(Self.waiter(2), priority: .interactive)) == ["promoteFetch(shared)"])
        #expect(machine.priority == .interactive)
        // Then the later steps run at interactive priority
        _ = machine.sharedThumbnailLookedUp(.miss(replace: false))
        _ = machine.sourceCacheMissed()
        #expect(Self.summary(machine.sharedSourceMissed(writeBack: .ifAbsent)) == ["fetchOrigin(interactive)"])
        // And a second interactive client promotes nothing more
        #expect(Self.summary(machine.join(Self.waiter(3), priority: .interactive)).isEmpty)
    }

    @Test func anOriginFetchAskedForAtBackgroundIsPromotedWhenItsTicketArrivesAfterAJoin() {
        let start = Self.started(Self.noOptionalStep, priority: .background)
        #expect(start.actions == ["fetchOrigin(background)"])
        var machine = start.machine
        #expect(Self.summary(machine.join(Self.waiter(2), priority: .interactive)).isEmpty)  // no ticket yet
        #expect(Self.summary(machine.issued("origin", for: .origin)) == ["promoteFetch(origin)"])
    }

    @Test func aWatermarkTicketArrivingAfterAJoinIsPromotedAndALookupNeedsNone() {
        // The shared tier's lookups are always asked at interactive priority: a late ticket needs no promotion
        var (machine, _) = Self.started(Self.everyStep, priority: .background)
        _ = machine.join(Self.waiter(2), priority: .interactive)
        #expect(Self.summary(machine.issued("shared", for: .sharedThumbnail)).isEmpty)

        // A watermark asked for at background is promoted once its ticket exists, when a client joined meanwhile
        // (before the machine it stayed at background: the client waited behind the host's background queue)
        var (marked, _) = Self.started(Self.everyStep, priority: .background)
        _ = marked.skipped(.sharedThumbnail)
        #expect(Self.summary(marked.sourceArrived(source, keptFor: nil)) == ["fetchWatermark(background)"])
        _ = marked.join(Self.waiter(2), priority: .interactive)
        #expect(Self.summary(marked.issued("mark", for: .watermark)) == ["promoteFetch(mark)"])

        // And one asked for at interactive is not promoted again
        var (interactive, _) = Self.started(Self.everyStep, priority: .interactive)
        _ = interactive.skipped(.sharedThumbnail)
        #expect(Self.summary(interactive.sourceArrived(source, keptFor: nil)) == ["fetchWatermark(interactive)"])
        #expect(Self.summary(interactive.issued("mark", for: .watermark)).isEmpty)
    }

    @Test func aClientJoiningAQueuedBackgroundRenderMovesItToTheInteractiveLane() {
        var machine = queued(priority: .background)
        #expect(Self.summary(machine.join(Self.waiter(2), priority: .interactive)) == ["promoteRender(job)"])

        // And one joining before the pool returned the job promotes it when the job is reported
        var early = Self.fetchingOrigin(priority: .background)
        #expect(Self.summary(early.sourceArrived(source, keptFor: nil)) == ["submitRender(background)"])
        _ = early.join(Self.waiter(2), priority: .interactive)
        #expect(Self.summary(early.renderQueued("job")) == ["promoteRender(job)"])
    }

    @Test func aFinishedFlightTakesNoMoreWaiters() {
        var machine = queued()
        _ = machine.rendered(.success(variant))
        // The owner starts a new flight for the next request of this key instead of joining this one
        #expect(!machine.isJoinable && machine.isFinished)
        #expect(machine.leave(1) == nil)
        #expect(Self.summary(machine.rendered(.success(variant))).isEmpty)
    }

    // MARK: - Leaving

    @Test func oneWaiterLeavingIsNotAnsweredAndCancelsNothing() {
        var machine = Self.fetchingOrigin()
        _ = machine.join(Self.waiter(2), priority: .interactive)
        #expect(machine.leave(1).map(Self.summary) == [])
        #expect(machine.isJoinable)
        _ = machine.sourceArrived(source, keptFor: nil)
        #expect(Self.summary(machine.rendered(.success(variant))) == ["answer(w2: thumbnail)"])
    }

    @Test func leavingTwiceOrAfterTheAnswerChangesNothing() {
        var machine = Self.fetchingOrigin()
        _ = machine.join(Self.waiter(2), priority: .interactive)
        #expect(machine.leave(2) != nil)
        #expect(machine.leave(2) == nil)
        _ = machine.originFailed(.tooLarge(limit: 1))
        #expect(machine.leave(1) == nil)
    }

    @Test func theLastWaiterLeavingDuringTheSharedLookupCancelsItAndFreesTheKey() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.issued("shared", for: .sharedThumbnail)
        #expect(machine.leave(1).map(Self.summary) == ["cancel(shared, sharedThumbnail)"])
        #expect(machine.isAbandoned && !machine.isJoinable && !machine.isFinished)
        #expect(Self.summary(machine.cancelled(.sharedThumbnail)).isEmpty)
        #expect(machine.isFinished)
    }

    @Test func theLastWaiterLeavingBeforeTheLookupTicketExistsCancelsItWhenItArrives() {
        var (machine, _) = Self.started(Self.everyStep)
        #expect(machine.leave(1).map(Self.summary) == [])
        #expect(Self.summary(machine.issued("shared", for: .sharedThumbnail)) == ["cancel(shared, sharedThumbnail)"])
        // If that cancel loses, a miss ends the flight without a next step
        #expect(Self.summary(machine.sharedThumbnailLookedUp(.miss(replace: false))).isEmpty)
        #expect(machine.isFinished)
    }

    @Test func theLastWaiterLeavingDuringTheSourceCacheLookupEndsTheFlightOnAMissAndRendersAHitForTheCache() {
        var (missed, _) = Self.started(Self.everyStep)
        _ = missed.sharedThumbnailLookedUp(.miss(replace: false))
        #expect(missed.leave(1).map(Self.summary) == [])  // nothing to cancel: a disk read
        #expect(!missed.isJoinable)
        #expect(Self.summary(missed.sourceCacheMissed()).isEmpty)
        #expect(missed.isFinished)

        var (found, _) = Self.started(Self.sourceCacheOnly)
        _ = found.leave(1)
        #expect(Self.summary(found.sourceArrived(source, keptFor: nil)) == ["submitRender(background)"])
        _ = found.renderQueued("job")
        #expect(Self.summary(found.rendered(.success(variant))).isEmpty)  // answered to nobody
        #expect(found.isFinished)
    }

    @Test func theLastWaiterLeavingDuringTheSharedSourceLookupCancelsIt() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.sharedThumbnailLookedUp(.miss(replace: false))
        _ = machine.sourceCacheMissed()
        _ = machine.issued("original", for: .sharedSource)
        #expect(machine.leave(1).map(Self.summary) == ["cancel(original, sharedSource)"])
        #expect(Self.summary(machine.cancelled(.sharedSource)).isEmpty)
        #expect(machine.isFinished)
    }

    @Test func theLastWaiterLeavingDuringTheOriginFetchCancelsIt() {
        var machine = Self.fetchingOrigin()
        #expect(machine.leave(1).map(Self.summary) == ["cancel(origin, origin)"])
        #expect(!machine.isJoinable)
        _ = machine.cancelled(.origin)
        #expect(machine.isFinished)
    }

    @Test func aCancelThatLosesTheRaceWithTheSourceRendersItForTheCacheAtBackgroundAndStillShares() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.sharedThumbnailLookedUp(.miss(replace: false))
        _ = machine.sourceCacheMissed()
        _ = machine.sharedSourceMissed(writeBack: .ifAbsent)
        _ = machine.issued("origin", for: .origin)
        #expect(machine.leave(1).map(Self.summary) == ["cancel(origin, origin)"])
        // The fetcher had already claimed the ticket for delivery: no `cancelled`, the source arrives
        _ = machine.sourceArrived(source, keptFor: freshness)
        #expect(
            Self.summary(machine.watermarkArrived(.success(Overlays(watermarks: [[7]])))) == [
                "submitRender(background, watermarked)"
            ])
        _ = machine.renderQueued("job")
        #expect(
            Self.summary(machine.rendered(.success(variant))) == ["share(variant: ifAbsent, source: ifAbsent)"])
    }

    @Test func theLastWaiterLeavingDuringTheWatermarkFetchCancelsIt() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.skipped(.sharedThumbnail)
        _ = machine.sourceArrived(source, keptFor: nil)
        _ = machine.issued("mark", for: .watermark)
        #expect(machine.leave(1).map(Self.summary) == ["cancel(mark, watermark)"])
        _ = machine.cancelled(.watermark)
        #expect(machine.isFinished)
    }

    @Test func theLastWaiterLeavingWhileTheRenderIsQueuedOrRunningLetsItFinishForTheCache() {
        var waiting = queued()
        #expect(waiting.leave(1).map(Self.summary) == [])
        #expect(waiting.isJoinable && !waiting.isAbandoned)  // still its key's: a new request joins the render
        #expect(Self.summary(waiting.rendered(.success(variant))).isEmpty)

        var running = queued()
        running.renderStarted()
        #expect(running.leave(1).map(Self.summary) == [])
        #expect(Self.summary(running.join(Self.waiter(2), priority: .interactive)).isEmpty)
        #expect(Self.summary(running.rendered(.success(variant))) == ["answer(w2: thumbnail)"])
    }

    // MARK: - Errors and late answers

    @Test func anOriginFailureReachesEveryWaiter() {
        var machine = Self.fetchingOrigin()
        _ = machine.join(Self.waiter(2), priority: .background)
        let actions = machine.originFailed(.originNotFound(status: 404))
        #expect(Self.summary(actions) == ["answer(w1 w2: error)"])
        guard case .fetch(.originNotFound(404))? = Self.error(in: actions) else {
            Issue.record("expected the origin's 404")
            return
        }
    }

    @Test func aWatermarkFetchFailingReachesEveryWaiterAndRendersNothing() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.join(Self.waiter(2), priority: .interactive)
        _ = machine.sharedThumbnailLookedUp(.miss(replace: false))
        _ = machine.sourceArrived(source, keptFor: freshness)
        let actions = machine.watermarkArrived(.failure(.watermark(.originNotFound(status: 404))))
        #expect(Self.summary(actions) == ["answer(w1 w2: error)"])  // and no share: nothing was rendered
        guard case .watermark(.originNotFound(404))? = Self.error(in: actions) else {
            Issue.record("expected the watermark's 404")
            return
        }
        #expect(machine.isFinished)
    }

    @Test func aFullRenderQueueAndAFailedRenderReachEveryWaiter() {
        var full = Self.fetchingOrigin()
        _ = full.join(Self.waiter(2), priority: .interactive)
        _ = full.sourceArrived(source, keptFor: nil)
        let rejected = full.renderRejected()
        #expect(Self.summary(rejected) == ["answer(w1 w2: error)"])
        guard case .renderQueueFull? = Self.error(in: rejected) else {
            Issue.record("expected renderQueueFull")
            return
        }

        // A failed render still shares the original it fetched, but no thumbnail
        var (failed, _) = Self.started(Self.everyStep)
        _ = failed.sharedThumbnailLookedUp(.miss(replace: false))
        _ = failed.sourceCacheMissed()
        _ = failed.sharedSourceMissed(writeBack: .ifAbsent)
        _ = failed.join(Self.waiter(2), priority: .interactive)
        _ = failed.sourceArrived(source, keptFor: freshness)
        _ = failed.watermarkArrived(.success(Overlays(watermarks: [[7]])))
        #expect(
            Self.summary(failed.rendered(.failure(.thumbnail(.watermarkUnusable))))
                == ["answer(w1 w2: error)", "share(variant: none, source: ifAbsent)"])
    }

    @Test func aTicketArrivingAfterItsAnswerIsIgnored() {
        // A fetcher that has shut down (or a recent source) answers before the call that asked returns
        var machine = Self.started(Self.noOptionalStep).machine
        _ = machine.originFailed(.cancelled)
        #expect(Self.summary(machine.issued("origin", for: .origin)).isEmpty)

        var looking = Self.started(Self.everyStep).machine
        _ = looking.sharedThumbnailLookedUp(.miss(replace: false))
        _ = looking.leave(1)
        #expect(Self.summary(looking.issued("shared", for: .sharedThumbnail)).isEmpty)  // not cancelled: answered
    }

    @Test func aRenderJobReportedAfterTheWorkerTookItIsIgnored() {
        var machine = Self.fetchingOrigin(priority: .background)
        _ = machine.sourceArrived(source, keptFor: nil)
        machine.renderStarted()
        _ = machine.join(Self.waiter(2), priority: .interactive)
        #expect(Self.summary(machine.renderQueued("job")).isEmpty)
        #expect(Self.summary(machine.rendered(.success(variant))) == ["answer(w1 w2: thumbnail)"])
    }

    @Test func aSharedHitAfterEveryWaiterLeftAnswersNobody() {
        var (machine, _) = Self.started(Self.everyStep)
        _ = machine.issued("shared", for: .sharedThumbnail)
        _ = machine.leave(1)
        #expect(Self.summary(machine.sharedThumbnailLookedUp(.hit(variant))).isEmpty)
        #expect(machine.isFinished)
    }

    // MARK: - Shutdown

    @Test func shutdownMidRenderLetsTheRenderAnswerItsWaitersButRefusesNewOnes() {
        var machine = queued()
        machine.renderStarted()
        machine.shutdown()
        #expect(Self.summary(machine.join(Self.waiter(2), priority: .interactive)) == ["refuse(w2)"])
        #expect(machine.waiters.map(\.id) == [1])
        #expect(Self.summary(machine.rendered(.success(variant))) == ["answer(w1: thumbnail)"])
    }
}
