// SPDX-License-Identifier: Apache-2.0
import Caching
import Instrumentation
import OriginFetch
import Thumbnailing

/// The scrape-time reads of each component's own counters (the pull half of ``MetricsEndpoint``).
extension MetricsEndpoint {
    /// One cache tier's numbers, whatever kind of cache it is.
    private struct Tier {
        var name: String
        var hits: Int
        var misses: Int
        var bytes: Int
        var maxBytes: Int?
        var entries: Int
        var evictions: Int
    }

    /// The shared tier's counters (`cache.shared.enabled` only).
    func writeSharedTier(to text: inout PrometheusText) {
        guard let counters = sharedTier?.counters else { return }
        text.family(MetricNames.sharedLookups, .counter, "Shared-tier lookups, by kind and result.")
        for kind in SharedTierCounters.Kind.allCases {
            for result in SharedTierCounters.LookupResult.allCases {
                text.sample(
                    MetricNames.sharedLookups, [("kind", kind.label), ("result", result.label)],
                    counters.lookups(kind, result))
            }
        }
        text.family(MetricNames.sharedPuts, .counter, "Shared-tier writes, by result.")
        for result in SharedTierCounters.PutResult.allCases {
            text.sample(MetricNames.sharedPuts, [("result", result.label)], counters.puts[result] ?? 0)
        }
        text.family(MetricNames.sharedPutsInFlight, .gauge, "Shared-tier writes under way.")
        text.sample(MetricNames.sharedPutsInFlight, counters.putsUnderWay)
        text.family(MetricNames.sharedBreakerOpen, .gauge, "1 while the shared tier is skipped after failures.")
        text.sample(MetricNames.sharedBreakerOpen, counters.isOpen ? 1 : 0)
        text.family(MetricNames.sharedBreakerOpenings, .counter, "Times the shared tier's breaker opened.")
        text.sample(MetricNames.sharedBreakerOpenings, counters.breakerOpenings)
    }

    /// Purges (``Purger``): sources purged by reason, objects removed by tier.
    func writePurges(to text: inout PrometheusText) {
        guard let counters = purger?.counters else { return }
        text.family(MetricNames.purges, .counter, "Sources purged, by reason (source, tag, prefix, changed).")
        for reason in Purger.Reason.allCases {
            text.sample(MetricNames.purges, [("reason", reason.rawValue)], counters.purges[reason] ?? 0)
        }
        text.family(MetricNames.purgedObjects, .counter, "Entries and objects purges removed, by tier.")
        text.sample(MetricNames.purgedObjects, [("tier", "memory")], counters.memoryEntries)
        text.sample(MetricNames.purgedObjects, [("tier", "disk")], counters.diskEntries)
        text.sample(MetricNames.purgedObjects, [("tier", "shared")], counters.sharedObjects)
        text.family(
            MetricNames.purgeSharedErrors, .counter, "Shared-tier listings and deletions of purges that failed.")
        text.sample(MetricNames.purgeSharedErrors, counters.sharedErrors)
        if let checks = sourceChecker?.counters {
            text.family(
                MetricNames.sourceChecks, .counter,
                "Background checks of sources with their origins (cache.source_check_interval), by what they found.")
            for (result, count) in [
                ("unchanged", checks.unchanged), ("changed", checks.changed), ("gone", checks.gone),
                ("failed", checks.failed),
            ] {
                text.sample(MetricNames.sourceChecks, [("result", result)], count)
            }
        }
        guard let push = purger?.notifier?.counters else { return }
        let kinds = ["varnish", "webhook"]
        let families: [(String, PrometheusText.Kind, String, [String: Int])] = [
            (MetricNames.purgePushes, .counter, "Purge pushes answered 2xx, by endpoint kind.", push.sent),
            (MetricNames.purgePushedTags, .counter, "Tags those pushes carried, by endpoint kind.", push.tagsSent),
            (MetricNames.purgePushRetries, .counter, "Purge pushes tried again after a failure.", push.retries),
            (
                MetricNames.purgePushFailedTags, .counter, "Tags given up after the last try of their push failed.",
                push.failedTags
            ),
            (
                MetricNames.purgePushDroppedTags, .counter, "Tags dropped because the endpoint's queue was full.",
                push.droppedTags
            ),
            (
                MetricNames.purgePushPendingTags, .gauge, "Tags waiting to be pushed, by endpoint kind.",
                push.pendingTags
            ),
        ]
        for (name, kind, help, values) in families {
            text.family(name, kind, help)
            for endpoint in kinds { text.sample(name, [("endpoint", endpoint)], values[endpoint] ?? 0) }
        }
    }

