// SPDX-License-Identifier: Apache-2.0
package import EventLoops
import Foundation

/// A fake cgroup tree: files written under a fresh directory, read back as `CPUAllowance.read(root:affinity:)`
/// reads the real ones under `/`.
///
/// ```swift
/// let tree = try FakeCGroupTree.unified(cpuMax: "200000 100000\n")
/// #expect(tree.allowance(affinity: 64).count == 2)
/// ```
package struct FakeCGroupTree: Sendable {
    /// The root the files are under, removed with them when the last copy is released.
    package let directory: TempDirectory

    /// `/proc/self/mountinfo` of a container with its own cgroup namespace on cgroup v2 (Docker's and Kubernetes'
    /// default on current distributions): its cgroup mounted at `/sys/fs/cgroup`, among other mounts.
    package static let unifiedMountinfo = """
        24 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
        30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate
        31 24 0:5 / /proc rw,nosuid - proc proc rw

        """

    /// - Parameter files: text by path as the process would see it (`/proc/self/cgroup`). Each character is
    ///   written as one byte (Latin-1), so a test can write bytes that are not UTF-8, as a garbled file holds.
    package init(_ files: [String: String]) throws {
        directory = try TempDirectory(prefix: "thumbd-cgroup")
        for (path, text) in files {
            let url = URL(fileURLWithPath: directory.path + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }).write(to: url)
        }
    }

    /// A container with its own cgroup namespace on cgroup v2 whose `cpu.max` holds `cpuMax`.
    package static func unified(cpuMax: String) throws -> FakeCGroupTree {
        try FakeCGroupTree([
            "/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": unifiedMountinfo,
            "/sys/fs/cgroup/cpu.max": cpuMax,
        ])
    }

    /// The allowance read from this tree for a process whose affinity mask has `affinity` CPUs.
    package func allowance(affinity: Int) -> CPUAllowance {
        CPUAllowance.read(root: directory.path, affinity: affinity)
    }
}
