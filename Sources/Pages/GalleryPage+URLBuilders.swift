// SPDX-License-Identifier: Apache-2.0

extension GalleryPage {
    /// What the page's script shares with the forms' URL builders, and `/thumb`'s own: `thumbForm` returns
    /// `{url: …}`; each path-mounted form brings its builder (``GalleryForms/Form/builderScript``), which returns
    /// `{url: …}` or `{refusals: [what the form cannot say]}`.
    ///
    /// They follow the server's parsers (docs/compatibility.md), so that every form's URL compiles into one plan and
    /// shares one cache entry. **What cannot matter is left out**, as the variant key leaves it out: with one side
    /// every fit is `contain`; a gravity counts only for `cover`, and for `pad` when it is a compass point
    /// (`effective(ops)`). `orientation(rotate, flip)` composes the turn and flips into one (a clockwise turn, then an
    /// optional left-right mirror), and `turned(vector, turn)` says where a compass vector lands once turned, for
    /// forms that turn after their resize.
    static let urlBuilders = """
        var compass = {
          centre: [0, 0], north: [0, -1], northeast: [1, -1], east: [1, 0], southeast: [1, 1],
          south: [0, 1], southwest: [-1, 1], west: [-1, 0], northwest: [-1, -1]
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
        """
}
