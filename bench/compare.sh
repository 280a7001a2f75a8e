#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Interleaved A/B runs: the peers' raw libvips benchmark (vips_bench) against thumbd's Thumbnailer, same
# corpus, same box, 1 and 2 threads. Interleaving matters on a shared machine, where load drifts between runs;
# CPU time per thumbnail (whole process, from /usr/bin/time, start-up and file reading included for both) is
# the steadier figure when other processes compete for the cores.
#   bench/compare.sh [runs] [extra thumbd-render-bench options, e.g. --webp-effort 4]
# Env: PEERS (default ~/peers), BOX (256). Builds the release benchmark first.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
shift || true
peers=${PEERS:-$HOME/peers}
box=${BOX:-256}
THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-render-bench >/dev/null
ours=$PWD/.build-bench/release/thumbd-render-bench
raw=$peers/.build/vips_bench
files=("$peers"/corpus/*.jpg "$peers"/corpus/*.png "$peers"/corpus/*.webp)
count=${#files[@]}
timing=$(mktemp)
trap 'rm -f "$timing"' EXIT

field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
# Runs a benchmark; prints "<thumbnails/s> <CPU ms per thumbnail>".
measure() {
  local n=$1
  shift
  local json
  json=$(/usr/bin/time -f '%U %S' -o "$timing" "$@" 2>/dev/null | grep RESULT_JSON)
  awk -v rate="$(field thumbs_per_s <<<"$json")" -v n="$n" '{ printf "%s %.1f\n", rate, ($1 + $2) * 1000 / n }' "$timing"
}

echo "thumbd-render-bench options: ${*:-(defaults)}"
printf '%-4s %-8s %-8s %-9s %-13s %-13s %s\n' run threads raw/s thumbd/s raw_cpu_ms thumbd_cpu_ms load1
for run in $(seq 1 "$runs"); do
  for threads in 1 2; do
    n=$((threads == 1 ? 2 * count : 3 * count))
    raw_cmd=("$raw" -t "$threads" -c 1 -s "$box" -n "$n" "${files[@]}")
    our_cmd=("$ours" -t "$threads" -s "$box" -n "$n" "$@" "${files[@]}")
    # Alternate which goes first, so neither always inherits a warmer or busier machine.
    if ((run % 2)); then r=$(measure "$n" "${raw_cmd[@]}"); o=$(measure "$n" "${our_cmd[@]}")
    else o=$(measure "$n" "${our_cmd[@]}"); r=$(measure "$n" "${raw_cmd[@]}"); fi
    read -r raw_rate raw_cpu <<<"$r"
    read -r our_rate our_cpu <<<"$o"
    printf '%-4s %-8s %-8s %-9s %-13s %-13s %s\n' "$run" "$threads" "$raw_rate" "$our_rate" "$raw_cpu" "$our_cpu" \
      "$(cut -d' ' -f1 /proc/loadavg)"
  done
done
