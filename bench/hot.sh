#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HOT cache-hit benchmark (issue 4): the peers' 50 hot thumbnails (lists/hot.tsv, 256x256), warmed, then
# `wrk -t2 -c64 -d10s --latency` with the peers' urls.lua in loop mode against three servers, alternating,
# twice each:
#   thumbd             /thumb on 127.0.0.1:18041, fresh cache dir, warmed until every pair is a hit
#   nginx-static       nginx serving thumbd's own 50 responses as files (bench/hot-nginx.conf, :18042)
#   nginx-proxy-cache  the peers' nginx proxy_cache + image_filter (conf/peer_nginx.conf, :18010 -> :18011)
# thumbd fetches from the peers' origin (conf/origin.conf, nginx on :18001). Prints req/s, p50, p99,
# CPU per request per run, and the ratios of thumbd to nginx static (issue 4: >= 1.2x with p99 no worse;
# memory tier off: >= 0.9x).
#   bench/hot.sh            (env: DURATION=10s CONNECTIONS=64 ROUNDS=2 MEMORY=on WARM_TRIES=5 TIMEOUT=10s
#                                 THUMBD_BIN= PEERS=$HOME/peers ACCESS_LOG=0 NICE=-10 when root CPUS=shared
#                                 THREADS=2)
# CPUS=split: servers on the first half of the CPUs, wrk (THREADS threads) on the other half; CPUS=shared
# (default): all on all. (The peers' proxy_cache nginx keeps its own worker_processes 2.)
# MEMORY=off runs thumbd with THUMBD_CACHE_MEMORY_MAX_BYTES=0 (memory tier off: every hit is a disk hit).
# THUMBD_BIN=/path/to/thumbd skips the release build (`swift build -c release --product thumbd`).
# BASELINE_BIN=/path/to/other/thumbd adds a fourth target, thumbd-baseline on :18043 (e.g. main's build), warmed and
# measured like thumbd in the same rounds; thumbd and it swap places every round, and the summary adds their ratio.
# THUMBOR=1 also mounts thumbd's thumbor form at / (unsafe URLs on) and adds a target, thumbd-thumbor: the same 50
# thumbnails asked on the same thumbd process as thumbor URLs (/unsafe/fit-in/WxH/<url>, the peers' thumbor template,
# the same plans as the /thumb list), measured in the same rounds; the summary adds thumbd-thumbor / thumbd (issue 17:
# >= 0.95x).
# ACCESS_LOG=1 keeps thumbd's access log on (off by default: nginx runs with access_log off).
# Other THUMBD_* variables in the environment reach thumbd (thumbd-config.yaml records what it ran with);
# the listen address is always 127.0.0.1:18041.
# Results (raw wrk output, warm-up log, CPU accounting, summary.md) go to bench/results/<UTC time>-hot[-memoff]/.
set -euo pipefail
# Paths given relative to the caller's directory, before moving to the repository root.
if [ -n "${THUMBD_BIN:-}" ]; then THUMBD_BIN="$(realpath -m "$THUMBD_BIN")"; fi
if [ -n "${BASELINE_BIN:-}" ]; then BASELINE_BIN="$(realpath -m "$BASELINE_BIN")"; fi
if [ -n "${PEERS:-}" ]; then PEERS="$(realpath -m "$PEERS")"; fi
cd "$(dirname "$0")/.."
root="$(pwd)"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"
wrk_threads="${THREADS:-2}"
rounds="${ROUNDS:-2}"
memory="${MEMORY:-on}"
warm_tries="${WARM_TRIES:-5}"
timeout="${TIMEOUT:-10s}"
access_log="${ACCESS_LOG:-0}"
thumbor_form="${THUMBOR:-0}"
peers="${PEERS:-$HOME/peers}"
. bench/lib.sh   # niceness and `run`, CPU accounting (ticks, busy, irqs, hz, cpus)
# CPUS=shared (default): the servers and wrk run on every CPU. CPUS=split: the servers (thumbd, the nginxes, the
# origin) run on the first half of the CPUs this script may use and wrk on the other half (taskset), so the
# client does not take CPU time from the server it measures; thumbd (threads 0) and nginx static
# (worker_processes below) start one thread or worker per server CPU. THREADS: wrk's -t (default 2).
placement="${CPUS:-shared}"
case "$placement" in split | shared) ;; *) echo "CPUS must be split or shared" >&2; exit 2 ;; esac
allowed=($(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))'))
if [ "$placement" = split ] && [ "${#allowed[@]}" -lt 2 ]; then
  echo "CPUS=split needs 2 CPUs, this process may use ${#allowed[@]}: running CPUS=shared" >&2
  placement=shared
