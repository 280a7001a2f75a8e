// SPDX-License-Identifier: Apache-2.0
import EventLoops
import Testing
import ThumbdTestSupport

/// The CPUs thread counts are made from: the affinity count, lowered to a cgroup CPU quota, read from fake
/// cgroup trees (`<root>/proc/self/cgroup`, `<root>/proc/self/mountinfo`, `<root>/sys/fs/cgroup/…`).
@Suite struct CPUAllowanceTests {
    static let unifiedMount = FakeCGroupTree.unifiedMountinfo

    @Test func aV2QuotaInTheOwnNamespaceLowersTheCount() throws {
        // Given a container limited to 2 CPUs on a 64-CPU node
        let tree = try FakeCGroupTree.unified(cpuMax: "200000 100000\n")

        // When the allowance is read
        let cpus = tree.allowance(affinity: 64)

        // Then it is 2, and says where that came from
        #expect(cpus.count == 2)
        #expect(cpus.quota == CPUQuota(version: .v2, quota: 200_000, period: 100_000, directory: "/sys/fs/cgroup"))
        #expect(cpus.description == "2 (cgroup v2 cpu.max 200000/100000 at /sys/fs/cgroup; affinity 64)")
    }

    @Test func nestedV2CgroupsGiveTheSmallestQuotaUpToTheMountPoint() throws {
        // Given a pod's container without a namespace of its own: no limit on the container, 3 CPUs on the pod,
        // 16 on the QoS class
        let base = "/sys/fs/cgroup/kubepods/burstable"
        var files = [
            "/proc/self/cgroup": "0::/kubepods/burstable/pod1/ctr\n",
            "/proc/self/mountinfo": Self.unifiedMount,
            "/sys/fs/cgroup/kubepods/cpu.max": "1600000 100000\n",
            "\(base)/cpu.max": "max 100000\n",
            "\(base)/pod1/cpu.max": "300000 100000\n",
            "\(base)/pod1/ctr/cpu.max": "max 100000\n",
        ]

        // When it is read, then the pod's quota counts, found by walking up from the container
        let pod = try FakeCGroupTree(files).allowance(affinity: 64)
        #expect(pod.count == 3)
        #expect(pod.description == "3 (cgroup v2 cpu.max 300000/100000 at \(base)/pod1; affinity 64)")

        // And when the container's own limit is larger in another period (4 CPUs), the pod's still wins
        files["\(base)/pod1/cpu.max"] = "150000 50000\n"
        files["\(base)/pod1/ctr/cpu.max"] = "400000 100000\n"
        #expect(try FakeCGroupTree(files).allowance(affinity: 64).quota?.directory == "\(base)/pod1")

        // And when the container's is smaller (1 CPU), the container's wins
        files["\(base)/pod1/ctr/cpu.max"] = "100000 100000\n"
        let container = try FakeCGroupTree(files).allowance(affinity: 64)
        #expect(container.count == 1)
        #expect(container.quota?.directory == "\(base)/pod1/ctr")
    }

