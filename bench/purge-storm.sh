#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The purge storm (issue 31): memory hits served while `POST /purge` arrives at 10,000 a minute, against the same
# hits with no purge, in one run.
#
# One release thumbd (fresh cache dir, admin token, cache.tag_header, every purge pushed to a webhook receiver on
# loopback), a loopback origin serving one small PNG at every path (bench/purge_storm.py), and:
#   1. warm: SOURCES sources stored at w=32 (the ones the storm purges, each a stored source when purged) and
#      HOT other ones at w=64 (the ones served);
#   2. quiet: `wrk -t1 -cCONNECTIONS -dSECONDS --latency` over the HOT thumbnails (memory hits);
#   3. storm: the same wrk while PURGES purges (one source each, SOURCES in turn) are sent at an even pace over the
#      same SECONDS (open loop, two clients); thumbd's resident memory sampled every 0.5 s;
#   4. quiet again (the quiet figure is the mean of 2 and 4, which brackets the storm on a shared machine).
# Prints req/s and p99 of each phase, the storm's p99 over the quiet one (issue 31: within 10 %), the purges'
# own latency, thumbd's resident memory before, at its peak during and after the storm, and the pushes counted.
#   bench/purge-storm.sh        (env: SECONDS_EACH=60 PURGES=10000 SOURCES=10000 HOT=50 CONNECTIONS=16
#                                     THUMBD_BIN= NICE=-10 when root)
# Ports are picked free on 127.0.0.1. Every process it starts is stopped by its pid. Results (wrk output, logs,
# memory samples, summary.md) go to bench/results/<UTC time>-purge-storm/.
set -euo pipefail
if [ -n "${THUMBD_BIN:-}" ]; then THUMBD_BIN="$(realpath -m "$THUMBD_BIN")"; fi
cd "$(dirname "$0")/.."
root="$(pwd)"
seconds="${SECONDS_EACH:-60}"
purges="${PURGES:-10000}"
sources="${SOURCES:-10000}"
hot="${HOT:-50}"
connections="${CONNECTIONS:-16}"
. bench/lib.sh
for tool in wrk python3 curl; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-purge-storm"
mkdir -p "$out/cache"
thumbd_release_build "$out"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
origin_port=$(free_port); hook_port=$(free_port); thumbd_port=$(free_port)
token="purge-storm-token-0123456789"

pids=()
stop() {   # a process we started, by pid: TERM, then KILL after 15 s
  local pid="$1"
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}
cleanup() { local pid; for pid in "${pids[@]}"; do stop "$pid"; done; wait 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
wait_for() {   # wait_for URL PID: until something answers HTTP at URL, at most 30 s
  for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1")" != 000 ] && return 0
    kill -0 "$2" 2>/dev/null || { echo "process $2 exited while waiting for $1" >&2; exit 1; }
    sleep 0.1
  done
  echo "server at $1 did not come up" >&2; exit 1
}

"${run[@]}" python3 bench/purge_storm.py origin "$origin_port" Sources/ThumbdTestSupport/Resources/quadrants.png &
origin_pid=$!; pids+=($origin_pid)
python3 bench/purge_storm.py hook "$hook_port" "$out/hook-counts.json" &
hook_pid=$!; pids+=($hook_pid)
thumbd_env=(
  THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false THUMBD_ADMIN_TOKEN="$token"
  THUMBD_CACHE_TAG_HEADER=Surrogate-Key THUMBD_CACHE_PURGE_WEBHOOK="http://127.0.0.1:$hook_port/purged"
)
thumbd_args=(--listen "127.0.0.1:$thumbd_port" --cache-dir "$root/$out/cache")
env "${thumbd_env[@]}" "$thumbd_bin" "${thumbd_args[@]}" --check-config > "$out/thumbd-config.yaml"
env "${thumbd_env[@]}" "${run[@]}" "$thumbd_bin" "${thumbd_args[@]}" > "$out/thumbd-stdout.log" 2> "$out/thumbd-stderr.log" &
thumbd_pid=$!; pids+=($thumbd_pid)
wait_for "http://127.0.0.1:$origin_port/x" "$origin_pid"
wait_for "http://127.0.0.1:$thumbd_port/health" "$thumbd_pid"
{
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) cpus, loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "thumbd: $thumbd_bin ($thumbd_rev), env: ${thumbd_env[*]}"
  echo "settings: seconds=$seconds purges=$purges sources=$sources hot=$hot wrk -t1 -c$connections nice=$niceness"
} > "$out/env.txt"

# The targets: the purged sources at w=32, the served ones at w=64 (other paths: a purge never touches them).
origin_url() { echo "http%3A%2F%2F127.0.0.1%3A$origin_port%2F$1%2F$2.png"; }
: > "$out/purged-sources.txt"; : > "$out/purged-targets.txt"; : > "$out/hot-targets.txt"
for i in $(seq 1 "$sources"); do
  echo "http://127.0.0.1:$origin_port/purged/$i.png" >> "$out/purged-sources.txt"
  echo "/thumb?url=$(origin_url purged "$i")&w=32" >> "$out/purged-targets.txt"
