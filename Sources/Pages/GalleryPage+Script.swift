// SPDX-License-Identifier: Apache-2.0

extension GalleryPage {
    /// The forms the script goes over, `/thumb` first: each path-mounted form's builder (its own script), and
    /// `formNames`, `formTitles`, `signingNotes` and `builders` (`(source, ops, prefix)` to `{url}` or `{refusals}`),
    /// keyed by the form's name.
    static func formsScript(_ forms: GalleryForms) -> String {
        let names = ["thumb"] + forms.forms.map(\.name)
        let titles = ["/thumb"] + forms.forms.map(\.texts.title)
        let notes =
            ["unsigned: refused here (security.signing_keys); sign it with thumbd sign"]
            + forms.forms.map(\.texts.signingNote)
        let builders = ["function (source, ops) { return thumbForm(source, ops); }"] + forms.forms.map(\.texts.builder)
        func table(_ values: [String], quoted: Bool) -> String {
            "{ "
                + zip(names, values).map { name, value in
                    "\(jsString(name)): \(quoted ? jsString(value) : value)"
                }.joined(separator: ", ") + " }"
        }
        return forms.forms.map(\.texts.builderScript).joined(separator: "\n\n") + """

            var formNames = [\(names.map(jsString).joined(separator: ", "))];
            var formTitles = \(table(titles, quoted: true));
            var signingNotes = \(table(notes, quoted: true));
            var builders = \(table(builders, quoted: false));
            """
    }

    /// `text` as a JavaScript string literal in single quotes, safe inside a `<script>` element.
    static func jsString(_ text: String) -> String {
        var literal = "'"
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": literal += "\\\\"
            case "'": literal += "\\'"
            case "<": literal += "\\u003c"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\u{2028}": literal += "\\u2028"
            case "\u{2029}": literal += "\\u2029"
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "'"
    }

