# SPDX-License-Identifier: Apache-2.0
# Varnish 7.1 (Debian 12's package) in front of N thumbd nodes, each with its own memory and disk cache, with
# Varnish's own cache in front of them all. deploy/cluster/README.md ("Varnish in front") explains the design and
# the figures. Tests/IntegrationTests/ClusterVarnishTests.swift checks this file (`varnishd -C -f`) and runs it, with
# only the backends' addresses and the probe interval replaced, in front of three and then four real thumbd
# processes, and in front of three that mount thumbor's and imgproxy's forms.
#
# The one idea, as with haproxy.cfg and nginx.conf: hash the source (/thumb's `url` parameter, or the source in
# thumbor's and imgproxy's paths), not the whole URI, so every size of a source is asked of the node that already
# holds the source and its 512 px intermediate. On top of that, Varnish keeps the thumbnails it has served and
# answers them again without asking any node.
#
# On Debian, install it as /etc/varnish/default.vcl (the varnish service's -f), set the listen address and the cache
# size in the service's ExecStart (`systemctl edit --full varnish`: -a :8080, -s malloc,<size>), and:
#   varnishd -C -f /etc/varnish/default.vcl >/dev/null 2>&1 && echo OK   # check after an edit (it prints the
#                                                                           # compiled C, or the error, on stderr)
#   systemctl reload varnish        # apply it: vcl.load + vcl.use (/usr/share/varnish/varnishreload); cache kept

vcl 4.1;

import blob;
import directors;
import std;

# Health: thumbd's /ready is 200 while it serves and 503 from the start of a graceful stop (SIGTERM), so a node
# that is stopping or starting receives nothing new. Every probe is a request on every node, every interval.
probe thumbd_ready {
    .request =
        "GET /ready HTTP/1.1"
        "Host: thumbd"
        "Connection: close"
        "User-Agent: varnish-probe";
    .expected_response = 200;
    .interval = 2s;
    .timeout = 2s;
    # Healthy while at least 2 of the last 3 probes succeeded: a dead node is out after two failed probes (2-4 s),
    # and back after two good ones; requests meanwhile are retried on the next node (vcl_backend_error below).
    .window = 3;
    .threshold = 2;
    # Healthy from the start (the default, threshold - 1, starts every node sick until its first probe returns):
    # a reload (vcl.load + vcl.use) then never finds a ring with no healthy node and answers 503. A node that is
    # really down at that moment costs its first requests a retry, as above.
    .initial = 2;
}

# One backend per thumbd node, all alike. Adding a node: a backend here and a line in each director in vcl_init,
# then reload; about 1/N of the sources move to it and are fetched and rendered once more there.
# Timeouts: connect 2 s; the first byte may take as long as thumbd's worst cold request (fetch.timeout, 10 s, + a
# render of a large source); thumbd sends a thumbnail in one write, so the gap between bytes is short.
backend thumbd_1 {
    .host = "10.0.0.11";
    .port = "8080";
    .probe = thumbd_ready;
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}
backend thumbd_2 {
    .host = "10.0.0.12";
    .port = "8080";
    .probe = thumbd_ready;
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}
backend thumbd_3 {
    .host = "10.0.0.13";
    .port = "8080";
    .probe = thumbd_ready;
    .connect_timeout = 2s;
    .first_byte_timeout = 30s;
    .between_bytes_timeout = 10s;
}

# Who may send a BAN: the thumbd nodes (cache.purge.varnish), by their addresses or their subnet; nobody else.
acl thumbd_nodes {
    "10.0.0.0"/24;
}

sub vcl_init {
    # The ring. Each node's place on it comes from its `ident` (SHA-256 of ident + 1..replicas), not its address
    # or the backend's name: give every node a fixed ident and never reuse one, so that a node replaced on a new
    # address keeps its keys, and so that two Varnish servers in front of the same nodes agree on the ring.
    new ring = directors.shard();
    ring.add_backend(thumbd_1, ident = "thumbd-1");
    ring.add_backend(thumbd_2, ident = "thumbd-2");
    ring.add_backend(thumbd_3, ident = "thumbd-3");
    # 1,600 points per node (HAProxy's weight 100 and nginx's weight=10 give as many). With the default 67 the
    # shares are uneven: measured over 4,000 keys, three nodes got 30-35 % and four 23-28 %; with 1,600, 32-34 % and
    # 24-26 %.
    ring.reconfigure(replicas = 1600);
    # No rampup and no warmup (both off by default; said here because both are tempting). Rampup sends part of a
    # node's keys to the next node while the node is new or back; warmup sends a share of every key's requests to
    # the next node all the time. Either way the second node fetches the source from its origin and renders it
    # again: the cost the ring is there to avoid. A node that comes back answers its keys from its own disk.
    ring.set_rampup(0s);
    ring.set_warmup(0.0);

    # Requests without a `url` parameter (/health, /metrics, /status, the pages, thumbor's and imgproxy's path
    # forms) go round robin over the healthy nodes, as with HAProxy and nginx.
    new spread = directors.round_robin();
    spread.add_backend(thumbd_1);
    spread.add_backend(thumbd_2);
    spread.add_backend(thumbd_3);
}

