// SPDX-License-Identifier: Apache-2.0
import CSQLite
import Synchronization

/// Which sources this node has stored, under which tags: what `POST /purge` by tag or by URL prefix reads to find
/// the sources to purge (a purge by source needs no index: its memory entries, disk rows and shared objects are
/// found from the URL itself).
///
/// One SQLite file of its own (`<cache.disk.path>/purge-index.sqlite`), one row per (tag, source URL), so it
/// survives a restart like the disk tier it describes. A source is recorded when this node stores a variant or an
/// original of it; a purge of the source removes its rows. Rows of a source evicted from disk since stay until
/// that source is purged (a purge of a source with nothing left costs a few deletes that find nothing).
///
/// A second table holds each source's validators (`ETag`, `Last-Modified`) and when it is next due for a check with
/// its origin (`cache.source_check_interval`: the background check that finds a source changed even when no
/// request reaches this node, the caches in front answering them all).
///
/// Lookups are bounded: each returns at most `limit` URLs, ordered by URL. Called on the disk writer's thread (or
/// any thread: one lock guards the connection, uncontended in practice).
package final class PurgeIndex: @unchecked Sendable {
    private let lock = Mutex<Void>(())
    private let database: SQLiteDatabase
    private let insert: PreparedStatement
    private let byTag: PreparedStatement
    private let byPrefix: PreparedStatement
    private let removeSource: PreparedStatement
    private let insertCheck: PreparedStatement
    private let dueChecks: PreparedStatement
    private let postponeCheck: PreparedStatement
    private let removeCheck: PreparedStatement

    /// A source's validators, for a conditional request to its origin.
    package struct Check: Sendable, Equatable {
        package var url: String
        package var etag: String?
        package var lastModified: String?

        /// A source's validators.
        package init(url: String, etag: String?, lastModified: String?) {
            self.url = url
            self.etag = etag
            self.lastModified = lastModified
        }
    }

    /// Opens or creates the index at `path`.
    package init(path: String) throws(CacheError) {
        let database = try SQLiteDatabase(path: path, create: true, busyTimeout: .seconds(5))
        try database.execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = NORMAL;
            CREATE TABLE IF NOT EXISTS tags (
                tag TEXT NOT NULL,
                url TEXT NOT NULL,
                PRIMARY KEY (tag, url)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS tags_by_url ON tags(url);
            CREATE TABLE IF NOT EXISTS checks (
                url TEXT PRIMARY KEY,
                etag TEXT,
                last_modified TEXT,
                due INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS checks_by_due ON checks(due);
            """)
        insert = try PreparedStatement(database, sql: "INSERT OR IGNORE INTO tags (tag, url) VALUES (?1, ?2)")
        byTag = try PreparedStatement(database, sql: "SELECT url FROM tags WHERE tag = ?1 ORDER BY url LIMIT ?2")
        // `url >= prefix AND url < prefix + U+10FFFF`: a range on the url index (LIKE would not use it).
        byPrefix = try PreparedStatement(
            database, sql: "SELECT DISTINCT url FROM tags WHERE url >= ?1 AND url < ?2 ORDER BY url LIMIT ?3")
        removeSource = try PreparedStatement(database, sql: "DELETE FROM tags WHERE url = ?1")
        insertCheck = try PreparedStatement(
            database,
            sql: "INSERT OR REPLACE INTO checks (url, etag, last_modified, due) VALUES (?1, ?2, ?3, ?4)")
        dueChecks = try PreparedStatement(
            database, sql: "SELECT url, etag, last_modified FROM checks WHERE due <= ?1 ORDER BY due LIMIT ?2")
        postponeCheck = try PreparedStatement(database, sql: "UPDATE checks SET due = ?2 WHERE url = ?1")
        removeCheck = try PreparedStatement(database, sql: "DELETE FROM checks WHERE url = ?1")
        self.database = database
    }

    /// Records that `url` was stored under each of `tags` (its own source tag among them).
    package func record(url: String, tags: [String]) throws(CacheError) {
        try lock.withLock { _ throws(CacheError) in
            for tag in tags {
                defer { insert.reset() }
                try insert.bind(1, tag)
                try insert.bind(2, url)
                try insert.run()
            }
        }
    }

    /// Records `check`'s validators, next due at `due` (milliseconds since the epoch), in place of any before.
    package func schedule(_ check: Check, due: Int64) throws(CacheError) {
        try lock.withLock { _ throws(CacheError) in
            defer { insertCheck.reset() }
            try insertCheck.bind(1, check.url)
            try insertCheck.bind(2, check.etag)
            try insertCheck.bind(3, check.lastModified)
            try insertCheck.bind(4, due)
            try insertCheck.run()
        }
    }

    /// The sources due for a check at `now` (milliseconds since the epoch), longest due first, at most `limit`.
    package func dueChecks(now: Int64, limit: Int) throws(CacheError) -> [Check] {
        try lock.withLock { _ throws(CacheError) in
            defer { dueChecks.reset() }
            try dueChecks.bind(1, now)
            try dueChecks.bind(2, Int64(limit))
            var checks: [Check] = []
            while try dueChecks.step() {
                if let url = dueChecks.text(0) {
                    checks.append(Check(url: url, etag: dueChecks.text(1), lastModified: dueChecks.text(2)))
                }
            }
            return checks
        }
    }

    /// Moves `url`'s next check to `due` (milliseconds since the epoch).
    package func postponeCheck(url: String, due: Int64) throws(CacheError) {
        try lock.withLock { _ throws(CacheError) in
            defer { postponeCheck.reset() }
            try postponeCheck.bind(1, url)
            try postponeCheck.bind(2, due)
            try postponeCheck.run()
        }
    }

    /// The sources stored under `tag`, at most `limit`.
    package func sources(tagged tag: String, limit: Int) throws(CacheError) -> [String] {
        try lock.withLock { _ throws(CacheError) in
            defer { byTag.reset() }
            try byTag.bind(1, tag)
            try byTag.bind(2, Int64(limit))
            var urls: [String] = []
            while try byTag.step() { if let url = byTag.text(0) { urls.append(url) } }
            return urls
        }
    }

    /// The sources whose URL starts with `prefix`, at most `limit`.
    package func sources(prefixed prefix: String, limit: Int) throws(CacheError) -> [String] {
        try lock.withLock { _ throws(CacheError) in
            defer { byPrefix.reset() }
            try byPrefix.bind(1, prefix)
            try byPrefix.bind(2, prefix + "\u{10FFFF}")
            try byPrefix.bind(3, Int64(limit))
            var urls: [String] = []
            while try byPrefix.step() { if let url = byPrefix.text(0) { urls.append(url) } }
            return urls
        }
    }

    /// Forgets every row of `url` (its purge). Returns how many.
    @discardableResult
    package func remove(url: String) throws(CacheError) -> Int {
        try lock.withLock { _ throws(CacheError) in
            defer { removeSource.reset() }
            try removeSource.bind(1, url)
            try removeSource.run()
            let removed = database.changes
            defer { removeCheck.reset() }
            try removeCheck.bind(1, url)
            try removeCheck.run()
            return removed
        }
    }
}