fi
server_run=("${run[@]}"); client_run=("${run[@]}")
if [ "$placement" = split ]; then
  half=$(( ${#allowed[@]} / 2 ))
  server_cpus="$(IFS=,; echo "${allowed[*]:0:half}")"
  client_cpus="$(IFS=,; echo "${allowed[*]:half}")"
  server_run=(taskset -c "$server_cpus" "${run[@]}")   # taskset execs too: $! stays the server's pid
  client_run=(taskset -c "$client_cpus" "${run[@]}")
  server_cpu_count=$half
else
  server_cpu_count=${#allowed[@]}
fi
case "$memory" in on | off) ;; *) echo "MEMORY must be on or off" >&2; exit 2 ;; esac
suffix=hot; [ "$memory" = off ] && suffix=hot-memoff
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-$suffix"
for tool in wrk nginx python3 curl cmp; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
for f in conf/origin.conf conf/peer_nginx.conf lua/urls.lua lists/hot.tsv gen_lists.py corpus/MANIFEST.tsv; do
  [ -e "$peers/$f" ] || { echo "peer kit incomplete: no $peers/$f (PEERS=...)" >&2; exit 1; }
done
# nginx workers run as an unprivileged user and must reach the corpus through the home directory.
if [ $((0$(stat -c %a "$HOME") & 1)) = 0 ]; then echo "nginx workers cannot reach $peers/corpus: chmod 711 $HOME" >&2; exit 1; fi
ports=(18001 18010 18011 18041 18042 18043)
for port in "${ports[@]}"; do
  if ss -Hltn "sport = :$port" | grep -q .; then echo "port $port is in use (another benchmark running?)" >&2; exit 1; fi
done

mkdir -p "$out"/{lists,thumbd/cache,thumbd-baseline/cache,static/www,static/tmp,peers/run/origin/tmp,peers/run/nginx/tmp,peers/run/nginx/cache}
# The peers' configs name their paths relative to the nginx prefix (corpus/, run/origin/, run/nginx/):
# a prefix inside the results dir keeps their logs, pid files and proxy cache out of the peer kit.
ln -s "$peers/corpus" "$out/peers/corpus"
# wrk prints each run's percentiles, but a run of several rounds needs the p99 of all its requests: a wrapper
# around the peers' urls.lua (unchanged: same requests, same RESULT_JSON) also writes wrk's latency histogram
# (microseconds, count; coordinated-omission correction included, as in wrk's own percentiles) to
# $HOT_HISTOGRAM, and the summary pools the rounds' histograms per target.
cat > "$out/urls-histogram.lua" <<LUA
dofile("$peers/lua/urls.lua")
local peers_done = done
function done(summary, latency, requests)
  peers_done(summary, latency, requests)
  local f = assert(io.open(os.getenv("HOT_HISTOGRAM"), "w"))
  for i = 1, #latency do
    local value, count = latency(i)
    f:write(string.format("%d %d\\n", value, count))
  end
  f:close()
end
LUA

thumbd_release_build "$out"
baseline_bin="${BASELINE_BIN:-}"
[ -z "$baseline_bin" ] || [ -x "$baseline_bin" ] || { echo "no baseline binary at $baseline_bin" >&2; exit 1; }

thumbd_env=(THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true)   # the origin is on loopback, which SSRF protection refuses
[ "$access_log" = 1 ] || thumbd_env+=(THUMBD_LOG_ACCESS=false)
[ "$memory" = off ] && thumbd_env+=(THUMBD_CACHE_MEMORY_MAX_BYTES=0)
[ "$thumbor_form" = 1 ] && thumbd_env+=(THUMBD_THUMBOR_ENABLED=true THUMBD_THUMBOR_PREFIX=/ THUMBD_THUMBOR_ALLOW_UNSAFE=true)
thumbd_args=(--listen 127.0.0.1:18041 --cache-dir "$root/$out/thumbd/cache")
env "${thumbd_env[@]}" "$thumbd_bin" "${thumbd_args[@]}" --check-config > "$out/thumbd-config.yaml"

{
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) cpus, loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "thumbd: $thumbd_bin ($thumbd_rev), env: ${thumbd_env[*]}"
  [ -z "$baseline_bin" ] || echo "thumbd-baseline: $baseline_bin, same env, :18043"
  echo "tools: $(nginx -v 2>&1 | cut -d' ' -f3), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)"
  echo "settings: memory=$memory rounds=$rounds wrk -t$wrk_threads -c$connections -d$duration --timeout $timeout nice=$niceness peers=$peers"
  if [ "$placement" = split ]; then echo "cpus: split, servers on $server_cpus, wrk on $client_cpus"; else echo "cpus: shared"; fi
} > "$out/env.txt"

pids=()
stop() {   # stop a process we started (and its children, e.g. nginx workers), by pid, bounded
  local pid="$1" kids k
  kill -0 "$pid" 2>/dev/null || return 0
  kids="$(pgrep -P "$pid" || true)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for k in $kids; do kill -KILL "$k" 2>/dev/null || true; done
}
cleanup() {
  local pid
  for pid in "${pids[@]}"; do stop "$pid"; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_for() {   # wait_for URL PID: until something answers HTTP at URL (any status), at most 30 s
  for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1")" != 000 ] && return 0
    kill -0 "$2" 2>/dev/null || { echo "process $2 exited while waiting for $1" >&2; exit 1; }
    sleep 0.1
  done
  echo "server at $1 did not come up" >&2; exit 1
}

echo "== start: origin :18001, nginx proxy_cache peer :18010, thumbd :18041 (memory tier $memory)"
"${server_run[@]}" nginx -p "$root/$out/peers/" -c "$peers/conf/origin.conf" > "$out/peers/origin.log" 2>&1 &
origin_pid=$!
pids+=($origin_pid)
"${server_run[@]}" nginx -p "$root/$out/peers/" -c "$peers/conf/peer_nginx.conf" > "$out/peers/nginx.log" 2>&1 &
proxy_pid=$!
pids+=($proxy_pid)
env "${thumbd_env[@]}" "${server_run[@]}" "$thumbd_bin" "${thumbd_args[@]}" > "$out/thumbd/stdout.log" 2> "$out/thumbd/stderr.log" &
thumbd_pid=$!
pids+=($thumbd_pid)
wait_for http://127.0.0.1:18001/ "$origin_pid"
wait_for http://127.0.0.1:18010/ "$proxy_pid"
wait_for http://127.0.0.1:18041/ "$thumbd_pid"
if [ -n "$baseline_bin" ]; then
  env "${thumbd_env[@]}" "${server_run[@]}" "$baseline_bin" --listen 127.0.0.1:18043 \
    --cache-dir "$root/$out/thumbd-baseline/cache" > "$out/thumbd-baseline/stdout.log" 2> "$out/thumbd-baseline/stderr.log" &
  baseline_pid=$!
  pids+=($baseline_pid)
  wait_for http://127.0.0.1:18043/ "$baseline_pid"
fi
origin_log="$out/peers/run/origin/access.log"

# The 50 request paths per server, in hot.tsv order (the URL templates of the peers' run_peers.sh).
render() { python3 "$peers/gen_lists.py" render --template "$1" --origin http://127.0.0.1:18001 "$peers/lists/hot.tsv"; }
render '/thumb?url={url_enc}&w={w}&h={h}' > "$out/lists/thumbd.txt"
render '/thumb?url={url}&w={w}&h={h}' > "$out/lists/nginx-proxy-cache.txt"
[ "$thumbor_form" = 1 ] && render '/unsafe/fit-in/{w}x{h}/{url}' > "$out/lists/thumbd-thumbor.txt"
count=$(wc -l < "$out/lists/thumbd.txt")

# One request as wrk sends it (no Accept header: thumbd's format=auto depends on it); prints
# "<status> <X-Cache or X-Cache-Status value> <Content-Type>" and writes the body to $2.
get() {
  local code headers
  rm -f "$out/headers.tmp"
  code=$(curl -s -m 60 -H 'Accept:' -D "$out/headers.tmp" -o "$2" -w '%{http_code}' "$1") || true
  headers=$(tr -d '\r' 2>/dev/null < "$out/headers.tmp" || true)
  printf '%s %s %s\n' "$code" \
    "$(echo "$headers" | awk -F': *' 'tolower($1) ~ /^x-cache(-status)?$/ {v=$2} END {print (v == "" ? "-" : v)}')" \
    "$(echo "$headers" | awk -F': *' 'tolower($1) == "content-type" {v=$2} END {print (v == "" ? "-" : v)}')"
}
is_hit() { case "${1^^}" in HIT*) return 0 ;; esac; return 1; }

# Warm one server: every pair twice; if no pair is a hit then, the first pair up to WARM_TRIES more
# times, 0.5 s apart (a store may land well after the answer); if the server answers hits at all, up to
# WARM_TRIES more requests, 0.2 s apart, for each pair that is not a hit yet. A server that answers no
# hit at all (a build whose /thumb has no cache) is warmed that way and measured anyway, with a warning.
warm() {
  local name="$1" base="$2" list="$3" i p code value ctype hits=0 try
  local -a paths state
  mapfile -t paths < "$list"
  for i in "${!paths[@]}"; do get "$base${paths[$i]}" /dev/null > /dev/null; done
  for i in "${!paths[@]}"; do
    read -r code value ctype <<< "$(get "$base${paths[$i]}" /dev/null)"
    state[i]="$value"
    if is_hit "$value"; then hits=$((hits + 1)); fi
  done
  if [ "$hits" = 0 ]; then   # no hit at all: a cache that stores late (batched disk writes), or none?
    for try in $(seq 1 "$warm_tries"); do
      sleep 0.5
      read -r code value ctype <<< "$(get "$base${paths[0]}" /dev/null)"
      state[0]="$value"
      if is_hit "$value"; then hits=1; break; fi
    done
  fi
  if [ "$hits" -gt 0 ]; then
    for i in "${!paths[@]}"; do
      is_hit "${state[$i]}" && continue
      for try in $(seq 1 "$warm_tries"); do
        sleep 0.2
        read -r code value ctype <<< "$(get "$base${paths[$i]}" /dev/null)"
        state[i]="$value"
        if is_hit "$value"; then hits=$((hits + 1)); break; fi
      done
    done
  fi
  echo "   $name: $hits of ${#paths[@]} pairs answer a hit after warm-up" | tee -a "$out/warm.log"
  [ "$hits" = "${#paths[@]}" ] || echo "   WARNING: $name: $(( ${#paths[@]} - hits )) pairs are not cache hits" | tee -a "$out/warm.log"
}

# After warm-up, one more request per pair: the status, cache header and content type it is measured
# with (warm.log), and, for thumbd, the body that nginx static will serve.
check() {
  local name="$1" base="$2" list="$3" save="$4" i=0 p code value ctype ext body bad=0
  : > "$out/lists/nginx-static.txt.tmp"
  while read -r p; do
    i=$((i + 1))
    body="$out/body.tmp"
    read -r code value ctype <<< "$(get "$base$p" "$body")"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$i" "$code" "$value" "$ctype" >> "$out/warm.tsv"
    [ "$code" = 200 ] || bad=$((bad + 1))
    if [ "$save" = 1 ]; then
      case "$ctype" in
        image/jpeg) ext=jpg ;; image/png) ext=png ;; image/webp) ext=webp ;; image/avif) ext=avif ;;
        image/gif) ext=gif ;; *) ext=bin ;;
      esac
      printf -v file '%03d.%s' "$i" "$ext"
      mv "$body" "$out/static/www/$file"
      echo "/$file" >> "$out/lists/nginx-static.txt.tmp"
    fi
  done < "$list"
  rm -f "$out/body.tmp"
  echo "   $name: $(awk -F'\t' -v n="$name" '$1 == n {c[$3 " " $4]++} END {for (k in c) printf "%s%s x%d", s, k, c[k]; s = ", "}' "$out/warm.tsv")" \
    | tee -a "$out/warm.log"
  [ "$bad" = 0 ] || { echo "$name answered $bad of $count pairs with a status other than 200 (see $out/warm.tsv)" >&2; exit 1; }
}

