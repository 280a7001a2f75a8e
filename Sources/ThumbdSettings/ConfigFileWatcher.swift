// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Tells whether the config file changed since it was last read: device, inode, size, modification and
/// status-change times (`stat`), so an editor's rename as well as a write in place is seen.
package struct ConfigFileWatcher {
    /// How often `ThumbdService.run` looks.
    package static let pollInterval: Duration = .seconds(2)

    package let path: String?
    private var last: Fingerprint?

    private struct Fingerprint: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        static func == (a: Self, b: Self) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// Starts from the file as it is now.
    package init(path: String?) {
        self.path = path
        last = Self.fingerprint(path)
    }

    /// Whether the file differs from the last look (a missing file counts as a state too); remembers it.
    package mutating func hasChanged() -> Bool {
        guard path != nil else { return false }
        let now = Self.fingerprint(path)
        defer { last = now }
        return now != last
    }

    private static func fingerprint(_ path: String?) -> Fingerprint? {
        guard let path else { return nil }
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Fingerprint(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: info.st_mtim, changed: info.st_ctim)
    }
}
