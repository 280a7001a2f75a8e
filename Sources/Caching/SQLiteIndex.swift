// SPDX-License-Identifier: Apache-2.0

import CSQLite

/// The writer's connection to the index database and every statement the writer runs.
///
/// Confined to the writer thread by its owner, ``DiskCache``. Opening validates the file (journal mode,
/// schema version, `quick_check` if asked, statements compile), so a damaged or foreign file fails here
/// and the owner can move it aside.
final class SQLiteIndex {
    /// Bumped when the schema changes; an index with another version is moved aside and rebuilt.
    static let schemaVersion: Int64 = 1

    /// One row per cached blob. Times: `created`, `validated`, `expires`, `stale_if_error` are wall-clock
    /// milliseconds; `last_access` is the writer's strictly increasing microsecond stamp.
    static let schema = """
        CREATE TABLE entries (
            key_hash INTEGER PRIMARY KEY,
            variant TEXT NOT NULL,
            group_hash INTEGER NOT NULL,
            file TEXT NOT NULL,
            size INTEGER NOT NULL,
            checksum INTEGER NOT NULL,
            content_type TEXT NOT NULL,
            etag TEXT,
            created INTEGER NOT NULL,
            validated INTEGER NOT NULL,
            last_access INTEGER NOT NULL,
            expires INTEGER,
            stale_if_error INTEGER,
            origin_etag TEXT,
            origin_last_modified TEXT
        );
        CREATE INDEX entries_by_last_access ON entries(last_access);
        CREATE INDEX entries_by_group ON entries(group_hash);
        PRAGMA user_version = \(schemaVersion);
        """

    /// Columns a lookup reads, in the order ``DiskCache/Reader`` decodes them.
    static let entryColumns = """
        variant, group_hash, file, size, checksum, content_type, etag, created, validated, expires, \
        stale_if_error, origin_etag, origin_last_modified
        """

    let database: SQLiteDatabase
    let begin: PreparedStatement
    let commit: PreparedStatement
    let rollback: PreparedStatement
    let selectExisting: PreparedStatement
    let upsert: PreparedStatement
    let deleteKey: PreparedStatement
    let deleteKeyIfFile: PreparedStatement
    let deleteGroup: PreparedStatement
    let touch: PreparedStatement
    let oldest: PreparedStatement
    let filesInRange: PreparedStatement
    let updateFreshness: PreparedStatement

