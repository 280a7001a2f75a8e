// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point over the /thumb parameter parser, `ThumbnailRequest(rawQuery:accept:)` (built with
// -sanitize=fuzzer,address; see fuzz/run.sh).
//
// The input is the raw query string; when it holds a line feed, the bytes after the first one are the `Accept`
// header (for `format=auto`). Besides "no crash, no memory error", every input checks:
// - a refusal is a `RequestError` that names a parameter and whose public message is short (≤ 200 bytes) and
//   free of control characters (it is sent to the client);
// - an accepted request's variant key ends with " " + its canonical source URL;
// - the canonical query of the plan (`ThumbnailRequest.canonicalQuery(source:spec:)`), parsed again with the same
//   `Accept`, gives the same source and spec, hence the same normalised spec and variant key, and is its own
//   canonical query: two spellings of one plan share one key. The same holds for the normalised spec's query.
import CFuzzDriver
import OriginFetch
import Thumbnailing
import URLForms

/// The normaliser of the variant key, with the default configuration. libvips starts once, before the first
/// input (`thumbdFuzzMain`), never per input.
private let thumbnailer: Thumbnailer = {
    do {
        return try Thumbnailer(vips: Vips.initialize(programName: "FuzzThumbParameters"))
    } catch {
        fatalError("cannot start libvips: \(error)")
    }
}()

private let maxPublicMessageBytes = 200

private func checkRefusal(_ error: RequestError, query: String) {
    precondition(!error.parameter.isEmpty, "a refusal names no parameter: \(error) for \(query.debugDescription)")
    let message = error.publicMessage
    precondition(
        message.utf8.count <= maxPublicMessageBytes,
        "public message of \(message.utf8.count) bytes: \(message.debugDescription)")
    precondition(
        !message.unicodeScalars.contains { $0.properties.generalCategory == .control },
        "control character in the public message: \(message.debugDescription)")
}

private func checkCanonicalQuery(
    of request: ThumbnailRequest, spec: ThumbnailSpec, accept: String?, normalized: ThumbnailSpec, key: String,
    exact: Bool
) {
    let canonical = ThumbnailRequest.canonicalQuery(source: request.source, spec: spec)
    let again: ThumbnailRequest
    do {
        again = try ThumbnailRequest(rawQuery: canonical, accept: accept)
    } catch {
        fatalError("the canonical query \(canonical.debugDescription) is refused: \(error.publicMessage)")
    }
    precondition(again.source == request.source, "the source changes: \(again.source) for \(canonical)")
    // The normalised spec's query fills in defaults (quality) and drops formats from `auto`, so only the query of
    // the spec as parsed comes back as the very same value.
    precondition(!exact || again.spec == spec, "the spec changes: \(again.spec) for \(canonical)")
    precondition(thumbnailer.normalized(again.spec) == normalized, "the plan changes for \(canonical)")
    let keyAgain = VariantKeyText.description(source: again.source, spec: thumbnailer.normalized(again.spec))
    precondition(keyAgain == key, "the key changes: \(keyAgain) for \(canonical), was \(key)")
    let canonicalAgain = ThumbnailRequest.canonicalQuery(source: again.source, spec: again.spec)
    precondition(canonicalAgain == canonical, "the canonical query is not stable: \(canonicalAgain) for \(canonical)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzThumbParameters(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let newline = input.firstIndex(of: UInt8(ascii: "\n"))
    let query = String(decoding: input[..<(newline ?? input.endIndex)], as: UTF8.self)
    let accept = newline.map { String(decoding: input[($0 + 1)...], as: UTF8.self) }

    let request: ThumbnailRequest
    do {
        request = try ThumbnailRequest(rawQuery: query, accept: accept)
    } catch {
        checkRefusal(error, query: query)
        return 0
    }
    let normalized = thumbnailer.normalized(request.spec)
    let key = VariantKeyText.description(source: request.source, spec: normalized)
    precondition(key.hasSuffix(" " + request.source.string), "the key does not end with the source: \(key)")
    checkCanonicalQuery(
        of: request, spec: request.spec, accept: accept, normalized: normalized, key: key, exact: true)
    checkCanonicalQuery(
        of: request, spec: normalized, accept: accept, normalized: normalized, key: key, exact: false)
    return 0
}

/// The executable's entry point (SwiftPM aliases `main` to it): starts libvips, then runs libFuzzer's driver.
@_cdecl("FuzzThumbParameters_main")
public func thumbdFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    _ = thumbnailer
    return thumbd_fuzz_run(argc, argv)
}
