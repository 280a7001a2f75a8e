#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# User-space instructions per memory hit, counted by valgrind's callgrind: a deterministic measure of the hit
# path's own code, for A/B comparisons that the shared machine's noise (req/s moving 15 % between rounds) hides.
# It says nothing about kernel time (~70 % of a hit); bench/hot.sh stays the measure of record.
#
# thumbd (a copy without DWARF: valgrind 3.19 cannot read Swift 6's) runs under callgrind against the peers'
# origin; the 50 HOT pairs are warmed, counters zeroed, then `wrk -t1 -c4 -d5s` over them; the dump is divided
# by wrk's request count. Prints instructions per request and the 25 most expensive functions (self cost).
#   bench/hit-instructions.sh [BIN ...]   (default: the release build; env PEERS=$HOME/peers DURATION=5s)
#   THUMBOR=true TEMPLATE='/unsafe/fit-in/{w}x{h}/{url}' bench/hit-instructions.sh [BIN ...]
#                                         the same hits through the thumbor form mounted at / (unsafe URLs)
# Needs valgrind (apt-get install valgrind), wrk, nginx, the peers kit. Results: bench/results/<UTC>-hit-instructions/.
set -euo pipefail
bins=()
for b in "$@"; do bins+=("$(realpath -m "$b")"); done
if [ -n "${PEERS:-}" ]; then PEERS="$(realpath -m "$PEERS")"; fi
cd "$(dirname "$0")/.."
peers="${PEERS:-$HOME/peers}"
duration="${DURATION:-5s}"
for tool in valgrind callgrind_control wrk nginx python3 curl objcopy; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
if [ ${#bins[@]} = 0 ]; then
  swift build -c release --product thumbd >/dev/null
  swift build -c release --product thumbd-decoder >/dev/null   # the sandbox's helper, started from thumbd's directory
  bins=("$(swift build -c release --product thumbd --show-bin-path)/thumbd")
fi
# nginx workers run as an unprivileged user and must reach the corpus through the home directory (else every
# request is a 403 from the origin, and the count is that of failed fetches, not hits).
if [ $((0$(stat -c %a "$HOME") & 1)) = 0 ]; then echo "nginx workers cannot reach $peers/corpus: chmod 711 $HOME" >&2; exit 1; fi
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-hit-instructions"
mkdir -p "$out/peers/run/origin/tmp"
ln -s "$peers/corpus" "$out/peers/corpus"
for port in 18001 18046; do
  if ss -Hltn "sport = :$port" | grep -q .; then echo "port $port is in use" >&2; exit 1; fi
done
template='/thumb?url={url_enc}&w={w}&h={h}'
if [ -n "${TEMPLATE:-}" ]; then template="$TEMPLATE"; fi
python3 "$peers/gen_lists.py" render --template "$template" --origin http://127.0.0.1:18001 \
  "$peers/lists/hot.tsv" > "$out/hot.txt"
nginx -p "$PWD/$out/peers/" -c "$peers/conf/origin.conf" > "$out/origin.log" 2>&1 &
origin=$!
pid=
# Each kill may find its process gone (a thumbd that failed to start): that must not end the trap under `set -e`
# before the origin is stopped.
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  kill "$origin" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

n=0
for bin in "${bins[@]}"; do
  n=$((n + 1))
  run="$out/$n"
  mkdir -p "$run/cache"
  objcopy --strip-debug "$bin" "$run/thumbd"
  # The decoder sandbox's helper, which thumbd starts from its own directory (absent before issue 29's sandbox).
  if [ -x "$(dirname "$bin")/thumbd-decoder" ]; then cp "$(dirname "$bin")/thumbd-decoder" "$run/"; fi
  THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false THUMBD_THUMBOR_ENABLED=${THUMBOR:-false} THUMBD_THUMBOR_PREFIX=/ THUMBD_THUMBOR_ALLOW_UNSAFE=true valgrind --tool=callgrind \
    --callgrind-out-file="$run/callgrind.out" "$run/thumbd" --listen 127.0.0.1:18046 --cache-dir "$run/cache" \
    > "$run/thumbd.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do curl -s -o /dev/null http://127.0.0.1:18046/health && break; sleep 0.5; done
  for _ in 1 2 3; do while read -r p; do curl -s -o /dev/null "http://127.0.0.1:18046$p"; done < "$out/hot.txt"; done
  wrk -t1 -c4 -d2s -s "$peers/lua/urls.lua" http://127.0.0.1:18046 -- "$out/hot.txt" loop 2 > /dev/null
  callgrind_control -z "$pid" > /dev/null
  wrk -t1 -c4 -d"$duration" -s "$peers/lua/urls.lua" http://127.0.0.1:18046 -- "$out/hot.txt" loop 2 > "$run/wrk.txt"
  callgrind_control -d "$pid" > /dev/null
  sleep 1
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  requests=$(awk '/requests in/ {print $1}' "$run/wrk.txt")
  if grep -q "Non-2xx" "$run/wrk.txt"; then echo "WARNING: $bin answered errors ($(grep Non-2xx "$run/wrk.txt" | tr -s ' ')): not a count of hits" >&2; fi
  echo "== $bin ($requests requests)" | tee "$run/summary.txt"
  # Self cost per function from the dump taken after the zeroing (callgrind.out.1).
  python3 bench/callgrind-self-cost.py request "$requests" "$run/callgrind.out.1" | tee -a "$run/summary.txt"
done
echo "results in $out"
