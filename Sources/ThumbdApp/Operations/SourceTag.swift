// SPDX-License-Identifier: Apache-2.0
import Crypto
import OriginFetch

/// A source's tag: `s` and the first 16 hex digits of the SHA-256 of its canonical URL (``SourceURL/string``, the
/// one the cache keys use), e.g. `s3f2a9c0d1b7e4c55`. What `POST /purge` takes in `tags` and answers for each source,
/// and what the purge index (``PurgeIndex``) files every stored source under. 64 bits: two sources of one node
/// sharing a tag would be purged together, a refetch, not a wrong answer.
enum SourceTag {
    static func of(_ source: SourceURL) -> String {
        let digest = SHA256.hash(data: Array(source.string.utf8))
        var text = "s"
        text.reserveCapacity(17)
        let hex = Array("0123456789abcdef")
        for byte in digest.prefix(8) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return text
    }

    /// Whether `text` has a source tag's shape.
    static func isSourceTag(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 17 && bytes[0] == UInt8(ascii: "s")
            && bytes.dropFirst().allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
