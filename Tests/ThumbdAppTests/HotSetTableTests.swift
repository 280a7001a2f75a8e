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

    /// Inserts a copy of `variant` for the alias `name`.
    static func insert(_ table: HotSetTable, _ name: String, _ variant: RenderedVariant, vary: Bool = false) throws {
        table.insert(
            CacheKey(name), key: try key(32), keyGeneration: 7, variant: variant,
            freshness: try #require(variant.freshness), cacheControl: "public, max-age=60", variesOnAccept: vary,
            now: now)
    }

    @Test func anEntryAnswersWithItsOwnCopyOfTheBytesAndTheAge() throws {
        // Given a table with one variant copied under key generation 7
        let table = HotSetTable(limits: .init())
        let variant = Self.variant(bytes: 1000)
        try Self.insert(table, "q", variant, vary: true)

        // When it is asked under the same and another key generation
        let entry = try #require(table.entry(CacheKey("q"), keyGeneration: 7))
        #expect(table.entry(CacheKey("q"), keyGeneration: 8) == nil)

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
        #expect(table.entries.count == 2)
        try Self.insert(table, "c", Self.variant(bytes: 100))
        try Self.insert(table, "big", Self.variant(bytes: 9 << 10))

        // Then the third found the table full and started it afresh, and the big one was not copied
        #expect(Set(table.entries.keys.map(\.variant)) == ["c"])
        #expect(table.publishedBytes.load(ordering: .relaxed) > 100)
        #expect(table.publishedBytes.load(ordering: .relaxed) < 1000)
    }

    @Test func emptyingForgetsEverythingAndNotesTheCounters() throws {
        let table = HotSetTable(limits: .init())
        try Self.insert(table, "a", Self.variant(bytes: 100))
        table.empty(removals: 3, generation: 4)
        #expect(table.entries.isEmpty)
        #expect(table.removals == 3 && table.generation == 4)
        #expect(table.publishedBytes.load(ordering: .relaxed) == 0)
    }
}
