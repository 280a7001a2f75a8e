#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Thumbnails per second of sources decoded in the decoder sandbox (issue 29): an SVG drawing, a PDF page of text,
# and a PNG photograph decoded in process (`image.sandbox: untrusted`, the default) against the same PNG through
# the sandbox (`image.sandbox: all`). Every request asks a variant not asked before, all of about the same work
# (w = h = 250…259, q = 40…99: 600 per source and server), so each is a full render: with no intermediate kept (`image.intermediate_cache_bytes: 0`) every request fetches, decodes
# (in the helper or in thumbd) and renders, as a miss of a source not seen before does.
# Two servers (untrusted, all) answer in alternating rounds; each round sends REQUESTS requests per source on
# CONNECTIONS keep-alive connections. Prints per source and mode: thumbnails per second (wall time, which the
# machine's other work moves) and the CPU per thumbnail of thumbd and its helpers (user + system time of thumbd,
# the helpers it reaped and the live ones: what a thumbnail costs whatever else runs), and the helpers' part of it.
#   bench/sandbox-formats.sh   (env: ROUNDS=3 REQUESTS=100 CONNECTIONS=2 THUMBD_BIN= PEERS=$HOME/peers NICE=-10)
# THUMBD_BIN must have thumbd-decoder beside it. Free loopback ports; every process started here is stopped by
# its pid; the origin and the caches live in a temporary directory.
set -euo pipefail
if [ -n "${THUMBD_BIN:-}" ]; then THUMBD_BIN="$(realpath -m "$THUMBD_BIN")"; fi
cd "$(dirname "$0")/.."
rounds="${ROUNDS:-3}"
requests="${REQUESTS:-100}"
connections="${CONNECTIONS:-2}"
corpus="${PEERS:-$HOME/peers}/corpus"
. bench/lib.sh   # niceness, `run`, thumbd_release_build
work="$(mktemp -d)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]:-}"; do
    if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null || true; fi
  done
  rm -rf "$work"
}
trap cleanup EXIT
thumbd_release_build "$work"
[ -x "$(dirname "$thumbd_bin")/thumbd-decoder" ] || { echo "no thumbd-decoder beside $thumbd_bin" >&2; exit 1; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The sources: a drawing and a document made here (the same bytes on every machine), a photograph of the corpus.
mkdir -p "$work/origin"
python3 - "$work/origin" <<'PY'
import math, random, sys, zlib
out = sys.argv[1]
rng = random.Random(29)
# An SVG of 400 shapes with gradients, strokes, opacity and a line of text: a chart or an illustration's work.
shapes = []
for i in range(400):
    x, y, r = rng.uniform(0, 1200), rng.uniform(0, 900), rng.uniform(5, 80)
    fill = "url(#g%d)" % (i % 4) if i % 3 == 0 else "#%06x" % rng.randrange(1 << 24)
    if i % 2:
        shapes.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" fill="{fill}" opacity="0.7"/>')
    else:
        points = " ".join(f"{x + r * math.cos(a):.1f},{y + r * math.sin(a):.1f}"
                          for a in (k * 2 * math.pi / 7 for k in range(7)))
        shapes.append(f'<polygon points="{points}" fill="{fill}" stroke="#222" stroke-width="2"/>')
gradients = "".join(
    f'<linearGradient id="g{k}"><stop offset="0" stop-color="#{rng.randrange(1 << 24):06x}"/>'
    f'<stop offset="1" stop-color="#{rng.randrange(1 << 24):06x}"/></linearGradient>' for k in range(4))
open(f"{out}/drawing.svg", "w").write(
    '<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="900" viewBox="0 0 1200 900">'
    f"<defs>{gradients}</defs>{''.join(shapes)}"
    '<text x="40" y="80" font-family="sans-serif" font-size="64">thumbd sandbox</text></svg>')
# A PDF: one A4 page of 50 lines of Helvetica text and a few filled boxes, its stream deflated as a writer's is.
lines = [f"BT /F1 11 Tf 56 {780 - 14 * k} Td (Line {k}: the quick brown fox jumps over the lazy dog, "
         f"{rng.randrange(10**6)}.) Tj ET" for k in range(50)]
boxes = [f"{rng.random():.2f} {rng.random():.2f} {rng.random():.2f} rg {rng.randrange(56, 400)} "
         f"{rng.randrange(40, 700)} {rng.randrange(20, 140)} {rng.randrange(10, 60)} re f" for _ in range(12)]
stream = zlib.compress("\n".join(boxes + ["0 0 0 rg"] + lines).encode())
objects = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
    b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
]
pdf, offsets = bytearray(b"%PDF-1.4\n"), []
for number, body in enumerate(objects, 1):
    offsets.append(len(pdf))
    pdf += b"%d 0 obj\n" % number + body + b"\nendobj\n"
xref = len(pdf)
pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
pdf += b"".join(b"%010d 00000 n \n" % o for o in offsets)
pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
open(f"{out}/document.pdf", "wb").write(bytes(pdf))
PY
photo="$(find "$corpus" -maxdepth 1 -name '*.png' 2>/dev/null | sort | head -1)"
[ -n "$photo" ] || photo=Sources/ThumbdTestSupport/Resources/quadrants.png
cp "$photo" "$work/origin/photo.png"

