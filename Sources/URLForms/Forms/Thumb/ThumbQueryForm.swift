// SPDX-License-Identifier: Apache-2.0

/// `/thumb?url=…&w=…&h=…[&preset=…][&sig=…]`: the options in the query (``ThumbnailRequest/init(parameters:accept:rules:hints:)``)
/// over the configured presets (``ThumbQueryRules``), signed with `sig` over the canonical query as sent
/// (``URLSignature``, `preset` included, not what it expands to) when `security.signing_keys` is set.
package struct ThumbQueryForm: RulesReadingForm {
    package let verifier: URLSignatureVerifier
    package let rules: SharedThumbQueryRules
    /// The named watermarks `wm=` may use (their digests go into the key; fixed for the process's life).
    package let watermarks: any WatermarkNames

    package init(
        verifier: URLSignatureVerifier, rules: SharedThumbQueryRules = SharedThumbQueryRules(),
        watermarks: any WatermarkNames = .none
    ) {
        self.verifier = verifier
        self.rules = rules
        self.watermarks = watermarks
    }

    /// `security.signing_keys`' generation.
    @inline(__always)
    package var signingGeneration: UInt64 { verifier.keyGeneration }

    /// Decodes the query once, checks `sig` on it, then validates the parameters under the rules in force (read
    /// after the signature, with their generation: what is remembered of this parse carries the generation of the
    /// rules it used).
    package func thumbnailRequest(for identity: RequestIdentity) throws(RequestError) -> VerifiedRequest {
        let parameters = try QueryParameters(parsing: identity.query ?? "")
        let keyGeneration = try verifier.verify(parameters)
        let (rules, rulesGeneration) = rules.current
        // A request read without hints (the rules changed since) parses as one that sent none.
        let hints = rules.readsClientHints ? identity.hints ?? ClientHints.none : nil
        return VerifiedRequest(
            request: try ThumbnailRequest(
                parameters: parameters, accept: identity.accept, rules: rules, hints: hints, watermarks: watermarks),
            keyGeneration: keyGeneration &+ rulesGeneration)
    }
}
