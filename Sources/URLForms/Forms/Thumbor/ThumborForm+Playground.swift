// SPDX-License-Identifier: Apache-2.0

extension ThumborForm {
    /// thumbor's entry in the gallery's playground.
    ///
    /// Its builder, `thumborForm`: thumbor resizes, then flips, then turns counter-clockwise; thumbd turns clockwise
    /// first. The turn and flips are composed into one orientation (a clockwise turn, then an optional left-right
    /// mirror) and written as thumbor's mirror `-W` and `filters:rotate(…)`; the box is given as thumbor's (sides
    /// swapped by a quarter turn) and the alignment as the source's side that ends up where the gravity points. Its
    /// crop mode (`WxH`) enlarges unless `no_upscale()`, `fit-in` does not unless `upscale()`. `fill(colour)` with
    /// `fit-in` is `pad`; a `pad` placed anywhere but the centre, and `attention`, `entropy` and `face` (thumbor's `smart/` is `gravity=smart`), are not expressible, nor are
    /// `outside`, an enlarged `contain` and one-sided boxes (thumbor's form sizes them by thumbor's rounding, another
    /// plan).
    package static let playground = PlaygroundEntry(
        title: "thumbor", unsignedURLs: "<code>unsafe/</code> URLs", keySettings: "thumbor.security_keys",
        signingNotice: """
            thumbor's form needs signed URLs
            here (<code>thumbor.security_keys</code> without <code>thumbor.allow_unsafe</code>): this page cannot sign
            them, so its <code>unsafe/</code> URLs are shown greyed, not as links. Sign them with a thumbor security
            key (libthumbor).
            """,
        signingNote: "unsafe/: refused here (thumbor.security_keys, no thumbor.allow_unsafe); this page cannot sign",
        script: """
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
              // thumbor's crop mode (no fit-in) is cover, and fill with stretch(), which fit-in ignores.
              var cropMode = e.fit === 'cover' || e.fit === 'fill';
              if (!cropMode) { parts.push('fit-in'); }
              // thumbor sizes full-fit-in, upscale() and a one-sided box by its own rounding (/thumb's
              // rounding=thumbor-…): another entry than this plan's, whose sizes are thumbd's.
              var oneSided = !(Number(ops.w) > 0 && Number(ops.h) > 0);
              if (e.fit !== 'pad' && (oneSided || e.fit === 'outside' || (!cropMode && ops.enlarge))) {
                refusals.push('full-fit-in, upscale() and one-sided sizes (thumbor rounds them its own way: '
                  + 'rounding=thumbor-…)');
              }
              parts.push((turn.mirrored ? '-' : '') + (swaps ? ops.h : ops.w) + 'x' + (swaps ? ops.w : ops.h));
              if (e.fit === 'cover' && e.gravity === 'smart') {
                parts.push('smart');
              } else if (e.fit === 'cover' && ['attention', 'entropy', 'face'].indexOf(e.gravity) >= 0) {
                refusals.push('gravity ' + e.gravity);
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
              if (cropMode && !ops.enlarge) { filters.push('no_upscale()'); }
              if (!cropMode && ops.enlarge) { filters.push('upscale()'); }
              if (counterClockwise) { filters.push('rotate(' + counterClockwise + ')'); }
              if (e.fit === 'pad') {
                filters.push('fill(' + (ops.bg || 'transparent') + ')');
              } else if (ops.bg === 'auto' || ops.bg === 'blur') {
                refusals.push('bg ' + ops.bg + ' without fit=pad');
              } else if (ops.bg) {
                filters.push('background_color(' + ops.bg + ')');
              }
              // thumbor's radius is a whole number (it skips blur(1.5)): a fractional sigma goes second, its
              // radius three sigmas (thumbd reads only the sigma).
              if (ops.blur) {
                const sigma = Number(ops.blur);
                filters.push('blur(' + (Number.isInteger(sigma) ? ops.blur
                  : Math.min(150, Math.max(1, Math.ceil(3 * sigma))) + ',' + ops.blur) + ')');
              }
              if (ops.sharpen) { filters.push('sharpen(1,' + ops.sharpen + ',true)'); }
              // thumbor's grayscale() is Pillow's Rec. 601 luma (/thumb grayscale=rec601), not grayscale=1's.
              if (ops.grayscale) { refusals.push('grayscale'); }
              if (ops.format !== 'auto') { filters.push('format(' + ops.format + ')'); }
              if (ops.q) { filters.push('quality(' + ops.q + ')'); }
              if (filters.length > 0) { parts.push('filters:' + filters.join(':')); }
              parts.push(thumborImage(source));
              return refusals.length > 0 ? { refusals: refusals } : { url: prefix + parts.join('/') };
            }
            """,
        builder: "thumborForm")
}
