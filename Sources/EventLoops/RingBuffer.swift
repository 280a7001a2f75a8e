// SPDX-License-Identifier: Apache-2.0

/// A growable FIFO queue over one contiguous allocation, indexed from the front.
///
/// Used where a `Deque` would do (task queues, per-connection pipelines) without pulling
/// swift-collections into the lowest module. Removing from the front is O(1) and never shrinks
/// the storage, so a queue that is filled and drained in steady state stops allocating.
package struct RingBuffer<Element> {
    private var storage: ContiguousArray<Element?>
    private var head = 0
    /// Number of elements in the queue.
    package private(set) var count = 0

    /// Creates an empty queue with room for `initialCapacity` elements before it grows.
    package init(initialCapacity: Int = 16) {
        storage = ContiguousArray(repeating: nil, count: Swift.max(1, initialCapacity))
    }

    /// `true` when the queue holds nothing.
    package var isEmpty: Bool { count == 0 }

    /// The oldest element, if any.
    package var first: Element? { count == 0 ? nil : storage[head] }

    /// Appends `element` at the back, doubling the storage when full.
    package mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    /// Removes and returns the oldest element, or `nil` when empty.
    package mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    /// Removes and returns the newest element, or `nil` when empty.
    package mutating func popLast() -> Element? {
        guard count > 0 else { return nil }
        let index = (head + count - 1) % storage.count
        let element = storage[index]
        storage[index] = nil
        count -= 1
        return element
    }

    /// Removes every element, keeping the storage.
    package mutating func removeAll() {
        while popFirst() != nil {}
        head = 0
    }

    /// The element `offset` places behind the front (0 is ``first``).
    package subscript(offset: Int) -> Element {
        get {
            precondition(offset >= 0 && offset < count, "RingBuffer index out of range")
            return storage[(head + offset) % storage.count]!
        }
        set {
            precondition(offset >= 0 && offset < count, "RingBuffer index out of range")
            storage[(head + offset) % storage.count] = newValue
        }
    }

    private mutating func grow() {
        var bigger = ContiguousArray<Element?>(repeating: nil, count: storage.count * 2)
        for i in 0..<count {
            bigger[i] = storage[(head + i) % storage.count]
        }
        storage = bigger
        head = 0
    }
}
