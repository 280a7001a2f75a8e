// SPDX-License-Identifier: Apache-2.0

/// `/thumb?url=…&w=…&h=…[&sig=…]`: the options in the query (``ThumbnailRequest/init(parameters:accept:)``), signed
/// with `sig` over the canonical query (``URLSignature``) when `security.signing_keys` is set.
struct ThumbQueryForm: URLForm {
    let verifier: URLSignatureVerifier
    /// The named watermarks `wm=` may use (their digests go into the key).
    var watermarks = WatermarkSource.none

    var keyGeneration: UInt64 { verifier.keyGeneration }

    /// Decodes the query once, checks `sig` on it, then validates the parameters.
    func thumbnailRequest(for identity: RequestIdentity) throws(RequestError) -> VerifiedRequest {
        let parameters = try QueryParameters(parsing: identity.query ?? "")
        let keyGeneration = try verifier.verify(parameters)
        return VerifiedRequest(
            request: try ThumbnailRequest(parameters: parameters, accept: identity.accept, watermarks: watermarks),
            keyGeneration: keyGeneration
        )
    }
}
