// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Everything `/status` and `/status.json` show, read from the components' own statistics and the
/// ``ActivityRecorder`` at one moment (each source is consistent in itself; together they are a few
/// microseconds apart). Encoded as JSON with snake_case keys; the HTML page is rendered from the same value.
struct StatusReport: Sendable, Encodable, Equatable {
    /// Outcomes of thumbnail lookups: memory hits, disk hits, and lookups that found neither.
    struct HitRatio: Sendable, Encodable, Equatable {
        var memoryHits: Int
        var diskHits: Int
        var misses: Int
        /// Shares of the three counts, 0...1 (all 0 before the first lookup).
        var memoryShare: Double
        var diskShare: Double
        var missShare: Double
    }

    /// One cache tier.
    struct Tier: Sendable, Encodable, Equatable {
        /// `memory`, `disk_thumbnails` or `disk_sources`.
        var name: String
        /// False when the tier is turned off (its numbers are 0).
        var enabled: Bool
        var entries: Int
        var bytes: Int
        var maxBytes: Int
    }

    /// Responses over the last 10 minutes.
    struct Requests: Sendable, Encodable, Equatable {
        /// Responses since start.
        var total: Int
        var bucketSeconds: Int
        /// Responses per bucket, oldest first; the last bucket is the current, unfinished one.
        var buckets: [Int]
        /// Mean over the last six finished buckets.
        var perSecondLastMinute: Double
    }

    /// Work under way and coalescing totals.
    struct InFlight: Sendable, Encodable, Equatable {
        /// Origin transfers running now.
        var fetchesRunning: Int
        /// Origin transfers waiting for a per-host slot.
        var fetchesQueued: Int
        /// Variant keys being fetched or rendered now.
        var renderFlights: Int
        /// Renders running on a render worker now.
        var rendersRunning: Int
        /// Render jobs waiting for a worker.
        var renderQueueDepth: Int
        /// Since start: origin transfers started.
        var transfersStarted: Int
        /// Since start: requests that joined a render already under way.
        var coalescedRequests: Int
        /// Since start: fetches that joined a transfer already under way.
        var coalescedFetches: Int
    }

    /// The most requested sources over the last minutes (Space-Saving estimates; see ``ActivityRecorder``).
    struct TopSources: Sendable, Encodable, Equatable {
        /// `url` when the page is behind the admin token, else `host`.
        var kind: String
        /// One request in this many is counted; counts are multiplied back.
        var sampleEvery: Int
        var items: [Item]

        struct Item: Sendable, Encodable, Equatable {
            var name: String
            var requests: Int
        }
    }

    /// One recent error response.
    struct RecentError: Sendable, Encodable, Equatable {
        /// ISO 8601, UTC.
        var time: String
        var status: Int
        var method: String
        var route: String
        var message: String
    }

    /// ISO 8601, UTC.
    var generatedAt: String
    var uptimeSeconds: Int
    /// Whether /thumb requires signed URLs.
    var signing: Bool
    var hitRatio: HitRatio
    var tiers: [Tier]
    var requests: Requests
    var inFlight: InFlight
    var topSources: TopSources
    /// Most recent first, at most 20.
    var recentErrors: [RecentError]

    /// The report as JSON (snake_case keys, sorted, so the output is stable).
    func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain structs of numbers and strings cannot fail.
        return (try? Array(encoder.encode(self))) ?? Array("{}".utf8)
    }

    /// `2026-11-22T15:40:00Z`.
    static func iso8601(unixTime: Int) -> String {
        var seconds = time_t(unixTime)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}

extension StatusReport.HitRatio {
    /// The shares computed from the counts.
    init(memoryHits: Int, diskHits: Int, misses: Int) {
        self.memoryHits = memoryHits
        self.diskHits = diskHits
        self.misses = misses
        let total = Double(memoryHits + diskHits + misses)
        memoryShare = total > 0 ? Double(memoryHits) / total : 0
        diskShare = total > 0 ? Double(diskHits) / total : 0
        missShare = total > 0 ? Double(misses) / total : 0
    }
}
