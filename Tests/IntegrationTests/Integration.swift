// SPDX-License-Identifier: Apache-2.0
import Testing
import ThumbdTestSupport

/// The parent of every integration suite: they run one test at a time.
///
/// Each test runs a whole service; some keep both cores busy for a second or more (4096-pixel renders) and
/// some measure time (`/health` under load, cancellation reaching the origin). One at a time, they neither
/// slow each other down nor pile CPU load onto the other targets' timing tests, and the whole suite still
/// takes under ten seconds. (They also hold no cooperative thread while they wait: see `blocking(_:)`.)
///
/// Each runs on a thread of its own (`.ownThread`): the other targets' synchronous tests can hold the whole
/// cooperative pool for seconds, and a test that waits there for its turn meanwhile lets its service's clocks
/// (fetch timeouts, freshness lifetimes, `stale_if_error`) run on without it.
@Suite(.serialized, .ownThread) enum Integration {}
