// SPDX-License-Identifier: Apache-2.0
import Crypto
package import HTTP1

/// thumbor's URL form, mounted at `thumbor.prefix`: `/<signature | unsafe>/[options/]<image>` (``ThumborPath``),
/// signed as thumbor signs (``verify(_:keys:)``), compiled into the plan's typed values (``ThumborPath/plan()``) over the
/// configured presets: the same picture as a `/thumb` URL is the same cache entry.
package struct ThumborForm: RulesReadingForm {
    /// Where the form is mounted (`/` or `/thumbor/`): the path after it is thumbor's.
    package let prefix: String
    package let keys: FormKeys<Keys>
    package let rules: SharedThumbQueryRules
    package let watermarks: any WatermarkNames

    package init(prefix: String, keys: FormKeys<Keys>, rules: SharedThumbQueryRules, watermarks: any WatermarkNames) {
        self.prefix = prefix
        self.keys = keys
        self.rules = rules
        self.watermarks = watermarks
    }

    /// The keys' generation (`thumbor.security_keys`, `.allow_unsafe`).
    @inline(__always)
    package var signingGeneration: UInt64 { keys.generation }

    /// Takes the path apart, checks the signature before anything else, then compiles the options. A `meta/` URL
    /// never comes here (``isMeta(_:)`` sends it to the app's ``ThumborMetaAnswering``): it is refused if it does.
    package func thumbnailRequest(for identity: RequestIdentity) throws(RequestError) -> VerifiedRequest {
        let (request, path, keyGeneration) = try verifiedRequest(for: identity)
        if path.meta { throw .unsupportedOption("meta") }
        return VerifiedRequest(request: request, keyGeneration: keyGeneration)
    }

    /// A `meta/` URL's request and what thumbor's answer lists besides the sizes: the manual crop and the flips.
    package func metaRequest(for identity: RequestIdentity) throws(RequestError) -> (ThumbnailRequest, ThumborPath) {
        let (request, path, _) = try verifiedRequest(for: identity)
        return (request, path)
    }

    /// Whether a request under this form's prefix asks for `meta/` (the segment after the signature): a cheap look
    /// at the path, so that thumbnails go on to the front door untouched.
    /// Reads the request's bytes in place: no `String` is made on the hit path.
    package func isMeta(_ request: HTTPRequest) -> Bool {
        let skipped = prefix.utf8.count
        return request.withPathBytes { path in
            guard path.count > skipped else { return false }
            let rest = path[(path.startIndex + skipped)...]
            guard let slash = rest.firstIndex(of: UInt8(ascii: "/")) else { return false }
            return rest[(slash + 1)...].starts(with: "meta/".utf8)
        }
    }

    private func verifiedRequest(for identity: RequestIdentity) throws(RequestError) -> (
        ThumbnailRequest, ThumborPath, UInt64
    ) {
        // The query is not part of thumbor's signed path: an image URL's own query must be percent-encoded.
        guard identity.query == nil else {
            throw .malformedPath("a query string is not part of a thumbor URL (percent-encode the image's ?)")
        }
        let target = identity.target
        guard target.hasPrefix(prefix) else { throw .malformedPath("not under \(prefix)") }
        let path = try ThumborPath(afterPrefix: target.dropFirst(prefix.count))
        let (values, keyGeneration) = keys.current
        try Self.verify(path, keys: values)
        let (rules, rulesGeneration) = rules.current
        let hints = rules.readsClientHints ? identity.hints ?? ClientHints.none : nil
        let (plan, skipped) = try path.plan(
            refusingSkipped: values.refusesSkippedFilters, exactCrop: values.cropsAsThumbor)
        var request = try plan.request(accept: identity.accept, rules: rules, hints: hints, watermarks: watermarks)
        if !skipped.isEmpty { request.answer.skippedFilters = skipped.joined(separator: ", ") }
        return (request, path, keyGeneration &+ rulesGeneration)
    }

    /// thumbor's check: the URL-safe base64 (with its `=` padding) of HMAC-SHA1, under one of the security keys, of
    /// the path after the signature segment exactly as sent. `unsafe` passes only when `thumbor.allow_unsafe` is on.
    /// The MAC is compared in constant time (swift-crypto's `isValidAuthenticationCode`).
    package static func verify(_ path: ThumborPath, keys: Keys) throws(RequestError) {
        guard let signature = path.signature else {
            guard keys.allowsUnsafe else { throw .missingSignature }
            return
        }
        // 20 bytes: 27 base64url characters and one `=`.
        guard signature.utf8.count == 28, signature.hasSuffix("="),
            let code = URLSignature.base64URLDecoded(signature.utf8.dropLast()), code.count == 20
        else { throw .invalidSignature }
        let signed = Array(path.signedPart.utf8)
        for key in keys.securityKeys
        where HMAC<Insecure.SHA1>.isValidAuthenticationCode(code, authenticating: signed, using: key.key) {
            return
        }
        throw .invalidSignature
    }

    /// thumbor's signature of `signedPart` under `key` (for tests and the playground's examples).
    package static func signature(of signedPart: String, key: String) -> String {
        let code = HMAC<Insecure.SHA1>.authenticationCode(
            for: Array(signedPart.utf8), using: SymmetricKey(data: Array(key.utf8)))
        return URLSignature.base64URLEncoded(Array(code)) + "="
    }
}
