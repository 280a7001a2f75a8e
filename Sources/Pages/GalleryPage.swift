// SPDX-License-Identifier: Apache-2.0

/// The HTML of `GET /`: a demo gallery. Paste image URLs (one per line) or a JSON list shaped like
/// jsonplaceholder's `/photos` (`[{"title": "...", "url": "..."}]`; `url` is used, `thumbnailUrl` if there is
/// none), pick a size, and see the thumbnails load lazily through `/thumb`, like the table views the design
/// started from.
///
/// Each cell is loaded when it scrolls near the viewport (IntersectionObserver) with `fetch()`, so the cell can
/// show the `X-Cache` outcome, or the status and message of a refusal (403 when the SSRF guard refuses a
/// source); the image is shown from a `blob:` URL. A summary `<output id="summary" data-total data-loaded
/// data-failed data-pending>` counts the cells (tests read it).
///
/// The page reads `?urls=` (the same text as the box) and `?w=` on load and fills itself, so a link can share a
/// gallery. Everything is inline (no external asset); the only dynamic parts are the CSP nonce and whether
/// URL signing is on (the gallery cannot sign, so it says so instead of showing a wall of 403s unexplained).
package enum GalleryPage {
    /// Thumbnail sizes offered.
    static let sizes = [64, 96, 128, 192, 256, 384]

    /// The page; `nonce` must be the one in the response's Content-Security-Policy.
    package static func render(nonce: String, signing: Bool) -> String {
        let options = sizes.map { "<option value=\"\($0)\"\($0 == 128 ? " selected" : "")>\($0) px</option>" }
            .joined()
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>thumbd gallery</title><link rel="icon" href="data:,">
            <style nonce="\(nonce)">\(css)</style></head>
            <body data-signing="\(signing)">
            <header><h1>thumbd gallery</h1><a href="/status">status</a></header>
            <p id="signing-notice" class="notice"\(signing ? "" : " hidden")>URL signing is on
            (<code>security.signing_keys</code>): this page cannot sign requests, so <code>/thumb</code> refuses them
            with 403. Use <code>thumbd sign</code> to make signed URLs.</p>
            <form id="form" method="get" action="/">
            <label for="urls">Image URLs, one per line, or a JSON list like
            <code>[{"title": "…", "url": "https://…"}]</code></label>
            <textarea id="urls" name="urls" rows="6" spellcheck="false"
            placeholder="https://example.com/photo.jpg"></textarea>
            <div class="controls"><label for="w">Size</label> <select id="w" name="w">\(options)</select>
            <button type="submit">Show</button>
            <output id="summary" data-total="0" data-loaded="0" data-failed="0" data-pending="0">No images yet.</output>
            </div><p id="input-error" class="error" hidden></p></form>
            <main id="grid" aria-live="polite"></main>
            <script nonce="\(nonce)">\(script)</script></body></html>

            """
    }

    static let css = """
        :root{color-scheme:light dark;--fg:#1d232a;--bg:#fbfbfa;--muted:#6a737d;--line:#d9dde1;--cell:#f0f1f2;\
        --ok:#2e8b57;--bad:#c0392b;--size:128px}
        @media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--bg:#16191c;--muted:#9aa4ad;--line:#333a41;\
        --cell:#22272c}}
        body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;\
        max-width:1200px;padding:1rem 1.5rem}
        header{display:flex;justify-content:space-between;align-items:baseline}a{color:inherit}
        h1{font-size:1.4rem;margin:.2rem 0}
        textarea{width:100%;box-sizing:border-box;font:12px/1.4 ui-monospace,monospace;margin:.3rem 0}
        .controls{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap}
        output{color:var(--muted)}.notice{border-left:4px solid var(--bad);padding:.4rem .8rem;background:var(--cell)}
        .error{color:var(--bad)}
        #grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(var(--size),1fr));gap:.8rem;margin-top:1rem}
        figure{margin:0;background:var(--cell);border-radius:6px;overflow:hidden;border:1px solid var(--line)}
        .frame{height:var(--size);display:flex;align-items:center;justify-content:center}
        .frame img{max-width:100%;max-height:100%}
        figure[data-state=pending] img,figure[data-state=loading] img,figure[data-state=failed] img{display:none}
        figcaption{padding:.3rem .4rem;font-size:11px;line-height:1.3}
        .title{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        .badge{color:var(--muted)}figure[data-state=loaded] .badge{color:var(--ok)}
        figure[data-state=failed] .badge{color:var(--bad)}
        """

    /// Parses the box, builds one cell per URL (at most 500), and loads each when it nears the viewport.
    static let script = """
        (function () {
          'use strict';
          var maxItems = 500;
          var form = document.getElementById('form');
          var input = document.getElementById('urls');
          var size = document.getElementById('w');
          var grid = document.getElementById('grid');
          var summary = document.getElementById('summary');
          var inputError = document.getElementById('input-error');
          var counts = { total: 0, loaded: 0, failed: 0 };
          var observer = new IntersectionObserver(function (entries) {
            entries.forEach(function (entry) {
              if (entry.isIntersecting) { observer.unobserve(entry.target); load(entry.target); }
            });
          }, { rootMargin: '200px' });

          function parse(text) {
            var trimmed = text.trim();
            if (trimmed === '') { return []; }
            if (trimmed.charAt(0) === '[') {
              var list = JSON.parse(trimmed);
              if (!Array.isArray(list)) { throw new Error('the JSON must be a list'); }
              return list.map(function (item) {
                if (typeof item === 'string') { return { url: item, title: '' }; }
                var url = item && (item.url || item.thumbnailUrl);
                return { url: url ? String(url) : '', title: item && item.title ? String(item.title) : '' };
              }).filter(function (item) { return item.url !== ''; });
            }
            return trimmed.split(/\\r?\\n/).map(function (line) { return line.trim(); })
              .filter(function (line) { return line !== '' && line.charAt(0) !== '#'; })
              .map(function (url) { return { url: url, title: '' }; });
          }

          function updateSummary() {
            var pending = counts.total - counts.loaded - counts.failed;
            summary.dataset.total = counts.total;
            summary.dataset.loaded = counts.loaded;
            summary.dataset.failed = counts.failed;
            summary.dataset.pending = pending;
            summary.textContent = counts.total === 0 ? 'No images yet.' :
              counts.loaded + ' loaded, ' + counts.failed + ' failed, ' + pending + ' pending of ' + counts.total;
          }

          function finish(cell, state, text) {
            if (cell.dataset.state === 'loaded' || cell.dataset.state === 'failed') { return; }
            cell.dataset.state = state;
            cell.querySelector('.badge').textContent = text;
            counts[state === 'loaded' ? 'loaded' : 'failed'] += 1;
            updateSummary();
          }

          function load(cell) {
            var badge = cell.querySelector('.badge');
            var img = cell.querySelector('img');
            cell.dataset.state = 'loading';
            badge.textContent = 'loading…';
            var target = '/thumb?url=' + encodeURIComponent(cell.dataset.source) +
              '&w=' + cell.dataset.size + '&h=' + cell.dataset.size;
            fetch(target, { credentials: 'same-origin' }).then(function (response) {
              var outcome = response.headers.get('X-Cache') || '';
              cell.dataset.status = response.status;
              cell.dataset.cache = outcome;
              if (!response.ok) {
                return response.json().catch(function () { return {}; }).then(function (body) {
                  var message = body && body.error ? body.error : response.statusText;
                  finish(cell, 'failed', response.status + ' ' + message);
                });
              }
              return response.blob().then(function (blob) {
                var objectURL = URL.createObjectURL(blob);
                img.addEventListener('load', function () {
                  URL.revokeObjectURL(objectURL);
                  cell.dataset.naturalWidth = img.naturalWidth;
                  cell.dataset.naturalHeight = img.naturalHeight;
                  var ok = img.complete && img.naturalWidth > 0;
                  finish(cell, ok ? 'loaded' : 'failed',
                    (outcome || 'loaded') + ' · ' + img.naturalWidth + '×' + img.naturalHeight);
                }, { once: true });
                img.addEventListener('error', function () {
                  URL.revokeObjectURL(objectURL);
                  finish(cell, 'failed', 'the browser cannot show this image');
                }, { once: true });
                img.src = objectURL;
              });
            }).catch(function (error) { finish(cell, 'failed', 'network error: ' + error.message); });
          }

          function show(text, pixels) {
            var items;
            inputError.hidden = true;
            try {
              items = parse(text);
            } catch (error) {
              inputError.textContent = 'Cannot read the list: ' + error.message;
              inputError.hidden = false;
              items = [];
            }
            if (items.length > maxItems) {
              inputError.textContent = 'Showing the first ' + maxItems + ' of ' + items.length + ' images.';
              inputError.hidden = false;
              items = items.slice(0, maxItems);
            }
            observer.disconnect();
            grid.replaceChildren();
            grid.style.setProperty('--size', pixels + 'px');
            counts = { total: items.length, loaded: 0, failed: 0 };
            items.forEach(function (item, index) {
              var cell = document.createElement('figure');
              cell.className = 'cell';
              cell.id = 'cell-' + index;
              cell.dataset.state = 'pending';
              cell.dataset.source = item.url;
              cell.dataset.size = pixels;
              var frame = document.createElement('div');
              frame.className = 'frame';
              var img = document.createElement('img');
              img.alt = item.title || item.url;
              img.decoding = 'async';
              frame.appendChild(img);
              var caption = document.createElement('figcaption');
              var title = document.createElement('span');
              title.className = 'title';
              title.textContent = item.title || item.url;
              title.title = item.url;
              var badge = document.createElement('span');
              badge.className = 'badge';
              badge.textContent = 'waiting';
              caption.append(title, badge);
              cell.append(frame, caption);
              grid.appendChild(cell);
            });
            updateSummary();
            // Cells already near the viewport load now (layout is synchronous here, an observer's first callback
            // waits for a rendered frame); the others when they scroll near it.
            var near = window.innerHeight + 200;
            Array.prototype.forEach.call(grid.children, function (cell) {
              if (cell.getBoundingClientRect().top < near) { load(cell); } else { observer.observe(cell); }
            });
          }

          form.addEventListener('submit', function (event) {
            event.preventDefault();
            var query = new URLSearchParams({ urls: input.value, w: size.value }).toString();
            // Long lists stay out of the address bar (and out of request-line limits).
            history.replaceState(null, '', query.length < 4000 ? '/?' + query : '/');
            show(input.value, Number(size.value));
          });

          var params = new URLSearchParams(location.search);
          var requested = Number(params.get('w'));
          if (requested > 0 && requested <= 2048) {
            if (!Array.prototype.some.call(size.options, function (o) { return Number(o.value) === requested; })) {
              size.add(new Option(requested + ' px', String(requested)));
            }
            size.value = String(requested);
          }
          if (params.has('urls')) {
            input.value = params.get('urls');
            show(input.value, Number(size.value));
          }
        })();
        """
}
