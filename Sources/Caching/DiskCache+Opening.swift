// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Opening: directories, the lock file, and the index with its move-aside recovery.
extension DiskCache {
    static func makeDirectories(_ path: String) throws(CacheError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/\(component)"
            try FileIO.makeDirectory(prefix)
        }
    }

    /// `flock(LOCK_EX | LOCK_NB)` on `<root>/lock`, held until `deinit`: two caches on one directory
    /// would delete each other's temp files and fight over the index.
    static func lockDirectory(_ layout: BlobLayout) throws(CacheError) -> Int32 {
        let fd = try FileIO.syscall("open", path: layout.lockPath) {
            open(layout.lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK { throw .directoryInUse(path: layout.root) }
            throw .io(call: "flock", errno: code, path: layout.lockPath)
        }
        return fd
    }

    /// Opens the index and reads its totals; if either fails, moves the database (and its -wal/-shm)
    /// aside and starts empty.
    static func openIndex(
        _ layout: BlobLayout,
        busyTimeout: Duration,
        verify: Bool
    ) throws(CacheError) -> (SQLiteIndex, IndexTotals, CacheError?) {
        do {
            let index = try SQLiteIndex(path: layout.databasePath, busyTimeout: busyTimeout, verify: verify)
            return (index, try index.totals(), nil)
        } catch {
            let suffix = ".corrupt-\(Timestamp.now().millisecondsSinceEpoch)"
            let movedTo = layout.databasePath + suffix
            for extra in ["", "-wal", "-shm"] where FileIO.exists(layout.databasePath + extra) {
                let from = layout.databasePath + extra
                try FileIO.syscall("rename", path: from) { rename(from, movedTo + extra) }
            }
            let index = try SQLiteIndex(path: layout.databasePath, busyTimeout: busyTimeout, verify: false)
            return (index, IndexTotals(), .indexRebuilt(reason: error.description, movedTo: movedTo))
        }
    }
}
