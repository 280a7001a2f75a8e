// SPDX-License-Identifier: Apache-2.0
import HTTP1

/// Who a request is to the tables that remember answers: its whole target, path and query as sent (not decoded),
/// and the `Accept` it negotiates on. The key of each event loop's hot set (as bytes, ``HotSetKey``) and of the
/// alias table (``ThumbnailCache/aliasKey(target:accept:)``).
///
/// Two requests with one identity reach the same route, so the same ``URLForm``, and name the same thumbnail.
/// Nothing in it belongs to a URL form: a form that carries its options in the path is remembered exactly like
/// `/thumb?url=…&w=…`, and a repeated request of any form is answered without its form's parse step.
struct RequestIdentity: Sendable {
    /// The raw target from the path on (``HTTPRequest/target``).
    let target: String
    /// The `Accept` value, its lines joined with `, ` when it came on several (RFC 9110 §5.3: reading only the
    /// first would miss `image/webp` on a second line); `nil` when none was sent.
    let accept: String?

    /// The identity of `request`.
    init(_ request: HTTPRequest) {
        target = request.target
        accept = request.listValue(of: "accept")
    }

    /// The raw query after `?`; `nil` when the target has none.
    var query: Substring? {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        return target[target.index(after: mark)...]
    }
}