    /// Reads the operations and the forms' state, parses the box, builds one cell per URL (at most 500) with its
    /// URL in each form (``urlBuilders``, ``formsScript(_:)``), and loads each thumbnail through `/thumb` when it nears
    /// the viewport.
    static let script = """
        var maxItems = 500;
        var form = document.getElementById('form');
        var input = document.getElementById('urls');
        var panel = document.getElementById('ops');
        var grid = document.getElementById('grid');
        var summary = document.getElementById('summary');
        var inputError = document.getElementById('input-error');
        var controls = {};
        ['w', 'h', 'fit', 'gravity', 'enlarge', 'format', 'q', 'rotate', 'flip', 'blur', 'sharpen', 'grayscale',
          'use-bg', 'bg'].forEach(function (id) { controls[id] = document.getElementById(id); });
        var forms = {};
        formNames.forEach(function (name) {
          var item = document.getElementById('form-' + name);
          forms[name] = {
            enabled: item.dataset.enabled === 'true', prefix: item.dataset.prefix,
            signing: item.dataset.signing === 'true'
          };
        });
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
              var source = item && (item.url || item.thumbnailUrl);
              return { url: source ? String(source) : '', title: item && item.title ? String(item.title) : '' };
            }).filter(function (item) { return item.url !== ''; });
          }
          return trimmed.split(/[\\r\\n]+/).map(function (line) { return line.trim(); })
            .filter(function (line) { return line !== '' && line.charAt(0) !== '#'; })
            .map(function (source) { return { url: source, title: '' }; });
        }

        // The operations as the URL builders take them; what is out of range goes to `problems` and is left out.
        function readOperations(problems) {
          function whole(id, min, max, name) {
            var text = controls[id].value.trim();
            if (text === '') { return 0; }
            if (!/^[0-9]{1,4}$/.test(text) || Number(text) < min || Number(text) > max) {
              problems.push(name + ' must be a whole number ' + min + '…' + max);
              return 0;
            }
            return Number(text);
          }
          function decimal(id, max, name) {
            var text = controls[id].value.trim();
            if (text === '') { return ''; }
            if (!/^[0-9]{1,3}([.][0-9]{1,4})?$/.test(text) || Number(text) > max) {
              problems.push(name + ' must be a number 0…' + max + ' with at most 4 decimals');
              return '';
            }
            return Number(text) === 0 ? '' : String(Number(text));
          }
          var ops = {
            w: whole('w', 0, 4096, 'width'), h: whole('h', 0, 4096, 'height'), fit: controls.fit.value,
            gravity: controls.gravity.value, enlarge: controls.enlarge.checked, format: controls.format.value,
            q: whole('q', 1, 100, 'quality'), rotate: Number(controls.rotate.value), flip: controls.flip.value,
            blur: decimal('blur', 100, 'blur'), sharpen: decimal('sharpen', 10, 'sharpen'),
            grayscale: controls.grayscale.checked,
            bg: controls['use-bg'].checked ? controls.bg.value.replace('#', '').toLowerCase() : ''
          };
          if (ops.w === 0 && ops.h === 0) { problems.push('give a width or a height'); }
          return ops;
        }

        // The operations for the address bar: `w` always, `h` when it differs (absent means the same as `w`),
        // the rest when not the default.
        function operationsQuery(ops, params) {
          params.set('w', String(ops.w));
          if (ops.h !== ops.w) { params.set('h', String(ops.h)); }
          if (ops.fit !== 'contain') { params.set('fit', ops.fit); }
          if (ops.gravity !== 'centre') { params.set('gravity', ops.gravity); }
          if (ops.enlarge) { params.set('enlarge', '1'); }
          if (ops.format !== 'auto') { params.set('format', ops.format); }
          if (ops.q) { params.set('q', String(ops.q)); }
          if (ops.rotate) { params.set('rotate', String(ops.rotate)); }
          if (ops.flip) { params.set('flip', ops.flip); }
          if (ops.blur) { params.set('blur', ops.blur); }
          if (ops.sharpen) { params.set('sharpen', ops.sharpen); }
          if (ops.grayscale) { params.set('grayscale', '1'); }
          if (ops.bg) { params.set('bg', ops.bg); }
        }

        // Fills the panel from the address: each known parameter whose value the control can hold.
        function applyQuery(params) {
          function choose(id) {
            var value = params.get(id);
            if (value === null) { return; }
            if (Array.prototype.some.call(controls[id].options, function (o) { return o.value === value; })) {
              controls[id].value = value;
            }
          }
          function number(id) { if (params.has(id)) { controls[id].value = params.get(id); } }
          function flag(id) { controls[id].checked = ['1', 'true'].indexOf(params.get(id)) >= 0; }
          number('w');
          if (params.has('h')) { number('h'); } else { controls.h.value = controls.w.value; }
          ['fit', 'gravity', 'format', 'rotate', 'flip'].forEach(choose);
          ['q', 'blur', 'sharpen'].forEach(number);
          ['enlarge', 'grayscale'].forEach(flag);
          var colour = params.get('bg');
          if (colour !== null && /^[0-9a-fA-F]{6}$/.test(colour)) {
            controls['use-bg'].checked = true;
            controls.bg.value = '#' + colour.toLowerCase();
          }
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
          fetch(cell.dataset.thumb, { credentials: 'same-origin' }).then(function (response) {
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

        function span(className, text) {
          var element = document.createElement('span');
          element.className = className;
          element.textContent = text;
          return element;
        }

        // The picture's URL in each form: a link when this server answers it unsigned, else greyed with the
        // reason, or the operations the form cannot express.
        function urlList(index, source, ops) {
          var list = document.createElement('ul');
          list.className = 'urls';
          var results = {};
          formNames.forEach(function (name) { results[name] = builders[name](source, ops, forms[name].prefix); });
          formNames.forEach(function (name) {
            var result = results[name];
            var state = forms[name];
            var item = document.createElement('li');
            item.dataset.form = name;
            item.appendChild(span('name', formTitles[name]));
            var note = '';
            if (result.refusals) {
              item.dataset.state = 'inexpressible';
              note = 'not expressible in ' + formTitles[name] + "'s form: " + result.refusals.join(', ');
            } else if (!state.enabled) {
              item.dataset.state = 'off';
              note = formTitles[name] + ' form off: ' + name + '.enabled';
            } else if (state.signing) {
              item.dataset.state = 'unsigned';
              note = signingNotes[name];
            } else {
              item.dataset.state = 'ok';
            }
            if (result.url) {
              var link = document.createElement(item.dataset.state === 'ok' ? 'a' : 'span');
              link.className = 'url';
              link.id = 'cell-' + index + '-' + name;
              link.textContent = result.url;
              if (item.dataset.state === 'ok') {
                link.href = result.url;
                link.target = '_blank';
                link.rel = 'noopener';
              }
              item.appendChild(link);
            }
            if (note) { item.appendChild(span('note', note)); }
            list.appendChild(item);
          });
          return list;
        }

        function show(text, ops) {
          var items;
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
          grid.style.setProperty('--size', Math.min(320, Math.max(48, ops.w, ops.h)) + 'px');
          counts = { total: items.length, loaded: 0, failed: 0 };
          items.forEach(function (item, index) {
            var cell = document.createElement('figure');
            cell.className = 'cell';
            cell.id = 'cell-' + index;
            cell.dataset.state = 'pending';
            cell.dataset.source = item.url;
            cell.dataset.thumb = thumbForm(item.url, ops).url;
            var frame = document.createElement('div');
            frame.className = 'frame';
            var img = document.createElement('img');
            img.alt = item.title || item.url;
            img.decoding = 'async';
            frame.appendChild(img);
            var caption = document.createElement('figcaption');
            var title = span('title', item.title || item.url);
            title.title = item.url;
            caption.append(title, span('badge', 'waiting'), urlList(index, item.url, ops));
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

        // Shows the box with the panel's operations and puts both in the address, so the link reproduces it.
        function apply() {
          var problems = [];
          var ops = readOperations(problems);
          inputError.hidden = problems.length === 0;
          inputError.textContent = problems.length === 0 ? '' : 'Left out: ' + problems.join('; ') + '.';
          var params = new URLSearchParams({ urls: input.value });
          operationsQuery(ops, params);
          var query = params.toString();
          // Long lists stay out of the address bar (and out of request-line limits).
          history.replaceState(null, '', query.length < 4000 ? '/?' + query : '/');
          if (ops.w === 0 && ops.h === 0) { return; }
          show(input.value, ops);
        }

        form.addEventListener('submit', function (event) {
          event.preventDefault();
          apply();
        });
        // A playground: every change of an operation shows its effect (and its URLs) at once.
        panel.addEventListener('change', function () { if (input.value.trim() !== '') { apply(); } });

        var params = new URLSearchParams(location.search);
        applyQuery(params);
        if (params.has('urls')) {
          input.value = params.get('urls');
          apply();
        }
        """
}
