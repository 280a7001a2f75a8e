// SPDX-License-Identifier: Apache-2.0
import Foundation
import OriginFetch
import Testing

@testable import ThumbdApp

/// The pieces behind /status: the activity recorder's counts, error ring and top sources, and the redaction of
/// source URLs. (The page's HTML escaping is tested with the page, in PagesTests.)
@Suite(.timeLimit(.minutes(1))) struct StatusPageTests {
    @Test func responsesAreCountedInTheCurrentBucket() {
        // Given a new recorder
        let recorder = ActivityRecorder()

        // When 25 responses are counted
        for _ in 0..<25 { recorder.countResponse() }

        // Then the total is 25, all of them in the last (current) bucket or, at a 10 s boundary, the one before
        let snapshot = recorder.snapshot()
        #expect(snapshot.totalRequests == 25)
        #expect(snapshot.buckets.count == ActivityRecorder.bucketCount)
        #expect(snapshot.buckets.reduce(0, +) == 25)
        #expect(snapshot.buckets.dropLast(2).allSatisfy { $0 == 0 })
    }

    @Test func theErrorRingKeepsTheLastTwentyNewestFirst() {
        // Given a recorder
        let recorder = ActivityRecorder()

        // When 25 errors are kept
        for index in 0..<25 {
            recorder.keepError(
                status: 400 + index % 5, method: "GET", route: "/r\(index)", note: index == 24 ? "MISS" : nil)
        }

        // Then the last 20 remain, newest first, with a short message
        let errors = recorder.snapshot().errors
        #expect(errors.count == ActivityRecorder.errorCapacity)
        #expect(errors.map(\.route) == (5..<25).reversed().map { "/r\($0)" })
        #expect(errors.first?.message == "Not Found (X-Cache: MISS)")
        #expect(errors.last?.message == "Bad Request")
    }

    @Test func topSourcesCountHostsAndURLsWithinABoundedTable() throws {
        // Given a recorder that counts every source (period 1)
        let recorder = ActivityRecorder(sourceSamplePeriod: 1)
        let hot = try SourceURL("http://images.example/hot.jpg")

        // When one URL is asked 50 times, among 200 others asked once each
        for index in 0..<200 {
            let other = try SourceURL("http://other\(index % 3).example/\(index).jpg")
            recorder.noteSource(other)
            if index % 4 == 0 { recorder.noteSource(hot) }
        }

        // Then the hot URL is first, its host is among the hosts, and the tables stay bounded
        let snapshot = recorder.snapshot(top: 10)
        #expect(snapshot.topURLs.first == .init(name: "http://images.example/hot.jpg", requests: 50))
        #expect(snapshot.topURLs.count == 10)
        #expect(snapshot.topHosts.map(\.name).contains("images.example"))
        #expect(snapshot.topHosts.count == 4)
    }

    @Test func spaceSavingKeepsAFrequentNameWhenTheTableIsFull() {
        // Given a table of 4 counters
        var table = SpaceSaving(capacity: 4)

        // When a frequent name is interleaved with a stream of distinct names
        for index in 0..<100 {
            table.add("frequent", weight: 1)
            table.add("rare\(index)", weight: 1)
        }

        // Then the frequent name is still counted, first, and the table never grew
        #expect(table.counts.count == 4)
        #expect(table.top(1).first?.name == "frequent")
        #expect((table.top(1).first?.requests ?? 0) >= 100)

        // When the counts decay twice
        table.decay(halvings: 2)

        // Then they are quartered
        #expect((table.top(1).first?.requests ?? 0) >= 25)
    }

    @Test func secretQueryParametersAreRedactedFromSourceURLs() {
        // Given source URLs with credentials in their queries
        let cases = [
            (
                "http://a.example/x.jpg?id=7&X-Amz-Signature=abc&X-Amz-Credential=def",
                "http://a.example/x.jpg?id=7&X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED"
            ),
            ("http://a.example/x.jpg?%73ig=abc&token=t", "http://a.example/x.jpg?%73ig=REDACTED&token=REDACTED"),
            ("http://a.example/x.jpg?id=7", "http://a.example/x.jpg?id=7"),
            ("http://a.example/x.jpg", "http://a.example/x.jpg"),
        ]
        for (url, expected) in cases {
            // When redacted / Then only the secret values are gone
            #expect(LoggingRedaction.redactingSecrets(in: url) == expected)
        }
    }
}
