#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The per-source analysis served warm (issue 28): /info?analysis=1 answered from the kept records against HOT
# thumbnails of the same sources, in one run of one build (wrk on loopback, the peers' 50 HOT pairs, each thumbnail
# asked first so that its source's record is made). bench/info-batch.sh times POST /info batches.
#   bench/info-rate.sh [BIN]   (default: the release build; env PEERS=$HOME/peers DURATION=10s ROUNDS=3)
# Prints each round's req/s for both lists and their ratio.
# Needs wrk, nginx, curl, python3, the peers kit. Results: bench/results/<UTC>-info-rate/.
set -euo pipefail
bin="${1:-}"
if [ -n "$bin" ]; then bin="$(realpath -m "$bin")"; fi
if [ -n "${PEERS:-}" ]; then PEERS="$(realpath -m "$PEERS")"; fi
cd "$(dirname "$0")/.."
peers="${PEERS:-$HOME/peers}"
duration="${DURATION:-10s}"
rounds="${ROUNDS:-3}"
for tool in wrk nginx python3 curl; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
if [ -z "$bin" ]; then
  swift build -c release --product thumbd >/dev/null
  swift build -c release --product thumbd-decoder >/dev/null   # the sandbox's helper, started from thumbd's directory
  bin="$(swift build -c release --product thumbd --show-bin-path)/thumbd"
fi
if [ $((0$(stat -c %a "$HOME") & 1)) = 0 ]; then echo "nginx workers cannot reach $peers/corpus: chmod 711 $HOME" >&2; exit 1; fi
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-info-rate"
mkdir -p "$out/peers/run/origin/tmp" "$out/cache"
ln -s "$peers/corpus" "$out/peers/corpus"
# The peers' origin listens on 18001 (its nginx.conf); thumbd on a free port.
if ss -Hltn "sport = :18001" | grep -q .; then echo "port 18001 (the peers' origin) is in use" >&2; exit 1; fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$peers/gen_lists.py" render --template '/thumb?url={url_enc}&w={w}&h={h}' --origin http://127.0.0.1:18001 \
  "$peers/lists/hot.tsv" > "$out/hot.txt"
python3 "$peers/gen_lists.py" render --template '/info?url={url_enc}&analysis=1' --origin http://127.0.0.1:18001 \
  "$peers/lists/hot.tsv" > "$out/info.txt"
nginx -p "$PWD/$out/peers/" -c "$peers/conf/origin.conf" > "$out/origin.log" 2>&1 &
origin=$!
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; kill "$origin" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false "$bin" --listen "127.0.0.1:$port" \
  --cache-dir "$out/cache" > "$out/thumbd.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 240); do curl -s -o /dev/null "$base/health" && break; sleep 0.5; done
# Warm: every HOT thumbnail (its record is made right after its first answer), then every /info once.
for _ in 1 2; do while read -r p; do curl -s -o /dev/null "$base$p"; done < "$out/hot.txt"; done
while read -r p; do curl -s -o /dev/null "$base$p"; done < "$out/info.txt"
sources=$(curl -s -D - -o /dev/null "$base$(head -1 "$out/info.txt")" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-source" {print $2}')
echo "first /info after warming: X-Source: $sources" | tee "$out/summary.txt"
for round in $(seq 1 "$rounds"); do
  wrk -t2 -c16 -d"$duration" -s "$peers/lua/urls.lua" "$base" -- "$out/hot.txt" loop 2 > "$out/hot-$round.txt"
  wrk -t2 -c16 -d"$duration" -s "$peers/lua/urls.lua" "$base" -- "$out/info.txt" loop 2 > "$out/info-$round.txt"
  hot=$(awk '/Requests\/sec/ {print $2}' "$out/hot-$round.txt")
  info=$(awk '/Requests\/sec/ {print $2}' "$out/info-$round.txt")
  for f in "$out/hot-$round.txt" "$out/info-$round.txt"; do
    if grep -q "Non-2xx" "$f"; then echo "WARNING: errors in $f: $(grep Non-2xx "$f" | tr -s ' ')" >&2; fi
  done
  echo "round $round: HOT thumbnails $hot req/s, /info?analysis=1 $info req/s, ratio $(python3 -c "print(round($info / $hot, 3))")" \
    | tee -a "$out/summary.txt"
done
echo "results in $out"
