// SPDX-License-Identifier: Apache-2.0
import Testing

@testable import Pages

/// The gallery's HTML: what it is told of the URL forms (on or off, prefix, signing) reaches the page as the
/// script's data and the visible notices, and nothing a configuration holds becomes markup.
@Suite struct GalleryPageTests {
    @Test func theFormsLegendCarriesEachFormsStateForTheScript() {
        // Given thumbor on at / with unsafe URLs, imgproxy off, /thumb unsigned
        let forms = GalleryForms(
            thumbNeedsSignature: false,
            forms: [
                .thumbor(isEnabled: true, prefix: "/", needsSignature: false),
                .imgproxy(isEnabled: false, prefix: "/imgproxy/", needsSignature: false),
            ])

        // When the page is rendered
        let html = GalleryPage.render(nonce: "NONCE", forms: forms)

        // Then the legend names each form's state in data attributes and words
        #expect(html.contains("<body data-signing=\"false\">"))
        #expect(html.contains("id=\"form-thumb\" data-enabled=\"true\" data-prefix=\"/thumb\" data-signing=\"false\">"))
        #expect(html.contains("id=\"form-thumbor\" data-enabled=\"true\" data-prefix=\"/\" data-signing=\"false\">"))
        #expect(html.contains("thumbor's form at <code>/</code>: <code>unsafe/</code> URLs accepted"))
        #expect(html.contains("<li id=\"form-imgproxy\" data-enabled=\"false\" data-prefix=\"/imgproxy/\""))
        #expect(html.contains("imgproxy's form at <code>/imgproxy/</code>: off (<code>imgproxy.enabled</code>)"))
        // And no signing notice shows
        for notice in ["signing-notice", "thumbor-signing-notice", "imgproxy-signing-notice"] {
            #expect(html.contains("<p id=\"\(notice)\" class=\"notice\" hidden>"), "\(notice)")
        }
        #expect(html.contains("<script nonce=\"NONCE\">") && html.contains("<style nonce=\"NONCE\">"))
    }

    @Test func eachFormThatRefusesUnsignedURLsGetsItsNotice() {
        // Given every form requiring signatures, but imgproxy's off
        let forms = GalleryForms(
            thumbNeedsSignature: true,
            forms: [
                .thumbor(isEnabled: true, prefix: "/t/", needsSignature: true),
                .imgproxy(isEnabled: false, prefix: "/i/", needsSignature: true),
            ])

        // When the page is rendered
        let html = GalleryPage.render(nonce: "N", forms: forms)

        // Then /thumb's and thumbor's notices show, imgproxy's (off: nothing to sign) does not
        #expect(html.contains("<body data-signing=\"true\">"))
        #expect(html.contains("<p id=\"signing-notice\" class=\"notice\">"))
        #expect(html.contains("<p id=\"thumbor-signing-notice\" class=\"notice\">"))
        #expect(html.contains("<p id=\"imgproxy-signing-notice\" class=\"notice\" hidden>"))
        #expect(html.contains("signed URLs only (<code>thumbor.security_keys</code>)"))
    }

    @Test func theScriptGoesOverThumbThenEachFormInOrder() {
        // Given two path-mounted forms
        let forms = GalleryForms(
            thumbNeedsSignature: false,
            forms: [
                .thumbor(isEnabled: true, prefix: "/", needsSignature: false),
                .imgproxy(isEnabled: true, prefix: "/i/", needsSignature: true),
            ])

        // When the page is rendered
        let html = GalleryPage.render(nonce: "N", forms: forms)

        // Then the script holds each form's builder and lists the forms, /thumb first, with their titles, notes and
        // builders
        #expect(html.contains("function thumborForm(source, ops, prefix)"))
        #expect(html.contains("function imgproxyForm(source, ops, prefix)"))
        #expect(html.contains("var formNames = ['thumb', 'thumbor', 'imgproxy'];"))
        #expect(html.contains("var formTitles = { 'thumb': '/thumb', 'thumbor': 'thumbor', 'imgproxy': 'imgproxy' };"))
        #expect(html.contains("'thumbor': 'unsafe/: refused here', 'imgproxy': 'insecure: refused here' };"))
        #expect(
            html.contains(
                "var builders = { 'thumb': function (source, ops) { return thumbForm(source, ops); }, "
                    + "'thumbor': thumborForm, 'imgproxy': imgproxyForm };"))
    }

    @Test func aFormsTextIsAStringLiteralInTheScript() {
        // Given texts that would end the string or the script element
        let text = "it's \\ </script>\nnext"

        // When written as a JavaScript string
        let literal = GalleryPage.jsString(text)

        // Then it is one single-quoted literal with nothing that ends it early
        #expect(literal == #"'it\'s \\ \u003c/script>\nnext'"#)
    }

    @Test func aPrefixIsEscapedInThePage() {
        // Given a prefix holding markup (the configuration allows any printable character but `?`)
        var forms = GalleryForms.thumbOnly
        forms["thumbor"] = .thumbor(isEnabled: true, prefix: "/\"><script>x</script>&/", needsSignature: false)

        // When the page is rendered
        let html = GalleryPage.render(nonce: "N", forms: forms)

        // Then it is text, in the attribute and in the legend
        #expect(!html.contains("<script>x"))
        #expect(html.contains("data-prefix=\"/&quot;&gt;&lt;script&gt;x&lt;/script&gt;&amp;/\""))
    }
}

extension GalleryForms.Form {
    /// thumbor's form with the texts its descriptor gives (URLForms' `ThumborForm.playground`; the app's tests check
    /// the page made from the descriptors themselves).
    static func thumbor(isEnabled: Bool, prefix: String, needsSignature: Bool) -> Self {
        .init(
            name: "thumbor", isEnabled: isEnabled, prefix: prefix, needsSignature: needsSignature,
            texts: .init(
                title: "thumbor", unsignedURLs: "<code>unsafe/</code> URLs", keySettings: "thumbor.security_keys",
                signingNotice: "thumbor's form needs signed URLs", signingNote: "unsafe/: refused here",
                builderScript: "function thumborForm(source, ops, prefix) { return { url: prefix }; }",
                builder: "thumborForm"))
    }

    /// imgproxy's form with the texts its descriptor gives (URLForms' `ImgproxyForm.playground`).
    static func imgproxy(isEnabled: Bool, prefix: String, needsSignature: Bool) -> Self {
        .init(
            name: "imgproxy", isEnabled: isEnabled, prefix: prefix, needsSignature: needsSignature,
            texts: .init(
                title: "imgproxy", unsignedURLs: "unsigned (<code>insecure</code>) URLs", keySettings: "imgproxy.keys",
                signingNotice: "imgproxy's form checks signatures", signingNote: "insecure: refused here",
                builderScript: "function imgproxyForm(source, ops, prefix) { return { url: prefix }; }",
                builder: "imgproxyForm"))
    }
}
