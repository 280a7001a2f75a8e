// SPDX-License-Identifier: Apache-2.0

extension ImgproxyForm {
    /// imgproxy's entry in the gallery's playground.
    ///
    /// Its builder, `imgproxyForm`: `rs:fit|fill|force`, `ex:1[:gravity]` for `pad`, `g:` for `cover`, `el:1`,
    /// `rot:`, `fl:`, `bl:`, `sh:`, `bg:`, `q:`, a plain percent-encoded source and the format as `@extension`.
    /// `grayscale`, `entropy` and thumbor's `smart` are not expressible.
    package static let playground = PlaygroundEntry(
        title: "imgproxy", unsignedURLs: "unsigned (<code>insecure</code>) URLs", keySettings: "imgproxy.keys",
        signingNotice: """
            imgproxy's form checks signatures
            here (<code>imgproxy.keys</code>): this page cannot sign them, so its <code>insecure</code> URLs are shown
            greyed, not as links. Sign them with an imgproxy key and salt.
            """,
        signingNote: "insecure: refused here (imgproxy.keys); this page cannot sign",
        script: """
            var imgproxyCompass = {
              centre: 'ce', north: 'no', northeast: 'noea', east: 'ea', southeast: 'soea',
              south: 'so', southwest: 'sowe', west: 'we', northwest: 'nowe'
            };

            function imgproxyForm(source, ops, prefix) {
              var e = effective(ops);
              var refusals = [];
              var types = { contain: 'fit', cover: 'fill', fill: 'force', pad: 'fit' };
              var parts = ['insecure', 'rs:' + types[e.fit] + ':' + ops.w + ':' + ops.h];
              var smartGravities = { attention: 'sm', face: 'obj:face' };
              if (e.gravity === 'entropy' || e.gravity === 'smart') {
                refusals.push('gravity ' + e.gravity);
              } else if (e.fit === 'cover' && e.gravity !== 'centre') {
                parts.push('g:' + (smartGravities[e.gravity] || imgproxyCompass[e.gravity]));
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
              if (ops.bg === 'auto' || ops.bg === 'blur') { refusals.push('bg ' + ops.bg); }
              else if (ops.bg) { parts.push('bg:' + ops.bg); }
              if (ops.q) { parts.push('q:' + ops.q); }
              var extension = ops.format === 'auto' ? '' : '@' + (ops.format === 'jpeg' ? 'jpg' : ops.format);
              parts.push('plain', encodeURIComponent(source) + extension);
              return refusals.length > 0 ? { refusals: refusals } : { url: prefix + parts.join('/') };
            }
            """,
        builder: "imgproxyForm")
}