    init(path: String, busyTimeout: Duration, verify: Bool) throws(CacheError) {
        database = try SQLiteDatabase(path: path, create: true, busyTimeout: busyTimeout)
        // The first statement that reads the file: a file that is not a database fails here (SQLITE_NOTADB).
        let mode = try Self.pragmaText(database, "PRAGMA journal_mode=WAL")
        guard mode?.lowercased() == "wal" else {
            throw .database(
                code: SQLITE_ERROR,
                call: "PRAGMA journal_mode=WAL",
                message: "journal mode is \(mode ?? "nil")"
            )
        }
        // NORMAL in WAL mode: a transaction is durable once the WAL is synced at checkpoint; an
        // application crash loses nothing, a power loss at worst the last transactions (whose blobs
        // then become orphans for reconcile()).
        try database.execute("PRAGMA synchronous=NORMAL")
        let version = Int64(try Self.pragmaText(database, "PRAGMA user_version") ?? "0") ?? -1
        if version == 0 {
            let tables = try Self.pragmaText(database, "SELECT count(*) FROM sqlite_master")
            guard tables == "0" else {
                throw .database(
                    code: SQLITE_ERROR,
                    call: "schema check",
                    message: "tables present but no schema version"
                )
            }
            try database.execute("BEGIN IMMEDIATE;\n\(Self.schema)\nCOMMIT;")
        } else if version != Self.schemaVersion {
            throw .database(code: SQLITE_ERROR, call: "schema check", message: "unknown schema version \(version)")
        } else if verify {
            // Damage past the header (torn pages, garbage) passes the checks above and would surface
            // only in later queries. quick_check reads every page once: ~80 ms at 100,000 entries
            // (29 MB) with a warm page cache, well inside the 1 s startup budget.
            let result = try Self.pragmaText(database, "PRAGMA quick_check(1)")
            guard result == "ok" else {
                throw .database(code: SQLITE_CORRUPT, call: "PRAGMA quick_check", message: result ?? "no result")
            }
        }

        begin = try PreparedStatement(database, sql: "BEGIN IMMEDIATE")
        commit = try PreparedStatement(database, sql: "COMMIT")
        rollback = try PreparedStatement(database, sql: "ROLLBACK")
        selectExisting = try PreparedStatement(database, sql: "SELECT file, size FROM entries WHERE key_hash = ?1")
        upsert = try PreparedStatement(
            database,
            sql: """
                INSERT OR REPLACE INTO entries (key_hash, variant, group_hash, file, size, checksum, content_type,
                    etag, created, validated, last_access, expires, stale_if_error, origin_etag, origin_last_modified)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
                """
        )
        deleteKey = try PreparedStatement(database, sql: "DELETE FROM entries WHERE key_hash = ?1 RETURNING file, size")
        deleteKeyIfFile = try PreparedStatement(
            database,
            sql: "DELETE FROM entries WHERE key_hash = ?1 AND file = ?2 RETURNING file, size"
        )
        deleteGroup = try PreparedStatement(
            database,
            sql: "DELETE FROM entries WHERE group_hash = ?1 AND (?2 IS NULL OR key_hash != ?2) RETURNING file, size"
        )
        touch = try PreparedStatement(
            database,
            sql: "UPDATE entries SET last_access = ?2 WHERE key_hash = ?1 AND last_access < ?2"
        )
        oldest = try PreparedStatement(
            database,
            sql: "SELECT key_hash, file, size FROM entries ORDER BY last_access LIMIT ?1"
        )
        filesInRange = try PreparedStatement(
            database,
            sql: "SELECT key_hash, file FROM entries WHERE key_hash BETWEEN ?1 AND ?2"
        )
        updateFreshness = try PreparedStatement(
            database,
            sql: """
                UPDATE entries SET validated = ?3, expires = ?4, stale_if_error = ?5, origin_etag = ?6,
                    origin_last_modified = ?7
                WHERE key_hash = ?1 AND variant = ?2
                """
        )
    }

    /// Number of rows, total blob bytes and the newest access stamp, for the counters at open.
    /// One aggregate query over the table (no directory scan): tens of milliseconds at 100,000 rows.
    func totals() throws(CacheError) -> IndexTotals {
        let statement = try PreparedStatement(
            database,
            sql: "SELECT count(*), coalesce(sum(size), 0), coalesce(max(last_access), 0) FROM entries"
        )
        defer { statement.reset() }
        guard try statement.step() else { return IndexTotals() }
        return IndexTotals(
            entries: Int(statement.int64(0)),
            bytes: Int(statement.int64(1)),
            newestAccess: statement.int64(2)
        )
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws.
    ///
    /// IMMEDIATE takes the write lock up front, so a read-modify-write inside cannot fail half-way
    /// with SQLITE_BUSY on lock upgrade.
    func transaction<Result>(_ body: () throws(CacheError) -> Result) throws(CacheError) -> Result {
        try begin.run()
        begin.reset()
        do {
            let result = try body()
            try commit.run()
            commit.reset()
            return result
        } catch {
            commit.reset()
            try? rollback.run()
            rollback.reset()
            throw error
        }
    }

    private static func pragmaText(_ database: borrowing SQLiteDatabase, _ sql: String) throws(CacheError) -> String? {
        let statement = try PreparedStatement(database, sql: sql)
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }
}

/// Row count, blob bytes and newest access stamp of an index, read once at open.
struct IndexTotals {
    var entries = 0
    var bytes = 0
    var newestAccess: Int64 = 0
}