    /// The decoder sandbox's jobs and helpers (`image.sandbox` not `off`).
    func writeSandbox(to text: inout PrometheusText) {
        guard let pool = coordinator.thumbnailer.sandbox?.pool else { return }
        text.family(MetricNames.sandboxJobs, .counter, "Decoder sandbox jobs, by result.")
        for outcome in DecoderPool.Outcome.allCases {
            text.sample(MetricNames.sandboxJobs, [("result", outcome.label)], pool.count(outcome))
        }
        text.family(MetricNames.sandboxHelpersStarted, .counter, "Decoder sandbox helpers started.")
        text.sample(MetricNames.sandboxHelpersStarted, pool.helpersStarted)
    }

    func writeCaches(to text: inout PrometheusText) {
        var tiers: [Tier] = []
        var disks: [(name: String, statistics: DiskCache.Statistics)] = []
        if let memory = cache.memoryStatistics {
            tiers.append(
                Tier(
                    name: "memory", hits: memory.hits, misses: memory.misses, bytes: memory.currentBytes,
                    maxBytes: memory.maxBytes, entries: memory.currentEntries, evictions: memory.evictions))
        }
        for (name, disk) in [("disk", cache.variants), ("sources", cache.sources), ("analyses", cache.analyses)] {
            guard let statistics = disk?.statistics else { continue }
            disks.append((name, statistics))
            tiers.append(
                Tier(
                    name: name, hits: statistics.hits, misses: statistics.misses, bytes: statistics.currentBytes,
                    maxBytes: statistics.maxBytes, entries: statistics.currentEntries,
                    evictions: statistics.evictions))
        }
        if let intermediates = coordinator.intermediateStatistics {
            tiers.append(
                Tier(
                    name: "intermediates", hits: intermediates.counters.hits,
                    misses: intermediates.counters.made + intermediates.counters.joined, bytes: intermediates.bytes,
                    maxBytes: nil, entries: intermediates.entries, evictions: intermediates.evictions))
        }
        text.family(MetricNames.cacheHits, .counter, "Lookups that found an entry, by tier.")
        for tier in tiers { text.sample(MetricNames.cacheHits, [("tier", tier.name)], tier.hits) }
        text.family(MetricNames.cacheMisses, .counter, "Lookups that found nothing, by tier.")
        for tier in tiers { text.sample(MetricNames.cacheMisses, [("tier", tier.name)], tier.misses) }
        text.family(
            MetricNames.cacheBytes, .gauge, "Bytes held, by tier (encoded bytes; decoded pixels for intermediates).")
        for tier in tiers { text.sample(MetricNames.cacheBytes, [("tier", tier.name)], tier.bytes) }
        // Copies of memory-tier entries outside its budget (HotSet): bytes only, their hits are memory hits.
        if let hotSet = cache.hotSet { text.sample(MetricNames.cacheBytes, [("tier", "hot_set")], hotSet.bytes) }
        text.family(MetricNames.cacheMaxBytes, .gauge, "Byte budget in force, by tier.")
        for tier in tiers {
            if let maxBytes = tier.maxBytes { text.sample(MetricNames.cacheMaxBytes, [("tier", tier.name)], maxBytes) }
        }
        text.family(MetricNames.cacheEntries, .gauge, "Entries held, by tier.")
        for tier in tiers { text.sample(MetricNames.cacheEntries, [("tier", tier.name)], tier.entries) }
        text.family(MetricNames.cacheEvictions, .counter, "Entries removed to stay within the budget, by tier.")
        for tier in tiers { text.sample(MetricNames.cacheEvictions, [("tier", tier.name)], tier.evictions) }
        text.family(
            MetricNames.cacheBlobsDropped, .counter,
            "Disk entries found bad on read (wrong size or checksum, or blob file missing), never served, deleted.")
        for disk in disks {
            text.sample(
                MetricNames.cacheBlobsDropped, [("tier", disk.name), ("reason", "corrupt")],
                disk.statistics.corruptBlobs)
            text.sample(
                MetricNames.cacheBlobsDropped, [("tier", disk.name), ("reason", "missing")],
                disk.statistics.missingBlobs)
        }
        let writer = cache.writerCounts
        text.family(
            MetricNames.cacheStoresDropped, .counter, "Disk stores dropped because the disk writer's queue was full.")
        text.sample(MetricNames.cacheStoresDropped, writer.droppedStores)
        text.family(MetricNames.cacheWriteFailures, .counter, "Disk writer operations that failed (logged).")
        text.sample(MetricNames.cacheWriteFailures, writer.failedOperations)
        text.family(MetricNames.cacheRevalidations, .counter, "Revalidations of expired entries started.")
        text.sample(MetricNames.cacheRevalidations, revalidator.revalidationsStarted)
    }