origin_port="$(free_port)"
python3 -m http.server --bind 127.0.0.1 --directory "$work/origin" "$origin_port" >"$work/origin.log" 2>&1 &
pids+=($!)
declare -A port pid
for mode in untrusted all; do
  port[$mode]="$(free_port)"
  mkdir -p "$work/cache-$mode"
  THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false THUMBD_IMAGE_SANDBOX="$mode" \
    THUMBD_IMAGE_INTERMEDIATE_CACHE_BYTES=0 \
    "${run[@]}" "$thumbd_bin" --listen "127.0.0.1:${port[$mode]}" --cache-dir "$work/cache-$mode" \
    >"$work/thumbd-$mode.log" 2>&1 &
  pid[$mode]=$!
  pids+=($!)
done
for mode in untrusted all; do
  for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:${port[$mode]}/ready" && break; sleep 0.1; done
done
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$origin_port/photo.png" && break; sleep 0.1; done

echo "== thumbd $thumbd_rev, $(nproc) CPUs, $rounds rounds of $requests requests per source on $connections connections"
echo "   photo: $(basename "$photo")"
"${run[@]}" python3 - "$rounds" "$requests" "$connections" "$origin_port" \
  "untrusted:${port[untrusted]}:${pid[untrusted]}" "all:${port[all]}:${pid[all]}" <<'PY'
import http.client, os, statistics, subprocess, sys, threading, time, urllib.parse
rounds, requests, connections, origin = (int(a) for a in sys.argv[1:5])
servers = {m: (int(p), int(q)) for m, p, q in (a.split(":") for a in sys.argv[5:])}
hz = os.sysconf("SC_CLK_TCK")

def cpu_seconds(pid):
    """(thumbd's user + system time, its helpers': the ones it reaped and the ones alive now)."""
    def fields(p):
        return open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
    own = fields(pid)
    helpers = int(own[13]) + int(own[14])
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    for child in children:
        try:
            f = fields(child)
            helpers += int(f[11]) + int(f[12])
        except FileNotFoundError:
            pass
    return (int(own[11]) + int(own[12])) / hz, helpers / hz

VARIANTS = 600
sizes = {(m, s): 0 for m in servers for s in ("drawing.svg", "document.pdf", "photo.png")}  # next variant of each
def run(mode, source, count):
    port, pid = servers[mode]
    first = sizes[(mode, source)]
    sizes[(mode, source)] += count
    if sizes[(mode, source)] > VARIANTS:
        sys.exit(f"more than {VARIANTS} requests of {source} to one server: lower ROUNDS or REQUESTS")
    url = urllib.parse.quote(f"http://127.0.0.1:{origin}/{source}", safe="")
    failures = []
    def worker(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for i in range(k, count, connections):
            variant = first + i
            side, quality = 250 + variant % 10, 40 + variant // 10
            c.request("GET", f"/thumb?url={url}&w={side}&h={side}&q={quality}&format=jpeg")
            r = c.getresponse()
            body = r.read()
            if r.status != 200 or r.getheader("x-cache") != "MISS":
                failures.append((r.status, r.getheader("x-cache"), body[:120]))
        c.close()
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(connections)]
    for t in threads: t.start()
    for t in threads: t.join()
    wall, cpu1 = time.monotonic() - t0, cpu_seconds(pid)
    if failures:
        sys.exit(f"{mode} {source}: {len(failures)} answers not a 200 MISS, first {failures[0]}")
    own, helpers = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
    return count / wall, 1000 * (own + helpers) / count, 1000 * helpers / count

plan = [("drawing.svg", "untrusted"), ("document.pdf", "untrusted"), ("photo.png", "untrusted"), ("photo.png", "all")]
for source, mode in plan:  # warm: the first fetch of each source, helpers started
    run(mode, source, connections)
results = {key: [] for key in plan}
for r in range(rounds):
    for key in plan if r % 2 == 0 else reversed(plan):
        results[key].append(run(key[1], key[0], requests))
print(f"{'source':<14} {'image.sandbox':<14} {'thumbnails/s':>12} {'CPU ms/thumbnail':>17} {'of it helpers':>14}"
      "   per round (thumbnails/s, CPU ms)")
for (source, mode), figures in results.items():
    rates, cpus, helpers = ([f[i] for f in figures] for i in range(3))
    rounds_text = "  ".join(f"{a:.1f}/{b:.1f}" for a, b, _ in figures)
    print(f"{source:<14} {mode:<14} {statistics.median(rates):>12.1f} {statistics.median(cpus):>17.2f}"
          f" {statistics.median(helpers):>14.2f}   {rounds_text}")
inproc = statistics.median(f[1] for f in results[("photo.png", "untrusted")])
boxed = statistics.median(f[1] for f in results[("photo.png", "all")])
print(f"PNG through the sandbox: {boxed / inproc:.2f}x the CPU per thumbnail of the in-process decode")
PY
