// SPDX-License-Identifier: Apache-2.0
import Pages
import Testing
import ThumbdSettings
import URLForms

@testable import ThumbdApp

/// The list of path-mounted forms the app mounts, reloads, redacts and shows, each made from its form's type.
@Suite struct FormDescriptorTests {
    @Test func eachFormIsListedOnceByName() {
        let names = FormDescriptor.all.map(\.name)
        #expect(names == ["thumbor", "imgproxy"])
        #expect(Set(names).count == names.count)
    }

    @Test func theGalleryIsMadeFromTheDescriptorsWithEachFormsTexts() {
        // Given thumbor on at / with unsafe URLs, imgproxy off with keys
        var settings = Settings()
        settings.thumbor.isEnabled = true
        settings.thumbor.prefix = "/"
        settings.thumbor.allowsUnsafe = true
        settings.imgproxy.keys = ["736563726574"]
        settings.imgproxy.salts = ["68656c6c6f"]

        // When the gallery is rendered from the descriptors
        let given = settings
        let forms = GalleryForms(
            thumbNeedsSignature: false,
            forms: FormDescriptor.all.map { descriptor in
                StatusService.GalleryMount(descriptor, given) { descriptor.needsSignature(given) }.form
            })
        let html = GalleryPage.render(nonce: "N", forms: forms)

        // Then the legend speaks of each form in its own words
        #expect(html.contains("id=\"form-thumbor\" data-enabled=\"true\" data-prefix=\"/\" data-signing=\"false\">"))
        #expect(html.contains("thumbor's form at <code>/</code>: <code>unsafe/</code> URLs accepted"))
        #expect(html.contains("<li id=\"form-imgproxy\" data-enabled=\"false\" data-prefix=\"/imgproxy/\""))
        #expect(html.contains("data-signing=\"true\">imgproxy's form at <code>/imgproxy/</code>: off"))
        // And each form's notice is there, hidden (thumbor takes unsafe/, imgproxy is off)
        #expect(html.contains("<p id=\"thumbor-signing-notice\" class=\"notice\" hidden>thumbor's form needs signed"))
        #expect(html.contains("<p id=\"imgproxy-signing-notice\" class=\"notice\" hidden>imgproxy's form checks"))
        // And the script has each builder and goes over the forms in the list's order
        #expect(html.contains("function thumborForm(source, ops, prefix) {"))
        #expect(html.contains("function imgproxyForm(source, ops, prefix) {"))
        #expect(html.contains("var formNames = ['thumb', 'thumbor', 'imgproxy'];"))
        #expect(
            html.contains(
                "'thumbor': 'unsafe/: refused here (thumbor.security_keys, no thumbor.allow_unsafe); this page cannot "
                    + "sign', 'imgproxy': 'insecure: refused here (imgproxy.keys); this page cannot sign' };"))
    }

    @Test func aFormNeedsSignaturesAsItsKeysSay() {
        // Given the defaults: thumbor refuses unsafe/, imgproxy has no keys
        var settings = Settings()
        func needs(_ name: String) -> Bool? { FormDescriptor.all.first { $0.name == name }?.needsSignature(settings) }
        #expect(needs("thumbor") == true)
        #expect(needs("imgproxy") == false)

        // When thumbor allows unsafe/ and imgproxy gets a key
        settings.thumbor.allowsUnsafe = true
        settings.imgproxy.keys = ["736563726574"]
        settings.imgproxy.salts = ["68656c6c6f"]

        // Then both flip
        #expect(needs("thumbor") == false)
        #expect(needs("imgproxy") == true)
    }
}
