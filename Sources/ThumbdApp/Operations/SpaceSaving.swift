// SPDX-License-Identifier: Apache-2.0

/// Space-Saving top-k (Metwally et al.): at most `capacity` counters; a new name replaces the smallest and
/// inherits its count, so any name seen more than total/capacity times is kept. Bounded memory whatever
/// the clients send.
struct SpaceSaving: Sendable {
    private(set) var counts: [String: Int] = [:]
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        counts.reserveCapacity(capacity)
    }

    mutating func add(_ name: String, weight: Int) {
        if let count = counts[name] {
            counts[name] = count + weight
        } else if counts.count < capacity {
            counts[name] = weight
        } else if let smallest = counts.min(by: { $0.value < $1.value }) {
            counts[smallest.key] = nil
            counts[name] = smallest.value + weight
        }
    }

    mutating func decay(halvings: Int) {
        for (name, count) in counts {
            let halved = count >> halvings
            counts[name] = halved == 0 ? nil : halved
        }
    }

    /// The `count` largest, largest first (ties by name, so the order is stable).
    func top(_ count: Int) -> [ActivityRecorder.SourceCount] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(count).map {
            ActivityRecorder.SourceCount(name: $0.key, requests: $0.value)
        }
    }
}