sub vcl_recv {
    if (req.method == "BAN") {
        # A purge pushed by a node (cache.purge.varnish): after a source was purged or found changed, the node
        # sends `BAN` with the purged tags in `X-Thumbd-Tags` (space-separated), and every object whose tag header
        # (cache.tag_header: Surrogate-Key here; edit the two names below for another) holds one of them goes. Only
        # from the nodes, and only tags of thumbd's shape, so that the ban expression is always this one. The ban
        # reads obj.* only: Varnish's ban lurker removes the objects in the background too.
        if (client.ip !~ thumbd_nodes) {
            return (synth(403, "Forbidden"));
        }
        if (req.http.X-Thumbd-Tags !~ "^[A-Za-z0-9_:.-]{1,128}( [A-Za-z0-9_:.-]{1,128}){0,99}$") {
            return (synth(400, "X-Thumbd-Tags must be up to 100 tags of A-Z a-z 0-9 _ : . -"));
        }
        # A tag is matched whole, between the header's separators (spaces for Surrogate-Key, commas for Cache-Tag),
        # and a dot in it means a dot.
        # (No space and no quote in the expression's argument: std.ban ends it at a space and keeps quotes as
        # part of the expression, hence `[[:space:],]`.)
        if (std.ban("obj.http.Surrogate-Key ~ (^|[[:space:],])(" +
                regsuball(regsuball(req.http.X-Thumbd-Tags, "[.]", "[.]"), " ", "|") + ")($|[[:space:],])")) {
            return (synth(200, "Banned"));
        }
        return (synth(500, "Ban refused: " + std.ban_error()));
    }
    # The key: the source, which tells the node that holds it (vcl_backend_fetch hands it to the ring), whichever
    # of the three URL forms asks for it, written as thumbd's builders write a /thumb `url`: the same key as
    # haproxy.cfg's txn.source_key, made with the same steps (deploy/cluster/README.md, "The key"). vmod_blob does
    # the decoding and the encoding; each decoding is guarded, since a failed one would fail the request. Never a
    # client's own header.
    unset req.http.X-Thumbd-Key;
    if (req.url ~ "^/thumbor/") {
        # thumbor's form: the image, after the signature and the optional parts in thumbor's order (filters end at
        # the first `)/`), up to the query string; read as thumbd reads it: percent-decoded once, a `http:/` mended,
        # `http://` put in front of a bare host.
        # (One expression, on one line: a regular expression in VCL is a single literal.)
        set req.http.X-Thumbd-Key = regsub(req.url, "^/thumbor/[^/?]*/(?:debug/)?(?:meta/)?(?:trim(?::top-left|:bottom-right)?(?::[0-9]+)?/)?(?:[0-9.]+x[0-9.]+:[0-9.]+x[0-9.]+/)?(?:(?:adaptive-)?(?:full-)?fit-in/)?(?:-?(?:[0-9]*|orig)x-?(?:[0-9]*|orig)/)?(?:(?:left|right|center)/)?(?:(?:top|middle|bottom)/)?(?:smart/)?(?:filters:[^?]*?\)/)?([^?]*).*$", "\1");
        if (req.http.X-Thumbd-Key !~ "%(?![0-9A-Fa-f]{2})") {
            set req.http.X-Thumbd-Key = blob.transcode(decoding = URL, encoded = req.http.X-Thumbd-Key);
        }
        set req.http.X-Thumbd-Key = regsub(req.http.X-Thumbd-Key, "(?i)^(https?:/)([^/])", "\1/\2");
        if (req.http.X-Thumbd-Key !~ "^[^/]*://") {
            set req.http.X-Thumbd-Key = "http://" + req.http.X-Thumbd-Key;
        }
        set req.http.X-Thumbd-Key = blob.transcode(encoding = URL, case = UPPER, encoded = req.http.X-Thumbd-Key);
    } elsif (req.url ~ "^/imgproxy/(?:info/)?[^/?]*/(?:[^/?]*(?::|%3A)[^/?]*/)*plain/") {
        # imgproxy's plain form (`info/` included): the source after the signature and the options (the segments
        # holding a `:` or a `%3A`), up to its `@extension`, a `scheme:/` mended, percent-decoded.
        set req.http.X-Thumbd-Key = regsub(req.url,
            "^/imgproxy/(?:info/)?[^/?]*/(?:[^/?]*(?::|%3A)[^/?]*/)*plain/([^@?]*).*$", "\1");
        set req.http.X-Thumbd-Key = regsub(req.http.X-Thumbd-Key, "^(\S+):/([^/])", "\1://\2");
        if (req.http.X-Thumbd-Key !~ "%(?![0-9A-Fa-f]{2})") {
            set req.http.X-Thumbd-Key = blob.transcode(decoding = URL, encoded = req.http.X-Thumbd-Key);
        }
        set req.http.X-Thumbd-Key = blob.transcode(encoding = URL, case = UPPER, encoded = req.http.X-Thumbd-Key);
    } elsif (req.url ~ "^/imgproxy/") {
        # Its base64 form: up to the `.extension`, slashes and padding dropped, decoded. Text that is not base64
        # stays the key as it is.
        set req.http.X-Thumbd-Key = regsuball(
            regsub(req.url, "^/imgproxy/(?:info/)?[^/?]*/(?:[^/?]*(?::|%3A)[^/?]*/)*([^.?]*).*$", "\1"), "(/|=+$)", "");
        if (req.http.X-Thumbd-Key ~ "^[A-Za-z0-9_-]*$" && req.http.X-Thumbd-Key !~ "^(....)*.$") {
            set req.http.X-Thumbd-Key = blob.transcode(decoding = BASE64URLNOPAD, encoding = URL, case = UPPER,
                encoded = req.http.X-Thumbd-Key);
        }
    } elsif (req.url ~ "^[^?]*\?([^&]*&)*?url=[^&]") {
        # /thumb and every other path (/info, DELETE /cache: a purge reaches the node that holds the source): the raw
        # value of the first `url` parameter, as sent; w, h, fit, format and sig do not change the node.
        set req.http.X-Thumbd-Key = regsub(req.url, "^[^?]*\?([^&]*&)*?url=([^&]*).*$", "\2");
    }
    if (req.http.X-Thumbd-Key == "" || req.http.X-Thumbd-Key == req.url) {
        # No source found (/health, /status, a path that did not match): round robin.
        unset req.http.X-Thumbd-Key;
    }

    if (req.method != "GET" && req.method != "HEAD") {
        # The admin routes (DELETE /cache, POST /cache/trim, POST and DELETE /prefetch): to a node, never cached.
        return (pass);
    }
    if (req.url !~ "^/(thumb\?|thumbor/|imgproxy/)") {
        # /health, /ready, /metrics, /status, /info, the pages: not cached here (they are, or are not, in thumbd's
        # own tiers). The thumbnail forms are (thumbor's and imgproxy's at their default prefixes: edit the
        # expressions above and this one for others); what thumbd sends with `no-store` (errors, the forms' JSON
        # answers) is not kept.
        return (pass);
    }
    # thumbd reads no cookie, and the built-in vcl_recv would not cache a request that carries one: a site's
    # cookies on its image host would turn every thumbnail into a pass.
    unset req.http.Cookie;
    # Thumbnails vary with Accept (format=auto: the first of image.auto_formats the client accepts, by default AVIF,
    # then JPEG XL, then WebP, else JPEG or PNG; thumbd answers `Vary: Accept`), and browsers send many spellings of
    # it. Varnish keeps one copy per distinct Vary'd value, so Accept is cut down to what thumbd reads from it, by
    # thumbd's own rule (AcceptHeader.swift): whether `image/avif`, `image/jxl` and `image/webp` are named with a
    # quality above 0. Every browser then shares one of eight copies per URL (each a subset of the three, always
    # written in that order), and the node receives the reduced header, which asks for the same format as the
    # original whatever order image.auto_formats sets.
    if (req.http.Accept) {
        # The entries thumbd ignores (`image/avif;q=0`, `image/webp; foo=1; q=0.000`) first, then the three names.
        set req.http.X-Thumbd-Accept = regsuball(req.http.Accept,
            "(?i)(^|,)\s*image/(avif|jxl|webp)\s*;([^,]*;)?\s*q\s*=\s*0(\.0*)?\s*(;[^,]*)?(?=,|$)", "");
        set req.http.X-Thumbd-Reduced = "";
        if (req.http.X-Thumbd-Accept ~ "(?i)(^|,)\s*image/avif\s*(;|,|$)") {
            set req.http.X-Thumbd-Reduced = ",image/avif";
        }
        if (req.http.X-Thumbd-Accept ~ "(?i)(^|,)\s*image/jxl\s*(;|,|$)") {
            set req.http.X-Thumbd-Reduced = req.http.X-Thumbd-Reduced + ",image/jxl";
        }
        if (req.http.X-Thumbd-Accept ~ "(?i)(^|,)\s*image/webp\s*(;|,|$)") {
            set req.http.X-Thumbd-Reduced = req.http.X-Thumbd-Reduced + ",image/webp";
        }
        if (req.http.X-Thumbd-Reduced == "") {
            unset req.http.Accept;
        } else {
            set req.http.Accept = regsub(req.http.X-Thumbd-Reduced, "^,", "");
        }
        unset req.http.X-Thumbd-Accept;
        unset req.http.X-Thumbd-Reduced;
    }
    # Then the built-in vcl_recv: a request with Authorization is passed, every other one looked up in the cache
    # by URL and Host. Client hints (image.client_hints) need nothing here: thumbd names the ones it read in
    # `Vary`, and Varnish keeps a copy per value.
}

