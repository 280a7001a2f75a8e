// SPDX-License-Identifier: Apache-2.0
package import OriginFetch
package import Thumbnailing

/// A validated thumbnail request, whatever URL form it came in (``URLForm``): the canonical source URL, what to
/// make of it, and the signature if one was given. `/thumb`'s query parameters: ThumbnailRequest+Query.swift.
package struct ThumbnailRequest: Sendable {
    /// The longest `url` value accepted, in bytes (decoded).
    package static let maxURLBytes = 8 * 1024

    /// The source in canonical form (the fetch coalescing key).
    package let source: SourceURL
    /// The thumbnail to make, not yet normalised by the thumbnailer.
    package let spec: ThumbnailSpec
    /// The signature, when the form carries one (checked by the form's verifier, never logged).
    package let signature: String?
    /// The client hints the plan consulted because it lacked `dpr` or a size (empty when hints are off): the
    /// answer's `Vary` names them.
    package var hintsUsed: ClientHints.Used = []
    /// What the request asks of its answer's headers (a deadline, `Cache-Control`, `Content-Disposition`): not part
    /// of the variant key.
    package var answer = AnswerOptions()
    /// True when the output format depends on the request's `Accept` header (answer with `Vary: Accept`); never for
    /// `raw`, whose answer is the source's own format.
    package var variesOnAccept: Bool { spec.format.isAuto && !spec.operations.raw }
}

extension FormatRequest {
    /// Whether the format is negotiated from `Accept` (the answer then varies on it).
    package var isAuto: Bool {
        if case .auto = self { return true }
        return false
    }
}
