// SPDX-License-Identifier: Apache-2.0

extension GalleryPage {
    /// The page's script functions that write one picture (a source and the operations) as a URL of each form:
    /// `thumbForm`, `thumborForm` and `imgproxyForm` each return `{url: …}` or `{refusals: [what the form cannot
    /// say]}`.
    ///
    /// They follow the server's parsers (docs/compatibility.md), so that the three URLs compile into one plan and
    /// share one cache entry:
    /// - **What cannot matter is left out**, as the variant key leaves it out: with one side every fit is `contain`;
    ///   a gravity counts only for `cover`, and for `pad` when it is a compass point.
    /// - **thumbor** resizes, then flips, then turns counter-clockwise; thumbd turns clockwise first. The turn and
    ///   flips are composed into one orientation (a clockwise turn, then an optional left-right mirror) and written
    ///   as thumbor's mirror `-W` and `filters:rotate(…)`; the box is given as thumbor's (sides swapped by a
    ///   quarter turn) and the alignment as the source's side that ends up where the gravity points. Its crop mode
    ///   (`WxH`) enlarges unless `no_upscale()`, `fit-in` does not unless `upscale()`. `fill(colour)` with `fit-in`
    ///   is `pad`; a `pad` placed anywhere but the centre, and `entropy`, are not expressible.
    /// - **imgproxy**: `rs:fit|fill|force`, `ex:1[:gravity]` for `pad`, `g:` for `cover`, `el:1`, `rot:`, `fl:`,
    ///   `bl:`, `sh:`, `bg:`, `q:`, a plain percent-encoded source and the format as `@extension`. `grayscale` and
    ///   `entropy` are not expressible.
    static let urlBuilders = """
        var compass = {
          centre: [0, 0], north: [0, -1], northeast: [1, -1], east: [1, 0], southeast: [1, 1],
          south: [0, 1], southwest: [-1, 1], west: [-1, 0], northwest: [-1, -1]
        };
        var imgproxyCompass = {
          centre: 'ce', north: 'no', northeast: 'noea', east: 'ea', southeast: 'soea',
          south: 'so', southwest: 'sowe', west: 'we', northwest: 'nowe'
        };

        // The fit and gravity the variant key keeps.
        function effective(ops) {
          var fit = ops.w > 0 && ops.h > 0 ? ops.fit : 'contain';
          var gravity = 'centre';
          if (fit === 'cover' || (fit === 'pad' && compass[ops.gravity])) { gravity = ops.gravity; }
          return { fit: fit, gravity: gravity };
        }

        // A clockwise turn (0, 90, 180, 270) then an optional left-right mirror: rotate, then flip, composed.
        function then(first, next) {
          var turn = first.mirrored ? (360 - next.degrees) % 360 : next.degrees;
          return { degrees: (first.degrees + turn) % 360, mirrored: first.mirrored !== next.mirrored };
        }
        function orientation(rotate, flip) {
          var result = { degrees: rotate % 360, mirrored: false };
          if (flip.indexOf('h') >= 0) { result = then(result, { degrees: 0, mirrored: true }); }
          if (flip.indexOf('v') >= 0) { result = then(result, { degrees: 180, mirrored: true }); }
          return result;
        }
        // Where a compass vector of the untouched picture lands once it is turned by `turn`.
        function turned(vector, turn) {
          var u = vector[0], v = vector[1];
          for (var quarter = 0; quarter < turn.degrees / 90; quarter += 1) { var t = u; u = -v; v = t; }
          return [turn.mirrored ? -u : u, v];
        }

        function thumbForm(source, ops) {
          var e = effective(ops);
          var query = 'url=' + encodeURIComponent(source);
          function add(name, value) { query += '&' + name + '=' + value; }
          if (ops.w > 0) { add('w', ops.w); }
          if (ops.h > 0) { add('h', ops.h); }
          if (e.fit !== 'contain') { add('fit', e.fit); }
          if (e.gravity !== 'centre') { add('gravity', e.gravity); }
          if (ops.enlarge) { add('enlarge', '1'); }
          if (ops.rotate) { add('rotate', ops.rotate); }
          if (ops.flip) { add('flip', ops.flip); }
          if (ops.blur) { add('blur', ops.blur); }
          if (ops.sharpen) { add('sharpen', ops.sharpen); }
          if (ops.grayscale) { add('grayscale', '1'); }
          if (ops.bg) { add('bg', ops.bg); }
          if (ops.format !== 'auto') { add('format', ops.format); }
          if (ops.q) { add('q', ops.q); }
          return { url: '/thumb?' + query };
        }

        // thumbor's image part: `http://` left out when thumbor would put it back (a host with a dot, which no
        // option segment looks like), every character a path cannot hold as it is percent-encoded (`%`, `?`, `#`
        // included: thumbor decodes the image once and refuses a query string).
        function thumborImage(source) {
          var text = source;
          if (text.slice(0, 7).toLowerCase() === 'http://' && text.slice(7).split('/')[0].indexOf('.') >= 0) {
            text = text.slice(7);
          }
          return text.replace(/[^A-Za-z0-9._~/:@!$&'()*+,;=-]/gu, function (c) { return encodeURIComponent(c); });
        }

        function thumborForm(source, ops, prefix) {
          var e = effective(ops);
          var refusals = [];
          var turn = orientation(ops.rotate, ops.flip);
          var counterClockwise = turn.mirrored ? turn.degrees : (360 - turn.degrees) % 360;
          var swaps = turn.degrees % 180 !== 0;
          var parts = ['unsafe'];
          if (e.fit !== 'cover') { parts.push('fit-in'); }
          parts.push((turn.mirrored ? '-' : '') + (swaps ? ops.h : ops.w) + 'x' + (swaps ? ops.w : ops.h));
          if (e.fit === 'cover' && e.gravity === 'attention') {
            parts.push('smart');
          } else if (e.fit === 'cover' && e.gravity === 'entropy') {
            refusals.push('gravity entropy');
          } else if (e.fit === 'cover' && e.gravity !== 'centre') {
            // The side of the untouched picture that the turn takes to where the gravity points.
            var wanted = compass[e.gravity];
            Object.keys(compass).forEach(function (name) {
              var landed = turned(compass[name], turn);
              if (landed[0] !== wanted[0] || landed[1] !== wanted[1]) { return; }
              var vector = compass[name];
              if (vector[0] !== 0) { parts.push(vector[0] < 0 ? 'left' : 'right'); }
              if (vector[1] !== 0) { parts.push(vector[1] < 0 ? 'top' : 'bottom'); }
            });
          } else if (e.fit === 'pad' && e.gravity !== 'centre') {
            refusals.push('pad placed ' + e.gravity + ' (fill() centres)');
          }
          var filters = [];
          if (e.fit === 'fill') { filters.push('stretch()'); }
          if (e.fit === 'cover' && !ops.enlarge) { filters.push('no_upscale()'); }
          if (e.fit !== 'cover' && ops.enlarge) { filters.push('upscale()'); }
          if (counterClockwise) { filters.push('rotate(' + counterClockwise + ')'); }
          if (e.fit === 'pad') {
            filters.push('fill(' + (ops.bg || 'transparent') + ')');
          } else if (ops.bg) {
            filters.push('background_color(' + ops.bg + ')');
          }
          if (ops.blur) { filters.push('blur(' + (Number(ops.blur) >= 1 ? ops.blur : '1,' + ops.blur) + ')'); }
          if (ops.sharpen) { filters.push('sharpen(1,' + ops.sharpen + ',true)'); }
          if (ops.grayscale) { filters.push('grayscale()'); }
          if (ops.format !== 'auto') { filters.push('format(' + ops.format + ')'); }
          if (ops.q) { filters.push('quality(' + ops.q + ')'); }
          if (filters.length > 0) { parts.push('filters:' + filters.join(':')); }
          parts.push(thumborImage(source));
          return refusals.length > 0 ? { refusals: refusals } : { url: prefix + parts.join('/') };
        }

        function imgproxyForm(source, ops, prefix) {
          var e = effective(ops);
          var refusals = [];
          var types = { contain: 'fit', cover: 'fill', fill: 'force', pad: 'fit' };
          var parts = ['insecure', 'rs:' + types[e.fit] + ':' + ops.w + ':' + ops.h];
          if (e.gravity === 'entropy') {
            refusals.push('gravity entropy');
          } else if (e.fit === 'cover' && e.gravity !== 'centre') {
            parts.push('g:' + (e.gravity === 'attention' ? 'sm' : imgproxyCompass[e.gravity]));
          }
          if (e.fit === 'pad') {
            parts.push('ex:1' + (e.gravity !== 'centre' ? ':' + imgproxyCompass[e.gravity] : ''));
          }
          if (ops.enlarge) { parts.push('el:1'); }
          if (ops.rotate) { parts.push('rot:' + ops.rotate); }
          if (ops.flip) {
            parts.push('fl:' + (ops.flip.indexOf('h') >= 0 ? 1 : 0) + ':' + (ops.flip.indexOf('v') >= 0 ? 1 : 0));
          }
          if (ops.blur) { parts.push('bl:' + ops.blur); }
          if (ops.sharpen) { parts.push('sh:' + ops.sharpen); }
          if (ops.grayscale) { refusals.push('grayscale'); }
          if (ops.bg) { parts.push('bg:' + ops.bg); }
          if (ops.q) { parts.push('q:' + ops.q); }
          var extension = ops.format === 'auto' ? '' : '@' + (ops.format === 'jpeg' ? 'jpg' : ops.format);
          parts.push('plain', encodeURIComponent(source) + extension);
          return refusals.length > 0 ? { refusals: refusals } : { url: prefix + parts.join('/') };
        }
        """
}
