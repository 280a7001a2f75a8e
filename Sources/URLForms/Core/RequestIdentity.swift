// SPDX-License-Identifier: Apache-2.0
package import HTTP1

/// Who a request is to the tables that remember answers: its whole target, path and query as sent (not decoded),
/// and the `Accept` it negotiates on. The key of each event loop's hot set (as bytes, ``HotSetKey``) and of the
/// alias table (``ThumbnailCache/aliasKey(target:accept:)``).
///
/// Two requests with one identity reach the same route, so the same ``URLForm``, and name the same thumbnail.
/// Nothing in it belongs to a URL form: a form that carries its options in the path is remembered exactly like
/// `/thumb?url=…&w=…`, and a repeated request of any form is answered without its form's parse step.
///
/// When the form reads client hints (``URLForm/readsClientHints``, `image.client_hints`), the hints are part of the
/// identity too (``variation``): the same URL from a screen of another pixel ratio is another thumbnail.
package struct RequestIdentity: Sendable {
    /// The raw target from the path on (``HTTPRequest/target``).
    package let target: String
    /// The `Accept` value, its lines joined with `, ` when it came on several (RFC 9110 §5.3: reading only the
    /// first would miss `image/webp` on a second line); `nil` when none was sent.
    package let accept: String?
    /// The request's client hints when the form reads them; nil when it does not.
    package let hints: ClientHints?
    /// ``ClientHints/identityText(accept:)``, made once (with hints only).
    private let hintedVariation: String?

    /// The identity of `request` (its client hints left out).
    package init(_ request: HTTPRequest) {
        target = request.target
        accept = request.listValue(of: "accept")
        hints = nil
        hintedVariation = nil
    }

    /// The identity of `request` with its client hints `hints` (``ClientHints/init(_:)``).
    package init(_ request: HTTPRequest, hints: ClientHints) {
        target = request.target
        let accept = request.listValue(of: "accept")
        self.accept = accept
        self.hints = hints
        hintedVariation = hints.identityText(accept: accept)
    }

    /// What besides the target tells two requests apart: the `Accept` value, or with hints read, the `Accept` and
    /// the hints (``ClientHints/identityText(accept:)``, which never equals an `Accept` value).
    @inline(__always)
    package var variation: String? {
        hints == nil ? accept : hintedVariation
    }

    /// Calls `body` with the bytes of ``target`` and ``variation``: the hot-set key (``HotSetKey``) of a request read
    /// with its hints. (Without hints, the hot set reads the request's bytes in place.)
    package func withHotSetKeyBytes<Result>(
        _ body: (_ target: UnsafeRawBufferPointer, _ variation: UnsafeRawBufferPointer?) -> Result
    ) -> Result {
        var target = self.target
        guard var variation else { return target.withUTF8 { body(UnsafeRawBufferPointer($0), nil) } }
        return target.withUTF8 { target in
            variation.withUTF8 { body(UnsafeRawBufferPointer(target), UnsafeRawBufferPointer($0)) }
        }
    }

    /// The raw query after `?`; `nil` when the target has none.
    package var query: Substring? {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return target[target.index(after: mark)...]
    }
}
