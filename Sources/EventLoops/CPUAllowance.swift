// SPDX-License-Identifier: Apache-2.0

/// How many CPUs thumbd may use, and why: the number every default thread count is made from
/// (`server.threads: 0`, `image.render_threads: 0`, the access log's shards, through ``EventLoopGroup/coreCount``).
///
/// It is the count of the CPU affinity mask (`taskset`, a container's cpuset), lowered to the CPU quota of the
/// process's cgroup when one is set (Kubernetes `limits.cpu`, `docker --cpus`), as Go's `GOMAXPROCS` (1.25), the
/// JVM and .NET do: a pod limited to 2 CPUs on a 64-core node gets threads for 2, not 64. A quota is a share of
/// time, not of cores, so a fractional one rounds up (1.5 CPUs → 2), and a quota above the mask changes nothing.
/// Without a quota, or when the cgroup files cannot be read or make no sense, the count is the mask's.
///
/// ```swift
/// let cpus = CPUAllowance.current
/// print("cpus: \(cpus)")  // cpus: 2 (cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup; affinity 64)
/// ```
package struct CPUAllowance: Sendable, Equatable, CustomStringConvertible {
    /// CPUs to make threads for: the affinity count, lowered to the quota's CPUs; at least 1.
    package let count: Int
    /// CPUs in the affinity mask (at least 1).
    package let affinity: Int
    /// The smallest CPU quota of the process's cgroup and its ancestors, whether or not it lowers the count;
    /// nil when there is none.
    package let quota: CPUQuota?
    /// Why the cgroup files were not used (a value that makes no sense, a file that cannot be read): the count
    /// is then the affinity's. nil when they were read, or there are none.
    package let problem: String?

    /// - Parameters:
    ///   - affinity: CPUs in the affinity mask (raised to 1 when lower).
    ///   - quota: the cgroup's CPU quota, if any.
    ///   - problem: why the cgroup files could not be used; the quota is then ignored.
    package init(affinity: Int, quota: CPUQuota? = nil, problem: String? = nil) {
        let affinity = max(1, affinity)
        self.affinity = affinity
        self.problem = problem
        self.quota = problem == nil ? quota : nil
        count = max(1, min(affinity, self.quota?.cpus ?? affinity))
    }

    /// The allowance of this process, read once on first use: the service's start reads it on the main thread
    /// (`ThumbdService.init`, `--check-config`), before any event loop runs, so no loop ever waits for these files.
    package static let current = CPUAllowance.read(root: "/", affinity: availableCoreCount())

    /// Where ``count`` came from: `affinity`, or the quota that set it and the affinity count it lowered
    /// (`cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup/kubepods/…; affinity 64`), or the affinity and the
    /// quota that did not lower it, or the affinity and why the cgroup files were not used.
    package var origin: String {
        if let problem { return "affinity; \(problem)" }
        guard let quota else { return "affinity" }
        if quota.cpus < affinity { return "\(quota); affinity \(affinity)" }
        return "affinity; \(quota) allows \(quota.cpus)"
    }

    /// `2 (cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup; affinity 64)`, `8 (affinity)`.
    package var description: String { "\(count) (\(origin))" }
}

/// A cgroup's CPU bandwidth limit: `quota` microseconds of CPU time per `period` microseconds, that is
/// quota/period CPUs' worth of time.
package struct CPUQuota: Sendable, Equatable, CustomStringConvertible {
    /// The cgroup version whose files hold the limit.
    package enum Version: Int, Sendable {
        /// `cpu.cfs_quota_us` and `cpu.cfs_period_us` in the `cpu` controller's hierarchy.
        case v1 = 1
        /// `cpu.max` in the unified hierarchy.
        case v2 = 2
    }

    package let version: Version
    /// CPU time per period, in microseconds (positive).
    package let quota: Int
    /// The period, in microseconds (positive).
    package let period: Int
    /// The cgroup directory that holds the files, as the process sees it (`/sys/fs/cgroup/kubepods/pod1`).
    package let directory: String

    package init(version: Version, quota: Int, period: Int, directory: String) {
        self.version = version
        self.quota = quota
        self.period = period
        self.directory = directory
    }

    /// The quota in CPUs, rounded up (150000/100000 → 2); at least 1.
    package var cpus: Int {
        max(1, quota / period + (quota % period == 0 ? 0 : 1))
    }

    /// True when this quota allows less CPU time than `other`.
    func isSmaller(than other: CPUQuota) -> Bool {
        Double(quota) / Double(period) < Double(other.quota) / Double(other.period)
    }

    /// `cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup`,
    /// `cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us 200000/100000 at /sys/fs/cgroup/cpu,cpuacct`.
    package var description: String {
        let files =
            switch version {
            case .v1: "cpu.cfs_quota_us/cpu.cfs_period_us"
            case .v2: "cpu.max"
            }
        return "cgroup v\(version.rawValue) \(files) \(quota)/\(period) at \(oneLine(directory))"
    }
}

/// `text` with its control characters as `?`: a path from mountinfo can hold an escaped newline, which would break
/// the line it is shown in (a log line, a `--check-config` comment).
func oneLine(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
}
