// SPDX-License-Identifier: Apache-2.0
package import HTTP1
package import ThumbdSettings

/// A URL form mounted at a path prefix, with signing keys of its own (thumbor's, imgproxy's): its type says all the
/// app needs to mount it, so that a new form is its folder, its settings section and one line of the app's list
/// (`FormDescriptor.all`): where it is mounted and whether (from its settings section), its keys and their reload,
/// its route's side answers, how the log redaction finds the secrets in its paths, and its entry in the gallery's
/// playground.
///
/// The app builds the form once per process from these (``init(prefix:keys:rules:watermarks:)``) and mounts
/// `ThumbnailService.handler(for:)` on it, specialised for the form's type: the hit path costs what a form built by
/// hand does.
package protocol PathForm: RulesReadingForm {
    /// What the form verifies signatures with, held in a reloadable ``FormKeys``.
    associatedtype Keys: Sendable
    /// What the form's side routes ask of the app (a protocol of the form's folder that the app's `InfoService`
    /// conforms to, as an existential: thumbor's `any ThumborMetaAnswering`); `Never` for a form without side routes.
    associatedtype SideAnswers: Sendable = Never

    /// Its settings section's name (`thumbor`): `<name>.enabled`, the gallery's `form-<name>`.
    static var name: String { get }
    /// Whether `settings` mount it (`<name>.enabled`; restart-only).
    static func isEnabled(_ settings: Settings) -> Bool
    /// Where `settings` mount it (`<name>.prefix`; restart-only): starts and ends with `/`.
    static func prefix(_ settings: Settings) -> String
    /// Its keys in validated `settings`.
    static func keys(_ settings: Settings) -> Keys
    /// Whether a reload from `previous` to `settings` replaces its keys (its section changed).
    static func keysChanged(from previous: Settings, to settings: Settings) -> Bool
    /// Whether its unsigned URLs are refused under `keys` (the gallery says so).
    static func needsSignature(_ keys: Keys) -> Bool
    /// The byte ranges of `path` (a path under the form's prefix, whose length is `start`) that hold a secret: its
    /// signature, secret query values of the URLs written into it (``PathSecrets``). Called for every answer on the
    /// form's route, through its metatype (one witness-table call): scan the bytes, allocate nothing when there is
    /// nothing to hide.
    static func secretRanges(in path: UnsafeBufferPointer<UInt8>, after start: Int) -> [Range<Int>]
    /// Its entry in the gallery's playground.
    static var playground: PlaygroundEntry { get }

    /// The form mounted at `prefix`, verifying with `keys`, reading `/thumb`'s presets and rules and the named
    /// watermarks.
    init(prefix: String, keys: FormKeys<Keys>, rules: SharedThumbQueryRules, watermarks: any WatermarkNames)

    /// Whether `request` (under the form's prefix) asks a side route (thumbor's `meta/`, imgproxy's `info/`) rather
    /// than a thumbnail: a look at the path's bytes in place, so thumbnails go on to the front door untouched.
    func isSideRequest(_ request: HTTPRequest) -> Bool
    /// Answers a side request: verifies and reads it, then hands it to `answers`.
    /// - Throws: `RequestError`, answered as JSON by the route.
    func answerSide(_ identity: RequestIdentity, with answers: SideAnswers, _ responder: HTTPResponder)
        throws(RequestError)
}

extension PathForm where SideAnswers == Never {
    /// No side routes: every request is a thumbnail's.
    @inline(__always)
    package func isSideRequest(_ request: HTTPRequest) -> Bool { false }

    package func answerSide(_ identity: RequestIdentity, with answers: Never, _ responder: HTTPResponder) {}
}

/// A path-mounted form's entry in the gallery's playground at `/`: how the page names it, what it says when the form
/// refuses unsigned URLs, and the script that writes a picture as the form's URL. Text only; the app hands it to the
/// page (`Pages.GalleryForms.Form`) with the form's mount and signing state.
package struct PlaygroundEntry: Sendable {
    /// How the page titles the form beside its URLs (`thumbor`).
    package let title: String
    /// What the legend calls its unsigned URLs, as HTML (`<code>unsafe/</code> URLs`).
    package let unsignedURLs: String
    /// The settings that make it refuse them, named in the legend (`thumbor.security_keys`).
    package let keySettings: String
    /// The notice above the gallery while it refuses unsigned URLs, as HTML.
    package let signingNotice: String
    /// The note beside a URL it would refuse, as text.
    package let signingNote: String
    /// JavaScript declarations that end up defining ``builder``: a function `(source, ops, prefix)` that returns
    /// `{url: …}` or `{refusals: [what the form cannot say]}`. It may use the page's `compass`, `effective(ops)`,
    /// `orientation(rotate, flip)` and `turned(vector, turn)`, and must follow the form's parser, so that its URL
    /// and `/thumb`'s compile into one plan.
    package let script: String
    /// The name of the function ``script`` defines.
    package let builder: String

    package init(
        title: String, unsignedURLs: String, keySettings: String, signingNotice: String, signingNote: String,
        script: String, builder: String
    ) {
        self.title = title
        self.unsignedURLs = unsignedURLs
        self.keySettings = keySettings
        self.signingNotice = signingNotice
        self.signingNote = signingNote
        self.script = script
        self.builder = builder
    }
}
