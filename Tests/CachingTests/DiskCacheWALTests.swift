// SPDX-License-Identifier: Apache-2.0

import CSQLite
import Caching
import Testing
import ThumbdTestSupport

@Suite("DiskCache WAL", .timeLimit(.minutes(1)))
struct DiskCacheWALTests {
    @Test func readersDoNotWaitForAHeldWriteLock() throws {
        // Given a cache with one entry, and another connection in an uncommitted EXCLUSIVE transaction:
        // with a rollback journal that would lock readers out; in WAL mode it must not
        let directory = try TempDirectory()
        let cache = try DiskFixtures.cache(directory)
        let key = CacheKey("k")
        try cache.store([1, 2, 3], for: key, group: CacheGroup("s"), metadata: DiskFixtures.metadata())
        var blocker: OpaquePointer?
        #expect(
            sqlite3_open_v2(directory.appending("cache/index.sqlite"), &blocker, SQLITE_OPEN_READWRITE, nil)
                == SQLITE_OK
        )
        defer { sqlite3_close_v2(blocker) }
        #expect(sqlite3_exec(blocker, "BEGIN EXCLUSIVE; UPDATE entries SET size = size", nil, nil, nil) == SQLITE_OK)

        // When a reader looks the entry up
        let reader = try cache.makeReader()
        let clock = ContinuousClock()
        var hit: DiskCache.BytesHit?
        let elapsed = try clock.measure { hit = try reader.read(key).hit }

        // Then it gets the committed entry at once (in WAL mode a reader never takes the write lock; the
        // busy timeout is 5 s, so waiting would show) and the writer's uncommitted change is invisible
        #expect(hit?.bytes == [1, 2, 3])
        #expect(elapsed < .seconds(2), "read took \(elapsed)")
        #expect(sqlite3_exec(blocker, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
    }
}
