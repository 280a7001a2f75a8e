// SPDX-License-Identifier: Apache-2.0

import Testing

@testable import ThumbdSettings

@Suite struct ByteSizeTests {
    @Test(arguments: [
        ("0", 0),
        ("1048576", 1_048_576),
        ("100_000", 100_000),
        ("512B", 512),
        ("1KB", 1_000),
        ("1KiB", 1_024),
        ("256MB", 256_000_000),
        ("256MiB", 268_435_456),
        ("10GB", 10_000_000_000),
        ("10GiB", 10_737_418_240),
        ("2TB", 2_000_000_000_000),
        ("1TiB", 1_099_511_627_776),
        ("256mb", 256_000_000),
        ("64 KiB", 65_536),
        (" 25MB ", 25_000_000),
    ])
    func parsesSizes(text: String, bytes: Int) throws {
        // Given a size as an operator writes it, when parsed, then the byte count is exact.
        #expect(try ByteSize.parse(text) == bytes)
    }

    @Test(arguments: [
        "", "MB", "1.5GB", "-1", "10 GB B", "10XB", "10mbit", "1__0", "_10", "99999999999999999999", "9000000TiB",
    ])
    func refusesMalformedSizes(text: String) {
        // Given text that is not a whole size, when parsed, then an error explains it.
        #expect(throws: InvalidValue.self) { try ByteSize.parse(text) }
    }

    @Test(arguments: [
        (0, "0"), (1_500, "1500"), (1_048_576, "1MiB"), (256_000_000, "256MB"), (10_000_000_000, "10GB"),
        (1_024, "1KiB"), (2_000, "2KB"), (1_000_000_000_000, "1TB"), (1_099_511_627_776, "1TiB"),
    ])
    func formatsWithTheLargestExactUnit(bytes: Int, text: String) throws {
        // Given a byte count, when formatted, then it reads as an operator would write it and parses back.
        #expect(ByteSize.format(bytes) == text)
        #expect(try ByteSize.parse(text) == bytes)
    }
}
