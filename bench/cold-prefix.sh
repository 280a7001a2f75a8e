#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# COLD on a prefix of the peers' list: thumbd's thumbnails/s over the first N requests of its COLD list, thumbd
# restarted with an empty cache for each run. The kit's COLD counts whatever completes in 10 s; once thumbd
# finishes the whole list, its rate covers cheaper later rounds than a peer's prefix does, so this compares
# equal prefixes (N = the peer's completed count in the kit's run).
#   N=780 THUMBD_BIN=.build/release/thumbd TEMPLATE=thumbor RUNS=3 bench/cold-prefix.sh
# TEMPLATE: thumbor (the thumbor form at /, the kit's thumbor URLs) or thumb (/thumb). Needs the peers kit
# (PEERS=$HOME/peers, after run_peers.sh has rendered run/lists/) and wrk. Binds 127.0.0.1 only; every process
# started here is stopped by its pid; each run is bounded (wrk -d60s, N requests).
set -euo pipefail
PEERS="${PEERS:-$HOME/peers}"
N="${N:-780}"
RUNS="${RUNS:-3}"
BIN="${THUMBD_BIN:-$(pwd)/.build/release/thumbd}"
TEMPLATE="${TEMPLATE:-thumbor}"
PORT=18040
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
cd "$PEERS"
LIST="run/lists/thumbd_cold.txt"
[ -f "$LIST" ] || { echo "no $LIST: run the kit once with THUMBD_TEMPLATE set as wanted" >&2; exit 1; }
head -n "$N" "$LIST" >"$WORK/prefix.txt"
nginx -p "$PEERS/" -c "$PEERS/conf/origin.conf" >"$WORK/origin.log" 2>&1 &
PIDS+=($!)
sleep 0.5
export THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false
if [ "$TEMPLATE" = thumbor ]; then
    export THUMBD_THUMBOR_ENABLED=true THUMBD_THUMBOR_PREFIX=/ THUMBD_THUMBOR_ALLOW_UNSAFE=true
fi
for run in $(seq 1 "$RUNS"); do
    rm -rf "$WORK/cache" "$WORK/state"
    mkdir -p "$WORK/cache" "$WORK/state"
    "$BIN" --port "$PORT" --cache-dir "$WORK/cache" >"$WORK/thumbd.log" 2>&1 &
    THUMBD_PID=$!
    PIDS+=("$THUMBD_PID")
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/health" && break; sleep 0.1; done
    wrk -t2 -c64 -d60s --timeout 60s -s lua/urls.lua "http://127.0.0.1:$PORT" -- "$WORK/prefix.txt" once 2 \
        "$WORK/state" 2>&1 | sed -n 's/^RESULT_JSON //p' |
        python3 -c "import json, sys; d = json.load(sys.stdin); print('run $run: %d completed, %.1f thumbnails/s' % (d['completed'], d['rps_wall']))"
    kill "$THUMBD_PID"
    wait "$THUMBD_PID" 2>/dev/null || true
done
