// SPDX-License-Identifier: Apache-2.0

/// The HTML of `GET /`: a demo gallery and a playground for the URL forms. Paste image URLs (one per line) or a
/// JSON list shaped like jsonplaceholder's `/photos` (`[{"title": "...", "url": "..."}]`; `url` is used,
/// `thumbnailUrl` if there is none), pick operations (box, fit, gravity, format, quality, turn, flip, blur,
/// sharpen, grayscale, background), and see the thumbnails load lazily through `/thumb`, each beside the URLs of the
/// same picture in the three forms thumbd answers: `/thumb?…`, thumbor's and imgproxy's.
///
/// Each cell is loaded when it scrolls near the viewport (IntersectionObserver) with `fetch()`, so the cell can
/// show the `X-Cache` outcome, or the status and message of a refusal (403 when the SSRF guard refuses a
/// source); the image is shown from a `blob:` URL. A summary `<output id="summary" data-total data-loaded
/// data-failed data-pending>` counts the cells (tests read it).
///
/// The three URLs are written by the page's script (``urlBuilders``) so that the server's own parsers read them
/// as one plan: one variant key, one cache entry. A form that is off, that needs a signature the page cannot make,
/// or that cannot express an operation, says so beside its URL instead of offering a link that would fail.
///
/// The page reads `?urls=` (the same text as the box) and the operations (`w`, `h`, `fit`, `gravity`, `enlarge`,
/// `format`, `q`, `rotate`, `flip`, `blur`, `sharpen`, `grayscale`, `bg`: `/thumb`'s names and values) on load
/// and fills itself, so a link can share a playground. Everything is inline (no external asset); the only dynamic
/// parts are the CSP nonce and ``GalleryForms`` (which forms answer, at which prefix, and which need signatures).
package enum GalleryPage {
    /// The page; `nonce` must be the one in the response's Content-Security-Policy.
    package static func render(nonce: String, forms: GalleryForms) -> String {
        let signing = forms.thumbNeedsSignature
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>thumbd gallery</title><link rel="icon" href="data:,">
            <style nonce="\(nonce)">\(css)</style></head>
            <body data-signing="\(signing)">
            <header><h1>thumbd gallery</h1><a href="/status">status</a></header>
            \(formsLegend(forms))
            <p id="signing-notice" class="notice"\(signing ? "" : " hidden")>URL signing is on
            (<code>security.signing_keys</code>): this page cannot sign requests, so <code>/thumb</code> refuses them
            with 403. Use <code>thumbd sign</code> to make signed URLs.</p>
            \(signingNotices(forms))
            <form id="form" method="get" action="/">
            <label for="urls">Image URLs, one per line, or a JSON list like
            <code>[{"title": "…", "url": "https://…"}]</code></label>
            <textarea id="urls" name="urls" rows="5" spellcheck="false"
            placeholder="https://example.com/photo.jpg"></textarea>
            \(operationsPanel)
            <div class="controls"><button type="submit">Show</button>
            <output id="summary" data-total="0" data-loaded="0" data-failed="0" data-pending="0">No images yet.</output>
            </div><p id="input-error" class="error" hidden></p></form>
            <main id="grid" aria-live="polite"></main>
            <script nonce="\(nonce)">(function () {
            'use strict';
            \(urlBuilders)
            \(formsScript(forms))
            \(script)
            })();</script></body></html>

            """
    }

    /// Each path-mounted form's notice, shown (not ` hidden`) when the form is on and refuses unsigned URLs.
    static func signingNotices(_ forms: GalleryForms) -> String {
        forms.forms.map { form in
            let shows = form.isEnabled && form.needsSignature
            return "<p id=\"\(form.name)-signing-notice\" class=\"notice\"\(shows ? "" : " hidden")>"
                + "\(form.texts.signingNotice)</p>"
        }.joined(separator: "\n")
    }

    /// Which forms answer here and how; the script reads each item's `data-*` (the page's only knowledge of the
    /// server besides the nonce and the forms' builders).
    static func formsLegend(_ forms: GalleryForms) -> String {
        func item(_ form: GalleryForms.Form) -> String {
            let name = form.name
            let prefix = StatusPage.escape(form.prefix)
            let state =
                !form.isEnabled
                ? "off (<code>\(name).enabled</code>)"
                : form.needsSignature
                    ? "signed URLs only (<code>\(form.texts.keySettings)</code>)"
                    : "\(form.texts.unsignedURLs) accepted"
            return "<li id=\"form-\(name)\" data-enabled=\"\(form.isEnabled)\" data-prefix=\"\(prefix)\" "
                + "data-signing=\"\(form.needsSignature)\">\(name)'s form at <code>\(prefix)</code>: \(state)</li>"
        }
        let thumb = forms.thumbNeedsSignature
        return "<ul id=\"url-forms\"><li id=\"form-thumb\" data-enabled=\"true\" data-prefix=\"/thumb\" "
            + "data-signing=\"\(thumb)\"><code>/thumb?…</code>: "
            + (thumb ? "signed URLs only (<code>security.signing_keys</code>)" : "unsigned URLs accepted") + "</li>"
            + forms.forms.map(item).joined()
            + "</ul>"
    }

    /// The operations, each named and valued as `/thumb`'s parameter (docs/api.md).
    static let operationsPanel = """
        <fieldset id="ops"><legend>Operations</legend><div class="ops">
        <label>Width <input type="number" id="w" name="w" min="0" max="4096" value="128"></label>
        <label>Height <input type="number" id="h" name="h" min="0" max="4096" value="128" placeholder="auto"></label>
        <label>Fit <select id="fit" name="fit"><option>contain</option><option>cover</option><option>fill</option>
        <option>pad</option></select></label>
        <label>Gravity <select id="gravity" name="gravity"><option>centre</option><option>north</option>
        <option>northeast</option><option>east</option><option>southeast</option><option>south</option>
        <option>southwest</option><option>west</option><option>northwest</option>
        <option value="attention">attention (libvips)</option><option>entropy</option>
        <option value="face">face (the faces found)</option><option value="smart">smart (thumbor's detectors)</option>
        </select></label>
        <label><input type="checkbox" id="enlarge" name="enlarge" value="1"> Enlarge</label>
        <label>Format <select id="format" name="format"><option>auto</option><option>jpeg</option><option>webp</option>
        <option>png</option><option>avif</option><option>gif</option></select></label>
        <label>Quality <input type="number" id="q" name="q" min="1" max="100" placeholder="default"></label>
        <label>Rotate <select id="rotate" name="rotate"><option value="0">0°</option><option value="90">90°</option>
        <option value="180">180°</option><option value="270">270°</option></select></label>
        <label>Flip <select id="flip" name="flip"><option value="">none</option><option value="h">h</option>
        <option value="v">v</option><option value="hv">hv</option></select></label>
        <label>Blur <input type="number" id="blur" name="blur" min="0" max="100" step="0.1" placeholder="0"></label>
        <label>Sharpen <input type="number" id="sharpen" name="sharpen" min="0" max="10" step="0.1"
        placeholder="0"></label>
        <label><input type="checkbox" id="grayscale" name="grayscale" value="1"> Grayscale</label>
        <label><input type="checkbox" id="use-bg"> Background <input type="color" id="bg" value="#ffffff"></label>
        </div></fieldset>
        """
}
