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
            thumbor: .init(isEnabled: true, prefix: "/", needsSignature: false),
            imgproxy: .init(isEnabled: false, prefix: "/imgproxy/", needsSignature: false))

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
            thumbor: .init(isEnabled: true, prefix: "/t/", needsSignature: true),
            imgproxy: .init(isEnabled: false, prefix: "/i/", needsSignature: true))

        // When the page is rendered
        let html = GalleryPage.render(nonce: "N", forms: forms)

        // Then /thumb's and thumbor's notices show, imgproxy's (off: nothing to sign) does not
        #expect(html.contains("<body data-signing=\"true\">"))
        #expect(html.contains("<p id=\"signing-notice\" class=\"notice\">"))
        #expect(html.contains("<p id=\"thumbor-signing-notice\" class=\"notice\">"))
        #expect(html.contains("<p id=\"imgproxy-signing-notice\" class=\"notice\" hidden>"))
        #expect(html.contains("signed URLs only (<code>thumbor.security_keys</code>)"))
    }

    @Test func aPrefixIsEscapedInThePage() {
        // Given a prefix holding markup (the configuration allows any printable character but `?`)
        var forms = GalleryForms.thumbOnly
        forms.thumbor = .init(isEnabled: true, prefix: "/\"><script>x</script>&/", needsSignature: false)

        // When the page is rendered
        let html = GalleryPage.render(nonce: "N", forms: forms)

        // Then it is text, in the attribute and in the legend
        #expect(!html.contains("<script>x"))
        #expect(html.contains("data-prefix=\"/&quot;&gt;&lt;script&gt;x&lt;/script&gt;&amp;/\""))
    }
}
