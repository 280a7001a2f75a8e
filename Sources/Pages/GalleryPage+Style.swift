// SPDX-License-Identifier: Apache-2.0

extension GalleryPage {
    /// The page's style sheet (inline, allowed by the nonce). `--size` is the thumbnail frame's side, set by the
    /// script from the box asked (through the CSSOM, which the policy allows; a `style` attribute it would refuse).
    static let css = """
        :root{color-scheme:light dark;--fg:#1d232a;--bg:#fbfbfa;--muted:#6a737d;--line:#d9dde1;--cell:#f0f1f2;\
        --ok:#2e8b57;--bad:#c0392b;--size:128px}
        @media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--bg:#16191c;--muted:#9aa4ad;--line:#333a41;\
        --cell:#22272c}}
        body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;\
        max-width:1200px;padding:1rem 1.5rem}
        header{display:flex;justify-content:space-between;align-items:baseline}a{color:inherit}
        h1{font-size:1.4rem;margin:.2rem 0}
        #url-forms{list-style:none;margin:.2rem 0 .6rem;padding:0;color:var(--muted);font-size:12px}
        #url-forms li[data-enabled=false]{opacity:.7}
        textarea{width:100%;box-sizing:border-box;font:12px/1.4 ui-monospace,monospace;margin:.3rem 0}
        fieldset{border:1px solid var(--line);border-radius:6px;margin:.2rem 0 .5rem;padding:.3rem .8rem .5rem}
        legend{color:var(--muted);padding:0 .3rem}
        .ops{display:flex;flex-wrap:wrap;gap:.4rem 1.1rem;align-items:center}.ops label{white-space:nowrap}
        .ops input[type=number]{width:5.5em}
        .controls{display:flex;gap:.6rem;align-items:center;flex-wrap:wrap}
        output{color:var(--muted)}.notice{border-left:4px solid var(--bad);padding:.4rem .8rem;background:var(--cell)}
        .error{color:var(--bad)}
        #grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,calc(var(--size) + 24rem)),1fr));\
        gap:.8rem;margin-top:1rem}
        figure{margin:0;background:var(--cell);border-radius:6px;overflow:hidden;border:1px solid var(--line);\
        display:grid;grid-template-columns:var(--size) minmax(0,1fr);align-items:start}
        .frame{height:var(--size);display:flex;align-items:center;justify-content:center}
        .frame img{max-width:100%;max-height:100%}
        figure[data-state=pending] img,figure[data-state=loading] img,figure[data-state=failed] img{display:none}
        figcaption{padding:.3rem .5rem;font-size:11px;line-height:1.3;min-width:0}
        .title{display:block;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
        .badge{color:var(--muted)}figure[data-state=loaded] .badge{color:var(--ok)}
        figure[data-state=failed] .badge{color:var(--bad)}
        .urls{list-style:none;margin:.3rem 0 0;padding:0}
        .urls li{margin:.2rem 0}.urls .name{font-weight:600;margin-right:.4em}
        .url{font:11px/1.35 ui-monospace,monospace;overflow-wrap:anywhere}
        .urls li:not([data-state=ok]) .url{color:var(--muted);opacity:.75}
        .note{display:block;color:var(--muted);font-style:italic}
        .urls li[data-state=inexpressible] .note{color:var(--bad)}
        """
}
