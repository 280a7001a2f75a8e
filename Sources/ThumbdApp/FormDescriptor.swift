// SPDX-License-Identifier: Apache-2.0
import HTTP1
import Pages
import ThumbdSettings
import URLForms

/// One path-mounted URL form as the app mounts and shows it, made from its type (a ``PathForm``: everything is the
/// form's, in its folder under `URLForms/Forms/`): the one list (``all``) that `ThumbdService`'s routes, the keys'
/// reload, the log redaction's mounts (``PathSignatureRedaction``) and `/status`'s gallery (``StatusService``) read,
/// so that none of them names a form. `/thumb` is mounted on its exact path and is not in the list.
struct FormDescriptor: Sendable {
    /// The forms, in the order their routes and redaction mounts are added (routes are then tried longest prefix
    /// first) and the gallery lists them. A new form is one line here.
    static let all: [FormDescriptor] = [.init(ThumborForm.self), .init(ImgproxyForm.self)]

    /// What a form's route is built from: the front door and the side answers' service, and what the forms read.
    struct Parts {
        let thumbnails: ThumbnailService
        let info: InfoService
        let rules: SharedThumbQueryRules
        let watermarks: WatermarkSource
        /// Runs after any form's keys change (the alias table forgets its aliases).
        let keysChanged: @Sendable () -> Void
    }

    /// A form's keys and route, made once per process (``start``).
    struct Started: Sendable {
        /// The route at the form's prefix: its thumbnails through the front door, and its side routes (thumbor's
        /// `meta/`, imgproxy's `info/`) picked by a look at the path's bytes. Made only for a mounted form.
        let route: @Sendable () -> HTTPHandler
        /// Replaces the form's keys when a reload from `previous` to `settings` changed them.
        let reloadKeys: @Sendable (_ settings: Settings, _ previous: Settings) -> Void
        /// Whether the keys in force refuse unsigned URLs (the gallery asks per page).
        let needsSignature: @Sendable () -> Bool
        /// The form's ``FormKeys`` (for ``ThumbdService/formKeys(_:)``).
        let keys: any Sendable
    }

    /// The form's name (its settings section).
    let name: String
    /// Whether the form is mounted (`<form>.enabled`; restart-only).
    let isEnabled: @Sendable (Settings) -> Bool
    /// Where it is mounted (`<form>.prefix`; restart-only): starts and ends with `/`.
    let prefix: @Sendable (Settings) -> String
    /// Whether the keys of `settings` refuse unsigned URLs.
    let needsSignature: @Sendable (Settings) -> Bool
    /// The form's type: the log redaction reads its paths with its `secretRanges(in:after:)`.
    let form: any PathForm.Type
    /// Its entry in the gallery's playground.
    let playground: PlaygroundEntry
    /// Makes its keys from `settings` (their changes reported to `parts.keysChanged`) and what is built on them.
    let start: @Sendable (Settings, Parts) -> Started

    /// The descriptor of `Form`, whose route and keys are made with its type known: the front door is specialised
    /// for it, as for a form mounted by hand.
    init<Form: PathForm>(_: Form.Type) {
        name = Form.name
        isEnabled = { Form.isEnabled($0) }
        prefix = { Form.prefix($0) }
        needsSignature = { Form.needsSignature(Form.keys($0)) }
        form = Form.self
        playground = Form.playground
        start = { settings, parts in
            let keys = FormKeys(Form.keys(settings))
            keys.onUpdate(parts.keysChanged)
            let prefix = Form.prefix(settings)
            return Started(
                route: {
                    Self.route(
                        Form(prefix: prefix, keys: keys, rules: parts.rules, watermarks: parts.watermarks), parts)
                },
                reloadKeys: { settings, previous in
                    if Form.keysChanged(from: previous, to: settings) { keys.update(Form.keys(settings)) }
                },
                needsSignature: { Form.needsSignature(keys.current.values) }, keys: keys)
        }
    }

    /// A form's route: the requests its side routes take answered through the app's `InfoService` (which conforms to
    /// the form's `SideAnswers`), a refusal with its JSON error; every other request to the front door as it is.
    private static func route<Form: PathForm>(_ form: Form, _ parts: Parts) -> HTTPHandler {
        let thumbnails = parts.thumbnails.handler(for: form)
        guard Form.SideAnswers.self != Never.self else { return thumbnails }
        guard let answers = parts.info as? Form.SideAnswers else {
            preconditionFailure("InfoService does not answer \(Form.name)'s side routes (\(Form.SideAnswers.self))")
        }
        return { request, responder in
            guard form.isSideRequest(request) else { return thumbnails(request, responder) }
            do throws(RequestError) {
                try form.answerSide(RequestIdentity(request), with: answers, responder)
            } catch {
                responder.respond(ErrorResponse(.request(error)).response)
            }
        }
    }
}

extension FormDescriptor {
    /// What the gallery is told of this form.
    func gallery(isEnabled: Bool, prefix: String, needsSignature: Bool) -> GalleryForms.Form {
        GalleryForms.Form(
            name: name, isEnabled: isEnabled, prefix: prefix, needsSignature: needsSignature,
            texts: .init(
                title: playground.title, unsignedURLs: playground.unsignedURLs, keySettings: playground.keySettings,
                signingNotice: playground.signingNotice, signingNote: playground.signingNote,
                builderScript: playground.script, builder: playground.builder))
    }
}
