// SPDX-License-Identifier: Apache-2.0

/// A connection's input bytes: one growable allocation, read into at the end and parsed from the
/// front by index. Compacted (not reallocated) when the consumed prefix is large, so steady-state
/// keep-alive traffic reuses the same memory for every request.
struct ReadBuffer: ~Copyable {
    private var storage: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private var start = 0
    private var end = 0
    let maxCapacity: Int

    init(initialCapacity: Int, maxCapacity: Int) {
        capacity = initialCapacity
        self.maxCapacity = max(initialCapacity, maxCapacity)
        storage = .allocate(byteCount: initialCapacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    /// Unconsumed bytes.
    var count: Int { end - start }

    /// Makes room for a read of at least `minimum` bytes if possible: compacts, then grows up to
    /// `maxCapacity`. Returns the writable region (possibly empty when full at the maximum).
    mutating func prepareForRead(minimum: Int) -> UnsafeMutableRawBufferPointer {
        if start == end {
            start = 0
            end = 0
        }
        if capacity - end < minimum && start > 0 {
            (storage).copyMemory(from: storage + start, byteCount: end - start)
            end -= start
            start = 0
        }
        if capacity - end < minimum && capacity < maxCapacity {
            let newCapacity = min(maxCapacity, max(capacity * 2, end + minimum))
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 16)
            bigger.copyMemory(from: storage + start, byteCount: end - start)
            storage.deallocate()
            storage = bigger
            end -= start
            start = 0
            capacity = newCapacity
        }
        return UnsafeMutableRawBufferPointer(start: storage + end, count: capacity - end)
    }

    /// Records that `count` bytes were read into the region from ``prepareForRead(minimum:)``.
    mutating func didRead(_ count: Int) {
        end += count
    }

    /// Drops `count` parsed bytes from the front.
    mutating func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    /// The unconsumed bytes, valid only inside `body`.
    func withUnreadBytes<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        body(UnsafeRawBufferPointer(start: storage + start, count: end - start))
    }
}