    func writeOrigin(to text: inout PrometheusText) {
        let fetches = fetcher.counters
        let render = coordinator.counters
        let errors = fetches.errors.values.reduce(0, +)
        text.family(
            MetricNames.originFetchesStarted, .counter, "Transfers from origins started (redirect hops not counted).")
        text.sample(MetricNames.originFetchesStarted, fetches.transfersStarted)
        text.family(MetricNames.originFetches, .counter, "Transfers from origins ended, by result.")
        text.sample(
            MetricNames.originFetches, [("result", "success")], fetches.transfersSucceeded - fetches.notModified)
        text.sample(MetricNames.originFetches, [("result", "not_modified")], fetches.notModified)
        text.sample(MetricNames.originFetches, [("result", "error")], errors)
        text.sample(MetricNames.originFetches, [("result", "abandoned")], fetches.transfersAbandoned)
        text.family(MetricNames.originErrors, .counter, "Failed transfers from origins, by error class.")
        for kind in FetchError.Kind.allCases {
            text.sample(MetricNames.originErrors, [("class", Self.snakeCase(kind.rawValue))], fetches.errors[kind] ?? 0)
        }
        text.family(
            MetricNames.originSSRFRefusals, .counter,
            "Connections to origin addresses refused by the SSRF guard (private, loopback and other special ranges).")
        text.sample(MetricNames.originSSRFRefusals, fetches.addressRefusals)
        text.family(MetricNames.originRedirects, .counter, "Redirects followed.")
        text.sample(MetricNames.originRedirects, fetches.redirectsFollowed)
        text.family(MetricNames.originFetchesInFlight, .gauge, "Transfers running now.")
        text.sample(MetricNames.originFetchesInFlight, fetches.running)
        text.family(MetricNames.originFetchesQueued, .gauge, "Transfers waiting for a per-host slot now.")
        text.sample(MetricNames.originFetchesQueued, fetches.queued)
        text.family(
            MetricNames.coalesced, .counter,
            "Requests that joined work already under way instead of starting it, by stage.")
        text.sample(MetricNames.coalesced, [("stage", "render")], render.coalescedJoins)
        text.sample(MetricNames.coalesced, [("stage", "fetch")], fetches.coalescedJoins)
        text.family(
            MetricNames.fetchesCancelled, .counter, "Fetches cancelled because every request waiting for them left.")
        text.sample(MetricNames.fetchesCancelled, render.fetchCancellations)
        text.family(MetricNames.clientsGone, .counter, "Requests whose client left before the thumbnail was ready.")
        text.sample(MetricNames.clientsGone, render.waitersLeft)
    }

