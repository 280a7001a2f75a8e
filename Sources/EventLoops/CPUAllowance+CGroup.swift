// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
    import Glibc
#endif

extension CPUAllowance {
    /// Reads the CPU quota of the process's cgroup from the files under `root` and makes the allowance.
    ///
    /// The way the JVM and Go find it: `/proc/self/cgroup` names the process's cgroup, in the v1 hierarchy of the
    /// `cpu` controller (`4:cpu,cpuacct:/docker/abc`) and in the unified v2 hierarchy (`0::/kubepods/pod1/ctr`);
    /// `/proc/self/mountinfo` says where each hierarchy is mounted and which cgroup is the mount's root (a container
    /// sees its own cgroup as `/`), which gives the cgroup's directory. A v1 `cpu` controller wins (on a hybrid
    /// system the unified hierarchy then has no `cpu.max`). From that directory up to the mount point, each level's
    /// quota is read (v2 `cpu.max`: `max 100000` is none, `200000 100000` is 2 CPUs; v1 `cpu.cfs_quota_us` over
    /// `cpu.cfs_period_us`, quota -1 is none) and the smallest kept, since a parent's limit binds its children.
    /// A missing file is no limit at that level; a value that makes no sense is a ``problem`` (the affinity count
    /// then stands). Nothing here traps on what the files hold.
    ///
    /// Blocking: reads a few small files. Call it once at start, off any event loop (``current`` does).
    ///
    /// - Parameters:
    ///   - root: the directory the paths above are read under: `/` for this process, a directory built by a test
    ///     (`<root>/proc/self/cgroup`, `<root>/sys/fs/cgroup/cpu.max`, …) for a fake cgroup tree. Paths shown in
    ///     the result are those the process sees (without `root`).
    ///   - affinity: CPUs in the affinity mask.
    package static func read(root: String, affinity: Int) -> CPUAllowance {
        let files = CGroupFiles(root: root)
        guard let membership = files.text("/proc/self/cgroup").map(CGroupMembership.init(parsing:)) else {
            return CPUAllowance(affinity: affinity)  // no cgroups (not Linux, or /proc not mounted)
        }
        guard let mountinfo = files.text("/proc/self/mountinfo") else {
            return CPUAllowance(affinity: affinity, problem: "/proc/self/mountinfo cannot be read")
        }
        guard let hierarchy = CGroupHierarchy(membership: membership, mounts: CGroupMount.parse(mountinfo)) else {
            return CPUAllowance(affinity: affinity)
        }
        do throws(CGroupValueError) {
            return CPUAllowance(affinity: affinity, quota: try hierarchy.smallestQuota(files))
        } catch {
            return CPUAllowance(affinity: affinity, problem: error.description)
        }
    }
}

/// The process's cgroups, from `/proc/self/cgroup` (`hierarchy-ID:controllers:path` per line).
struct CGroupMembership: Equatable {
    /// The cgroup in the v1 hierarchy that has the `cpu` controller (`4:cpu,cpuacct:/docker/abc`).
    var cpuControllerPath: String?
    /// The cgroup in the unified v2 hierarchy (`0::/kubepods/pod1/ctr`).
    var unifiedPath: String?

    /// Lines that do not have this shape are skipped.
    init(parsing text: String) {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, fields[2].hasPrefix("/") else { continue }
            if fields[0] == "0" && fields[1].isEmpty {
                unifiedPath = String(fields[2])
            } else if fields[1].split(separator: ",").contains("cpu") {
                cpuControllerPath = String(fields[2])
            }
        }
    }
}

/// A cgroup file system's mount, from one line of `/proc/self/mountinfo`
/// (`36 25 0:31 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct`: see proc(5)).
struct CGroupMount: Equatable {
    /// The cgroup mounted there, as `/proc/self/cgroup` names it (`/` in a container with its own namespace).
    var root: String
    var mountPoint: String
    /// `cgroup` (v1) or `cgroup2`.
    var fileSystem: String
    /// The super-block options; a v1 mount lists its controllers there (`rw,cpu,cpuacct`).
    var superOptions: [Substring]

