// SPDX-License-Identifier: Apache-2.0
// libFuzzer entry point over the foreign URL forms' parsers (thumbor's and imgproxy's), built with
// -sanitize=fuzzer,address (fuzz/run.sh).
//
// The input is a thumbor path after the form's prefix (`unsafe/fit-in/300x200/filters:…/host/a.jpg`), or, when it
// starts with `/`, an imgproxy target (`/insecure/rs:fit:300:200/plain/http://host/a.jpg@webp`). Besides "no crash, no
// memory error", every input checks:
// - the signature check (under a fixed key) and the parse either pass or refuse with a `RequestError` that names
//   something and whose public message is short (≤ 200 bytes) and free of control characters;
// - an accepted thumbor URL's image begins with a segment of the size's shape (`[-]digitsx[-]digits`, which thumbor's
//   grammar reads as a size however many digits it has) only when the grammar had passed the size's place
//   (`ThumborPath.lastPart`);
// - an accepted URL's plan, written back as its one `/thumb` query (`ThumbnailRequest.canonicalQuery`), parses
//   to the same source and the same normalised plan, hence the same variant key: the foreign URL and `/thumb`
//   share one cache entry.
import CFuzzDriver
import OriginFetch
import Thumbnailing
import URLForms

private let thumbnailer: Thumbnailer = {
    do {
        return try Thumbnailer(vips: Vips.initialize(programName: "FuzzDialectURLs"))
    } catch {
        fatalError("cannot start libvips: \(error)")
    }
}()

private func checkRefusal(_ error: RequestError, input: String) {
    precondition(!error.parameter.isEmpty, "a refusal names nothing: \(error) for \(input.debugDescription)")
    let message = error.publicMessage
    precondition(
        message.utf8.count <= 200, "public message of \(message.utf8.count) bytes: \(message.debugDescription)")
    precondition(
        !message.unicodeScalars.contains { $0.properties.generalCategory == .control },
        "control character in the public message: \(message.debugDescription)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDialectURLs(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    // A path that starts with `/` is an imgproxy target (prefix `/`); anything else is a thumbor path after its
    // prefix.
    let isImgproxy = input.hasPrefix("/")
    do {
        if isImgproxy {
            try DialectParsing.verifyImgproxy(input, key: Array("fuzz-key".utf8), salt: Array("salt".utf8))
        } else {
            try DialectParsing.verifyThumbor(input[...], key: "fuzz-key")
        }
    } catch {
        checkRefusal(error, input: input)
    }
    let request: ThumbnailRequest
    do {
        request =
            isImgproxy
            ? try DialectParsing.imgproxy(input, accept: nil) : try DialectParsing.thumbor(input[...], accept: nil)
    } catch {
        checkRefusal(error, input: input)
        return 0
    }
    if !isImgproxy, let path = try? ThumborPath(afterPrefix: input[...]) {
        // thumbor's grammar takes a segment of a size's shape (`[-]W|origx[-]H|orig`, any run of digits) as the
        // size whenever the size's place has not been passed: the image may begin with one only after a size or a
        // later part (an alignment, `smart/`, filters). The image's last segment (no `/` after it) is never a size.
        func isSizeShaped(_ text: Substring) -> Bool {
            let sides = text.split(separator: "x", omittingEmptySubsequences: false)
            return sides.count == 2
                && sides.allSatisfy { side in
                    let digits = side.hasPrefix("-") ? side.dropFirst() : side[...]
                    return digits == "orig" || digits.utf8.allSatisfy { (0x30...0x39).contains($0) }
                }
        }
        if let slash = path.image.firstIndex(of: "/"), isSizeShaped(path.image[..<slash]) {
            precondition(
                path.lastPart.map { $0 >= .size } ?? false,
                "a size became the image's first segment after \(String(describing: path.lastPart)): \(input.debugDescription)"
            )
        }
    }
    let normalized = thumbnailer.normalized(request.spec)
    let key = VariantKeyText.description(source: request.source, spec: normalized)
    let query = ThumbnailRequest.canonicalQuery(source: request.source, spec: request.spec)
    let again: ThumbnailRequest
    do {
        again = try ThumbnailRequest(rawQuery: query, accept: nil)
    } catch {
        fatalError("the /thumb query \(query.debugDescription) of \(input.debugDescription) is refused: \(error)")
    }
    precondition(again.source == request.source, "the source changes: \(again.source) for \(query)")
    let keyAgain = VariantKeyText.description(source: again.source, spec: thumbnailer.normalized(again.spec))
    precondition(keyAgain == key, "the key changes: \(keyAgain) for \(query), was \(key) (\(input.debugDescription))")
    return 0
}

/// The executable's entry point (SwiftPM aliases `main` to it): starts libvips, then runs libFuzzer's driver.
@_cdecl("FuzzDialectURLs_main")
public func thumbdFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    _ = thumbnailer
    return thumbd_fuzz_run(argc, argv)
}