    func writeRenders(to text: inout PrometheusText) {
        let render = coordinator.counters
        let depth = renderPool.queueDepth
        text.family(MetricNames.renders, .counter, "Renders finished on a render thread, by result.")
        text.sample(MetricNames.renders, [("result", "success")], render.rendersFinished - render.renderFailures)
        text.sample(MetricNames.renders, [("result", "failure")], render.renderFailures)
        text.family(
            MetricNames.rendersUnattended, .counter, "Renders finished after every waiter left (kept for the cache).")
        text.sample(MetricNames.rendersUnattended, render.rendersUnattended)
        text.family(
            MetricNames.thumborSkippedFilters, .counter,
            "Filters skipped in thumbor URLs as thumbor skips them (unknown, or arguments not matching its pattern).")
        text.sample(MetricNames.thumborSkippedFilters, render.thumborFiltersSkipped)
        if let detections = coordinator.detectionCounters {
            text.family(
                MetricNames.faceDetections, .counter,
                "Per-source face and feature detections: run, answered from the kept record, waited for, failed.")
            text.sample(MetricNames.faceDetections, [("result", "made")], detections.detections)
            text.sample(MetricNames.faceDetections, [("result", "kept")], detections.hits)
            text.sample(MetricNames.faceDetections, [("result", "joined")], detections.joined)
            text.sample(MetricNames.faceDetections, [("result", "failed")], detections.failures)
        }
        if let analyses = coordinator.analysisCounters {
            text.family(
                MetricNames.sourceAnalyses, .counter,
                "Per-source analyses (placeholders, colours, hashes) by result: made, kept (found for the same bytes), "
                    + "joined (waited for another's), failed.")
            text.sample(MetricNames.sourceAnalyses, [("result", "made")], analyses.made)
            text.sample(MetricNames.sourceAnalyses, [("result", "kept")], analyses.kept)
            text.sample(MetricNames.sourceAnalyses, [("result", "joined")], analyses.joined)
            text.sample(MetricNames.sourceAnalyses, [("result", "failed")], analyses.failed)
        }
        text.family(
            MetricNames.renderDuration, .histogram, "Time of one render on a render thread (decode, resize, encode).")
        let durations = coordinator.renderDurations
        text.histogram(
            MetricNames.renderDuration, boundsNanoseconds: durations.boundsNanoseconds, durations.snapshot(0))
        text.family(MetricNames.renderQueueDepth, .gauge, "Render jobs waiting for a render thread, by priority.")
        text.sample(MetricNames.renderQueueDepth, [("priority", "interactive")], depth.interactive)
        text.sample(MetricNames.renderQueueDepth, [("priority", "background")], depth.background)
        text.family(MetricNames.renderRunning, .gauge, "Render jobs running now.")
        text.sample(MetricNames.renderRunning, renderPool.runningCount)
        text.family(
            MetricNames.renderQueueRejections, .counter,
            "Renders refused because the render queue was full (answered 503).")
        text.sample(MetricNames.renderQueueRejections, render.renderQueueRejections)
    }

    /// `originNotFound` → `origin_not_found`, `invalidURL` → `invalid_url`: label values in the style of metric
    /// names.
    static func snakeCase(_ name: String) -> String {
        var result = ""
        var previousIsLower = false
        for character in name {
            if character.isUppercase {
                if previousIsLower { result += "_" }
                result += character.lowercased()
                previousIsLower = false
            } else {
                result.append(character)
                previousIsLower = true
            }
        }
        return result
    }

    func writePrefetch(to text: inout PrometheusText) {
        let totals = prefetch.totals
        text.family(MetricNames.prefetchJobs, .counter, "Prefetch jobs accepted (POST /prefetch answered 202).")
        text.sample(MetricNames.prefetchJobs, [], totals.jobs)
        text.family(MetricNames.prefetchActiveJobs, .gauge, "Prefetch jobs with items not finished.")
        text.sample(MetricNames.prefetchActiveJobs, [], totals.activeJobs)
        text.family(
            MetricNames.prefetchItems, .counter,
            "Prefetch items by result: accepted (in accepted jobs), done (in the cache), failed, cancelled (DELETE).")
        for (result, count) in [
            ("accepted", totals.itemsAccepted), ("done", totals.itemsDone), ("failed", totals.itemsFailed),
            ("cancelled", totals.itemsCancelled),
        ] {
            text.sample(MetricNames.prefetchItems, [("result", result)], count)
        }
        text.family(MetricNames.prefetchItemsInFlight, .gauge, "Prefetch items being fetched or rendered now.")
        text.sample(MetricNames.prefetchItemsInFlight, [], totals.itemsInFlight)
    }
}
