// SPDX-License-Identifier: Apache-2.0

/// `If-None-Match` evaluation (RFC 9110 §13.1.2): weak comparison, a list of tags or `*`.
enum EntityTag {
    static func matches(_ ifNoneMatch: String, etag: String) -> Bool {
        let opaque = etag.hasPrefix("W/") ? etag.dropFirst(2) : Substring(etag)
        for candidate in ifNoneMatch.split(separator: ",") {
            let trimmed = Substring(String(candidate).trimmingSpaces)
            if trimmed == "*" { return true }
            let candidateOpaque = trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
            if candidateOpaque == opaque { return true }
        }
        return false
    }
}
