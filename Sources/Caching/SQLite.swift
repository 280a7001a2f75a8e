// SPDX-License-Identifier: Apache-2.0

import CSQLite

/// `SQLITE_TRANSIENT` is a macro (`((sqlite3_destructor_type)-1)`) that Swift does not import; declared
/// here as GRDB does. It tells `sqlite3_bind_text` to copy the bytes before it returns, so a Swift
/// string's temporary UTF-8 buffer may go away right after the call.
/// `nonisolated(unsafe)`: an immutable C constant.
nonisolated(unsafe) let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

/// One SQLite connection, opened in multi-thread mode (`SQLITE_OPEN_NOMUTEX`): SQLite does no locking
/// of its own for it, so the owner (the writer, or one `DiskCache.Reader`) must confine it to one thread.
struct SQLiteDatabase: ~Copyable {
    /// `sqlite3*`, owned; closed by `deinit`.
    let handle: OpaquePointer
    let path: String

    /// Opens (and with `create`, creates) the database file.
    init(path: String, create: Bool, busyTimeout: Duration) throws(CacheError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if create { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            // sqlite3_open_v2 returns a handle even on failure (except out of memory); it must be closed.
            sqlite3_close_v2(db)
            throw .database(code: rc, call: "sqlite3_open_v2(\(path))", message: message)
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        let (seconds, attoseconds) = busyTimeout.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(db, Int32(clamping: milliseconds))
    }

    deinit {
        // close_v2 defers the close until the last statement is finalized, so the order in which an
        // owner's stored properties are destroyed does not matter.
        sqlite3_close_v2(handle)
    }

    /// Runs SQL without results (schema, pragmas that return nothing).
    func execute(_ sql: String) throws(CacheError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        guard rc == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw .database(code: rc, call: "exec(\(sql.prefix(60)))", message: text)
        }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    var changes: Int {
        Int(sqlite3_changes(handle))
    }

    func error(_ rc: Int32, call: String) -> CacheError {
        .database(code: rc, call: call, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// A prepared statement, owned; finalized by `deinit`. Used only on the thread of its connection.
///
/// Persistent (`SQLITE_PREPARE_PERSISTENT`) because each lives as long as its connection and runs
/// millions of times. Every use ends with ``reset()`` (callers `defer` it) so no read transaction
/// stays open and no binding leaks into the next use.
struct PreparedStatement: ~Copyable {
    /// `sqlite3_stmt*`, owned.
    private let handle: OpaquePointer
    /// `sqlite3*`, borrowed from the connection, for error messages.
    private let db: OpaquePointer
    private let sql: String

    init(_ database: borrowing SQLiteDatabase, sql: String) throws(CacheError) {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw database.error(rc, call: "prepare(\(sql.prefix(60)))")
        }
        handle = stmt
        db = database.handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: - Binding (1-based parameter indexes)

    func bind(_ index: Int32, _ value: Int64) throws(CacheError) {
        try check(sqlite3_bind_int64(handle, index, value), "bind")
    }

    func bind(_ index: Int32, _ value: Int64?) throws(CacheError) {
        if let value {
            try bind(index, value)
        } else {
            try check(sqlite3_bind_null(handle, index), "bind")
        }
    }

    func bind(_ index: Int32, _ value: String?) throws(CacheError) {
        if let value {
            try check(sqlite3_bind_text(handle, index, value, -1, sqliteTransient), "bind")
        } else {
            try check(sqlite3_bind_null(handle, index), "bind")
        }
    }

    // MARK: - Stepping

    /// Advances; `true` when a row is available, `false` when done.
    /// - Throws: ``CacheError/database(code:call:message:)`` (e.g. `SQLITE_BUSY` after the busy timeout).
    func step() throws(CacheError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc:
            throw .database(code: rc, call: "step(\(sql.prefix(60)))", message: String(cString: sqlite3_errmsg(db)))
        }
    }

    /// Steps to completion (statements without rows, or whose rows are ignored).
    func run() throws(CacheError) {
        while try step() {}
    }

    /// Ends this use: resets the statement and clears its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Columns (0-based)

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    func text(_ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private func check(_ rc: Int32, _ call: String) throws(CacheError) {
        guard rc == SQLITE_OK else {
            throw .database(code: rc, call: "\(call)(\(sql.prefix(60)))", message: String(cString: sqlite3_errmsg(db)))
        }
    }
}
