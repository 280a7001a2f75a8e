// SPDX-License-Identifier: Apache-2.0

/// One way of writing a thumbnail request in a URL, reduced to the one step that differs between forms: from a
/// request's identity (target and `Accept`) to a verified ``ThumbnailRequest``.
///
/// `/thumb?url=…&w=…` is ``ThumbQueryForm``; a form that carries its options in the path (thumbor's, imgproxy's)
/// is another conformance, mounted with `ThumbnailService.handler(for:)`. Everything around the step is shared by
/// every form and lives in ``ThumbnailService``: before it, each loop's hot set and the alias table, keyed by the
/// request's ``RequestIdentity`` (a repeated request of any form skips the step); after it, the cache tiers,
/// coalescing and rendering, keyed by the ``VariantKey`` the request names (the same picture asked in two forms
/// is one entry, one fetch and one render).
package protocol URLForm: Sendable {
    /// The generation of everything besides the request that its parse depends on: the signing keys this form
    /// verifies with (``URLSignatureVerifier/keyGeneration``) and, for `/thumb`, its presets and rules
    /// (``SharedThumbQueryRules/generation``). A request remembered as parsed under another generation is parsed and
    /// verified again. Read on every request, hot ones included: keep it an atomic load or two. It must change
    /// whenever any of these does, and never come back to an earlier value.
    var keyGeneration: UInt64 { get }

    /// Whether the form reads the request's client hints now (`image.client_hints`): they are then part of the
    /// request's identity (``RequestIdentity/hints``).
    var readsClientHints: Bool { get }

    /// ``keyGeneration`` and ``readsClientHints`` as one read, the first thing every request asks, hot ones included
    /// (the hit path with hints off must cost what it did before hints: keep it the loads of ``keyGeneration``).
    var frontDoorState: (keyGeneration: UInt64, readsClientHints: Bool) { get }

    /// Parses the request's target, verifies its signature before validating anything else (an unsigned request
    /// learns nothing about its options), then validates its options.
    /// - Returns: the request and the generation of the keys that verified it.
    /// - Throws: `RequestError`: 400 naming the option, 403 for a missing or invalid signature.
    func thumbnailRequest(for identity: RequestIdentity) throws(RequestError) -> VerifiedRequest
}

extension URLForm {
    /// A form reads no client hints unless it says so.
    package var readsClientHints: Bool { false }

    package var frontDoorState: (keyGeneration: UInt64, readsClientHints: Bool) { (keyGeneration, readsClientHints) }
}

/// A form whose parse reads `/thumb`'s presets and rules (``SharedThumbQueryRules``) besides its own signing keys:
/// all three forms. Its generation is the keys' plus the rules' (both only grow, so the sum moves when either does),
/// and it reads client hints when the rules say so, both from one load of the rules' generation, which carries the
/// hints flag in its lowest bit.
package protocol RulesReadingForm: URLForm {
    /// `/thumb`'s presets and rules.
    var rules: SharedThumbQueryRules { get }
    /// The generation of the form's own signing keys (one atomic load).
    var signingGeneration: UInt64 { get }
}

extension RulesReadingForm {
    package var keyGeneration: UInt64 { signingGeneration &+ rules.generation }

    package var readsClientHints: Bool { rules.readsClientHints }

    @inline(__always)
    package var frontDoorState: (keyGeneration: UInt64, readsClientHints: Bool) {
        let rulesGeneration = rules.generation
        return (signingGeneration &+ rulesGeneration, SharedThumbQueryRules.readsClientHints(rulesGeneration))
    }
}

/// What a ``URLForm`` made of a request: the thumbnail it names and the signing keys it was verified under.
package struct VerifiedRequest: Sendable {
    package let request: ThumbnailRequest
    /// ``URLForm/keyGeneration`` of what the parse used; what the alias table remembers it under.
    package let keyGeneration: UInt64
}
