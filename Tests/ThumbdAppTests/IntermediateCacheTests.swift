// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import Testing
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp

/// The intermediate cache with real libvips renders: reuse across boxes, same bytes as without it, keyed by
/// the source bytes, budget kept, and one decode for threads that need the same intermediate at once.
@Suite(.timeLimit(.minutes(1))) struct IntermediateCacheTests {
    static let url = "http://127.0.0.2/photo.jpg"

    static func spec(_ width: Int, _ height: Int, fit: Fit = .contain) throws -> ThumbnailSpec {
        try ThumbnailSpec(width: width, height: height, fit: fit, format: .exactly(.jpeg))
    }

    @Test func otherBoxesOfASourceReuseItsIntermediateAndGiveTheSameBytes() throws {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let cache = try IntermediateCache(maxBytes: 64 << 20)
        let source = Fixtures.bytes("progressive.jpg")  // 320x240: its band-512 intermediate is the whole picture
        let specs = try [Self.spec(64, 64), Self.spec(100, 50, fit: .cover), Self.spec(120, 120)]
        for spec in specs {
            let cached = try cache.render(source, url: Self.url, spec: spec, thumbnailer: thumbnailer)
            let direct = try thumbnailer.render(source, spec: spec)
            #expect(cached.bytes == direct.bytes)
        }
        #expect(cache.counters == .init(hits: 2, made: 1, joined: 0))
        #expect(cache.currentBytes == 320 * 240 * 3)
        // An upscaled box does not touch the cache
        let enlarged = try ThumbnailSpec(width: 640, height: 640, enlarge: true, format: .exactly(.jpeg))
        _ = try cache.render(source, url: Self.url, spec: enlarged, thumbnailer: thumbnailer)
        #expect(cache.counters == .init(hits: 2, made: 1, joined: 0))
    }

    @Test func aChangedSourceUnderTheSameURLGetsANewIntermediate() throws {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let cache = try IntermediateCache(maxBytes: 64 << 20)
        // The same URL with two different bodies: the second must not be rendered from the first's pixels
        let first = try cache.render(
            Fixtures.orientation(1), url: Self.url, spec: Self.spec(32, 32), thumbnailer: thumbnailer)
        let second = try cache.render(
            Fixtures.bytes("cmyk.jpg"), url: Self.url, spec: Self.spec(32, 32), thumbnailer: thumbnailer)
        #expect(cache.counters == .init(hits: 0, made: 2, joined: 0))
        let image = try DecodedImage(decoding: second.bytes)
        #expect(image.colour(x: 8, y: 6).isClose(to: Fixtures.cmykQuadrants[0], tolerance: 16))
        #expect(first.bytes != second.bytes)
        // After a purge the source is decoded again
        cache.remove(source: Self.url)
        #expect(cache.currentBytes == 0)
    }

    @Test func theBudgetIsKept() throws {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        // Room for two 320x240x3 intermediates (230,400 bytes each), not three
        let cache = try IntermediateCache(maxBytes: 500_000)
        let source = Fixtures.bytes("progressive.jpg")
        for index in 0..<5 {
            _ = try cache.render(source, url: "\(Self.url)?\(index)", spec: Self.spec(64, 64), thumbnailer: thumbnailer)
            #expect(cache.currentBytes <= 500_000)
        }
        #expect(cache.currentBytes == 2 * 320 * 240 * 3)
        // The most recent one is still there
        _ = try cache.render(source, url: "\(Self.url)?4", spec: Self.spec(50, 50), thumbnailer: thumbnailer)
        #expect(cache.counters.hits == 1)
        // A budget of 0 keeps nothing
        let none = try IntermediateCache(maxBytes: 0)
        _ = try none.render(source, url: Self.url, spec: Self.spec(64, 64), thumbnailer: thumbnailer)
        _ = try none.render(source, url: Self.url, spec: Self.spec(64, 64), thumbnailer: thumbnailer)
        #expect(none.counters == .init(hits: 0, made: 2, joined: 0))
    }

    @Test func threadsNeedingTheSameIntermediateDecodeItOnce() throws {
        let thumbnailer = try Thumbnailer(vips: Vips.initialize())
        let cache = try IntermediateCache(maxBytes: 64 << 20)
        let source = Fixtures.bytes("progressive.jpg")
        let makes = Atomic(0)
        let outputs = Mutex<[[UInt8]]>([])
        let specs = try (0..<6).map { try Self.spec(40 + $0 * 10, 40 + $0 * 10) }
        runOnThreads(specs.count) { index in
            let output = try? thumbnailer.render(source, spec: specs[index]) {
                (band, make) throws(ThumbnailError) -> IntermediateImage in
                try cache.intermediate(for: .init(source: Self.url, digest: 1, band: band)) {
                    () throws(ThumbnailError) -> IntermediateImage in
                    makes.add(1, ordering: .relaxed)
                    usleep(100_000)  // long enough that the others arrive while it is being made
                    return try make()
                }
            }
            outputs.withLock { $0.append(output?.bytes ?? []) }
        }
        #expect(outputs.withLock { $0.count } == specs.count)
        #expect(makes.load(ordering: .relaxed) == 1)
        let counters = cache.counters
        #expect(counters.made == 1 && counters.hits + counters.joined == specs.count - 1)
        #expect(outputs.withLock { $0.allSatisfy { !$0.isEmpty } })
    }
}