echo "== warm-up ($count pairs)"
printf "target\tline\tstatus\tcache\tcontent_type\n" > "$out/warm.tsv"
warm thumbd http://127.0.0.1:18041 "$out/lists/thumbd.txt"
[ -z "$baseline_bin" ] || warm thumbd-baseline http://127.0.0.1:18043 "$out/lists/thumbd.txt"
warm nginx-proxy-cache http://127.0.0.1:18010 "$out/lists/nginx-proxy-cache.txt"
[ "$thumbor_form" = 1 ] && warm thumbd-thumbor http://127.0.0.1:18041 "$out/lists/thumbd-thumbor.txt"
check thumbd http://127.0.0.1:18041 "$out/lists/thumbd.txt" 1
mv "$out/lists/nginx-static.txt.tmp" "$out/lists/nginx-static.txt"
# The variant measures the tier it names: memory hits with MEMORY=on, disk hits with MEMORY=off.
unexpected=HIT-DISK; [ "$memory" = off ] && unexpected=HIT-MEMORY
if awk -F'\t' -v u="$unexpected" '$1 == "thumbd" && toupper($4) == u {found = 1} END {exit !found}' "$out/warm.tsv"; then
  echo "   WARNING: thumbd answered $unexpected with the memory tier $memory" | tee -a "$out/warm.log"
