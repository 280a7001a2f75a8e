// SPDX-License-Identifier: Apache-2.0
import Caching
import HTTP1
import OriginFetch
import Testing
import Thumbnailing

@testable import ThumbdApp

/// One thread's hot-set table on its own: the answer it copies, its bounds, and when it empties.
@Suite struct HotSetTableTests {
    static let now = Timestamp(millisecondsSinceEpoch: 1_800_000_000_000)

    static func key(_ width: Int) throws -> VariantKey {
        VariantKey(
            source: try SourceURL("http://images.example/a.jpg"),
            spec: try ThumbnailSpec(width: width, height: nil, format: .exactly(.png)))
    }

    static func variant(bytes count: Int) -> RenderedVariant {
        RenderedVariant(
            bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0) }, format: .png,
            freshness: DiskCache.Freshness(validatedAt: now.advanced(by: .seconds(-30))))
    }

    /// The key of a request with the raw query `query` and, unless `nil`, one `Accept` line.
    static func requestKey(_ query: String, accept: String? = nil) -> HotSetKey {
        withBytes(query, accept) { HotSetKey(target: $0, accept: $1) }
    }

    /// Calls `body` with the bytes of `query` and `accept`, as a request's are read in place.
    static func withBytes<Result>(
        _ query: String, _ accept: String?, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer?) -> Result
    ) -> Result {
        let queryBytes = Array(query.utf8)
        return queryBytes.withUnsafeBytes { query in
            guard let accept else { return body(query, nil) }
            return Array(accept.utf8).withUnsafeBytes { body(query, $0) }
        }
    }

    /// The entry for the request bytes `query` and `accept`.
    static func lookup(
        _ table: HotSetTable, _ query: String, accept: String? = nil, keyGeneration: UInt64 = 7
    ) -> HotSetTable.Entry? {
        withBytes(query, accept) { table.entry(target: $0, accept: $1, keyGeneration: keyGeneration) }
    }

    /// Inserts a copy of `variant` for the request with query `name` (and `accept`).
    static func insert(
        _ table: HotSetTable, _ name: String, accept: String? = nil, _ variant: RenderedVariant, vary: Bool = false
    ) throws {
        table.insert(
            requestKey(name, accept: accept), alias: CacheKey(name), key: try key(32), keyGeneration: 7,
            variant: variant,
            freshness: try #require(variant.freshness), cacheControl: "public, max-age=60", variesOnAccept: vary,
            now: now)
    }

    @Test func anEntryAnswersWithItsOwnCopyOfTheBytesAndTheAge() throws {
        // Given a table with one variant copied under key generation 7
        let table = HotSetTable(limits: .init())
        let variant = Self.variant(bytes: 1000)
        try Self.insert(table, "q", variant, vary: true)

        // When it is asked under the same and another key generation
        let entry = try #require(Self.lookup(table, "q"))
        #expect(Self.lookup(table, "q", keyGeneration: 8) == nil)

        // Then the answer has the variant's bytes in a buffer of its own, its lines, and the Age from now
        let response = entry.response(at: Self.now)
        guard case .bytes(let body) = response.body else {
            Issue.record("no bytes")
            return
        }
        #expect(body == variant.bytes)
        body.withUnsafeBufferPointer { copy in
            variant.bytes.withUnsafeBufferPointer { shared in #expect(copy.baseAddress != shared.baseAddress) }
        }
        #expect(response.age == 30)
        let lines = String(decoding: try #require(response.preparedFields).bytes, as: UTF8.self)
        #expect(
            lines == "Content-Type: image/png\r\nETag: \(variant.etag)\r\nCache-Control: public, max-age=60\r\n"
                + "X-Cache: HIT-MEMORY\r\nVary: Accept\r\n")
    }

    @Test func aFullTableEmptiesAndAnOversizedCopyIsSkipped() throws {
        // Given a table of at most 2 entries and 64 KiB (8 KiB per copy)
        let table = HotSetTable(limits: .init(maxEntries: 2, maxBytes: 64 << 10))

        // When three variants are copied, then one too big
        try Self.insert(table, "a", Self.variant(bytes: 100))
        try Self.insert(table, "b", Self.variant(bytes: 100))
        #expect(table.count == 2)
        try Self.insert(table, "c", Self.variant(bytes: 100))
        try Self.insert(table, "big", Self.variant(bytes: 9 << 10))

        // Then the third found the table full and started it afresh, and the big one was not copied
        #expect(table.requestKeys.map { String(decoding: $0.target, as: UTF8.self) } == ["c"])
        #expect(table.publishedBytes.load(ordering: .relaxed) > 100)
        #expect(table.publishedBytes.load(ordering: .relaxed) < 1000)
    }

    @Test func emptyingForgetsEverythingAndNotesTheCounters() throws {
        let table = HotSetTable(limits: .init())
        try Self.insert(table, "a", Self.variant(bytes: 100))
        table.empty(removals: 3, generation: 4)
        #expect(table.count == 0 && Self.lookup(table, "a") == nil)
        #expect(table.removals == 3 && table.generation == 4)
        #expect(table.publishedBytes.load(ordering: .relaxed) == 0)
    }

    @Test func anEntryAnswersOnlyTheExactBytesItWasCopiedFor() throws {
        // Given copies for one query without Accept, with `Accept: image/webp`, and with an empty Accept
        let table = HotSetTable(limits: .init())
        let plain = Self.variant(bytes: 100)
        let webp = Self.variant(bytes: 200)
        let empty = Self.variant(bytes: 300)
        try Self.insert(table, "url=a&w=32", plain)
        try Self.insert(table, "url=a&w=32", accept: "image/webp", webp)
        try Self.insert(table, "url=a&w=32", accept: "", empty)

        // Then each request finds its own copy, and any other bytes find none
        func body(_ entry: HotSetTable.Entry?) -> Int? {
            guard case .bytes(let bytes) = entry?.response(at: Self.now).body else { return nil }
            return bytes.count
        }
        #expect(body(Self.lookup(table, "url=a&w=32")) == 100)
        #expect(body(Self.lookup(table, "url=a&w=32", accept: "image/webp")) == 200)
        #expect(body(Self.lookup(table, "url=a&w=32", accept: "")) == 300)
        #expect(Self.lookup(table, "url=a&w=33") == nil)
        #expect(Self.lookup(table, "url=a&w=3") == nil)
        #expect(Self.lookup(table, "url=a&w=32", accept: "image/avif") == nil)
        #expect(Self.lookup(table, "") == nil)
    }

    @Test func manyKeysInFewSlotsAreEachFoundAndACopyAgainReplacesItsEntry() throws {
        // Given a table of 8 entries (16 slots: keys share slots and probe on)
        let table = HotSetTable(limits: .init(maxEntries: 8, maxBytes: 1 << 20))
        for i in 0..<8 { try Self.insert(table, "w=\(i)", Self.variant(bytes: 10 + i)) }

        // When one of them is copied again with another body
        try Self.insert(table, "w=3", Self.variant(bytes: 99))

        // Then every key finds its own entry, the replaced one its new body, and the count is unchanged
        for i in 0..<8 {
            guard case .bytes(let bytes) = Self.lookup(table, "w=\(i)")?.response(at: Self.now).body else {
                Issue.record("w=\(i) not found")
                continue
            }
            #expect(bytes.count == (i == 3 ? 99 : 10 + i))
        }
        #expect(table.count == 8)
    }
}
