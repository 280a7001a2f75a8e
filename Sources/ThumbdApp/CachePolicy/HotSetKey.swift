// SPDX-License-Identifier: Apache-2.0
import Caching
import Glibc

/// What identifies a request to a hot-set table: the request's own bytes, its raw target (path and query) and its
/// one `Accept` value as sent (``RequestIdentity`` as bytes), so that a hit makes no `String` and no alias key
/// (~740 instructions of a hot hit, measured). Two requests with the same bytes reach the same route and parse to
/// the same variant, whatever their URL form; requests whose bytes differ but mean the same (percent-encoding,
/// invalid UTF-8 repaired) are different keys that each get their own copy.
struct HotSetKey {
    let target: [UInt8]
    /// `nil` when the request sent no `Accept`; the empty array when it sent an empty one.
    let accept: [UInt8]?
    let hash: UInt64

    /// A key holding copies of `target` and `accept`.
    init(target: UnsafeRawBufferPointer, accept: UnsafeRawBufferPointer?) {
        self.target = [UInt8](target)
        self.accept = accept.map { [UInt8]($0) }
        hash = Self.hash(target: target, accept: accept)
    }

    @inline(__always)
    static func hash(target: UnsafeRawBufferPointer, accept: UnsafeRawBufferPointer?) -> UInt64 {
        let targetHash = XXHash64.hash(target)
        guard let accept else { return targetHash }
        return XXHash64.hash(accept, seed: targetHash &+ 1)
    }

    /// Calls `body` with the key's bytes, as a request's are read in place.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> Result) -> Result {
        target.withUnsafeBytes { target in
            guard let accept else { return body(target, nil) }
            return accept.withUnsafeBytes { body(target, $0) }
        }
    }

    /// Whether the request bytes are this key's.
    @inline(__always)
    func matches(target: UnsafeRawBufferPointer, accept: UnsafeRawBufferPointer?) -> Bool {
        guard Self.equal(self.target, target) else { return false }
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
