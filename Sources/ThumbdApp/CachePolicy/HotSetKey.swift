// SPDX-License-Identifier: Apache-2.0
import Caching
import Glibc

/// What identifies a request to a hot-set table: the request's own bytes, its raw query and its one `Accept`
/// value as sent, so that a hit makes no `String` and no alias key (~740 instructions of a hot hit, measured).
/// Two requests with the same bytes parse to the same variant; requests whose bytes differ but mean the same
/// (percent-encoding, invalid UTF-8 repaired) are different keys that each get their own copy.
struct HotSetKey {
    let query: [UInt8]
    /// `nil` when the request sent no `Accept`; the empty array when it sent an empty one.
    let accept: [UInt8]?
    let hash: UInt64

    /// A key holding copies of `query` (`nil`: no `?`, the same as empty) and `accept`.
    init(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?) {
        self.query = query.map { [UInt8]($0) } ?? []
        self.accept = accept.map { [UInt8]($0) }
        hash = Self.hash(query: query, accept: accept)
    }

    @inline(__always)
    static func hash(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?) -> UInt64 {
        let queryHash = XXHash64.hash(query ?? UnsafeRawBufferPointer(start: nil, count: 0))
        guard let accept else { return queryHash }
        return XXHash64.hash(accept, seed: queryHash &+ 1)
    }

    /// Calls `body` with the key's bytes, as a request's are read in place.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer?, UnsafeRawBufferPointer?) -> Result) -> Result {
        query.withUnsafeBytes { query in
            guard let accept else { return body(query, nil) }
            return accept.withUnsafeBytes { body(query, $0) }
        }
    }

    /// Whether the request bytes are this key's.
    @inline(__always)
    func matches(query: UnsafeRawBufferPointer?, accept: UnsafeRawBufferPointer?) -> Bool {
        guard Self.equal(self.query, query ?? UnsafeRawBufferPointer(start: nil, count: 0)) else { return false }
        switch (self.accept, accept) {
        case (nil, nil): return true
        case (let stored?, let sent?): return Self.equal(stored, sent)
        default: return false
        }
    }

    @inline(__always)
    private static func equal(_ stored: [UInt8], _ sent: UnsafeRawBufferPointer) -> Bool {
        stored.count == sent.count
            && stored.withUnsafeBytes { sent.count == 0 || memcmp($0.baseAddress!, sent.baseAddress!, sent.count) == 0 }
    }
}
