// SPDX-License-Identifier: Apache-2.0

/// The HTML of `GET /status`: one self-contained page (inline CSS, JS and SVG; no external asset, font or
/// CDN), rendered on the server from a ``StatusReport``, so the numbers a person sees are the ones
/// `/status.json` reports. Every value that can come from a client (source URLs, routes) is HTML-escaped.
///
/// Numbers a test or script may want carry them raw in `data-value` attributes; the inline script only
/// refreshes the page's `<main>` every 10 s (same-origin fetch of this page, parsed and swapped).
package enum StatusPage {
    /// The page for `report`; `nonce` must be the one in the response's Content-Security-Policy.
    package static func render(_ report: StatusReport, nonce: String) -> String {
        var html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>thumbd status</title><link rel="icon" href="data:,">
            <style nonce="\(nonce)">\(css)</style></head>
            <body><header><h1>thumbd status</h1>
            <label><input type="checkbox" id="auto-refresh" checked> refresh every 10 s</label></header>
            <main id="status">
            """
        html += body(report)
        html += "</main><script nonce=\"\(nonce)\">\(script)</script></body></html>\n"
        return html
    }

    /// The contents of `<main>`.
    static func body(_ report: StatusReport) -> String {
        var html = "<p class=\"meta\">Generated <time id=\"generated\" datetime=\"\(escape(report.generatedAt))\">"
        html += "\(escape(report.generatedAt))</time>; up \(duration(report.uptimeSeconds))"
        html += report.signing ? "; signed URLs required" : ""
        html += ".</p>"
        let cpus = report.cpus
        html += "<p class=\"meta\" id=\"cpus\">CPUs: <b data-value=\"\(cpus.count)\">\(cpus.count)</b> "
        html += "(\(escape(cpus.origin))); <span id=\"http-threads\" data-value=\"\(cpus.httpThreads)\">"
        html += "\(cpus.httpThreads)</span> event loops, <span id=\"render-threads\" "
        html += "data-value=\"\(cpus.renderThreads)\">\(cpus.renderThreads)</span> render threads.</p>"

        let ratio = report.hitRatio
        html += "<section id=\"hit-ratio\"><h2>Hit ratio</h2>"
        html += shareBar(ratio)
        html += "<table><thead><tr><th>outcome</th><th>lookups</th><th>share</th></tr></thead><tbody>"
        for (name, count, share) in [
            ("memory", ratio.memoryHits, ratio.memoryShare), ("disk", ratio.diskHits, ratio.diskShare),
            ("miss", ratio.misses, ratio.missShare),
        ] {
            html += "<tr id=\"hit-\(name)\"><th><i class=\"key \(name)\"></i>\(name)</th>"
            html += "<td data-value=\"\(count)\">\(count)</td><td>\(percent(share))</td></tr>"
        }
        html += "</tbody></table></section>"

        html += "<section id=\"tiers\"><h2>Cache tiers</h2><table><thead><tr><th>tier</th><th>entries</th>"
        html += "<th>bytes</th><th>budget</th><th>used</th></tr></thead><tbody>"
        for tier in report.tiers {
            html += "<tr id=\"tier-\(escape(tier.name))\"><th>\(escape(tier.name.replacing("_", with: " ")))</th>"
            guard tier.enabled else {
                html += "<td colspan=\"4\" class=\"off\">off</td></tr>"
                continue
            }
            let used = tier.maxBytes > 0 ? Double(tier.bytes) / Double(tier.maxBytes) : 0
            html += "<td class=\"entries\" data-value=\"\(tier.entries)\">\(tier.entries)</td>"
            html += "<td class=\"bytes\" data-value=\"\(tier.bytes)\">\(byteSize(tier.bytes))</td>"
            html += "<td>\(byteSize(tier.maxBytes))</td><td>\(meter(used))</td></tr>"
        }
        html += "</tbody></table></section>"

        let shared = report.sharedTier
        if shared.enabled {
            html += "<section id=\"shared\"><h2>Shared tier</h2><p>Breaker: <b id=\"shared-breaker\">"
            html += shared.breakerOpen ? "open (skipped)" : "closed"
            html += "</b></p><table><thead><tr><th></th><th>hits</th><th>misses</th><th>errors</th><th>skipped</th>"
            html += "<th>unusable</th></tr></thead><tbody><tr id=\"shared-lookups\"><th>lookups</th>"
            for count in [shared.hits, shared.misses, shared.errors, shared.skipped, shared.unusable] {
                html += "<td data-value=\"\(count)\">\(count)</td>"
            }
            html += "</tr></tbody><thead><tr><th></th><th>stored</th><th>already there</th><th>errors</th>"
            html += "<th>dropped</th><th></th></tr></thead><tbody><tr id=\"shared-writes\"><th>writes</th>"
            for count in [shared.stored, shared.alreadyStored, shared.writeErrors, shared.dropped] {
                html += "<td data-value=\"\(count)\">\(count)</td>"
            }
            html += "<td></td></tr></tbody></table></section>"
        }

        let requests = report.requests
        html += "<section id=\"requests\"><h2>Requests per second</h2>"
        html += chart(requests.buckets, bucketSeconds: requests.bucketSeconds)
        html += "<p>Last minute: <b id=\"rate\" data-value=\"\(requests.perSecondLastMinute)\">"
        html += "\(decimal(requests.perSecondLastMinute))</b> req/s; since start: "
        html +=
            "<b id=\"requests-total\" data-value=\"\(requests.total)\">\(requests.total)</b> responses.</p></section>"

        let flight = report.inFlight
        html += "<section id=\"in-flight\"><h2>In flight</h2><table><tbody>"
        for (id, label, value) in [
            ("fetches-running", "origin fetches running", flight.fetchesRunning),
            ("fetches-queued", "origin fetches waiting for a host slot", flight.fetchesQueued),
            ("render-flights", "variants being fetched or rendered", flight.renderFlights),
            ("renders-running", "renders running", flight.rendersRunning),
            ("render-queue", "renders queued", flight.renderQueueDepth),
            ("transfers-started", "origin transfers since start", flight.transfersStarted),
            ("coalesced-requests", "requests that joined a render", flight.coalescedRequests),
            ("coalesced-fetches", "fetches that joined a transfer", flight.coalescedFetches),
        ] {
            html += "<tr id=\"\(id)\"><th>\(label)</th><td data-value=\"\(value)\">\(value)</td></tr>"
        }
        html += "</tbody></table></section>"

        let top = report.topSources
        html += "<section id=\"top-sources\"><h2>Top source \(top.kind == "url" ? "URLs" : "hosts")</h2>"
        html += "<p class=\"note\">Last minutes, estimated from one request in \(top.sampleEvery)"
        html += top.kind == "url" ? "." : "; whole URLs are shown only behind the admin token."
        html += "</p>"
        if top.items.isEmpty {
            html += "<p class=\"empty\">No requests yet.</p>"
        } else {
            html += "<table><thead><tr><th>\(top.kind)</th><th>≈ requests</th></tr></thead><tbody>"
            for item in top.items {
                html += "<tr><td class=\"source\">\(escape(String(item.name.prefix(300))))</td>"
                html += "<td data-value=\"\(item.requests)\">\(item.requests)</td></tr>"
            }
            html += "</tbody></table>"
        }
        html += "</section>"

        html += "<section id=\"errors\"><h2>Recent errors</h2>"
        if report.recentErrors.isEmpty {
            html += "<p class=\"empty\">None since start.</p>"
        } else {
            html += "<table><thead><tr><th>time</th><th>status</th><th>route</th><th>message</th></tr></thead><tbody>"
            for error in report.recentErrors {
                html += "<tr><td><time>\(escape(error.time))</time></td><td data-value=\"\(error.status)\">"
                html += "\(error.status)</td><td>\(escape(error.method)) \(escape(error.route))</td>"
                html += "<td>\(escape(error.message))</td></tr>"
            }
            html += "</tbody></table>"
        }
        html += "</section>"
        return html
    }

    // MARK: - Pieces

    /// The bucket counts as an SVG bar chart (requests per second per bucket), newest on the right.
    static func chart(_ buckets: [Int], bucketSeconds: Int) -> String {
        let width = 600
        let height = 120
        let rates = buckets.map { Double($0) / Double(max(1, bucketSeconds)) }
        let peak = max(rates.max() ?? 0, 1)
        let barWidth = Double(width) / Double(max(1, buckets.count))
        var svg =
            "<svg id=\"chart\" viewBox=\"0 0 \(width) \(height + 16)\" width=\"\(width)\" height=\"\(height + 16)\""
        svg += " role=\"img\" aria-label=\"requests per second, last \(buckets.count * bucketSeconds / 60) minutes\">"
        svg += "<line x1=\"0\" y1=\"\(height)\" x2=\"\(width)\" y2=\"\(height)\" class=\"axis\"/>"
        for (index, rate) in rates.enumerated() {
            let barHeight = Double(height - 4) * rate / peak
            svg += "<rect class=\"bar\" x=\"\(decimal(Double(index) * barWidth + 0.5))\" "
            svg += "y=\"\(decimal(Double(height) - barHeight))\" width=\"\(decimal(barWidth - 1))\" "
            svg += "height=\"\(decimal(barHeight))\" data-count=\"\(buckets[index])\">"
            svg += "<title>\(decimal(rate)) req/s</title></rect>"
        }
        svg += "<text x=\"2\" y=\"12\" class=\"label\">peak \(decimal(peak)) req/s</text>"
        svg += "<text x=\"0\" y=\"\(height + 13)\" class=\"label\">−\(buckets.count * bucketSeconds / 60) min</text>"
        svg += "<text x=\"\(width)\" y=\"\(height + 13)\" class=\"label end\">now</text></svg>"
        return svg
    }

    /// Memory, disk and miss shares as one stacked bar.
    static func shareBar(_ ratio: StatusReport.HitRatio) -> String {
        var svg = "<svg class=\"shares\" viewBox=\"0 0 600 18\" width=\"600\" height=\"18\" role=\"img\" "
        svg += "aria-label=\"hit ratio\">"
        var x = 0.0
        for (name, share) in [("memory", ratio.memoryShare), ("disk", ratio.diskShare), ("miss", ratio.missShare)] {
            svg +=
                "<rect class=\"\(name)\" x=\"\(decimal(x))\" y=\"0\" width=\"\(decimal(600 * share))\" height=\"18\"/>"
            x += 600 * share
        }
        return svg + "</svg>"
    }

    /// A small horizontal meter (SVG) for a 0...1 fraction.
    static func meter(_ fraction: Double) -> String {
        let clamped = min(1, max(0, fraction))
        return "<svg class=\"meter\" viewBox=\"0 0 100 8\" width=\"100\" height=\"8\"><rect class=\"track\" "
            + "width=\"100\" height=\"8\"/><rect class=\"fill\" width=\"\(decimal(100 * clamped))\" height=\"8\"/>"
            + "</svg> \(percent(clamped))"
    }

    /// `&`, `<`, `>`, `"` and `'` as entities: safe in text and in quoted attributes.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            case _ where character.value < 0x20 || character.value == 0x7F: escaped += "\u{FFFD}"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    /// `1.5 MiB`.
    static func byteSize(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : "\(decimal(value)) \(units[unit])"
    }

    /// One decimal place.
    static func decimal(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        let whole = Int(tenths) / 10
        let fraction = abs(Int(tenths) % 10)
        return tenths < 0 && whole == 0 ? "-0.\(fraction)" : "\(whole).\(fraction)"
    }

    static func percent(_ share: Double) -> String { "\(decimal(share * 100)) %" }

    /// `3 h 25 min`.
    static func duration(_ seconds: Int) -> String {
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\(seconds / 60) min" }
        if seconds < 172_800 { return "\(seconds / 3600) h \(seconds % 3600 / 60) min" }
        return "\(seconds / 86400) d \(seconds % 86400 / 3600) h"
    }

    // MARK: - Inline assets

    static let css = """
        :root{color-scheme:light dark;--fg:#1d232a;--bg:#fbfbfa;--muted:#6a737d;--line:#d9dde1;\
        --memory:#2e8b57;--disk:#3b7dd8;--miss:#d9822b}
        @media (prefers-color-scheme:dark){:root{--fg:#e6e8ea;--bg:#16191c;--muted:#9aa4ad;--line:#333a41}}
        body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;\
        max-width:980px;padding:1rem 1.5rem}
        header{display:flex;justify-content:space-between;align-items:baseline}
        h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}
        table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.2rem .5rem;\
        border-bottom:1px solid var(--line);vertical-align:top}
        td[data-value]{font-variant-numeric:tabular-nums}
        .meta,.note,.empty,.off{color:var(--muted)}
        td.source{word-break:break-all;font-family:ui-monospace,monospace;font-size:12px}
        .key{display:inline-block;width:.8em;height:.8em;margin-right:.4em;border-radius:2px}
        .key.memory,rect.memory{background:var(--memory);fill:var(--memory)}
        .key.disk,rect.disk{background:var(--disk);fill:var(--disk)}
        .key.miss,rect.miss{background:var(--miss);fill:var(--miss)}
        svg{max-width:100%;height:auto}svg.meter{vertical-align:middle}
        rect.track{fill:var(--line)}rect.fill{fill:var(--disk)}rect.bar{fill:var(--disk)}
        line.axis{stroke:var(--line)}text.label{fill:var(--muted);font-size:11px}text.end{text-anchor:end}
        """

    /// Replaces `<main>` with a fresh copy every 10 s while the box is ticked; stops after a failed refresh
    /// (for example a 401 once the token changed) instead of retrying forever. `<body data-refreshes>` counts
    /// the refreshes and `data-refresh-error` says why one failed (tests read them).
    static let script = """
        (function () {
          'use strict';
          var box = document.getElementById('auto-refresh');
          var timer = null;
          function refresh() {
            // Built from the parts without user info: a page opened as http://user:token@host/status has a
            // base URL with credentials, from which fetch() refuses to resolve a relative URL. The browser
            // sends the Basic credentials it keeps for this origin.
            fetch(location.protocol + '//' + location.host + location.pathname, {
              credentials: 'same-origin', cache: 'no-store'
            })
              .then(function (response) {
                if (!response.ok) { throw new Error('HTTP ' + response.status); }
                return response.text();
              })
              .then(function (text) {
                // Only <main> is parsed: the page's <style> and <script> carry the new response's nonce, and
                // parsing them here would be reported as CSP violations of this one.
                var start = text.indexOf('<main id="status">');
                var end = text.lastIndexOf('</main>');
                if (start < 0 || end < start) { throw new Error('unexpected page'); }
                var parsed = new DOMParser().parseFromString(text.slice(start, end + 7), 'text/html');
                var fresh = parsed.getElementById('status');
                if (fresh) { document.getElementById('status').replaceWith(document.adoptNode(fresh)); }
                document.body.dataset.refreshes = Number(document.body.dataset.refreshes || 0) + 1;
              })
              .catch(function (error) {
                document.body.dataset.refreshError = error.message;
                box.checked = false;
                schedule();
              });
          }
          function schedule() {
            if (timer !== null) { clearInterval(timer); timer = null; }
            if (box.checked) { timer = setInterval(refresh, 10000); }
          }
          box.addEventListener('change', schedule);
          schedule();
        })();
        """
}
