// SPDX-License-Identifier: Apache-2.0
import Testing
import Thumbnailing

@testable import URLForms

/// Which optional formats an `Accept` header admits: only explicit `image/avif` / `image/webp` with q > 0.
@Suite struct AcceptHeaderTests {
    static let cases: [(header: String?, accepted: AcceptedFormats)] = [
        (nil, []),
        ("", []),
        ("*/*", []),
        ("image/*", []),
        ("image/*,*/*;q=0.8", []),
        ("image/webp", [.webp]),
        ("image/avif", [.avif]),
        // Browsers' real headers.
        ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", [.avif, .webp]),  // Chrome
        ("image/avif,image/webp,*/*", [.avif, .webp]),  // Firefox
        (
            "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,"
                + "image/*;q=0.8,*/*;q=0.5", [.avif, .webp, .jxl]
        ),  // Safari
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", []),
        // Case, spaces, parameters.
        ("IMAGE/WEBP", [.webp]),
        ("Image/Avif", [.avif]),
        ("  image/webp  ,\timage/avif\t", [.avif, .webp]),
        ("image/webp;level=1;q=0.5", [.webp]),
        ("image/webp; q=1", [.webp]),
        ("image/webp;q=0.001", [.webp]),
        // q=0 means "not acceptable", in every spelling.
        ("image/webp;q=0", []),
        ("image/webp;q=0.0", []),
        ("image/webp;q=0.000", []),
        ("image/webp;q=0.", []),
        ("image/webp; Q=0", []),
        ("image/webp ; q = 0", []),
        ("image/avif;q=0,image/webp", [.webp]),
        ("image/avif,image/webp;q=0", [.avif]),
        // Near misses are not the format.
        ("image/webpx", []),
        ("image/web", []),
        ("image/webp-x", []),
        ("application/webp", []),
        ("image/avif-sequence", []),
        (",,;,", []),
        (";q=0", []),
    ]

    @Test(arguments: cases)
    func acceptedFormats(_ header: String?, accepted: AcceptedFormats) {
        #expect(AcceptHeader.acceptedFormats(header) == accepted)
    }
}