fi
[ -z "$baseline_bin" ] || check thumbd-baseline http://127.0.0.1:18043 "$out/lists/thumbd.txt" 0
check nginx-proxy-cache http://127.0.0.1:18010 "$out/lists/nginx-proxy-cache.txt" 0
[ "$thumbor_form" = 1 ] && check thumbd-thumbor http://127.0.0.1:18041 "$out/lists/thumbd-thumbor.txt" 0
rm -f "$out/lists/nginx-static.txt.tmp"

echo "== nginx static :18042 serving thumbd's $count responses ($(du -sb "$out/static/www" | cut -f1) bytes)"
"${server_run[@]}" nginx -p "$root/$out/static/" -c "$root/bench/hot-nginx.conf" -g "worker_processes $server_cpu_count;" > "$out/static/stdout.log" 2>&1 &
static_pid=$!
pids+=($static_pid)
wait_for http://127.0.0.1:18042/ "$static_pid"
paste -d' ' "$out/lists/nginx-static.txt" "$out/lists/thumbd.txt" | while read -r file p; do
  curl -fsS -m 10 -o "$out/static.tmp" "http://127.0.0.1:18042$file"
  cmp -s "$out/static.tmp" "$out/static/www$file" || { echo "nginx static does not serve thumbd's bytes for $file" >&2; exit 1; }
  # A fresh answer from thumbd should be the same bytes again (a cache hit, or a deterministic render).
  curl -fsS -m 60 -H 'Accept:' -o "$out/static.tmp" "http://127.0.0.1:18041$p"
  cmp -s "$out/static.tmp" "$out/static/www$file" || echo "   WARNING: thumbd answered different bytes for $p than before" | tee -a "$out/warm.log"
