// SPDX-License-Identifier: Apache-2.0
import Caching
import OriginFetch
import Testing
import ThumbdSettings
import ThumbdTestSupport
import Thumbnailing

@testable import ThumbdApp

/// The shared tier's parts that need no store: the breaker, the objects' metadata, and where credentials come from.
@Suite struct SharedTierPartsTests {
    @Test func theBreakerOpensAfterFailuresInARowProbesOnceAfterThePauseAndClosesOnSuccess() async throws {
        let breaker = CircuitBreaker(failures: 3, pause: .milliseconds(100))
        for _ in 0..<2 { breaker.record(success: false) }
        breaker.record(success: true)  // a success resets the count
        for _ in 0..<2 { breaker.record(success: false) }
        #expect(breaker.admit() && !breaker.isOpen)
        breaker.record(success: false)
        #expect(breaker.isOpen && !breaker.admit() && !breaker.admit(probing: false))
        try await Task.sleep(for: .milliseconds(150))
        #expect(!breaker.admit(probing: false))  // writes never probe
        #expect(breaker.admit())  // one probe
        #expect(!breaker.admit())  // and only one
        breaker.record(success: false)  // the probe failed: another pause
        #expect(breaker.isOpen && breaker.openings == 2 && !breaker.admit())
        try await Task.sleep(for: .milliseconds(150))
        #expect(breaker.admit())
        breaker.record(success: true)
        #expect(!breaker.isOpen && breaker.admit(probing: false) && breaker.openings == 2)
    }

    @Test func anObjectsMetadataCarriesFreshnessAndValidatorsAndItsChecksumGuardsItsBytes() throws {
        let freshness = DiskCache.Freshness(
            validatedAt: Timestamp(millisecondsSinceEpoch: 1_000), expiresAt: Timestamp(millisecondsSinceEpoch: 9_000),
            staleIfErrorUntil: nil, originETag: "\"abc\"", originLastModified: "Wed, 21 Oct 2015 07:28:00 GMT")
        let body: [UInt8] = [1, 2, 3]
        var metadata = Dictionary(
            uniqueKeysWithValues: SharedObject.metadata(freshness: freshness, etag: "\"e\"").map { ($0.name, $0.value) }
        )
        metadata["thumbd-sha256"] = SharedObject.sha256Hex(body)
        let object = FetchedSource(
            body: body, requestedURL: "", finalURL: "", status: 200, contentType: "image/png", headers: .init(),
            metadata: metadata)
        #expect(SharedObject.isIntact(object))
        #expect(SharedObject.freshness(of: object) == freshness)
        #expect(SharedObject.variant(from: object)?.etag == "\"e\"")
        let altered = FetchedSource(
            body: [1, 2, 4], requestedURL: "", finalURL: "", status: 200, contentType: "image/png", headers: .init(),
            metadata: metadata)
        #expect(!SharedObject.isIntact(altered))
        metadata["thumbd-expires-at"] = "soon"
        let garbled = FetchedSource(
            body: body, requestedURL: "", finalURL: "", status: 200, contentType: "image/png", headers: .init(),
            metadata: metadata)
        #expect(SharedObject.freshness(of: garbled) == nil)
        #expect(SharedObject.printable("caf\u{E9}") == nil && SharedObject.printable(" x") == nil)
    }

    @Test func credentialsComeFromTheFilesDefaultSectionElseTheEnvironment() throws {
        let file = """
            [other]
            aws_access_key_id = WRONG
            [default]
            aws_access_key_id = AKIAFILE
            aws_secret_access_key = file-secret
            """
        let pair = try #require(Settings.defaultCredentials(inSharedCredentialsFile: file))
        #expect(pair.accessKeyID == "AKIAFILE" && pair.secretAccessKey == "file-secret")
        #expect(Settings.defaultCredentials(inSharedCredentialsFile: "[other]\naws_access_key_id = X\n") == nil)
        var settings = Settings()
        settings.s3.endpoint = "http://127.0.0.1:9000"
        let storage = try #require(
            try settings.objectStorage(environment: ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "s"]))
        #expect(storage.credentials.accessKeyID == "AKIAENV" && storage.endpoint == "http://127.0.0.1:9000")
        #expect(throws: SettingsError.self) { try settings.objectStorage(environment: [:]) }
        settings.s3.endpoint = ""
        #expect(try settings.objectStorage(environment: [:]) == nil)
    }
}

extension SharedTierPartsTests {
    @Test func writesUnderWayAreBoundedInCountAndInBytes() throws {
        // Given a store whose connections never complete (a full accept queue), so writes stay under way
        let blackhole = try BlackholeListener()
        let fetcher = try OriginFetcher(configuration: .init())
        defer { fetcher.shutdown() }
        let storage = ObjectStorage(
            endpoint: "http://127.0.0.1:\(blackhole.port)", region: "us-east-1",
            credentials: .init(accessKeyID: "AKIAEXAMPLE", secretAccessKey: "secret"))
        let tier = SharedTier(
            fetcher: fetcher, storage: storage,
            settings: .init(
                bucket: "bucket", prefix: "t/", timeout: .seconds(30), breakerFailures: 5, breakerPause: .seconds(30),
                putQueue: 3, keepsSources: true, maxPutBytes: 1_000))
        let freshness = DiskCache.Freshness(
            validatedAt: Timestamp.now(), expiresAt: Timestamp.now().advanced(by: .seconds(60)))
        func variant(_ bytes: Int) -> RenderedVariant {
            RenderedVariant(bytes: [UInt8](repeating: 7, count: bytes), format: .png, freshness: freshness)
        }
        let spec = try ThumbnailSpec(width: 10, height: nil, format: .exactly(.png))
        func key(_ index: Int) throws -> VariantKey {
            VariantKey(source: try SourceURL("http://img.test/\(index).png"), spec: spec)
        }

        // When four writes of 400 bytes are asked
        for index in 0..<4 { tier.store(try key(index), variant(400), replacing: false) }

        // Then two are under way (a third would pass 1,000 bytes) and two were dropped; a small one still fits both
        // bounds (a third slot of three, 900 bytes)
        var counters = tier.counters
        #expect(counters.putsUnderWay == 2 && counters.puts[.dropped] == 2)
        tier.store(try key(4), variant(100), replacing: false)
        counters = tier.counters
        #expect(counters.putsUnderWay == 3 && counters.puts[.dropped] == 2)
        // and with three under way, even a tiny write is dropped
        tier.store(try key(5), variant(1), replacing: false)
        #expect(tier.counters.puts[.dropped] == 3 && tier.counters.putsUnderWay == 3)
    }
}

extension SharedTierPartsTests {
    @Test func bucketNamesAreCheckedWhereTheStoreIsMade() {
        var settings = Settings()
        settings.s3.endpoint = "http://127.0.0.1:9000"
        let environment = ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "s"]
        settings.cache.shared.isEnabled = true
        settings.cache.shared.bucket = "Not_A_Bucket"
        #expect(throws: SettingsError.self) { try settings.objectStorage(environment: environment) }
        settings.cache.shared.bucket = "thumbs"
        settings.s3.sourceBuckets = ["photos", "../x"]
        #expect(throws: SettingsError.self) { try settings.objectStorage(environment: environment) }
        settings.s3.sourceBuckets = ["photos"]
        #expect((try? settings.objectStorage(environment: environment)) != nil)
    }
}