sub vcl_backend_fetch {
    # The node is chosen here, for each backend request, so that a retry (below) can choose again.
    if (bereq.http.X-Thumbd-Key) {
        # `alt = bereq.retries`: the first attempt asks the key's node (or, when the probes have marked it sick, the
        # next healthy one on the ring); a retry skips the nodes already tried and takes the next healthy one, so a
        # source whose node just died goes to the node that will own it once the probes notice. (The key header
        # travels to the node, which ignores it.)
        set bereq.backend = ring.backend(by = KEY, key = ring.key(bereq.http.X-Thumbd-Key), alt = bereq.retries);
    } else {
        set bereq.backend = spread.backend();
    }
}

sub vcl_backend_error {
    # No answer from the node: refused or reset (killed, restarting, not yet marked sick), or a timeout. A GET is
    # safe to send twice: try the next node on the ring, at most 3 nodes in all.
    if (bereq.retries < 2 && (bereq.method == "GET" || bereq.method == "HEAD")) {
        return (retry);
    }
}

sub vcl_backend_response {
    # Which node answered, kept with the cached copy so that a hit names it too (unset it in vcl_deliver if
    # clients should not see your nodes' names).
    set beresp.http.X-Thumbd-Node = beresp.backend.name;
    # 503: the node is overloaded (image.queue_limit) or stopping. Ask the next node on the ring, as for a node
    # that does not answer. Not 502 and 504: thumbd answers them when the *origin* fails or times out, and another
    # node would only ask the same origin again (up to fetch.timeout each).
    if (beresp.status == 503 && bereq.retries < 2 && (bereq.method == "GET" || bereq.method == "HEAD")) {
        return (retry);
    }
    if (bereq.uncacheable) {
        return (deliver);
    }
    # The source's key, for a purge through Varnish (vcl_deliver); never shown to clients.
    set beresp.http.X-Thumbd-Source = bereq.http.X-Thumbd-Key;
    # Thumbnails are kept as long as thumbd's Cache-Control says (cache.client_max_age, minus `Age`), which the
    # built-in vcl_backend_response reads. Errors: thumbd sends `no-store` (not cached) or, for a fallback image,
    # `max-age=<image.fallback_ttl>`. Varnish would give an error that has neither its default_ttl (2 min), and
    # serve any error 10 s past its TTL (default_grace): an error is kept exactly as long as thumbd says, no longer.
    if (beresp.status >= 400) {
        set beresp.grace = 0s;
        if (beresp.http.Cache-Control !~ "(?i)(^|,)\s*(s-maxage|max-age)\s*=" && !beresp.http.Expires) {
            set beresp.ttl = 0s;
        }
    }
}

sub vcl_deliver {
    # A purge through Varnish (`DELETE /cache?url=…` with the admin token) that the node accepted also drops
    # Varnish's copies of every size of that source. Only after the node's 200, so a request without the token
    # cannot empty Varnish's cache. The key is compared as written: purge with the spelling the URLs use.
    if (req.method == "DELETE" && req.url ~ "^/cache\?" && req.http.X-Thumbd-Key && resp.status == 200) {
        if (!std.ban("obj.http.X-Thumbd-Source == " + req.http.X-Thumbd-Key)) {
            std.log("thumbd purge: ban refused: " + std.ban_error());
        }
    }
    # X-Cache names the tier that answered (thumbd: HIT-MEMORY, HIT-DISK, MISS, …); a hit here is Varnish's.
    if (obj.hits > 0) {
        set resp.http.X-Cache = "HIT-VARNISH";
    }
    unset resp.http.X-Thumbd-Source;
}
