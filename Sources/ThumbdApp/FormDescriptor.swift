// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Pages
import ThumbdSettings
import URLForms

/// One path-mounted URL form as the app mounts and shows it: the one list (``all``) that `ThumbdService`'s routes,
/// the log redaction's mounts (``PathSignatureRedaction``) and `/status`'s gallery (``StatusService``, whose
/// playground it tells of the forms) read, instead of each naming thumbor's and imgproxy's forms by hand.
/// `/thumb` is mounted on its exact path and is not in the list.
struct FormDescriptor: Sendable {
    /// What a form's route is built from: the front door and the side answers' service, and what the forms read.
    struct Parts {
        let thumbnails: ThumbnailService
        let info: InfoService
        let keys: DialectKeys
        let rules: SharedThumbQueryRules
        let watermarks: WatermarkSource
    }

    /// Whether the form is mounted (`<form>.enabled`; restart-only).
    let isEnabled: @Sendable (Settings) -> Bool
    /// Where it is mounted (`<form>.prefix`; restart-only): starts and ends with `/`.
    let prefix: @Sendable (Settings) -> String
    /// The route at ``prefix``: the form's thumbnails through the front door, and its side routes (thumbor's
    /// `meta/`, imgproxy's `info/`) picked by a look at the path's bytes.
    let route: @Sendable (_ prefix: String, Parts) -> HTTPHandler
    /// How the log redaction reads its paths.
    let redaction: PathSignatureRedaction.Form
    /// Its entry in what the gallery and playground are told.
    let gallery: any WritableKeyPath<GalleryForms, GalleryForms.Form> & Sendable
    /// Whether its unsigned URLs are refused, from the settings (at start) and from the keys in force (per page).
    let needsSignature: @Sendable (Settings) -> Bool
    let keysNeedSignature: @Sendable (DialectKeys.Values) -> Bool

    /// The forms, in the order their routes and redaction mounts are added (routes are then tried longest prefix
    /// first).
    static let all: [FormDescriptor] = [.thumbor, .imgproxy]

    /// thumbor's form (`thumbor.*`): `meta/` answers JSON from the plan (InfoService).
    static let thumbor = FormDescriptor(
        isEnabled: { $0.thumbor.isEnabled }, prefix: { $0.thumbor.prefix },
        route: { prefix, parts in
            let form = ThumborForm(prefix: prefix, keys: parts.keys, rules: parts.rules, watermarks: parts.watermarks)
            let info = parts.info
            return route(parts.thumbnails.handler(for: form), side: form.isMeta) {
                (identity, responder) throws(RequestError) in
                let (request, path) = try form.metaRequest(for: identity)
                info.answerThumborMeta(request, path: path, responder)
            }
        },
        redaction: .thumbor, gallery: \.thumbor, needsSignature: { !$0.thumbor.allowsUnsafe },
        keysNeedSignature: { !$0.allowsUnsafeThumbor })

    /// imgproxy's form (`imgproxy.*`): `info/…` answers imgproxy's info JSON (InfoService).
    static let imgproxy = FormDescriptor(
        isEnabled: { $0.imgproxy.isEnabled }, prefix: { $0.imgproxy.prefix },
        route: { prefix, parts in
            let form = ImgproxyForm(prefix: prefix, keys: parts.keys, rules: parts.rules, watermarks: parts.watermarks)
            let info = parts.info
            return route(parts.thumbnails.handler(for: form), side: form.isInfo) {
                (identity, responder) throws(RequestError) in
                let (source, options) = try form.infoRequest(for: identity)
                info.answerImgproxyInfo(source, options: options, responder)
            }
        },
        redaction: .imgproxy, gallery: \.imgproxy, needsSignature: { !$0.imgproxy.keys.isEmpty },
        keysNeedSignature: { !$0.imgproxy.isEmpty })

    /// A foreign form's route: the requests `side` picks (thumbor's `meta/`, imgproxy's `info/`: a look at the path's
    /// bytes) answered by `answer`, a refusal with its JSON error; every other request to the front door as it is.
    private static func route(
        _ thumbnails: @escaping HTTPHandler, side: @escaping @Sendable (HTTPRequest) -> Bool,
        answer: @escaping @Sendable (RequestIdentity, HTTPResponder) throws(RequestError) -> Void
    ) -> HTTPHandler {
        { request, responder in
            guard side(request) else { return thumbnails(request, responder) }
            do throws(RequestError) {
                try answer(RequestIdentity(request), responder)
            } catch {
                responder.respond(ErrorResponse(.request(error)).response)
            }
        }
    }
}
