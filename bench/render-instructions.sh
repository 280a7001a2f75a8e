#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# User-space instructions per miss (fetch, decode, render, encode), counted by valgrind's callgrind: the render
# path's deterministic A/B guard, as bench/hit-instructions.sh is the hit path's. Throughput on this shared 2-CPU
# machine moves 10-15 % between rounds; a count of instructions does not, so a change of a few percent in what a
# render costs shows here first, and the 25 most expensive functions say where.
#
# Each binary runs under callgrind against the peers' origin (nginx :18001, which also serves the watermark) with an
# empty cache; the first LINES lines of the peers' lists/cold.tsv are requested once each, one at a time (every
# request a miss), after one warm-up request of another picture; the dump is divided by the number of answers.
#   bench/render-instructions.sh BIN [BIN ...]     FILTERS plans (crop, rotate, sharpen, watermark, JPEG q80)
#   PLAN=plain bench/render-instructions.sh BIN …  COLD's plain resizes
#   (env: LINES=40 PEERS=$HOME/peers)
# Needs valgrind, nginx, vips (the CLI makes the watermark), the peers kit. Results:
# bench/results/<UTC>-render-instructions/.
set -euo pipefail
[ $# -gt 0 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 2; }
bins=()
for b in "$@"; do bins+=("$(realpath -m "$b")"); done
if [ -n "${PEERS:-}" ]; then PEERS="$(realpath -m "$PEERS")"; fi
cd "$(dirname "$0")/.."
peers="${PEERS:-$HOME/peers}"
lines="${LINES:-40}"
plan="${PLAN:-filters}"
case "$plan" in filters | plain) ;; *) echo "PLAN: filters or plain, not $plan" >&2; exit 2 ;; esac
for tool in valgrind callgrind_control nginx python3 curl objcopy vips; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
if [ $((0$(stat -c %a "$HOME") & 1)) = 0 ]; then echo "nginx workers cannot reach $peers/corpus: chmod 711 $HOME" >&2; exit 1; fi
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-render-instructions"
# The origin's root: the corpus's files (linked) and the watermark, a 96x48 PNG with alpha as bench/filters.sh makes.
mkdir -p "$out/peers/run/origin/tmp" "$out/peers/corpus"
for f in "$peers"/corpus/*; do ln -s "$f" "$out/peers/corpus/"; done
vips black "$out/mark-black.v" 96 48 --bands 4
vips linear "$out/mark-black.v" "$out/peers/corpus/mark.png" "1 1 1 1" "200 60 30 160" --uchar
rm -f "$out/mark-black.v"
for port in 18001 18047; do
  if ss -Hltn "sport = :$port" | grep -q .; then echo "port $port is in use" >&2; exit 1; fi
done
template='/thumb?url={url_enc}&w={w}&h={h}'
if [ "$plan" = filters ]; then
  template+='&crop=0.1,0.1,0.8,0.8&rotate=90&sharpen=1&wm_url=http%3A%2F%2F127.0.0.1%3A18001%2Fmark.png'
  template+='&wm_pos=southeast&wm_x=10&wm_y=10&wm_opacity=0.5&format=jpeg&q=80'
fi
head -n "$((lines + 1))" "$peers/lists/cold.tsv" > "$out/cold.tsv"
python3 "$peers/gen_lists.py" render --template "$template" --origin http://127.0.0.1:18001 "$out/cold.tsv" \
  > "$out/all.txt"
head -n 1 "$out/all.txt" > "$out/warm.txt"
tail -n +2 "$out/all.txt" > "$out/list.txt"
nginx -p "$PWD/$out/peers/" -c "$peers/conf/origin.conf" > "$out/origin.log" 2>&1 &
origin=$!
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; kill "$origin" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT

n=0
for bin in "${bins[@]}"; do
  n=$((n + 1))
  run="$out/$n"
  mkdir -p "$run/cache"
  objcopy --strip-debug "$bin" "$run/thumbd"
  THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false valgrind --tool=callgrind \
    --callgrind-out-file="$run/callgrind.out" "$run/thumbd" --listen 127.0.0.1:18047 --cache-dir "$run/cache" \
    > "$run/thumbd.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do curl -s -o /dev/null http://127.0.0.1:18047/health && break; sleep 0.5; done
  # One miss of a picture outside the list warms what a first render starts (libvips's types, the watermark).
  curl -s -o /dev/null -m 120 "http://127.0.0.1:18047$(cat "$out/warm.txt")"
  callgrind_control -z "$pid" > /dev/null
  ok=0
  while read -r p; do
    code=$(curl -s -o /dev/null -m 120 -w '%{http_code}' "http://127.0.0.1:18047$p") || true
    if [ "$code" = 200 ]; then ok=$((ok + 1)); else echo "WARNING: $code for $p" >&2; fi
  done < "$out/list.txt"
  callgrind_control -d "$pid" > /dev/null
  sleep 1
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  echo "== $bin ($ok of $lines answered 200, plan $plan)" | tee "$run/summary.txt"
  # Self cost per function from the dump taken after the zeroing (callgrind.out.1), all threads.
  python3 bench/callgrind-self-cost.py miss "$ok" "$run"/callgrind.out.1* | tee -a "$run/summary.txt"
done
echo "results in $out"