done
for i in $(seq 1 "$hot"); do echo "/thumb?url=$(origin_url hot "$i")&w=64" >> "$out/hot-targets.txt"; done
echo "== warm: $sources sources to purge, $hot to serve"
python3 bench/purge_storm.py warm "$thumbd_port" "$out/purged-targets.txt" 4
python3 bench/purge_storm.py warm "$thumbd_port" "$out/hot-targets.txt" 1
python3 bench/purge_storm.py warm "$thumbd_port" "$out/hot-targets.txt" 1   # now memory hits

cat > "$out/urls.lua" <<LUA
local urls = {}
for line in io.lines("$root/$out/hot-targets.txt") do urls[#urls + 1] = line end
local i = 0
request = function()
  i = i % #urls + 1
  return wrk.format("GET", urls[i])
end
LUA
rss() { awk '/^VmRSS/{print $2}' "/proc/$thumbd_pid/status"; }
helper_pids=("$origin_pid" "$hook_pid")
phase() {   # phase NAME: wrk over the hot thumbnails for $seconds; CPU ticks of thumbd, of the origin and webhook
            # receiver, and of the whole machine over it into $out/cpu-NAME.txt (the purge client prints its own)
  local t0 p0 m0
  t0=$(ticks "$thumbd_pid"); p0=$(ticks "${helper_pids[@]}"); m0=$(busy)
  "${run[@]}" wrk -t1 -c"$connections" -d"${seconds}s" --latency -s "$out/urls.lua" "http://127.0.0.1:$thumbd_port" \
    > "$out/wrk-$1.txt"
  echo "$(( $(ticks "$thumbd_pid") - t0 )) $(( $(ticks "${helper_pids[@]}") - p0 )) $(( $(busy) - m0 ))" > "$out/cpu-$1.txt"
}
cpu_line() {   # cpu_line NAME: thumbd's, the origin's and webhook receiver's, and everything's CPU seconds
  read -r t p m < "$out/cpu-$1.txt"
  awk -v t="$t" -v p="$p" -v m="$m" -v hz="$hz" -v r="$(rate "$out/wrk-$1.txt")" -v s="$seconds" \
    'BEGIN { printf "thumbd %.1f s (%.2f us a hit), origin and webhook receiver %.1f s, machine %.1f s", t / hz, t / hz / (r * s) * 1e6, p / hz, m / hz }'
}
p99_ms() {   # p99 of a wrk --latency output, in ms
  awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms/, "", v) }
    else if (v ~ /s$/) { sub(/s/, "", v); v *= 1000 } print v }' "$1"
}
rate() { awk '/^Requests\/sec/ {print $2}' "$1"; }

echo "== quiet (${seconds}s)"
phase quiet-1
rss_before=$(rss)
echo "== storm (${seconds}s, $purges purges)"
: > "$out/rss-samples.txt"
( while kill -0 "$thumbd_pid" 2>/dev/null; do rss >> "$out/rss-samples.txt"; sleep 0.5; done ) &
sampler_pid=$!; pids+=($sampler_pid)
python3 bench/purge_storm.py storm "$thumbd_port" "$token" "$out/purged-sources.txt" "$purges" "$seconds" \
  > "$out/storm.txt" &
storm_pid=$!; pids+=($storm_pid)
phase storm
wait "$storm_pid"
rss_peak=$(sort -n "$out/rss-samples.txt" | tail -1)
stop "$sampler_pid"
echo "== quiet again (${seconds}s)"
phase quiet-2
rss_after=$(rss)
curl -s "http://127.0.0.1:$thumbd_port/metrics" > "$out/metrics.txt"

q1=$(p99_ms "$out/wrk-quiet-1.txt"); q2=$(p99_ms "$out/wrk-quiet-2.txt"); s=$(p99_ms "$out/wrk-storm.txt")
{
  echo "# Purge storm, $(date -u +%F), thumbd $thumbd_rev"
  echo
  echo "| phase | req/s | p99 ms | CPU |"
  echo "|---|---|---|---|"
  echo "| quiet | $(rate "$out/wrk-quiet-1.txt") | $q1 | $(cpu_line quiet-1) |"
  echo "| storm | $(rate "$out/wrk-storm.txt") | $s | $(cpu_line storm) |"
  echo "| quiet again | $(rate "$out/wrk-quiet-2.txt") | $q2 | $(cpu_line quiet-2) |"
  echo
  awk -v s="$s" -v a="$q1" -v b="$q2" 'BEGIN { printf "storm p99 / quiet p99 (mean of both): %.3f\n", s / ((a + b) / 2) }'
  echo "$(cat "$out/storm.txt")"
  echo "resident memory (kB): before $rss_before, peak during $rss_peak, after $rss_after"
  echo "pushes: $(grep -E '^thumbd_purge_pushes_total\{endpoint="webhook"\}|^thumbd_purge_push_dropped_tags_total\{endpoint="webhook"\}|^thumbd_purges_total\{reason="source"\}' "$out/metrics.txt" | tr '\n' ' ')"
  echo "webhook receiver: $(cat "$out/hook-counts.json" 2>/dev/null || echo none)"
} | tee "$out/summary.md"
