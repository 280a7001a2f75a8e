// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A fresh directory under `$TMPDIR` (or `/tmp`), removed with everything in it when released.
///
/// Tests that need real files (SQLite databases, blob trees, config files) create one each, so
/// parallel tests never share state.
///
/// ```swift
/// let directory = try TempDirectory()
/// let cache = try DiskCache(configuration: .init(directory: directory.path))
/// ```
package final class TempDirectory: Sendable {
    /// Absolute path of the directory, without a trailing slash.
    package let path: String

    /// Creates the directory (`mkdtemp`). `prefix` helps find leftovers of a crashed run.
    /// - Parameter preferMemory: create it in `/dev/shm` (tmpfs) when that is writable, for fixtures
    ///   with many files (100,000 blobs take ~40 s to create and delete on ext4, ~5 s on tmpfs). Only for
    ///   tests that do not measure the disk itself.
    /// - Throws: ``TempDirectory/CreationError`` with the `errno` when `mkdtemp` fails.
    package convenience init(prefix: String = "thumbd-test", preferMemory: Bool = false) throws(CreationError) {
        let base: String
        if preferMemory && access("/dev/shm", W_OK) == 0 {
            base = "/dev/shm"
        } else {
            base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        }
        try self.init(prefix: prefix, in: base)
    }

    /// Creates the directory under `base`, for callers that choose the file system (the disk benchmarks).
    /// - Throws: ``TempDirectory/CreationError`` with the `errno` when `mkdtemp` fails.
    package init(prefix: String, in base: String) throws(CreationError) {
        var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw CreationError(errno: errno)
        }
        path = String(cString: created)
    }

    deinit {
        Self.removeTree(path)
    }

    /// The path of `name` inside this directory (nothing is created).
    package func appending(_ name: String) -> String {
        "\(path)/\(name)"
    }

    /// `mkdtemp` failed.
    package struct CreationError: Error, Equatable {
        /// The `errno` that `mkdtemp` left.
        package let errno: Int32
    }

    /// Removes `path` recursively; best effort, since this runs in `deinit`, and never follows
    /// symbolic links (lstat), so a test cannot delete anything outside its directory.
    private static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            if let directory = opendir(path) {
                var names: [String] = []
                while let entry = readdir(directory) {
                    let name = withUnsafePointer(to: &entry.pointee.d_name) {
                        String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
                    }
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(directory)
                for name in names { removeTree("\(path)/\(name)") }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
