// SPDX-License-Identifier: Apache-2.0
import Foundation

/// Everything `/status` and `/status.json` show, read from the components' own statistics and the
/// ``ActivityRecorder`` at one moment (each source is consistent in itself; together they are a few
/// microseconds apart). Encoded as JSON with snake_case keys; the HTML page is rendered from the same value.
package struct StatusReport: Sendable, Encodable, Equatable {
    /// Outcomes of thumbnail lookups: memory hits, disk hits, and lookups that found neither.
    package struct HitRatio: Sendable, Encodable, Equatable {
        package var memoryHits: Int
        package var diskHits: Int
        package var misses: Int
        /// Shares of the three counts, 0...1 (all 0 before the first lookup).
        package var memoryShare: Double
        package var diskShare: Double
        package var missShare: Double
    }

    /// One cache tier.
    package struct Tier: Sendable, Encodable, Equatable {
        /// `memory`, `disk_thumbnails` or `disk_sources`.
        package var name: String
        /// False when the tier is turned off (its numbers are 0).
        package var enabled: Bool
        package var entries: Int
        package var bytes: Int
        package var maxBytes: Int

        package init(name: String, enabled: Bool, entries: Int, bytes: Int, maxBytes: Int) {
            self.name = name
            self.enabled = enabled
            self.entries = entries
            self.bytes = bytes
            self.maxBytes = maxBytes
        }
    }

    /// The shared tier on S3-compatible storage (`cache.shared`), since start.
    package struct SharedTier: Sendable, Encodable, Equatable {
        /// False when the tier is off (its numbers are 0).
        package var enabled: Bool
        /// True while the breaker skips the tier after failures.
        package var breakerOpen: Bool
        /// Lookups (thumbnails and originals): fresh intact objects, none, failures, skipped by the breaker,
        /// and unusable objects (corrupt or expired, overwritten).
        package var hits: Int
        package var misses: Int
        package var errors: Int
        package var skipped: Int
        package var unusable: Int
        /// Writes: stored, already stored by another node, failed, dropped (queue full or breaker open).
        package var stored: Int
        package var alreadyStored: Int
        package var writeErrors: Int
        package var dropped: Int

        package init(
            enabled: Bool, breakerOpen: Bool = false, hits: Int = 0, misses: Int = 0, errors: Int = 0,
            skipped: Int = 0, unusable: Int = 0, stored: Int = 0, alreadyStored: Int = 0, writeErrors: Int = 0,
            dropped: Int = 0
        ) {
            self.enabled = enabled
            self.breakerOpen = breakerOpen
            self.hits = hits
            self.misses = misses
            self.errors = errors
            self.skipped = skipped
            self.unusable = unusable
            self.stored = stored
            self.alreadyStored = alreadyStored
            self.writeErrors = writeErrors
            self.dropped = dropped
        }
    }

    /// Responses over the last 10 minutes.
    package struct Requests: Sendable, Encodable, Equatable {
        /// Responses since start.
        package var total: Int
        package var bucketSeconds: Int
        /// Responses per bucket, oldest first; the last bucket is the current, unfinished one.
        package var buckets: [Int]
        /// Mean over the last six finished buckets.
        package var perSecondLastMinute: Double

        package init(total: Int, bucketSeconds: Int, buckets: [Int], perSecondLastMinute: Double) {
            self.total = total
            self.bucketSeconds = bucketSeconds
            self.buckets = buckets
            self.perSecondLastMinute = perSecondLastMinute
        }
    }

    /// Work under way and coalescing totals.
    package struct InFlight: Sendable, Encodable, Equatable {
        /// Origin transfers running now.
        package var fetchesRunning: Int
        /// Origin transfers waiting for a per-host slot.
        package var fetchesQueued: Int
        /// Variant keys being fetched or rendered now.
        package var renderFlights: Int
        /// Renders running on a render worker now.
        package var rendersRunning: Int
        /// Render jobs waiting for a worker.
        package var renderQueueDepth: Int
        /// Since start: origin transfers started.
        package var transfersStarted: Int
        /// Since start: requests that joined a render already under way.
        package var coalescedRequests: Int
        /// Since start: fetches that joined a transfer already under way.
        package var coalescedFetches: Int

        package init(
            fetchesRunning: Int, fetchesQueued: Int, renderFlights: Int, rendersRunning: Int, renderQueueDepth: Int,
            transfersStarted: Int, coalescedRequests: Int, coalescedFetches: Int
        ) {
            self.fetchesRunning = fetchesRunning
            self.fetchesQueued = fetchesQueued
            self.renderFlights = renderFlights
            self.rendersRunning = rendersRunning
            self.renderQueueDepth = renderQueueDepth
            self.transfersStarted = transfersStarted
            self.coalescedRequests = coalescedRequests
            self.coalescedFetches = coalescedFetches
        }
    }

    /// The most requested sources over the last minutes (Space-Saving estimates; see ``ActivityRecorder``).
    package struct TopSources: Sendable, Encodable, Equatable {
        /// `url` when the page is behind the admin token, else `host`.
        package var kind: String
        /// One request in this many is counted; counts are multiplied back.
        package var sampleEvery: Int
        package var items: [Item]

        package init(kind: String, sampleEvery: Int, items: [Item]) {
            self.kind = kind
            self.sampleEvery = sampleEvery
            self.items = items
        }

        package struct Item: Sendable, Encodable, Equatable {
            package var name: String
            package var requests: Int

            package init(name: String, requests: Int) {
                self.name = name
                self.requests = requests
            }
        }
    }

    /// One recent error response.
    package struct RecentError: Sendable, Encodable, Equatable {
        /// ISO 8601, UTC.
        package var time: String
        package var status: Int
        package var method: String
        package var route: String
        package var message: String

        package init(time: String, status: Int, method: String, route: String, message: String) {
            self.time = time
            self.status = status
            self.method = method
            self.route = route
            self.message = message
        }
    }

    /// The CPUs thumbd may use, where that number came from, and the threads made from it (all fixed at start).
    package struct CPUs: Sendable, Encodable, Equatable {
        /// CPUs the default thread counts are made from: the affinity mask's count, lowered to a cgroup CPU quota.
        package var count: Int
        /// CPUs in the affinity mask.
        package var affinity: Int
        /// CPUs' worth of time the cgroup CPU quota allows (1.5); nil (left out of the JSON) without a quota.
        package var quota: Double?
        /// Where `count` came from: `affinity`, or the quota and the affinity count
        /// (`cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup; affinity 64`).
        package var origin: String
        /// Event loops (`server.threads`; 0 there is one per CPU).
        package var httpThreads: Int
        /// Render threads for clients (`image.render_threads`; 0 there is one per CPU plus a quarter).
        package var renderThreads: Int

        package init(
            count: Int, affinity: Int, quota: Double? = nil, origin: String, httpThreads: Int, renderThreads: Int
        ) {
            self.count = count
            self.affinity = affinity
            self.quota = quota
            self.origin = origin
            self.httpThreads = httpThreads
            self.renderThreads = renderThreads
        }
    }

    /// ISO 8601, UTC.
    package var generatedAt: String
    package var uptimeSeconds: Int
    package var cpus: CPUs
    /// Whether /thumb requires signed URLs.
    package var signing: Bool
    package var hitRatio: HitRatio
    package var tiers: [Tier]
    package var sharedTier: SharedTier
    package var requests: Requests
    package var inFlight: InFlight
    package var topSources: TopSources
    /// Most recent first, at most 20.
    package var recentErrors: [RecentError]

    package init(
        generatedAt: String, uptimeSeconds: Int, cpus: CPUs, signing: Bool, hitRatio: HitRatio, tiers: [Tier],
        sharedTier: SharedTier = SharedTier(enabled: false), requests: Requests, inFlight: InFlight,
        topSources: TopSources, recentErrors: [RecentError]
    ) {
        self.sharedTier = sharedTier
        self.generatedAt = generatedAt
        self.uptimeSeconds = uptimeSeconds
        self.cpus = cpus
        self.signing = signing
        self.hitRatio = hitRatio
        self.tiers = tiers
        self.requests = requests
        self.inFlight = inFlight
        self.topSources = topSources
        self.recentErrors = recentErrors
    }

    /// The report as JSON (snake_case keys, sorted, so the output is stable).
    package func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Encoding plain structs of numbers and strings cannot fail.
        return (try? Array(encoder.encode(self))) ?? Array("{}".utf8)
    }

    /// `2026-11-22T15:40:00Z`.
    package static func iso8601(unixTime: Int) -> String {
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
    package init(memoryHits: Int, diskHits: Int, misses: Int) {
        self.memoryHits = memoryHits
        self.diskHits = diskHits
        self.misses = misses
        let total = Double(memoryHits + diskHits + misses)
        memoryShare = total > 0 ? Double(memoryHits) / total : 0
        diskShare = total > 0 ? Double(diskHits) / total : 0
        missShare = total > 0 ? Double(misses) / total : 0
    }
}
