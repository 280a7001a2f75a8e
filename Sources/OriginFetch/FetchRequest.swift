// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// What to fetch: a source URL and how urgently.
///
/// Only a URL: the API has no way to pass client cookies or Authorization, so none can be
/// forwarded to an origin.
package struct FetchRequest: Sendable, Hashable {
    /// An absolute http(s) URL. Scheme and host case, a default port and a fragment do not
    /// matter (see ``SourceURL``).
    package var url: String
    /// The queue class when the origin's per-host cap is reached.
    package var priority: FetchPriority

    /// A request for `url`, interactive unless told otherwise.
    package init(url: String, priority: FetchPriority = .interactive) {
        self.url = url
        self.priority = priority
    }
}

/// Order in a host's queue when `maxPerHost` transfers already run: every waiting interactive
/// transfer starts before any waiting background one; FIFO within a class.
package enum FetchPriority: Int, Sendable, Hashable, CaseIterable {
    /// A client is waiting for the answer.
    case interactive
    /// Prefetch, cache revalidation: nobody is blocked on it.
    case background
}

/// Validators from a cached copy, sent as If-None-Match / If-Modified-Since.
package struct Validators: Sendable, Hashable {
    /// The cached ETag, exactly as the origin sent it (quotes and `W/` included).
    package var etag: String?
    /// The cached Last-Modified value, exactly as the origin sent it.
    package var lastModified: String?

    /// Validators; at least one should be set for the request to be conditional.
    package init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// The origin's caching and validator headers, raw, for the cache to interpret (issue 4).
/// A repeated header (two Cache-Control lines) is joined with ", " as HTTP allows.
package struct FreshnessHeaders: Sendable, Hashable {
    /// `Cache-Control`.
    package var cacheControl: String?
    /// `Expires`.
    package var expires: String?
    /// `Date`.
    package var date: String?
    /// `Age`.
    package var age: String?
    /// `ETag`.
    package var etag: String?
    /// `Last-Modified`.
    package var lastModified: String?

    /// Headers; all absent by default.
    package init(
        cacheControl: String? = nil, expires: String? = nil, date: String? = nil, age: String? = nil,
        etag: String? = nil, lastModified: String? = nil
    ) {
        self.cacheControl = cacheControl
        self.expires = expires
        self.date = date
        self.age = age
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// A fetched source image: immutable and shared. Every waiter of a coalesced fetch receives
/// the same instance, so the body is stored once however many wait for it.
package final class FetchedSource: Sendable {
    /// The body bytes, complete (never more than `maxSourceBytes`).
    package let body: [UInt8]
    /// The normalised URL that was asked for (the coalescing key).
    package let requestedURL: String
    /// The URL that answered, after redirects.
    package let finalURL: String
    /// The origin's status (2xx).
    package let status: Int
    /// The origin's Content-Type, as sent (not trusted: the renderer sniffs the bytes).
    package let contentType: String?
    /// Freshness and validator headers of the final response.
    package let headers: FreshnessHeaders
    /// An object store's `x-amz-meta-<name>` headers by lower-case `<name>` (empty for an HTTP origin).
    package let metadata: [String: String]

    /// A source; the fetcher builds these, tests may too.
    package init(
        body: [UInt8], requestedURL: String, finalURL: String, status: Int, contentType: String?,
        headers: FreshnessHeaders, metadata: [String: String] = [:]
    ) {
        self.metadata = metadata
        self.body = body
        self.requestedURL = requestedURL
        self.finalURL = finalURL
        self.status = status
        self.contentType = contentType
        self.headers = headers
    }
}

/// The answer to a conditional fetch (``OriginFetcher/revalidate(_:validators:completion:)``).
package enum Revalidation: Sendable {
    /// The origin answered 304: the cached copy is still good; these are the 304's headers
    /// (which refresh its freshness).
    case notModified(FreshnessHeaders)
    /// The origin sent a new body.
    case modified(FetchedSource)
}

/// A waiter's handle on a fetch, for ``OriginFetcher/cancel(_:)``. Cheap; any thread.
package final class FetchTicket: Sendable, Hashable {
    /// Unique per fetcher.
    let id: UInt64
    /// `waiting` until either delivery or cancel wins the race, exactly once.
    private let state = Atomic<UInt8>(State.waiting)

    private enum State {
        static let waiting: UInt8 = 0
        static let delivered: UInt8 = 1
        static let cancelled: UInt8 = 2
    }

    init(id: UInt64) { self.id = id }

    /// Claims the ticket for delivery; false when it was cancelled (or already delivered).
    func claimForDelivery() -> Bool {
        state.compareExchange(expected: State.waiting, desired: State.delivered, ordering: .acquiringAndReleasing)
            .exchanged
    }

    /// Claims the ticket for cancellation; false when the result was already delivered.
    func claimForCancellation() -> Bool {
        state.compareExchange(expected: State.waiting, desired: State.cancelled, ordering: .acquiringAndReleasing)
            .exchanged
    }

    /// Whether ``OriginFetcher/cancel(_:)`` won for this ticket.
    var isCancelled: Bool { state.load(ordering: .acquiring) == State.cancelled }

    /// Tickets are equal when they are the same ticket.
    package static func == (lhs: FetchTicket, rhs: FetchTicket) -> Bool { lhs === rhs }

    /// Hashes the identity.
    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