    @Test func aV1QuotaIsReadFromTheCPUControllersHierarchyAndRoundedUp() throws {
        // Given Docker on cgroup v1 without a cgroup namespace, `docker --cpus 1.5` (the unified hierarchy of a
        // hybrid system has no cpu controller)
        let tree = try FakeCGroupTree([
            "/proc/self/cgroup": """
            12:memory:/docker/abc
            11:cpu,cpuacct:/docker/abc
            1:name=systemd:/docker/abc
            0::/docker/abc

            """,
            "/proc/self/mountinfo": """
            24 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw
            35 24 0:31 /docker/abc /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
            36 24 0:32 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,nosuid master:12 - cgroup cgroup rw,cpu,cpuacct
            41 24 0:38 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw

            """,
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "150000\n",
            "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
            "/sys/fs/cgroup/memory/cpu.cfs_quota_us": "50000\n",
        ])

        // When it is read, then 1.5 CPUs make 2
        let cpus = tree.allowance(affinity: 8)
        #expect(cpus.count == 2)
        #expect(
            cpus.description
                == "2 (cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us 150000/100000 at /sys/fs/cgroup/cpu,cpuacct; "
                + "affinity 8)")
    }

    @Test func withoutAQuotaTheCountIsTheAffinitys() throws {
        // Given cgroup v2 with "max", v1 with -1 (and a hybrid unified hierarchy without cpu.max), no cgroup files
        let v2 = try FakeCGroupTree.unified(cpuMax: "max 100000\n")
        let v1 = try FakeCGroupTree([
            "/proc/self/cgroup": "2:cpuacct:/\n1:cpu:/\n0::/\n",
            "/proc/self/mountinfo": """
            32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw

            """,
            "/sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n", "/sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n",
        ])
        let none = try FakeCGroupTree([:])

        // When they are read, then each gives the affinity count, and says so
        for tree in [v2, v1, none] {
            let cpus = tree.allowance(affinity: 8)
            #expect(cpus == CPUAllowance(affinity: 8))
            #expect(cpus.description == "8 (affinity)")
        }
    }

    @Test func aQuotaAboveTheAffinityChangesNothingButIsShown() throws {
        // Given 8 CPUs of quota for a process confined to 4
        let tree = try FakeCGroupTree.unified(cpuMax: "800000 100000\n")

        // When it is read, then the affinity's 4 stand
        let cpus = tree.allowance(affinity: 4)
        #expect(cpus.count == 4)
        #expect(cpus.description == "4 (affinity; cgroup v2 cpu.max 800000/100000 at /sys/fs/cgroup allows 8)")
    }

    @Test func fractionalQuotasRoundUpToAtLeastOneCPU() throws {
        let cases: [(quota: Int, period: Int, cpus: Int)] = [
            (150_000, 100_000, 2), (50_000, 100_000, 1), (1_000, 100_000, 1), (100_000, 100_000, 1),
            (100_001, 100_000, 2), (250_000, 100_000, 3), (75_000, 25_000, 3), (Int.max, 1, Int.max),
        ]
        for (quota, period, cpus) in cases {
            #expect(CPUQuota(version: .v2, quota: quota, period: period, directory: "/").cpus == cpus)
        }
        // Through a file too: half a CPU is one thread's worth
        let half = try FakeCGroupTree.unified(cpuMax: "50000 100000\n")
        #expect(half.allowance(affinity: 64).count == 1)
    }

    @Test func malformedQuotasFallBackToTheAffinityNamingTheFile() throws {
        // Given cpu.max files that are not a quota
        let contents = [
            "banana", "", "\n", "200000", "-5 100000", "0 100000", "200000 0", "200000 -1", "200000 100000 7",
            "max banana", "99999999999999999999999 100000", "2000\n00 100000", "200000\u{0}100000",
            "\u{FF}\u{FE} 100000",
        ]
        for text in contents {
            let tree = try FakeCGroupTree.unified(cpuMax: text)

            // When each is read, then the count is the affinity's, and the description names the file on one line
            let cpus = tree.allowance(affinity: 6)
            #expect(cpus.count == 6, "\(text.debugDescription)")
            #expect(cpus.quota == nil)
            #expect(cpus.description.hasPrefix("6 (affinity; /sys/fs/cgroup/cpu.max holds \""), "\(cpus)")
            #expect(!cpus.description.contains("\n") && !cpus.description.contains("\u{0}"))
        }
    }

    @Test func malformedV1FilesFallBackToTheAffinity() throws {
        let cgroup = "1:cpu,cpuacct:/\n"
        let mountinfo = "36 24 0:32 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        let directory = "/sys/fs/cgroup/cpu,cpuacct"
        for (quota, period) in [("abc", "100000"), ("-2", "100000"), ("200000", "0"), ("200000", nil)] {
            var files = [
                "/proc/self/cgroup": cgroup, "/proc/self/mountinfo": mountinfo,
                "\(directory)/cpu.cfs_quota_us": quota,
            ]
            files["\(directory)/cpu.cfs_period_us"] = period
            let cpus = try FakeCGroupTree(files).allowance(affinity: 3)
            #expect(cpus.count == 3)
            #expect(cpus.problem != nil, "\(quota) / \(period ?? "none")")
        }
    }

    @Test func unreadableOrGarbledProcFilesFallBackToTheAffinity() throws {
        // Given: no mountinfo; garbage in each file; a cgroup outside every mount's root; a cgroup2 mount but
        // no v2 line; a truncated mountinfo line
        let trees: [[String: String]] = [
            ["/proc/self/cgroup": "0::/\n"],
            ["/proc/self/cgroup": "hello\n::\n:::\n0:\n", "/proc/self/mountinfo": Self.unifiedMount],
            ["/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": "- - - - - - - - - -\n\n \u{0}\n"],
            [
                "/proc/self/cgroup": "0::/other\n",
                "/proc/self/mountinfo": "30 24 0:26 /kubepods /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
                "/sys/fs/cgroup/cpu.max": "100000 100000\n",
            ],
            [
                "/proc/self/cgroup": "3:memory:/\n", "/proc/self/mountinfo": Self.unifiedMount,
                "/sys/fs/cgroup/cpu.max": "100000 100000\n",
            ],
            [
                "/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": "30 24 0:26 / /sys/fs/cgroup rw - cgroup2\n",
                "/sys/fs/cgroup/cpu.max": "100000 100000\n",
            ],
        ]
        for files in trees {
            // When each is read, then the affinity count stands
            let cpus = try FakeCGroupTree(files).allowance(affinity: 5)
            #expect(cpus.count == 5, "\(files)")
            #expect(cpus.quota == nil)
        }
    }

    @Test func escapedMountPointsAreFound() throws {
        // Given a mount point with a space (mountinfo writes it as \040)
        let tree = try FakeCGroupTree([
            "/proc/self/cgroup": "0::/a\n",
            "/proc/self/mountinfo": "30 24 0:26 / /sys/fs/cgroup\\040x rw - cgroup2 cgroup2 rw\n",
            "/sys/fs/cgroup x/a/cpu.max": "300000 100000\n",
        ])
        // When it is read, then the quota under it counts
        #expect(
            tree.allowance(affinity: 64).description
                == "3 (cgroup v2 cpu.max 300000/100000 at /sys/fs/cgroup x/a; affinity 64)")
    }

    @Test func aNewlineInAMountPointStaysOffTheLine() throws {
        // Given a mount point holding an escaped newline (\012), with a quota and with a malformed one below it
        let mountinfo = "30 24 0:26 / /sys/fs/cgroup\\012x rw - cgroup2 cgroup2 rw\n"
        let quota = try FakeCGroupTree([
            "/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": mountinfo,
            "/sys/fs/cgroup\nx/cpu.max": "100000 100000\n",
        ])
        let malformed = try FakeCGroupTree([
            "/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": mountinfo, "/sys/fs/cgroup\nx/cpu.max": "?\n",
        ])

        // When they are read, then the quota is found and both descriptions are one line
        #expect(
            quota.allowance(affinity: 4).description
                == "1 (cgroup v2 cpu.max 100000/100000 at /sys/fs/cgroup?x; affinity 4)")
        #expect(malformed.allowance(affinity: 4).description == "4 (affinity; /sys/fs/cgroup?x/cpu.max holds \"?\")")
    }

    @Test func thisProcesssAllowanceIsWithinItsAffinity() {
        // The machine running the tests may or may not have a quota; either way the count is 1...affinity.
        let cpus = CPUAllowance.current
        #expect((1...cpus.affinity).contains(cpus.count))
        #expect(EventLoopGroup.coreCount == cpus.count)
        #expect(CPUAllowance(affinity: 0).count == 1)
    }
}
