// SPDX-License-Identifier: Apache-2.0

/// imgproxy's URLs (`imgproxy.*`), mounted at a prefix (`/imgproxy/`, or `/` for imgproxy's own layout):
/// `/<signature>/<options>/plain/<source URL>[@<ext>]` or `/<signature>/<options>/<base64url source>[.<ext>]`.
///
/// The one step this form does (``URLForm``): the path is read by imgproxy's grammar (``ImgproxyPath``), its
/// signature checked as imgproxy checks it (``ImgproxySignature``, under its ``Keys``) before any option is
/// looked at, then the options are compiled into the plan's typed values (``ImgproxyOptions``, a ``ThumbnailPlan``)
/// and built into a ``ThumbnailRequest`` by `/thumb`'s own rules, presets and limits. So an imgproxy URL and
/// the `/thumb` URL of the same picture are one variant key. docs/compatibility.md lists what is supported, what
/// differs and what is refused.
///
/// ```swift
/// let form = ImgproxyForm(prefix: "/imgproxy/", keys: keys, rules: rules, watermarks: watermarks)
/// router.add(.get, prefix: "/imgproxy/", handler: thumbnails.handler(for: form))
/// ```
package struct ImgproxyForm: RulesReadingForm {
    /// Where the form is mounted: starts and ends with `/`.
    package let prefix: String
    package let keys: FormKeys<Keys>
    package let rules: SharedThumbQueryRules
    /// The named watermarks: imgproxy's `watermark` draws the one named ``ImgproxyOptions/watermarkName``.
    package let watermarks: any WatermarkNames

    package init(prefix: String, keys: FormKeys<Keys>, rules: SharedThumbQueryRules, watermarks: any WatermarkNames) {
        self.prefix = prefix
        self.keys = keys
        self.rules = rules
        self.watermarks = watermarks
    }

    /// The keys' generation (`imgproxy.keys`, `.salts`, `.signature_size`).
    @inline(__always)
    package var signingGeneration: UInt64 { keys.generation }

    /// Splits off the signature and checks it over the path it covers, then reads the options under the rules in
    /// force (read after the signature, with their generation) and builds the request as `/thumb` does.
    package func thumbnailRequest(for identity: RequestIdentity) throws(RequestError) -> VerifiedRequest {
        let path = try ImgproxyPath(target: identity.target, prefix: prefix)
        let (keyValues, keysGeneration) = keys.current
        try ImgproxySignature.verify(path.signature, path: path.signedPath.utf8, keys: keyValues)
        let (rules, rulesGeneration) = rules.current
        let components = try path.components(presetsOnly: rules.allowsOnlyPresets)
        let plan = try ImgproxyOptions.plan(components, rules: rules)
        // A request read without hints (the rules changed since) parses as one that sent none.
        let hints = rules.readsClientHints ? identity.hints ?? ClientHints.none : nil
        return VerifiedRequest(
            request: try plan.request(accept: identity.accept, rules: rules, hints: hints, watermarks: watermarks),
            keyGeneration: keysGeneration &+ rulesGeneration)
    }
}
