// SPDX-License-Identifier: Apache-2.0

/// Every metric name thumbd exposes, declared once (STYLE.md §3); docs/metrics.md describes each.
/// Counters end in `_total`, units are in the name (`_seconds`, `_bytes`).
package enum MetricNames {
    // MARK: HTTP
    /// Counter, labels `route`, `status`.
    package static let httpRequests = "thumbd_http_requests_total"
    /// Histogram, label `route`.
    package static let httpRequestDuration = "thumbd_http_request_duration_seconds"
    /// Gauge, label `listener` (`main`, `metrics`).
    package static let httpOpenConnections = "thumbd_http_open_connections"

    // MARK: Cache
    /// Counter, label `outcome` (the X-Cache value of /thumb responses).
    package static let cacheOutcomes = "thumbd_cache_outcomes_total"
    /// Counter, label `tier`.
    package static let cacheHits = "thumbd_cache_hits_total"
    /// Counter, label `tier`.
    package static let cacheMisses = "thumbd_cache_misses_total"
    /// Gauge, label `tier`.
    package static let cacheBytes = "thumbd_cache_bytes"
    /// Gauge, label `tier`.
    package static let cacheMaxBytes = "thumbd_cache_max_bytes"
    /// Gauge, label `tier`.
    package static let cacheEntries = "thumbd_cache_entries"
    /// Counter, label `tier`.
    package static let cacheEvictions = "thumbd_cache_evictions_total"
    /// Counter, labels `tier`, `reason` (`corrupt`, `missing`).
    package static let cacheBlobsDropped = "thumbd_cache_blobs_dropped_total"
    /// Counter: disk stores dropped because the writer's queue was full.
    package static let cacheStoresDropped = "thumbd_cache_stores_dropped_total"
    /// Counter: disk writer operations that failed.
    package static let cacheWriteFailures = "thumbd_cache_write_failures_total"
    /// Counter: revalidations of expired entries started.
    package static let cacheRevalidations = "thumbd_cache_revalidations_total"
    /// Counter, labels `kind` (`thumbnail`, `source`), `result`: shared-tier lookups.
    package static let sharedLookups = "thumbd_shared_lookups_total"
    /// Counter, label `result`: shared-tier writes.
    package static let sharedPuts = "thumbd_shared_puts_total"
    /// Gauge: shared-tier writes under way.
    package static let sharedPutsInFlight = "thumbd_shared_puts_in_flight"
    /// Gauge: 1 while the shared tier's breaker skips it.
    package static let sharedBreakerOpen = "thumbd_shared_breaker_open"
    /// Counter: times the shared tier's breaker opened.
    package static let sharedBreakerOpenings = "thumbd_shared_breaker_openings_total"
    package static let purges = "thumbd_purges_total"
    package static let purgedObjects = "thumbd_purged_objects_total"
    package static let purgeSharedErrors = "thumbd_purge_shared_errors_total"
    package static let purgePushes = "thumbd_purge_pushes_total"
    package static let sourceChecks = "thumbd_source_checks_total"
    package static let purgePushedTags = "thumbd_purge_pushed_tags_total"
    package static let purgePushRetries = "thumbd_purge_push_retries_total"
    package static let purgePushFailedTags = "thumbd_purge_push_failed_tags_total"
    package static let purgePushDroppedTags = "thumbd_purge_push_dropped_tags_total"
    package static let purgePushPendingTags = "thumbd_purge_push_pending_tags"
    /// Counter: decoder sandbox jobs, by result (`ok`, `crashed`, `timeout`, `refused`).
    package static let sandboxJobs = "thumbd_sandbox_jobs_total"
    /// Counter: decoder sandbox helpers started (the first ones, replacements after N jobs or a failure, extras).
    package static let sandboxHelpersStarted = "thumbd_sandbox_helpers_started_total"

    // MARK: Origin
    /// Counter: transfers handed to libcurl.
    package static let originFetchesStarted = "thumbd_origin_fetches_started_total"
    /// Counter, label `result` (`success`, `not_modified`, `error`, `abandoned`).
    package static let originFetches = "thumbd_origin_fetches_total"
    /// Counter, label `class` (a `FetchError` kind).
    package static let originErrors = "thumbd_origin_errors_total"
    /// Counter: connections the SSRF guard refused.
    package static let originSSRFRefusals = "thumbd_origin_ssrf_refusals_total"
    /// Counter: redirects followed.
    package static let originRedirects = "thumbd_origin_redirects_total"
    /// Gauge: transfers running.
    package static let originFetchesInFlight = "thumbd_origin_fetches_in_flight"
    /// Gauge: transfers waiting for a per-host slot.
    package static let originFetchesQueued = "thumbd_origin_fetches_queued"
    /// Counter, label `stage` (`render`, `fetch`).
    package static let coalesced = "thumbd_coalesced_requests_total"
    /// Counter: fetches cancelled because every waiter left.
    package static let fetchesCancelled = "thumbd_origin_fetches_cancelled_total"
    /// Counter: requests whose client left before the answer.
    package static let clientsGone = "thumbd_clients_gone_total"

    // MARK: Render
    /// Histogram.
    package static let renderDuration = "thumbd_render_duration_seconds"
    /// Counter, label `result` (`success`, `failure`).
    package static let renders = "thumbd_renders_total"
    /// Counter: renders finished with no waiter left.
    package static let rendersUnattended = "thumbd_renders_unattended_total"
    /// Counter, label `result` (`made`, `kept`, `joined`, `failed`): the per-source face and feature detections.
    package static let faceDetections = "thumbd_face_detections_total"
    package static let sourceAnalyses = "thumbd_source_analyses_total"
    /// Counter: filters thumbor itself would skip, skipped in thumbor URLs (`thumbor.skipped_filters: skip`).
    package static let thumborSkippedFilters = "thumbd_thumbor_skipped_filters_total"
    /// Gauge, label `priority`.
    package static let renderQueueDepth = "thumbd_render_queue_depth"
    /// Gauge: render jobs running.
    package static let renderRunning = "thumbd_render_running"
    /// Counter: renders refused because the queue was full (answered 503).
    package static let renderQueueRejections = "thumbd_render_queue_rejections_total"

    // MARK: Prefetch

    /// Counter: prefetch jobs accepted.
    package static let prefetchJobs = "thumbd_prefetch_jobs_total"
    /// Gauge: prefetch jobs not finished.
    package static let prefetchActiveJobs = "thumbd_prefetch_active_jobs"
    /// Counter: prefetch items, by `result` (accepted, done, failed, cancelled).
    package static let prefetchItems = "thumbd_prefetch_items_total"
    /// Gauge: prefetch items under way.
    package static let prefetchItemsInFlight = "thumbd_prefetch_items_in_flight"

    // MARK: Process

    /// Gauge.
    package static let processResidentMemory = "thumbd_process_resident_memory_bytes"
    /// Counter.
    package static let processCPU = "thumbd_process_cpu_seconds_total"
    /// Gauge.
    package static let processStartTime = "thumbd_process_start_time_seconds"
}
