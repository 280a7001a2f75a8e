// SPDX-License-Identifier: Apache-2.0

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An error from the cache tiers, converted at the C boundary (SQLite, syscalls).
///
/// A corrupt *blob* is not an error: lookups report it as ``DiskCache/LookupResult/discarded(_:)``
/// and count it, because the caller's answer is the same as for a miss (refetch and re-render).
package enum CacheError: Error, Equatable, CustomStringConvertible {
    /// A system call failed. `call` names it (`"open"`, `"rename"`), `path` the file it was about.
    case io(call: String, errno: Int32, path: String)
    /// SQLite answered an error code. `call` names the statement or API; `message` is `sqlite3_errmsg`.
    case database(code: Int32, call: String, message: String)
    /// Another `DiskCache` (in this or another process) holds the directory's lock file.
    case directoryInUse(path: String)
    /// The index database could not be opened or had an unknown schema; it was renamed to `movedTo`
    /// and a new, empty index was created. Reported once by ``DiskCache/startupIssue``; opening succeeded.
    case indexRebuilt(reason: String, movedTo: String)
    /// The configuration passed to an initializer was out of range.
    case configuration(ConfigurationError)

    /// A one-line explanation for logs.
    package var description: String {
        switch self {
        case .io(let call, let code, let path):
            "\(call)(\(path)) failed: errno \(code) (\(String(cString: strerror(code))))"
        case .database(let code, let call, let message):
            "SQLite \(call) failed: \(message) (code \(code))"
        case .directoryInUse(let path):
            "cache directory \(path) is locked by another DiskCache"
        case .indexRebuilt(let reason, let movedTo):
            "cache index was unreadable (\(reason)); moved to \(movedTo) and rebuilt empty"
        case .configuration(let error):
            "invalid cache configuration: \(error)"
        }
    }
}

/// A configuration value out of range. `key` is the setting's name as the module knows it
/// (`maxBytes`); the app maps it to its config-file key when it reports the error.
package struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The setting at fault, e.g. `"maxBytes"`.
    package let key: String
    /// Why the value is refused, e.g. `"must be positive"`.
    package let message: String

    /// Creates an error about one setting.
    package init(key: String, message: String) {
        self.key = key
        self.message = message
    }

    /// `key: message`.
    package var description: String { "\(key): \(message)" }
}
