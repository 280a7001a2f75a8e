// SPDX-License-Identifier: Apache-2.0

@testable import ThumbdApp

extension FlightStateMachineTests {
    /// The actions as short text, to compare whole lists at once.
    static func summary(_ actions: [Machine.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .lookUpSharedThumbnail: "lookUpSharedThumbnail"
            case .lookUpSourceCache: "lookUpSourceCache"
            case .lookUpSharedSource: "lookUpSharedSource"
            case .fetchOrigin(let priority): "fetchOrigin(\(priority))"
            case .fetchWatermark(let priority): "fetchWatermark(\(priority))"
            case .submitRender(let priority, _, let overlays):
                "submitRender(\(priority)\(overlays.watermarks.isEmpty ? "" : ", watermarked"))"
            case .cancel(let ticket, let step): "cancel(\(ticket), \(step))"
            case .promoteFetch(let ticket): "promoteFetch(\(ticket))"
            case .promoteRender(let job): "promoteRender(\(job))"
            case .answer(let waiters, let result, let fromSharedTier):
                "answer(\(waiters.map(\.completion).joined(separator: " ")): "
                    + "\((try? result.get()) == nil ? "error" : "thumbnail")\(fromSharedTier ? ", shared" : ""))"
            case .refuse(let waiter): "refuse(\(waiter.completion))"
            case .share(let writes):
                "share(variant: \(writes.variant.map { $0.replacing ? "replace" : "ifAbsent" } ?? "none"), "
                    + "source: \(writes.source.map { $0.replacing ? "replace" : "ifAbsent" } ?? "none"))"
            }
        }
    }

    /// The error every waiter of an answer got, or nil when the actions answer nobody or with a thumbnail.
    static func error(in actions: [Machine.Action]) -> ServiceError? {
        for case .answer(_, .failure(let error), _) in actions { return error }
        return nil
    }
}
