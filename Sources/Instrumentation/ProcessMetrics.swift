// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

/// Process basics read at scrape time: resident memory, CPU time, start time.
package struct ProcessMetrics: Sendable {
    /// Wall-clock time the process (this value) started, in seconds since the Unix epoch.
    package let startTimeSeconds: Double

    /// Records now as the start time.
    package init() {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        startTimeSeconds = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Resident set size from `/proc/self/statm` (its second field, in pages); nil where it cannot be read.
    ///
    /// Read on the event loop that answers the scrape: procfs files are generated from kernel memory, so this
    /// `open`/`read` never waits for a disk (as the Prometheus Go client reads it in its handler).
    package static func residentMemoryBytes() -> Int? {
        let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let fields = buffer[0..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// CPU time (user + system) of every thread of the process, in seconds.
    package static func cpuSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Writes `thumbd_process_*`.
    package func write(to text: inout PrometheusText) {
        if let resident = Self.residentMemoryBytes() {
            text.family(MetricNames.processResidentMemory, .gauge, "Resident memory of the process.")
            text.sample(MetricNames.processResidentMemory, resident)
        }
        text.family(MetricNames.processCPU, .counter, "CPU time of all threads, user and system.")
        text.sample(MetricNames.processCPU, Self.cpuSeconds())
        text.family(MetricNames.processStartTime, .gauge, "Start time of the process, seconds since the Unix epoch.")
        text.sample(MetricNames.processStartTime, startTimeSeconds)
    }
}