done
rm -f "$out/static.tmp" "$out/headers.tmp"
echo "   nginx static serves exactly thumbd's bytes (cmp, $count files)"


targets=(thumbd nginx-static nginx-proxy-cache)
declare -A base=([thumbd]=http://127.0.0.1:18041 [nginx-static]=http://127.0.0.1:18042 [nginx-proxy-cache]=http://127.0.0.1:18010)
if [ -n "$baseline_bin" ]; then
  targets=(thumbd thumbd-baseline nginx-static nginx-proxy-cache)
  base[thumbd-baseline]=http://127.0.0.1:18043
  cp "$out/lists/thumbd.txt" "$out/lists/thumbd-baseline.txt"
fi
if [ "$thumbor_form" = 1 ]; then
  targets=("${targets[0]}" thumbd-thumbor "${targets[@]:1}")
  base[thumbd-thumbor]=http://127.0.0.1:18041
fi
echo "== wrk -t$wrk_threads -c$connections -d$duration --latency, urls.lua loop over $count URLs, $rounds rounds, alternating, nice $niceness"
printf "target\tround\tserver_ticks\torigin_ticks\tmachine_ticks\tirq_ticks\twrk_cpu_s\twall_s\torigin_gets\n" > "$out/cpu.tsv"
for round in $(seq 1 "$rounds"); do
  order=("${targets[@]}")
  # With a baseline, thumbd and thumbd-baseline swap places every round: neither always runs first.
  if [ -n "$baseline_bin" ] && [ $((round % 2)) = 0 ]; then order=(thumbd-baseline thumbd nginx-static nginx-proxy-cache); fi
  # With the thumbor form, thumbd and thumbd-thumbor swap places every round too.
  if [ "$thumbor_form" = 1 ] && [ $((round % 2)) = 0 ]; then
    order=(thumbd-thumbor "${order[@]/thumbd-thumbor/}")
    read -ra order <<< "${order[*]}"
  fi
  for target in "${order[@]}"; do
    case "$target" in
      thumbd | thumbd-thumbor) server_pids=("$thumbd_pid") ;;
      thumbd-baseline) server_pids=("$baseline_pid") ;;
      nginx-static) server_pids=("$static_pid" $(pgrep -P "$static_pid")) ;;
      nginx-proxy-cache) server_pids=("$proxy_pid" $(pgrep -P "$proxy_pid")) ;;
    esac
    origin_pids=("$origin_pid" $(pgrep -P "$origin_pid"))
    g0=$(wc -l < "$origin_log")
    s0=$(ticks "${server_pids[@]}"); o0=$(ticks "${origin_pids[@]}"); m0=$(busy); i0=$(irqs)
    HOT_HISTOGRAM="$out/latency-$target-$round.txt" "${client_run[@]}" /usr/bin/time -f "%U %S %e" -o "$out/time-$target-$round.txt" \
      wrk -t"$wrk_threads" -c"$connections" -d"$duration" --timeout "$timeout" --latency -s "$out/urls-histogram.lua" "${base[$target]}" \
      -- "$out/lists/$target.txt" loop "$wrk_threads" > "$out/wrk-$target-$round.txt"
    s1=$(ticks "${server_pids[@]}"); o1=$(ticks "${origin_pids[@]}"); m1=$(busy); i1=$(irqs)
    g1=$(wc -l < "$origin_log")
    read -r wu ws we < "$out/time-$target-$round.txt"
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$target" "$round" $((s1 - s0)) $((o1 - o0)) $((m1 - m0)) $((i1 - i0)) \
      "$(python3 -c "print($wu + $ws)")" "$we" $((g1 - g0)) >> "$out/cpu.tsv"
    echo "   $target round $round: $(grep -E 'Requests/sec' "$out/wrk-$target-$round.txt" | tr -s ' ')"
  done
