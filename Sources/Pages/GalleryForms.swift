// SPDX-License-Identifier: Apache-2.0

/// What the gallery at `GET /` is told about the server: which URL forms answer and where, and which of them need a
/// signature the page cannot make; and of each path-mounted form, how the page names it and writes its URLs. Nothing
/// else of the server reaches the page.
///
/// Filled where `/` is served, per request (the keys are reloadable), from `security.signing_keys` and each
/// path-mounted form's settings (`thumbor.enabled`/`prefix`/`security_keys`/`allow_unsafe`, `imgproxy.*`): one
/// ``Form`` each, in the order the page lists them after `/thumb`.
///
/// ```swift
/// let forms = GalleryForms(
///     thumbNeedsSignature: false,
///     forms: [.init(name: "thumbor", isEnabled: true, prefix: "/thumbor/", needsSignature: false, texts: texts)])
/// let html = GalleryPage.render(nonce: nonce, forms: forms)
/// ```
package struct GalleryForms: Sendable, Equatable {
    /// One path-mounted form (thumbor's, imgproxy's).
    package struct Form: Sendable, Equatable {
        /// Its name and settings section (`thumbor`): the legend's `form-<name>`, the cells' `data-form`.
        package var name: String
        /// Whether the form is mounted (`<name>.enabled`).
        package var isEnabled: Bool
        /// The path prefix it is (or would be) mounted at, starting and ending with `/`.
        package var prefix: String
        /// Whether its unsigned URLs (thumbor's `unsafe/`, imgproxy's `insecure`) are refused: thumbor without
        /// `thumbor.allow_unsafe`, imgproxy with `imgproxy.keys`.
        package var needsSignature: Bool
        /// How the page speaks of it and writes its URLs.
        package var texts: Texts

        /// A form's state.
        package init(name: String, isEnabled: Bool, prefix: String, needsSignature: Bool, texts: Texts) {
            self.name = name
            self.isEnabled = isEnabled
            self.prefix = prefix
            self.needsSignature = needsSignature
            self.texts = texts
        }
    }

    /// How the page speaks of a form and writes its URLs (the form's own: `URLForms.PlaygroundEntry`).
    package struct Texts: Sendable, Equatable {
        /// How the page titles it beside its URLs (`thumbor`).
        package var title: String
        /// What the legend calls its unsigned URLs, as HTML (`<code>unsafe/</code> URLs`).
        package var unsignedURLs: String
        /// The settings that make it refuse them, named in the legend (`thumbor.security_keys`).
        package var keySettings: String
        /// The notice above the gallery while it refuses unsigned URLs, as HTML.
        package var signingNotice: String
        /// The note beside a URL it would refuse, as text.
        package var signingNote: String
        /// JavaScript declarations that define ``builder``, a function `(source, ops, prefix)` returning `{url: …}`
        /// or `{refusals: […]}` (``GalleryPage/urlBuilders`` says what it may use).
        package var builderScript: String
        /// The name of the function ``builderScript`` defines.
        package var builder: String

        package init(
            title: String, unsignedURLs: String, keySettings: String, signingNotice: String, signingNote: String,
            builderScript: String, builder: String
        ) {
            self.title = title
            self.unsignedURLs = unsignedURLs
            self.keySettings = keySettings
            self.signingNotice = signingNotice
            self.signingNote = signingNote
            self.builderScript = builderScript
            self.builder = builder
        }
    }

    /// Whether `/thumb` needs `sig=` (`security.signing_keys`).
    package var thumbNeedsSignature: Bool
    /// The path-mounted forms, in the order the page lists them after `/thumb`.
    package var forms: [Form]

    /// The state of `/thumb` and of the path-mounted forms.
    package init(thumbNeedsSignature: Bool, forms: [Form]) {
        self.thumbNeedsSignature = thumbNeedsSignature
        self.forms = forms
    }

    /// The form named `name`.
    package subscript(name: String) -> Form? {
        get { forms.first { $0.name == name } }
        set {
            guard let index = forms.firstIndex(where: { $0.name == name }) else {
                if let newValue { forms.append(newValue) }
                return
            }
            if let newValue { forms[index] = newValue } else { forms.remove(at: index) }
        }
    }

    /// `/thumb` alone, unsigned.
    package static let thumbOnly = GalleryForms(thumbNeedsSignature: false, forms: [])
}
