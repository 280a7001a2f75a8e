// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Synchronization
import ThumbdSettings

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension AccessLog {
    /// The buffers, counters and writer thread behind an `AccessLog`.
    ///
    /// Producers (event loops) lock only their shard, append in place, and at half-full ask the writer to
    /// wake. The writer swaps each shard's buffer with an empty spare of the same capacity under the shard
    /// lock (O(1), no allocation) and writes the full one outside it, so a producer waits at most for a swap.
    ///
    /// ThreadSanitizer on Linux does not see `Synchronization.Mutex` once it is contended (the kernel takes
    /// the futex), so `swift test --sanitize=thread` reports false races here. With an `NSLock`-based lock
    /// substituted for `Mutex`, the access-log tests ran clean under TSan (release build).
    final class Core: Sendable {
        /// One buffer per shard; a thread always uses the shard its identity hashes to.
        private let shards: [Shard]
        /// The writer's empty buffers, one per shard; the lock also serialises writers (thread and `flush`).
        private let spares: Mutex<[[UInt8]]>
        private let wake = WakeSignal()
        private let writerThread = Mutex<pthread_t?>(nil)
        private let stopping = Atomic<Bool>(false)
        let dropped = Atomic<Int>(0)
        let written = Atomic<Int>(0)

        let format: Settings.Log.Format
        let fileDescriptor: Int32
        let bufferBytes: Int
        let flushInterval: Duration

        init(
            format: Settings.Log.Format,
            fileDescriptor: Int32,
            shardCount: Int,
            bufferBytes: Int,
            flushInterval: Duration
        ) {
            self.format = format
            self.fileDescriptor = fileDescriptor
            self.bufferBytes = bufferBytes
            self.flushInterval = flushInterval
            shards = (0..<shardCount).map { _ in Shard(capacity: bufferBytes) }
            spares = Mutex(
                (0..<shardCount).map { _ in
                    var spare: [UInt8] = []
                    spare.reserveCapacity(bufferBytes)
                    return spare
                }
            )
        }

        // MARK: Producers

        func record(method: String, path: String, status: Int, bytes: Int, duration: Duration, note: String) {
            let bound = Self.lineBound(method: method, path: path, note: note)
            let shard = shards[shardIndex()]
            let format = format
            let capacity = bufferBytes
            let (accepted, shouldWake) = shard.state.withLock { buffer -> (Bool, Bool) in
                guard buffer.bytes.count + bound <= capacity else { return (false, false) }
                Self.append(
                    format: format,
                    method: method,
                    path: path,
                    status: status,
                    bytes: bytes,
                    duration: duration,
                    note: note,
                    to: &buffer.bytes
                )
                buffer.lines += 1
                guard buffer.bytes.count >= capacity / 2, !buffer.wakeRequested else { return (true, false) }
                buffer.wakeRequested = true
                return (true, true)
            }
            if !accepted { dropped.add(1, ordering: .relaxed) }
            // At most once per half buffer per shard, so the signal's futex call is rare on the loop.
            if shouldWake { wake.signal() }
        }

        /// The calling thread's shard. Threads keep their shard, so an event loop mostly has its lock alone.
        private func shardIndex() -> Int {
            #if os(Linux)
                let identity = UInt64(pthread_self())
            #else
                let identity = UInt64(UInt(bitPattern: pthread_self()))
            #endif
            // Thread handles are page-aligned addresses: drop the low bits, then mix (Fibonacci hashing).
            let mixed = (identity >> 12) &* 0x9E37_79B9_7F4A_7C15
            return Int((mixed >> 32) % UInt64(shards.count))
        }

        // MARK: Writer

        /// Writes every buffered line now.
        func drain() {
            spares.withLock { spares in
                for index in shards.indices {
                    let lines = shards[index].state.withLock { buffer -> Int in
                        swap(&buffer.bytes, &spares[index])
                        defer { buffer.lines = 0 }
                        buffer.wakeRequested = false
                        return buffer.lines
                    }
                    guard !spares[index].isEmpty else { continue }
                    let fd = fileDescriptor
                    let isWritten = spares[index].withUnsafeBytes { LoggingText.writeAll($0, to: fd) }
                    if isWritten {
                        written.add(lines, ordering: .relaxed)
                    } else {
                        dropped.add(lines, ordering: .relaxed)
                    }
                    spares[index].removeAll(keepingCapacity: true)
                }
            }
        }

        func startWriter() {
            let context = Unmanaged.passRetained(self).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(
                &thread,
                nil,
                { context in
                    let core = Unmanaged<Core>.fromOpaque(context!).takeRetainedValue()
                    core.runWriter()
                    return nil
                },
                context
            )
            guard result == 0 else {
                // No writer: lines fill the buffers and are then dropped and counted; flush() still writes.
                Unmanaged<Core>.fromOpaque(context).release()
                return
            }
            writerThread.withLock { $0 = thread }
        }

        private func runWriter() {
            while !stopping.load(ordering: .acquiring) {
                wake.wait(timeout: flushInterval)
                drain()
            }
            drain()
        }

        /// Stops the writer after a last drain; idempotent.
        func stopWriter() {
            let running = writerThread.withLock { thread -> pthread_t? in
                defer { thread = nil }
                return thread
            }
            guard let thread = running else { return }
            stopping.store(true, ordering: .releasing)
            wake.signal()
            pthread_join(thread, nil)
            drain()
        }
    }

    /// One per-thread buffer.
    final class Shard: Sendable {
        struct Buffer {
            var bytes: [UInt8]
            var lines = 0
            var wakeRequested = false
        }

        let state: Mutex<Buffer>

        init(capacity: Int) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(capacity)
            state = Mutex(Buffer(bytes: bytes))
        }
    }
}

/// A wake-up flag with a timed wait, for the writer thread.
///
/// `@unchecked Sendable`: `pending` is only touched with `lock` held.
private final class WakeSignal: @unchecked Sendable {
    private let lock = ConditionLock()  // timed waits on the monotonic clock: a wall-clock jump cannot stall us
    private var pending = false

    func signal() {
        lock.withLock { pending = true }
        lock.signal()
    }

    /// Returns when signalled (consuming the signal) or after `timeout`.
    func wait(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        lock.lock()
        defer { lock.unlock() }
        while !pending {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero { break }
            lock.wait(timeout: left)
        }
        pending = false
    }
}
