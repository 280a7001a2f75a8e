// SPDX-License-Identifier: Apache-2.0

import Caching
import Synchronization
import ThumbdTestSupport

/// Each benchmark prints one line: name, figure, unit. Figures are wall-clock on this machine.
enum Benchmarks {
    static func report(_ name: String, _ value: Double, _ unit: String) {
        let rounded = (value * 10).rounded() / 10
        print(name + String(repeating: " ", count: max(1, 62 - name.count)) + "\(rounded) \(unit)")
    }

    static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }

    // MARK: - Memory

    /// Runs `body(thread)` `operations` times on each of `threads` threads; returns the mean CPU
    /// nanoseconds per operation per thread (lock waits that spin count, sleeps do not).
    static func cpuNanosecondsPerOp(
        threads: Int,
        operations: Int,
        _ body: @escaping @Sendable (Int, Int) -> Void
    ) -> Double {
        let total = Mutex<Double>(0)
        runOnThreads(threads) { t in
            let start = threadCPUNanoseconds()
            for i in 0..<operations { body(t, i) }
            let spent = threadCPUNanoseconds() - start
            total.withLock { $0 += spent }
        }
        return total.withLock { $0 } / Double(threads * operations)
    }

    static func memory() throws {
        let payload = [UInt8](repeating: 1, count: 16)
        let keys = (0..<10_000).map {
            CacheKey("https://images.example.com/photos/\($0).jpg|w=256|h=256|fit=cover|fmt=webp")
        }
        let groups = (0..<10_000).map { CacheGroup("https://images.example.com/photos/\($0).jpg") }
        let cache = try MemoryCache<CacheKey, CacheGroup, [UInt8]>(configuration: .init())
        for i in keys.indices { cache.insert(payload, forKey: keys[i], cost: 20_000, group: groups[i]) }

        let gets = 2_000_000
        // Hot set: 50 keys (the HOT benchmark serves 50 warm thumbnails); then all 10,000 keys
        // in a scattered order, where most of the cost is cache misses on keys and buckets.
        for (label, span) in [("50 hot keys", 50), ("10,000 keys scattered", 10_000)] {
            for threads in [1, 2] {
                let ns = cpuNanosecondsPerOp(threads: threads, operations: gets) { t, i in
                    precondition(cache.value(forKey: keys[(i &* 7 &+ t) % span]) != nil)
                }
                report("memory get (hit), \(label), \(threads) thread(s), CPU per op", ns, "ns")
            }
        }

        // Set with churn: 20,000 distinct keys into a cache that holds 10,000, so most inserts evict.
        let churnKeys = (0..<20_000).map { CacheKey("https://images.example.com/churn/\($0).jpg|w=128") }
        let small = try MemoryCache<CacheKey, CacheGroup, [UInt8]>(
            configuration: .init(maxBytes: 10_000 * 1000, maxEntries: 10_000)
        )
        let sets = 1_000_000
        for threads in [1, 2] {
            let ns = cpuNanosecondsPerOp(threads: threads, operations: sets) { t, i in
                small.insert(
                    payload,
                    forKey: churnKeys[(i &* 13 &+ t * 5) % churnKeys.count],
                    cost: 1000,
                    group: groups[i % groups.count]
                )
            }
            report("memory set (evicting), \(threads) thread(s), CPU per op", ns, "ns")
        }
        let stats = small.statistics
        precondition(stats.peakBytes <= stats.maxBytes && stats.peakEntries <= stats.maxEntries)

        // String keys hash the whole URL on every lookup; CacheKey hashes 8 bytes.
        let stringKeys = keys.map(\.variant)
        let byString = try MemoryCache<String, String, [UInt8]>(configuration: .init())
        for key in stringKeys { byString.insert(payload, forKey: key, cost: 20_000) }
        let ns = cpuNanosecondsPerOp(threads: 1, operations: gets) { _, i in
            precondition(byString.value(forKey: stringKeys[(i &* 7) % stringKeys.count]) != nil)
        }
        report("memory get (hit), String key (for comparison), CPU per op", ns, "ns")
    }

    /// Hits only, one thread, for profiling (`perf record … CachingBenchmark /tmp memget`).
    static func memoryGetOnly() throws {
        let payload = [UInt8](repeating: 1, count: 16)
        let keys = (0..<10_000).map {
            CacheKey("https://images.example.com/photos/\($0).jpg|w=256|h=256|fit=cover|fmt=webp")
        }
        let cache = try MemoryCache<CacheKey, CacheGroup, [UInt8]>(configuration: .init())
        for key in keys { cache.insert(payload, forKey: key, cost: 20_000, group: CacheGroup(key.variant)) }
        let ns = cpuNanosecondsPerOp(threads: 1, operations: 20_000_000) { _, i in
            precondition(cache.value(forKey: keys[(i &* 7) % keys.count]) != nil)
        }
        report("memory get (hit), 1 thread, CPU per op", ns, "ns")
    }

    // MARK: - Checksum

    static func checksum() {
        let buffer = [UInt8](unsafeUninitializedCapacity: 1 << 20) { bytes, count in
            for i in 0..<(1 << 20) { bytes[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
            count = 1 << 20
        }
        let rounds = 2000
        let clock = ContinuousClock()
        var sink: UInt64 = 0
        let elapsed = clock.measure {
            for _ in 0..<rounds { sink ^= XXHash64.hash(buffer) }
        }
        precondition(sink != 1)
        report("XXH64 over 1 MiB", Double(rounds) / (nanoseconds(elapsed) / 1e9) / 1024, "GiB/s")
    }
}