done

python3 - "$out" "$rounds" "$hz" "$cpus" "$memory" "${targets[*]}" <<'PY' | tee "$out/summary.md"
import csv, json, re, sys
out, rounds, hz, cpus, memory = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
targets = sys.argv[6].split()
cpu = {(r["target"], int(r["round"])): r for r in csv.DictReader(open(f"{out}/cpu.tsv"), delimiter="\t")}
unit = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
def parse(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    lat = {p: float(v) * unit[u] for p, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
    errors = "; ".join(m.group(0) for m in re.finditer(r"Non-2xx or 3xx responses: \d+|Socket errors: .*", text))
    result = json.loads(re.search(r"^RESULT_JSON (.*)$", text, re.M).group(1))
    size = result["bytes"] / result["requests"] if result["requests"] else 0
    return rps, lat["50"], lat["99"], size, errors
rows = {t: [parse(f"{out}/wrk-{t}-{r}.txt") for r in range(1, rounds + 1)] for t in targets}
# wrk's latency histogram of each round: {microseconds: count}.
histograms = {(t, r): {int(v): int(c) for v, c in (line.split() for line in open(f"{out}/latency-{t}-{r}.txt"))}
              for t in targets for r in range(1, rounds + 1)}
# The p99 of a run is that of all its requests: the rounds' histograms added up, read as wrk reads its own
# (the smallest value whose cumulative count reaches 99 % of the total).
def pooled_percentile(target, percent, round_numbers=range(1, rounds + 1)):
    counts = {}
    for r in round_numbers:
        for value, count in histograms[(target, r)].items():
            counts[value] = counts.get(value, 0) + count
    rank, seen = sum(counts.values()) * percent / 100, 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return value / 1000
    return 0.0
print(f"HOT, memory tier {memory}: {open(f'{out}/env.txt').read().splitlines()[2]}")
print()
print("Warm-up (status, cache header of the last request per pair before the runs):")
print()
for line in open(f"{out}/warm.log"):
    print(f"    {line.strip()}")
print()
print("| target | round | req/s | p50 ms | p99 ms | bytes/resp | server CPU us/req | wrk CPU us/req | softirq us/req "
      "| origin GETs | foreign CPU share | errors |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
server_us = {t: [] for t in targets}
for t, runs in rows.items():
    for i, (rps, p50, p99, size, err) in enumerate(runs, 1):
        c = cpu[(t, i)]
        wall = float(c["wall_s"])
        requests = max(rps * wall, 1)
        server_s = int(c["server_ticks"]) / hz
        origin_s = int(c["origin_ticks"]) / hz
        wrk_s = float(c["wrk_cpu_s"])
        irq_s = int(c["irq_ticks"]) / hz
        foreign = max(0.0, int(c["machine_ticks"]) / hz - server_s - origin_s - wrk_s) / (wall * cpus)
        server_us[t].append(server_s * 1e6 / requests)
        print(f"| {t} | {i} | {rps:,.0f} | {p50:.3f} | {p99:.3f} | {size:,.0f} | {server_s * 1e6 / requests:.2f} | "
              f"{wrk_s * 1e6 / requests:.2f} | {irq_s * 1e6 / requests:.2f} | {c['origin_gets']} | {foreign:.0%} | {err} |")
mean = lambda xs: sum(xs) / len(xs)
rps = {t: mean([r[0] for r in rows[t]]) for t in targets}
p99 = {t: pooled_percentile(t, 99) for t in targets}
for t in targets:   # one round's histogram must give wrk's own p99 (printed to 2 decimals)
    for r in range(1, rounds + 1):
        own, printed = pooled_percentile(t, 99, [r]), rows[t][r - 1][2]
        if abs(own - printed) > max(0.01, printed * 0.01):
            print(f"WARNING: {t} round {r}: p99 from the histogram {own:.3f} ms, wrk printed {printed:.3f} ms")
p99_mean_of_rounds = {t: mean([r[2] for r in rows[t]]) for t in targets}
cpu_us = {t: mean(server_us[t]) for t in targets}
goal = 1.2 if memory == "on" else 0.9
x = lambda r: f"{r:.2f}x" if r >= 0.1 else f"{r:.4f}x"   # today's render-every-time builds are far below 0.01x
print()
print("| target | mean req/s | p99 ms (all requests) | mean of rounds' p99 ms | mean server CPU us/req |")
print("|---|---|---|---|---|")
for t in targets:
    print(f"| {t} | {rps[t]:,.0f} | {p99[t]:.3f} | {p99_mean_of_rounds[t]:.3f} | {cpu_us[t]:.2f} |")
print()
ratio = rps["thumbd"] / rps["nginx-static"]
print(f"thumbd / nginx static req/s: {x(ratio)} (target >= {goal:.2f}x: {'met' if ratio >= goal else 'NOT met'})")
if memory == "on":
    print(f"p99 of all requests: thumbd {p99['thumbd']:.3f} ms, nginx static {p99['nginx-static']:.3f} ms "
          f"({'no worse' if p99['thumbd'] <= p99['nginx-static'] else 'WORSE'} than nginx static)")
else:
    print(f"p99 of all requests: thumbd {p99['thumbd']:.3f} ms, nginx static {p99['nginx-static']:.3f} ms")
print(f"mean of rounds' p99: thumbd {p99_mean_of_rounds['thumbd']:.3f} ms, "
      f"nginx static {p99_mean_of_rounds['nginx-static']:.3f} ms")
# Rounds alternate targets, so round i of thumbd and of nginx static ran a few seconds apart: the ratio per
# round cancels the machine's slow drifts, which move both by up to 15 % between rounds.
def median_of(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2
paired = sorted(rows["thumbd"][i][0] / rows["nginx-static"][i][0] for i in range(rounds))
print(f"thumbd / nginx static per round: {', '.join(x(r) for r in paired)} (sorted; median {x(median_of(paired))})")
# The sorted rounds show whether a run's tail comes from one round (a loop that lost its core for a scheduler
# slice) or from all of them.
for t in ("thumbd", "nginx-static"):
    tails = sorted(r[2] for r in rows[t])
    print(f"p99 per round, {t}: {', '.join(f'{v:.2f}' for v in tails)} ms (sorted; median {median_of(tails):.2f})")
print(f"thumbd / nginx proxy_cache req/s: {x(rps['thumbd'] / rps['nginx-proxy-cache'])}; "
      f"nginx proxy_cache / nginx static: {x(rps['nginx-proxy-cache'] / rps['nginx-static'])}")
if "thumbd-baseline" in targets:
    ratio = rps["thumbd"] / rps["thumbd-baseline"]
    paired = sorted(rows["thumbd"][i][0] / rows["thumbd-baseline"][i][0] for i in range(rounds))
    print(f"thumbd / thumbd-baseline req/s: {x(ratio)} (per round, sorted: {', '.join(x(r) for r in paired)}; "
          f"median {x(median_of(paired))}); p99 of all requests: {p99['thumbd']:.3f} / {p99['thumbd-baseline']:.3f} ms; "
          f"server CPU per request: {cpu_us['thumbd']:.2f} / {cpu_us['thumbd-baseline']:.2f} us")
if "thumbd-thumbor" in targets:
    ratio = rps["thumbd-thumbor"] / rps["thumbd"]
    paired = sorted(rows["thumbd-thumbor"][i][0] / rows["thumbd"][i][0] for i in range(rounds))
    print(f"thumbd-thumbor / thumbd req/s: {x(ratio)} (per round, sorted: {', '.join(x(r) for r in paired)}; "
          f"median {x(median_of(paired))}; target >= 0.95x: {'met' if median_of(paired) >= 0.95 else 'NOT met'}); "
          f"p99 of all requests: {p99['thumbd-thumbor']:.3f} / {p99['thumbd']:.3f} ms; server CPU per request: "
          f"{cpu_us['thumbd-thumbor']:.2f} / {cpu_us['thumbd']:.2f} us")
PY
echo "results in $out"
