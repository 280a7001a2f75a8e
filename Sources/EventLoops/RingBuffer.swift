// SPDX-License-Identifier: Apache-2.0

/// A growable FIFO queue over one allocation, indexed from the front; single owner (`~Copyable`).
///
/// Used where a `Deque` would do (task queues, per-connection pipelines) without pulling
/// swift-collections into the lowest module. Removing from the front is O(1) and never shrinks
/// the storage, so a queue that is filled and drained in steady state stops allocating.
///
/// Everything is `@inlinable` and elements are reached through addressors, not a `_modify`
/// coroutine, so code in other modules is specialised for its element type: HTTP1's per-request
/// pipeline would otherwise pay for generic metadata lookups on every access (seen in profiles).
///
/// `public`, against the package-only rule, on purpose: with Swift 6.3 the optimizer does not
/// inline or specialise `@inlinable package` members in other modules (verified with a two-module
/// package: `@inlinable package` generic methods stay generic calls, `@inlinable public` ones are
/// specialised and inlined). Nothing outside this package can import it anyway.
public struct RingBuffer<Element>: ~Copyable {
    @usableFromInline var buffer: UnsafeMutablePointer<Element>
    @usableFromInline var capacity: Int
    @usableFromInline var head = 0
    @usableFromInline var storedCount = 0

    /// Number of elements in the queue.
    @inlinable
    public var count: Int { storedCount }

    /// Creates an empty queue with room for `initialCapacity` elements before it grows.
    @inlinable
    public init(initialCapacity: Int = 16) {
        capacity = Swift.max(1, initialCapacity)
        buffer = .allocate(capacity: capacity)
    }

    @inlinable
    deinit {
        for offset in 0..<count { (buffer + slot(offset)).deinitialize(count: 1) }
        buffer.deallocate()
    }

    /// `true` when the queue holds nothing.
    @inlinable
    public var isEmpty: Bool { count == 0 }

    /// The oldest element, if any.
    @inlinable
    public var first: Element? { count == 0 ? nil : buffer[head] }

    @inlinable
    func slot(_ offset: Int) -> Int {
        let index = head + offset
        return index < capacity ? index : index - capacity
    }

    /// Appends `element` at the back, doubling the storage when full.
    @inlinable @inline(__always)
    public mutating func append(_ element: consuming Element) {
        if count == capacity { grow() }
        (buffer + slot(count)).initialize(to: element)
        storedCount += 1
    }

    /// Removes and returns the oldest element, or `nil` when empty.
    @inlinable
    public mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = (buffer + head).move()
        head = slot(1)
        storedCount -= 1
        return element
    }

    /// Removes and returns the newest element, or `nil` when empty.
    @inlinable
    public mutating func popLast() -> Element? {
        guard count > 0 else { return nil }
        storedCount -= 1
        return (buffer + slot(count)).move()
    }

    /// Removes every element, keeping the storage.
    @inlinable
    public mutating func removeAll() {
        while popFirst() != nil {}
        head = 0
    }

    /// The element `offset` places behind the front (0 is ``first``).
    @inlinable
    public subscript(offset: Int) -> Element {
        unsafeAddress {
            precondition(offset >= 0 && offset < count, "RingBuffer index out of range")
            return UnsafePointer(buffer + slot(offset))
        }
        unsafeMutableAddress {
            precondition(offset >= 0 && offset < count, "RingBuffer index out of range")
            return buffer + slot(offset)
        }
    }

    @inlinable @inline(never)
    mutating func grow() {
        let newCapacity = capacity * 2
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        for offset in 0..<count {
            (bigger + offset).moveInitialize(from: buffer + slot(offset), count: 1)
        }
        buffer.deallocate()
        buffer = bigger
        capacity = newCapacity
        head = 0
    }
}
