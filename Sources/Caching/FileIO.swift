// SPDX-License-Identifier: Apache-2.0

import CSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The syscalls the disk tier uses, each retrying `EINTR` and converting failures into
/// ``CacheError/io(call:errno:path:)`` at this boundary (like NIO's `syscall(blocking:where:_:)`).
enum FileIO {
    /// Calls `body` until it does not fail with `EINTR`; a result of -1 becomes a thrown error.
    @discardableResult
    static func syscall<Result: FixedWidthInteger>(
        _ call: String,
        path: String,
        _ body: () -> Result
    ) throws(CacheError) -> Result {
        while true {
            let result = body()
            if result != -1 { return result }
            let code = errno
            if code != EINTR { throw .io(call: call, errno: code, path: path) }
        }
    }

    /// `mkdir`, treating an existing directory as success.
    static func makeDirectory(_ path: String) throws(CacheError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST {
            throw .io(call: "mkdir", errno: errno, path: path)
        }
    }

    /// `unlink`; a file already gone is not an error. Returns whether a file was removed.
    @discardableResult
    static func removeFile(_ path: String) throws(CacheError) -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw .io(call: "unlink", errno: errno, path: path)
    }

    /// `unlink`, ignoring every error: for cleanup after a committed deletion or a failed write,
    /// where a leftover file is an orphan that ``DiskCache/reconcile(maxDirectories:)`` removes later.
    static func removeBestEffort(_ path: String) {
        _ = unlink(path)
    }

    /// Creates `path` (which must not exist), writes all of `bytes`, `fsync`s it if `sync`, and closes
    /// it. On failure the partial file is removed.
    static func writeNewFile(_ path: String, _ bytes: UnsafeRawBufferPointer, sync: Bool) throws(CacheError) {
        let fd = try syscall("open", path: path) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644) }
        do {
            var offset = 0
            while offset < bytes.count {
                let written = try syscall("write", path: path) {
                    write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                }
                offset += written
            }
            if sync { try syscall("fsync", path: path) { fsync(fd) } }
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        // close after fsync reports nothing new for a regular file; EINTR must not be retried (Linux closes anyway).
        close(fd)
    }

    /// `syncfs` on the file system that holds `directory`: makes every file written there durable
    /// with one call (one journal commit) instead of one `fsync` per file.
    static func syncFileSystem(containing directory: String) throws(CacheError) {
        let fd = try syscall("open", path: directory) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(fd) }
        try syscall("syncfs", path: directory) { syncfs(fd) }
    }

    /// Opens for reading; `nil` when the file does not exist.
    static func openForReading(_ path: String) throws(CacheError) -> Int32? {
        while true {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { return fd }
            switch errno {
            case EINTR: continue
            case ENOENT: return nil
            case let code: throw .io(call: "open", errno: code, path: path)
            }
        }
    }

    /// The size of an open file (`fstat`).
    static func size(of fd: Int32, path: String) throws(CacheError) -> Int {
        var info = stat()
        try syscall("fstat", path: path) { fstat(fd, &info) }
        return Int(info.st_size)
    }

    /// Reads exactly `count` bytes from offset 0 with `pread`; `nil` if the file is shorter.
    static func read(_ fd: Int32, count: Int, path: String) throws(CacheError) -> [UInt8]? {
        var failure: CacheError?
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var offset = 0
            while offset < count {
                let n = pread(fd, buffer.baseAddress! + offset, count - offset, off_t(offset))
                if n > 0 {
                    offset += n
                } else if n == 0 {
                    complete = false
                    break
                } else if errno != EINTR {
                    failure = .io(call: "pread", errno: errno, path: path)
                    break
                }
            }
            // Bytes past a short read are zeroed so the array is fully initialised; it is discarded anyway.
            if offset < count { (buffer.baseAddress! + offset).initialize(repeating: 0, count: count - offset) }
            initialized = count
        }
        if let failure { throw failure }
        return complete ? bytes : nil
    }

    /// The names in a directory, without `.` and `..`; `nil` when it does not exist.
    static func listDirectory(_ path: String) throws(CacheError) -> [String]? {
        guard let directory = opendir(path) else {
            if errno == ENOENT { return nil }
            throw .io(call: "opendir", errno: errno, path: path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Whether `path` exists (any type).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
