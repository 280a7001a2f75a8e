// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point over `s3://` source URLs, built with -sanitize=fuzzer,address (fuzz/run.sh).
//
// The input is what follows `s3://` (a bucket, a slash and a key, as a client writes them). Besides "no crash, no
// memory error", every input that `SourceURL` accepts for the listed bucket `photos` checks that the request it
// makes stays in `photos`, whoever reads its path:
// - the URL thumbd sends (`ObjectStorage.url`) has the path `/photos/<key>`, and libcurl's own parse, which
//   resolves dot segments, leaves that path as it is (so `CURLOPT_PATH_AS_IS` changes nothing that matters);
// - a store or proxy that decodes the path once more, reads `\` as `/`, merges slashes and resolves dot
//   segments still finds the bucket `photos` first;
// - the key decodes back from that path to `SourceURL.objectKey`, byte for byte.
import CFuzzDriver
import OriginFetch

private let storage = ObjectStorage(
    endpoint: "http://127.0.0.1:9000", region: "us-east-1",
    credentials: ObjectStorageCredentials(accessKeyID: "fuzz", secretAccessKey: "fuzz"))

/// `text` with every `%XX` decoded (a malformed escape is kept as written: a lenient reader's behaviour).
private func decodedOnce(_ text: [UInt8]) -> [UInt8] {
    func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
    var out: [UInt8] = []
    var index = 0
    while index < text.count {
        if text[index] == UInt8(ascii: "%"), index + 2 < text.count, let high = hex(text[index + 1]),
            let low = hex(text[index + 2])
        {
            out.append(high << 4 | low)
            index += 3
        } else {
            out.append(text[index])
            index += 1
        }
    }
    return out
}

/// The segments of `path` as the most lenient store would read them: `\` is `/`, empty segments merge, `.` stays,
/// `..` removes the one before (RFC 3986's remove_dot_segments, and more).
private func lenientSegments(_ path: [UInt8]) -> [[UInt8]] {
    var segments: [[UInt8]] = []
    let slashed = path.map { $0 == UInt8(ascii: "\\") ? UInt8(ascii: "/") : $0 }
    for segment in slashed.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
        if segment.elementsEqual(".".utf8) { continue }
        if segment.elementsEqual("..".utf8) {
            _ = segments.popLast()
            continue
        }
        segments.append(Array(segment))
    }
    return segments
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzObjectKeys(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let text = "s3://" + String(decoding: input, as: UTF8.self)
    guard let source = try? SourceURL(text), source.host == "photos", let key = source.objectKey else { return 0 }
    precondition(source.scheme == "s3", "an s3 URL of scheme \(source.scheme): \(text.debugDescription)")
    let url = storage.url(bucket: source.host, key: key)
    let prefix = "http://127.0.0.1:9000"
    precondition(
        url.hasPrefix(prefix + "/photos/"), "the request leaves the bucket: \(url) for \(text.debugDescription)")
    let path = Array(url.utf8.dropFirst(prefix.utf8.count))

    // libcurl's own parse (dot segments resolved) leaves the path alone.
    guard let parsed = try? SourceURL(url) else {
        preconditionFailure("libcurl cannot parse the request URL \(url) for \(text.debugDescription)")
    }
    precondition(parsed.string == url, "libcurl rewrites \(url) as \(parsed.string) for \(text.debugDescription)")

    // Read as leniently as any store could, once or twice decoded, the first segment is still the bucket, and the
    // segments after it are the key's.
    for reading in [path, decodedOnce(path), decodedOnce(decodedOnce(path))] {
        let segments = lenientSegments(reading)
        precondition(
            segments.first.map { $0.elementsEqual("photos".utf8) } == true,
            "a lenient reader leaves the bucket: \(String(decoding: reading, as: UTF8.self)) for \(text.debugDescription)"
        )
    }
    precondition(
        decodedOnce(Array(path.dropFirst("/photos/".utf8.count))) == Array(key.utf8),
        "the key does not decode back: \(url) for \(key.debugDescription)")
    return 0
}

/// The executable's entry point (SwiftPM aliases `main` to it): runs libFuzzer's driver.
@_cdecl("FuzzObjectKeys_main")
public func thumbdFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    thumbd_fuzz_run(argc, argv)
}
