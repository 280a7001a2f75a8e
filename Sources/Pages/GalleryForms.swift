// SPDX-License-Identifier: Apache-2.0

/// What the gallery at `GET /` is told about the server: which URL forms answer and where, and which of them need a
/// signature the page cannot make. Nothing else of the server reaches the page.
///
/// Filled where `/` is served, per request (the keys are reloadable), from `security.signing_keys`,
/// `thumbor.enabled`/`prefix`/`security_keys`/`allow_unsafe` and `imgproxy.enabled`/`prefix`/`keys`.
///
/// ```swift
/// let forms = GalleryForms(
///     thumbNeedsSignature: false,
///     thumbor: .init(isEnabled: true, prefix: "/thumbor/", needsSignature: false),
///     imgproxy: .init(isEnabled: false, prefix: "/imgproxy/", needsSignature: false))
/// let html = GalleryPage.render(nonce: nonce, forms: forms)
/// ```
package struct GalleryForms: Sendable, Equatable {
    /// One foreign form (thumbor's or imgproxy's).
    package struct Form: Sendable, Equatable {
        /// Whether the form is mounted (`thumbor.enabled`, `imgproxy.enabled`).
        package var isEnabled: Bool
        /// The path prefix it is (or would be) mounted at, starting and ending with `/`.
        package var prefix: String
        /// Whether its unsigned URLs (thumbor's `unsafe/`, imgproxy's `insecure`) are refused: thumbor without
        /// `thumbor.allow_unsafe`, imgproxy with `imgproxy.keys`.
        package var needsSignature: Bool

        /// A form's state.
        package init(isEnabled: Bool, prefix: String, needsSignature: Bool) {
            self.isEnabled = isEnabled
            self.prefix = prefix
            self.needsSignature = needsSignature
        }
    }

    /// Whether `/thumb` needs `sig=` (`security.signing_keys`).
    package var thumbNeedsSignature: Bool
    /// thumbor's form (`thumbor.*`).
    package var thumbor: Form
    /// imgproxy's form (`imgproxy.*`).
    package var imgproxy: Form

    /// The state of the three forms.
    package init(thumbNeedsSignature: Bool, thumbor: Form, imgproxy: Form) {
        self.thumbNeedsSignature = thumbNeedsSignature
        self.thumbor = thumbor
        self.imgproxy = imgproxy
    }

    /// `/thumb` alone, unsigned; both foreign forms off at their default prefixes.
    package static let thumbOnly = GalleryForms(
        thumbNeedsSignature: false,
        thumbor: .init(isEnabled: false, prefix: "/thumbor/", needsSignature: true),
        imgproxy: .init(isEnabled: false, prefix: "/imgproxy/", needsSignature: false))
}
