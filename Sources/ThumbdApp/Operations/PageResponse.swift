// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTP1

/// The headers every page gets: a strict Content-Security-Policy whose only script and style are the page's
/// own inline ones, allowed by a fresh nonce per response.
enum PageResponse {
    /// 18 random bytes, base64: unguessable per response, so injected markup cannot carry a valid nonce.
    static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<3 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0.prefix(6) } }
        return Data(bytes).base64EncodedString()
    }

    /// The Content-Security-Policy for a page whose inline `<script>` and `<style>` carry `nonce`.
    static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; img-src 'self' blob: data:; "
            + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    }

    /// A 200 `text/html` response with the page headers.
    static func html(_ html: String, nonce: String) -> HTTPResponse {
        HTTPResponse(
            status: .ok,
            headers: [
                HTTPField(name: "Content-Type", value: "text/html; charset=utf-8"),
                HTTPField(name: "Content-Security-Policy", value: contentSecurityPolicy(nonce: nonce)),
                HTTPField(name: "X-Content-Type-Options", value: "nosniff"),
                HTTPField(name: "Cache-Control", value: "no-store"),
                HTTPField(name: "Referrer-Policy", value: "no-referrer"),
            ],
            body: .bytes(Array(html.utf8)))
    }
}