    /// The cgroup mounts among `text`'s lines; other mounts and malformed lines are skipped.
    static func parse(_ text: String) -> [CGroupMount] {
        var mounts: [CGroupMount] = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            // Six fixed fields, optional fields, "-", then the file system type, the source and the super options.
            guard fields.count >= 10, let dash = fields[6...].firstIndex(of: "-"), dash + 3 < fields.count else {
                continue
            }
            let fileSystem = String(fields[dash + 1])
            guard fileSystem == "cgroup" || fileSystem == "cgroup2" else { continue }
            mounts.append(
                CGroupMount(
                    root: unescaped(fields[3]), mountPoint: unescaped(fields[4]), fileSystem: fileSystem,
                    superOptions: fields[dash + 3].split(separator: ",")))
        }
        return mounts
    }

    /// mountinfo writes a space, tab, newline and backslash in a path as an octal escape (`\040`).
    static func unescaped(_ field: Substring) -> String {
        guard field.contains("\\") else { return String(field) }
        var bytes: [UInt8] = []
        var utf8 = field.utf8[...]
        while let byte = utf8.popFirst() {
            let digits = utf8.prefix(3)
            if byte == UInt8(ascii: "\\"), digits.count == 3, digits.allSatisfy({ (0x30...0x37).contains($0) }) {
                bytes.append(digits.reduce(0) { $0 &* 8 &+ ($1 - 0x30) })
                utf8 = utf8.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The process's cgroup in the hierarchy that holds its CPU limit: the mount point and the path below it.
struct CGroupHierarchy: Equatable {
    var version: CPUQuota.Version
    var mountPoint: String
    /// The cgroup's path below the mount's root (empty: the mount point itself).
    var components: [Substring]

    /// The v1 `cpu` controller's hierarchy when the process has one and it is mounted, else the unified one;
    /// nil when neither is there.
    init?(membership: CGroupMembership, mounts: [CGroupMount]) {
        if let path = membership.cpuControllerPath,
            let found = Self.locate(
                path, version: .v1, in: mounts.filter { $0.fileSystem == "cgroup" && $0.superOptions.contains("cpu") })
        {
            self = found
        } else if let path = membership.unifiedPath,
            let found = Self.locate(path, version: .v2, in: mounts.filter { $0.fileSystem == "cgroup2" })
        {
            self = found
        } else {
            return nil
        }
    }

    private init(version: CPUQuota.Version, mountPoint: String, components: [Substring]) {
        self.version = version
        self.mountPoint = mountPoint
        self.components = components
    }

    /// The first mount whose root holds `path`. A path outside every mount's root (the process moved to another
    /// cgroup after the mount) has no directory the process can see: no limit is read, as the JVM does.
    private static func locate(_ path: String, version: CPUQuota.Version, in mounts: [CGroupMount]) -> Self? {
        let parts = path.split(separator: "/")
        for mount in mounts {
            let root = mount.root.split(separator: "/")
            if parts.starts(with: root) {
                return Self(
                    version: version, mountPoint: mount.mountPoint, components: Array(parts.dropFirst(root.count)))
            }
        }
        return nil
    }

    /// The smallest quota from the cgroup's directory up to the mount point; nil when no level has one.
    /// - Throws: ``CGroupValueError`` for a level whose files hold something that is not a quota.
    func smallestQuota(_ files: CGroupFiles) throws(CGroupValueError) -> CPUQuota? {
        var smallest: CPUQuota?
        for depth in (0...components.count).reversed() {
            let below = components.prefix(depth).map { "/" + $0 }.joined()
            let directory = (mountPoint == "/" ? "" : mountPoint) + below
            guard let found = try quota(in: directory.isEmpty ? "/" : directory, files) else { continue }
            if smallest.map({ found.isSmaller(than: $0) }) ?? true { smallest = found }
        }
        return smallest
    }

    /// The quota set in `directory`; nil when it sets none (no file: the controller is not enabled there).
    private func quota(in directory: String, _ files: CGroupFiles) throws(CGroupValueError) -> CPUQuota? {
        let base = directory == "/" ? "" : directory
        switch version {
        case .v2:
            let path = base + "/cpu.max"
            guard let text = files.text(path) else { return nil }
            let fields = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            let period = fields.count == 2 ? Int(fields[1]) ?? 0 : 0
            guard fields.count == 2 && period > 0 || fields == ["max"] else {
                throw CGroupValueError(path: path, text: text)
            }
            if fields[0] == "max" { return nil }  // "max 100000": no limit
            guard let quota = Int(fields[0]), quota > 0 else { throw CGroupValueError(path: path, text: text) }
            return CPUQuota(version: .v2, quota: quota, period: period, directory: directory)
        case .v1:
            let quotaPath = base + "/cpu.cfs_quota_us"
            let periodPath = base + "/cpu.cfs_period_us"
            guard let quotaText = files.text(quotaPath) else { return nil }
            guard let quota = Int(quotaText.trimmingNewlines()), quota == -1 || quota > 0 else {
                throw CGroupValueError(path: quotaPath, text: quotaText)
            }
            if quota == -1 { return nil }  // no limit
            let periodText = files.text(periodPath) ?? ""
            guard let period = Int(periodText.trimmingNewlines()), period > 0 else {
                throw CGroupValueError(path: periodPath, text: periodText)
            }
            return CPUQuota(version: .v1, quota: quota, period: period, directory: directory)
        }
    }
}

/// A cgroup file whose contents are not a quota.
struct CGroupValueError: Error, CustomStringConvertible {
    var path: String
    var text: String

    /// `/sys/fs/cgroup/cpu.max holds "banana"`: the text cut to 40 characters, anything but printable ASCII as
    /// `?` (and control characters of the path), so it stays one line in a log, a `--check-config` comment or a page.
    var description: String {
        let shown = text.trimmingNewlines().unicodeScalars.prefix(40).map {
            (0x20..<0x7F).contains($0.value) ? Character($0) : "?"
        }
        return "\(oneLine(path)) holds \"\(String(shown))\""
    }
}

/// Reads the files of a cgroup tree under a root directory (`/`, or a test's fake tree).
struct CGroupFiles {
    /// Prepended to every path (empty for `/`).
    private let prefix: String

    init(root: String) {
        var prefix = root
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.prefix = prefix
    }

    /// The file's text (at most 1 MiB: a mountinfo of thousands of mounts), or nil when it cannot be opened or read.
    /// Files under /proc report a size of 0, so this reads until the end instead of asking for the size.
    func text(_ path: String) -> String? {
        let fd = open(prefix + path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { closeDescriptor(fd) }
        let limit = 1 << 20
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < limit {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    /// Without leading and trailing spaces and newlines (the kernel ends a value with one); no Foundation here.
    fileprivate func trimmingNewlines() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
