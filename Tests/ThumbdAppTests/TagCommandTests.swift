// SPDX-License-Identifier: Apache-2.0
import OriginFetch
import Testing

@testable import ThumbdApp

/// `thumbd tag`: the tag the server sends and `POST /purge` takes, for any spelling of a source URL.
@Suite struct TagCommandTests {
    private func tag(_ arguments: [String]) throws -> TagCommand {
        try #require(try ThumbdCommand.parseAsRoot(["tag"] + arguments) as? TagCommand)
    }

    @Test func printsTheTagOfTheCanonicalURLForEverySpellingOfIt() throws {
        let canonical = "https://images.example.com/a.jpg"
        let expected = SourceTag.of(try SourceURL(canonical))
        #expect(SourceTag.isSourceTag(expected))
        let result = try tag([
            canonical, "HTTPS://images.example.com:443/a.jpg#top", "https://images.example.com/b.jpg",
        ])
        .taggedOutput()
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == expected + " " + canonical)
        #expect(lines[1] == expected + " " + canonical)
        #expect(lines[2].hasSuffix(" https://images.example.com/b.jpg") && !lines[2].hasPrefix(expected))
    }

    @Test func refusesWhatIsNotAnHTTPURLAndAnEmptyList() throws {
        let result = try tag(["ftp://example.com/a.jpg"]).taggedOutput()
        #expect(result.status == 64)
        #expect(result.output.contains("ftp://example.com/a.jpg is not an absolute http(s) URL"))
        #expect(throws: (any Error).self) { _ = try ThumbdCommand.parseAsRoot(["tag"]) }
    }
}
