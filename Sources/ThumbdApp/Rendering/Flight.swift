// SPDX-License-Identifier: Apache-2.0

/// The work under way for one variant key: a namespace for its ``StateMachine`` and the words it shares with
/// ``RenderCoordinator``, which keeps one machine per key and performs what the machines ask.
enum Flight {
    /// The steps that wait for an answer from another thread (or another node), each begun by an action and ended
    /// by an event; named in events so that an answer can never be taken for another step's.
    enum Step: Sendable, Hashable {
        /// The shared tier's copy of the thumbnail.
        case sharedThumbnail
        /// This node's source cache (memory, then disk on a disk-io thread).
        case sourceCache
        /// The shared tier's copy of the original.
        case sharedSource
        /// The origin.
        case origin
        /// The plan's watermark and frame images (named: at once; a URL: through the fetcher).
        case watermark
    }

    /// Which of the optional steps this node has, fixed for a flight when it starts.
    struct Route: Sendable, Hashable {
        /// Whether there is a shared tier to ask for the thumbnail.
        var sharedThumbnails: Bool
        /// Whether the shared tier keeps originals too (asked after the source cache).
        var sharedSources: Bool
        /// Whether there is a source cache to ask before the origin.
        var sourceCache: Bool
        /// Whether the plan has a watermark or a frame to fetch after the source.
        var watermark: Bool
    }

    /// Whether and how to write to the shared tier.
    enum SharedWrite: Sendable, Hashable {
        /// Not at all: no tier, it failed, or the value came from it.
        case none
        /// Unless another node stored it first (`If-None-Match: *`).
        case ifAbsent
        /// Over what is there (a corrupt or expired object).
        case replace
    }
}
