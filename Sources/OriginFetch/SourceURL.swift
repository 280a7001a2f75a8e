// SPDX-License-Identifier: Apache-2.0
import CCurl

/// A source URL in canonical form: the coalescing key and what libcurl is asked to fetch.
///
/// Parsed with libcurl's own URL parser (`curl_url`), so the host the policy checks is the host
/// libcurl will connect to: no parser differential between check and use. Normalisation rule:
/// - scheme and host are lower-cased (libcurl accepts any case for both);
/// - the default port is removed (`http://a:80/` is `http://a/`, `https://a:443/` is `https://a/`);
/// - the fragment is dropped (it never reaches the origin);
/// - an empty path becomes `/`, and `.`/`..` segments are resolved (libcurl does this);
/// - percent-encoding, path case and the query are kept byte for byte (origins may treat
///   `%41` and `A`, or `a=1&b=2` and `b=2&a=1`, differently).
///
/// URLs with credentials (`http://user:pass@host/`) are refused: they would send an
/// Authorization header chosen by the client, which thumbd never forwards.
///
/// `s3://bucket/key` names an object in the configured S3-compatible store (`s3.source_buckets`): the bucket is
/// the host, the key the path as sent, percent-decoded once. It has no port and no query (libcurl 7.88 signs a query
/// unsorted), and its key no spelling that could leave the bucket (``ObjectStorage/keyRefusal(_:)``).
package struct SourceURL: Hashable, Sendable, CustomStringConvertible {
    /// `http`, `https` or `s3`.
    package let scheme: String
    /// Lower-cased host; IPv6 literals keep their brackets (`[::1]`).
    package let host: String
    /// The port when it is not the scheme's default.
    package let port: Int?
    /// The whole canonical URL.
    package let string: String
    /// For `s3://`: the object's key (the path without its first slash, percent-decoded once); nil otherwise.
    package let objectKey: String?

    /// The canonical URL.
    package var description: String { string }

    /// Parses and normalises `text`.
    /// - Throws: ``FetchError/invalidURL(detail:)`` for anything libcurl cannot parse, a
    ///   relative URL, credentials or an IPv6 zone id; ``FetchError/schemeForbidden(scheme:)``
    ///   for schemes other than http and https.
    package init(_ text: String) throws(FetchError) {
        // A Swift string may hold NUL; libcurl would read it as the end of the URL and parse only the prefix,
        // so the URL checked and fetched would not be the one the caller gave.
        guard !text.utf8.contains(0) else { throw .invalidURL(detail: "NUL byte in URL") }
        guard let handle = curl_url() else { throw .internalFailure(detail: "curl_url: out of memory") }
        defer { curl_url_cleanup(handle) }
        // NON_SUPPORT_SCHEME: parse any scheme so that ftp: is reported as forbidden, not invalid.
        let flags = UInt32(CURLU_NON_SUPPORT_SCHEME) | UInt32(CURLU_DISALLOW_USER)
        let code = curl_url_set(handle, CURLUPART_URL, text, flags)
        guard code == CURLUE_OK else {
            throw .invalidURL(detail: "\(String(cString: curl_url_strerror(code))): \(text.prefix(200))")
        }
        func part(_ which: CURLUPart, flags: UInt32 = 0) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &value, flags) == CURLUE_OK, let value else { return nil }
            defer { curl_free(value) }
            return String(cString: value)
        }
        let scheme = (part(CURLUPART_SCHEME) ?? "").lowercased()
        guard scheme == "http" || scheme == "https" || scheme == "s3" else { throw .schemeForbidden(scheme: scheme) }
        guard let host = part(CURLUPART_HOST)?.lowercased(), !host.isEmpty else {
            throw .invalidURL(detail: "no host: \(text.prefix(200))")
        }
        guard part(CURLUPART_ZONEID) == nil else { throw .invalidURL(detail: "IPv6 zone id in \(host)") }
        var port = part(CURLUPART_PORT).flatMap { Int($0) }
        if port == (scheme == "https" ? 443 : 80) { port = nil }
        var path = part(CURLUPART_PATH) ?? "/"
        if path.isEmpty { path = "/" }
        let query = part(CURLUPART_QUERY)
        if scheme == "s3" {
            // The key is the path as sent: libcurl's parse above resolved its dot segments, which would hide a
            // `..` that the check below must see.
            guard curl_url_set(handle, CURLUPART_URL, text, flags | UInt32(CURLU_PATH_AS_IS)) == CURLUE_OK,
                let sentPath = part(CURLUPART_PATH), ObjectStorage.isValidBucket(host), port == nil, query == nil,
                let key = Self.percentDecoded(sentPath.utf8.dropFirst())
            else { throw .invalidURL(detail: "s3 URLs are s3://bucket/key: \(text.prefix(200))") }
            if let refusal = ObjectStorage.keyRefusal(key) {
                throw .invalidURL(detail: "s3 URL: \(refusal): \(text.prefix(200))")
            }
            path = sentPath
            self.objectKey = String(decoding: key, as: UTF8.self)
        } else {
            self.objectKey = nil
        }

        var string = "\(scheme)://\(host)"
        if let port { string += ":\(port)" }
        string += path
        if let query { string += "?\(query)" }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.string = string
    }

    /// `text` with each `%XX` decoded once; nil when a `%` is not followed by two hex digits.
    private static func percentDecoded(_ text: Substring.UTF8View) -> [UInt8]? {
        func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            index = text.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard index < text.endIndex, let high = hexValue(text[index]) else { return nil }
            index = text.index(after: index)
            guard index < text.endIndex, let low = hexValue(text[index]) else { return nil }
            index = text.index(after: index)
            decoded.append(high << 4 | low)
        }
        return decoded
    }

    /// The host without IPv6 brackets: what `allowedHosts` and the per-host cap key on.
    var bareHost: String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }
}
