#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# FILTERS benchmark (issue 16): the first LINES (200) distinct (file, w, h) lines of the peers' lists/cold.tsv,
# each requested once, cold, as crop + rotate + sharpen + watermark + resize, JPEG q80, through
#   thumbd             release build, /thumb?...&crop=0.1,0.1,0.8,0.8&rotate=90&sharpen=1&wm_url=...  :18061
#   thumbor            thumbor 7.8 of the peers kit, the equivalent /unsafe/<crop>/fit-in/WxH/filters:... :18020
#   libvips            bench/filters_vips.c -m thumbnail: the same pictures in-process, one vips_thumbnail call each
#                      (shrink-on-load at the region's scale), then crop, rotate, sharpen, watermark, save; no HTTP
#   libvips-steps      bench/filters_vips.c -m thumbd: the same in-process, by thumbd's own steps (an intermediate)
# and, with BASELINE_BIN, the baseline build's FILTERS (filters-baseline :18062) and COLD plain resizes (all 1,040
# lines of cold.tsv, /thumb?url=&w=&h=, once each, cold) through thumbd (cold-thumbd :18061) and the baseline build
# (cold-baseline :18062), in the same rounds.
# Every HTTP run starts its server afresh (new cache dir, new thumbor state dir): every request is a miss.
# The sources come from the peers' origin (conf/origin.conf, nginx :18001); the watermark (a 96x48 PNG with alpha
# made here with the vips CLI) from a second small nginx on :18063. Rounds alternate the order (odd rounds
# forward, even rounds backward), so every pair of targets runs in both orders.
#   bench/filters.sh       (env: ROUNDS=3 CONNECTIONS=16 THREADS=2 LINES=200 DURATION=240s TIMEOUT=60s
#                                THUMBD_BIN= BASELINE_BIN= WORKLOADS=filters[,cold] PEERS=$HOME/peers NICE=-10 when root
#                                QUIET_SHARE=0.10 QUIET_MAX=30 QUIET_BUDGET=300 NOISY_SHARE=0.15 RETRY_NOISY=2)
# THUMBD_BIN=/path/to/thumbd skips the release build (`swift build -c release --product thumbd`).
# BASELINE_BIN=/path/to/thumbd adds the COLD workload (WORKLOADS defaults to filters,cold then).
# Before each run the script waits up to QUIET_MAX s (QUIET_BUDGET s in all) until the machine's CPUs are less
# than QUIET_SHARE busy, as the peers' run_peers.sh does; each run records the CPU share other processes took, and
# a run in which they took more than NOISY_SHARE, or in which one of thumbor's two workers did more than 80 % of the
# work (both accept on one socket), is measured again (RETRY_NOISY times; the last attempt counts).
# Results (raw wrk and libvips output, runs.jsonl, lists, logs, the round-1 output check, summary.md) go to
# bench/results/<UTC time>-filters/.
set -euo pipefail
# Paths given relative to the caller's directory, before moving to the repository root.
if [ -n "${THUMBD_BIN:-}" ]; then THUMBD_BIN="$(realpath -m "$THUMBD_BIN")"; fi
if [ -n "${BASELINE_BIN:-}" ]; then BASELINE_BIN="$(realpath -m "$BASELINE_BIN")"; fi
if [ -n "${PEERS:-}" ]; then PEERS="$(realpath -m "$PEERS")"; fi
cd "$(dirname "$0")/.."
root="$(pwd)"
rounds="${ROUNDS:-3}"
connections="${CONNECTIONS:-16}"
wrk_threads="${THREADS:-2}"
line_count="${LINES:-200}"
duration="${DURATION:-240s}"
timeout="${TIMEOUT:-60s}"
peers="${PEERS:-$HOME/peers}"
baseline_bin="${BASELINE_BIN:-}"
default_workloads=filters; [ -n "$baseline_bin" ] && default_workloads=filters,cold
workloads="${WORKLOADS:-$default_workloads}"
quiet_share="${QUIET_SHARE:-0.10}"
quiet_max="${QUIET_MAX:-30}"
quiet_budget="${QUIET_BUDGET:-300}"
noisy_share="${NOISY_SHARE:-0.15}"
retry_noisy="${RETRY_NOISY:-2}"
# shellcheck source=bench/lib.sh
. bench/lib.sh   # niceness and `run`, CPU accounting (ticks, busy, irqs, hz, cpus)

has_workload() { case ",$workloads," in *",$1,"*) return 0 ;; esac; return 1; }
for w in ${workloads//,/ }; do
  case "$w" in filters | cold) ;; *) echo "WORKLOADS: filters and/or cold, not $w" >&2; exit 2 ;; esac
done
if has_workload cold && [ -z "$baseline_bin" ]; then echo "the cold workload needs BASELINE_BIN" >&2; exit 2; fi
[ -z "$baseline_bin" ] || [ -x "$baseline_bin" ] || { echo "no baseline binary at $baseline_bin" >&2; exit 1; }
for tool in wrk nginx python3 curl cc pkg-config vips vipsheader; do
  command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
for f in conf/origin.conf conf/thumbor.conf lua/urls.lua lists/cold.tsv gen_lists.py corpus/MANIFEST.tsv \
  .venv-thumbor/bin/thumbor thumbor_plugins; do
  [ -e "$peers/$f" ] || { echo "peer kit incomplete: no $peers/$f (PEERS=...)" >&2; exit 1; }
done
# nginx workers run as an unprivileged user and must reach the corpus through the home directory.
if [ $((0$(stat -c %a "$HOME") & 1)) = 0 ]; then echo "nginx workers cannot reach $peers/corpus: chmod 711 $HOME" >&2; exit 1; fi
for port in 18001 18020 18061 18062 18063; do
  if ss -Hltn "sport = :$port" | grep -q .; then echo "port $port is in use (another benchmark running?)" >&2; exit 1; fi
done

out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-filters"
mkdir -p "$out"/{lists,runs,check,wm/www,wm/tmp,peers/run/origin/tmp}
# The peers' origin.conf names its paths relative to the nginx prefix (corpus/, run/origin/): a prefix inside the
# results dir keeps its log and pid file out of the kit.
ln -s "$peers/corpus" "$out/peers/corpus"

# MARK: - Builds

thumbd_release_build "$out"
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -Wall -o "$out/filters_vips" bench/filters_vips.c $(pkg-config --cflags --libs vips) -lpthread -lm

# MARK: - The watermark and the lists

# 96x48, sRGB with alpha: "thumbd" in yellow over a faint yellow plate (alpha 60 around the letters).
(
  cd "$out/wm/tmp"
  vips text text.v thumbd --width 88 --height 40 --dpi 150
  vips gravity text.v text96.v centre 96 48
  vips black black.v 96 48 --bands 3
  vips linear black.v colour.v "0 0 0" "255 200 40" --uchar
  vips linear text96.v alpha.v 0.8 60 --uchar
  vips bandjoin "colour.v alpha.v" mark.v
  vips copy mark.v ../www/mark.png --interpretation srgb
)
rm -f "$out"/wm/tmp/*.v
mark_file="$root/$out/wm/www/mark.png"
mark_url=http://127.0.0.1:18063/mark.png
cat > "$out/wm/nginx.conf" <<'CONF'
# The watermark's origin: nginx serving www/ (mark.png) on 127.0.0.1:18063, prefix = this directory.
daemon off;
worker_processes 1;
pid nginx.pid;
error_log error.log warn;
events { worker_connections 1024; }
http {
    types { image/png png; }
    default_type application/octet-stream;
    log_format mark '$msec $status $body_bytes_sent "$request_uri" "$http_user_agent"';
    access_log access.log mark;
    client_body_temp_path tmp/body;
    proxy_temp_path tmp/proxy;
    fastcgi_temp_path tmp/fastcgi;
    uwsgi_temp_path tmp/uwsgi;
    scgi_temp_path tmp/scgi;
    server {
        listen 127.0.0.1:18063;
        root www;
        location / { }
    }
}
CONF

# FILTERS: the first LINES distinct lines of cold.tsv, and each target's request path for them.
awk -v n="$line_count" '!seen[$0]++ && ++kept <= n' "$peers/lists/cold.tsv" > "$out/lists/filters.tsv"
[ "$(wc -l < "$out/lists/filters.tsv")" = "$line_count" ] || { echo "cold.tsv has fewer than $line_count distinct lines" >&2; exit 1; }
python3 - "$peers/corpus/MANIFEST.tsv" "$out/lists" "$mark_url" <<'PY'
import csv, sys, urllib.parse
manifest_path, lists, mark = sys.argv[1:4]
origin = "http://127.0.0.1:18001"
manifest = {r["file"]: r for r in csv.DictReader(open(manifest_path), delimiter="\t")}
enc = lambda s: urllib.parse.quote(s, safe="")
with open(f"{lists}/filters.tsv") as f, open(f"{lists}/thumbd.txt", "w") as td, open(f"{lists}/thumbor.txt", "w") as tb, \
        open(f"{lists}/geometry.tsv", "w") as geo:
    geo.write("line\tfile\tw\th\tstored\torientation\tupright\tthumbor_crop\n")
    for n, line in enumerate(f, 1):
        name, w, h = line.rstrip("\n").split("\t")
        m = manifest[name]
        width, height, orientation = int(m["width"]), int(m["height"]), int(m["orientation"])
        # MANIFEST sizes are as stored; thumbor (RESPECT_ORIENTATION = True) turns the picture upright before its
        # manual crop, so the crop box is in upright pixels: orientations 5-8 swap the axes.
        if orientation in (5, 6, 7, 8):
            width, height = height, width
        left, top = round(0.1 * width), round(0.1 * height)
        right, bottom = round(0.9 * width), round(0.9 * height)
        url = f"{origin}/{name}"
        td.write(f"/thumb?url={enc(url)}&w={w}&h={h}&crop=0.1,0.1,0.8,0.8&rotate=90&sharpen=1&wm_url={enc(mark)}"
                 "&wm_pos=southeast&wm_x=10&wm_y=10&wm_opacity=0.5&format=jpeg&q=80\n")
        # Pillow's rotate is counter-clockwise: thumbor's rotate(270) is thumbd's rotate=90 (clockwise).
        tb.write(f"/unsafe/{left}x{top}:{right}x{bottom}/fit-in/{w}x{h}/filters:rotate(270):sharpen(1.5,1.0,true)"
                 f":watermark({mark},-10,-10,50):format(jpeg):quality(80)/{url}\n")
        geo.write(f"{n}\t{name}\t{w}\t{h}\t{m['width']}x{m['height']}\t{orientation}\t{width}x{height}\t"
                  f"{left}x{top}:{right}x{bottom}\n")
PY
if has_workload cold; then
  python3 "$peers/gen_lists.py" render --template '/thumb?url={url_enc}&w={w}&h={h}' --origin http://127.0.0.1:18001 \
    "$peers/lists/cold.tsv" > "$out/lists/cold.txt"
fi

# wrk runs the peers' urls.lua (unchanged: same requests, same RESULT_JSON) through a wrapper that also checks
# every response: status 200 and the Content-Type in $FILTERS_CONTENT_TYPE, counted per thread and printed as
# one CHECK_JSON line at the end.
cat > "$out/urls-check.lua" <<LUA
dofile("$peers/lua/urls.lua")
local check_threads = {}
local peers_setup, peers_init, peers_response, peers_done = setup, init, response, done
function setup(thread)
  table.insert(check_threads, thread)
  peers_setup(thread)
end
function init(args)
  expected_type = os.getenv("FILTERS_CONTENT_TYPE") or "image/jpeg"
  ok_count, bad_status, bad_type, first_bad = 0, 0, 0, ""
  peers_init(args)
end
function response(status, headers, body)
  local ctype = "-"
  for k, v in pairs(headers) do
    if string.lower(k) == "content-type" then ctype = v end
  end
  if status ~= 200 then
    bad_status = bad_status + 1
  elseif ctype ~= expected_type then
    bad_type = bad_type + 1
  else
    ok_count = ok_count + 1
  end
  if first_bad == "" and (status ~= 200 or ctype ~= expected_type) then first_bad = status .. " " .. ctype end
  peers_response(status, headers, body)
end
function done(summary, latency, requests)
  peers_done(summary, latency, requests)
  local ok, bs, bt, fb = 0, 0, 0, ""
  for _, t in ipairs(check_threads) do
    ok = ok + (t:get("ok_count") or 0)
    bs = bs + (t:get("bad_status") or 0)
    bt = bt + (t:get("bad_type") or 0)
    if fb == "" then fb = t:get("first_bad") or "" end
  end
  fb = string.gsub(fb, '[^%w%s/%.;=+-]', "?")
  io.write(string.format('CHECK_JSON {"ok":%d,"bad_status":%d,"bad_type":%d,"first_bad":"%s"}\n', ok, bs, bt, fb))
end
LUA

thumbd_env=(THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false)   # origins on loopback; nginx logs off too
{
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) cpus, loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "thumbd: $thumbd_bin ($thumbd_rev), env: ${thumbd_env[*]}"
  [ -z "$baseline_bin" ] || echo "baseline: $baseline_bin, same env"
  echo "thumbor: $("$peers/.venv-thumbor/bin/pip" list 2>/dev/null | awk '$1 == "thumbor" || $1 == "pillow" {printf "%s %s ", $1, $2}')(peers' conf/thumbor.conf, --processes 2)"
  echo "tools: $(nginx -v 2>&1 | cut -d' ' -f3), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2), $(vips --version)"
  echo "settings: workloads=$workloads rounds=$rounds lines=$line_count wrk -t$wrk_threads -c$connections -d$duration (bound) --timeout $timeout, once mode; nice=$niceness; quiet: share < $quiet_share, at most ${quiet_max}s per run, ${quiet_budget}s in all; peers=$peers"
  echo "watermark: $mark_url ($(vipsheader "$mark_file" | cut -d: -f2-), $(stat -c %s "$mark_file") bytes)"
} > "$out/env.txt"
cat "$out/env.txt"

# MARK: - Processes

pids=()
descendants() { local c; for c in $(pgrep -P "$1" || true); do descendants "$c"; echo "$c"; done; }
stop() {   # stop a process we started and its descendants (thumbor's forked workers, nginx's), by pid, bounded
  local pid="$1" kids k
  kill -0 "$pid" 2>/dev/null || return 0
  kids="$(descendants "$pid")"
  kill -TERM "$pid" 2>/dev/null || true
  for k in $kids; do kill -TERM "$k" 2>/dev/null || true; done
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for k in $kids; do kill -KILL "$k" 2>/dev/null || true; done
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local pid
  for pid in "${pids[@]}"; do stop "$pid"; done
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
tree() { echo "$1"; descendants "$1"; }   # a process and its descendants, one pid a line

echo "== origins: corpus :18001, watermark :18063"
"${run[@]}" nginx -p "$root/$out/peers/" -c "$peers/conf/origin.conf" > "$out/peers/origin.log" 2>&1 &
origin_pid=$!
pids+=("$origin_pid")
"${run[@]}" nginx -p "$root/$out/wm/" -c "$root/$out/wm/nginx.conf" > "$out/wm/stdout.log" 2>&1 &
mark_pid=$!
pids+=("$mark_pid")
wait_for http://127.0.0.1:18001/ "$origin_pid"
wait_for http://127.0.0.1:18063/ "$mark_pid"
origin_log="$out/peers/run/origin/access.log"
mark_log="$out/wm/access.log"
touch "$origin_log" "$mark_log"

server_pid=""
start_server() {   # start_server TARGET DIR: a fresh server for one run; sets server_pid and base
  local target="$1" dir="$2"
  mkdir -p "$dir"
  case "$target" in
    thumbd | filters-baseline | cold-thumbd | cold-baseline)
      local bin="$thumbd_bin" port=18061
      case "$target" in *-baseline) bin="$baseline_bin"; port=18062 ;; esac
      base="http://127.0.0.1:$port"
      env "${thumbd_env[@]}" "${run[@]}" "$bin" --listen "127.0.0.1:$port" --cache-dir "$root/$dir/cache" \
        > "$dir/stdout.log" 2> "$dir/stderr.log" &
      server_pid=$!
      ;;
    thumbor)
      base=http://127.0.0.1:18020
      mkdir -p "$dir/state/metrics"
      # As the peers' run_peers.sh starts it, with its state (file storage, result storage) in the run's dir.
      (
        cd "$peers"
        exec env PEERS_THUMBOR_RUN="$root/$dir/state" PEERS_THUMBOR_METRICS_DIR="$root/$dir/state/metrics" \
          PYTHONPATH="$peers/thumbor_plugins" "${run[@]}" "$peers/.venv-thumbor/bin/thumbor" -i 127.0.0.1 -p 18020 \
          -c "$peers/conf/thumbor.conf" --processes 2 -l warning
      ) > "$dir/stdout.log" 2>&1 &
      server_pid=$!
      ;;
  esac
  pids+=("$server_pid")
  if [ "$target" = thumbor ]; then wait_for "$base/healthcheck" "$server_pid"; else wait_for "$base/" "$server_pid"; fi
  if [ "$target" = thumbor ]; then   # wait for both forked workers (a request to a missing one would wait)
    for _ in $(seq 1 100); do [ "$(descendants "$server_pid" | wc -l)" -ge 2 ] && break; sleep 0.1; done
  fi
}
stop_server() {
  stop "$server_pid"
  server_pid=""
}

# MARK: - Noise

quiet_total=0
quiet_waited=0
quiet_gate() {   # wait (at most quiet_max s per run, quiet_budget s in all) until the CPUs are < quiet_share busy
  local t0 b0 b1 share
  t0=$(date +%s)
  quiet_waited=0
  while :; do
    b0=$(busy); sleep 1; b1=$(busy)
    share=$(python3 -c "print(($b1 - $b0) / ($hz * $cpus))")
    python3 -c "import sys; sys.exit(0 if $share < $quiet_share else 1)" && break
    quiet_waited=$(( $(date +%s) - t0 ))
    if [ "$quiet_waited" -ge "$quiet_max" ] || [ $((quiet_total + quiet_waited)) -ge "$quiet_budget" ]; then
      echo "   machine still busy (CPU share $share) after ${quiet_waited}s: measuring anyway"
      break
    fi
    sleep 1
  done
  quiet_total=$((quiet_total + quiet_waited))
}

# MARK: - Runs

record() {   # record JSON_LINE key=value...: one line of runs.jsonl, with its foreign CPU share; prints the run
  python3 - "$out/runs.jsonl" "$hz" "$cpus" "$@" <<'PY'
import json, sys
path, hz, cpus, first, pairs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
r = json.loads(first) if first else {}
for pair in pairs:
    key, value = pair.split("=", 1)
    try:
        value = json.loads(value)
    except ValueError:
        pass
    r[key] = value
# The share of the CPUs that processes other than ours took during the run (ours: the server, the origins and wrk,
# or the libvips program).
if r["kind"] == "http":
    ours, wall = (r["server_ticks"] + r["origin_ticks"] + r["mark_ticks"]) / hz + r["wrk_cpu_s"], r["wrk_wall_s"]
else:
    ours, wall = r["process_cpu_s"], r["process_wall_s"]
r["foreign_share"] = round(max(0.0, r["machine_ticks"] / hz - ours) / (wall * cpus), 3) if wall else 0.0
# A multi-process server whose workers share one listening socket (thumbor --processes 2) may have one worker accept
# nearly every connection wrk opens at once, and run on one CPU (the peers' RESULTS.md, "Accept imbalance"): the
# busiest worker's share of the workers' CPU, 0.5 when even.
workers = r.get("worker_ticks") or []
r["busiest_worker_share"] = round(max(workers) / sum(workers), 2) if len(workers) >= 2 and sum(workers) else None
open(path, "a").write(json.dumps(r) + "\n")
if r["kind"] == "http":
    c = r.get("check") or {}
    print(f"   {r['target']} round {r['round']}: {r.get('rps_wall', 0):.1f} thumbnails/s, {r.get('completed', 0)} of "
          f"{r['list_len']} answered, {c.get('ok', 0)} x 200 image/jpeg, {c.get('bad_status', 0)} bad status, "
          f"{c.get('bad_type', 0)} bad type{(' (' + c['first_bad'] + ')') if c.get('first_bad') else ''}, "
          f"origin GETs {r['origin_gets']}, "
          f"mark GETs {r['mark_gets']}, foreign CPU {r['foreign_share']:.0%}"
          + (f", busiest worker {r['busiest_worker_share']:.0%} of the workers' CPU" if r["busiest_worker_share"] else ""))
else:
    print(f"   {r['target']} round {r['round']}: {r.get('thumbs_per_s', 0):.1f} thumbnails/s, "
          f"{r.get('thumbnails', 0)} of {r['list_len']} made, {r.get('errors', '?')} errors, "
          f"foreign CPU {r['foreign_share']:.0%}")
PY
}
unfair() {   # true when others took more than noisy_share of the CPUs, or one of thumbor's workers took > 80 %
  python3 - "$out/runs.jsonl" "$noisy_share" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
sys.exit(0 if r["foreign_share"] > float(sys.argv[2]) or (r.get("busiest_worker_share") or 0) > 0.8 else 1)
PY
}

# One wrk run in once mode over a list against the running server: every line sent exactly once.
http_run() {   # http_run TARGET ROUND LIST
  local target="$1" round="$2" list="$3" state log s0 s1 o0 o1 w0 w1 m0 m1 i0 i1 g0 g1 k0 k1 wu ws we la pid i
  local -a server_pids origin_pids mark_pids workers workers0 workers1 deltas
  state="$(mktemp -d "$root/$out/wrkstate.XXXX")"
  log="$out/runs/wrk-$target-$round.txt"
  mapfile -t server_pids < <(tree "$server_pid")
  mapfile -t origin_pids < <(tree "$origin_pid")
  mapfile -t mark_pids < <(tree "$mark_pid")
  mapfile -t workers < <(descendants "$server_pid")   # thumbor's forked workers (thumbd: none)
  la=$(cut -d' ' -f1 /proc/loadavg)
  g0=$(wc -l < "$origin_log"); k0=$(wc -l < "$mark_log")
  s0=$(ticks "${server_pids[@]}"); o0=$(ticks "${origin_pids[@]}"); w0=$(ticks "${mark_pids[@]}"); m0=$(busy); i0=$(irqs)
  workers0=(); for pid in "${workers[@]}"; do workers0+=("$(ticks "$pid")"); done
  FILTERS_CONTENT_TYPE=image/jpeg "${run[@]}" /usr/bin/time -f "%U %S %e" -o "$state/time.txt" \
    wrk -t"$wrk_threads" -c"$connections" -d"$duration" --timeout "$timeout" --latency -s "$out/urls-check.lua" "$base" \
    -- "$list" once "$wrk_threads" "$state" > "$log" 2>&1 || true
  s1=$(ticks "${server_pids[@]}"); o1=$(ticks "${origin_pids[@]}"); w1=$(ticks "${mark_pids[@]}"); m1=$(busy); i1=$(irqs)
  workers1=(); for pid in "${workers[@]}"; do workers1+=("$(ticks "$pid")"); done
  deltas=(); for i in "${!workers[@]}"; do deltas+=($((workers1[i] - workers0[i]))); done
  g1=$(wc -l < "$origin_log"); k1=$(wc -l < "$mark_log")
  read -r wu ws we < "$state/time.txt"
  rm -rf "$state"
  record "$(sed -n 's/^RESULT_JSON //p' "$log" | tail -1)" target="$target" round="$round" kind=http \
    list_len="$(wc -l < "$list")" "check=$(sed -n 's/^CHECK_JSON //p' "$log" | tail -1)" \
    server_ticks=$((s1 - s0)) origin_ticks=$((o1 - o0)) mark_ticks=$((w1 - w0)) machine_ticks=$((m1 - m0)) \
    irq_ticks=$((i1 - i0)) wrk_cpu_s="$(python3 -c "print($wu + $ws)")" wrk_wall_s="$we" origin_gets=$((g1 - g0)) \
    mark_gets=$((k1 - k0)) loadavg="$la" quiet_waited_s="$quiet_waited" attempt="$attempt" \
    "worker_ticks=[$(IFS=,; echo "${deltas[*]}")]"
}

libvips_run() {   # libvips_run MODE ROUND [OUTDIR]
  local mode="$1" round="$2" outdir="${3:-}" log target m0 m1 wu ws we la
  local -a args=(-t 2 -m "$mode")
  target=libvips; [ "$mode" = thumbd ] && target=libvips-steps
  [ -z "$outdir" ] || { mkdir -p "$outdir"; args+=(-o "$outdir"); }
  log="$out/runs/$target-$round.txt"
  la=$(cut -d' ' -f1 /proc/loadavg)
  m0=$(busy)
  "${run[@]}" /usr/bin/time -f "%U %S %e" -o "$out/runs/time.tmp" "$out/filters_vips" "${args[@]}" \
    "$out/lists/filters.tsv" "$peers/corpus" "$mark_file" > "$log" 2>&1 || true
  m1=$(busy)
  read -r wu ws we < "$out/runs/time.tmp"
  rm -f "$out/runs/time.tmp"
  record "$(sed -n 's/^RESULT_JSON //p' "$log" | tail -1)" target="$target" round="$round" kind=libvips \
    list_len="$line_count" machine_ticks=$((m1 - m0)) process_cpu_s="$(python3 -c "print($wu + $ws)")" \
    process_wall_s="$we" loadavg="$la" quiet_waited_s="$quiet_waited" attempt="$attempt"
}

# Round 1 only, after a server's run: its answers again (cache or result-storage hits, outside any timing), to
# compare each line's output size across targets and to look at.
fetch_outputs() {   # fetch_outputs TARGET LIST
  local target="$1" list="$2" n=0 p code file width height
  mkdir -p "$out/check/$target"
  : > "$out/check/$target/sizes.tsv"
  while read -r p; do
    n=$((n + 1))
    printf -v file '%s/check/%s/%03d.jpg' "$out" "$target" "$n"
    code=$(curl -s -m 60 -H 'Accept:' -o "$file" -w '%{http_code}' "$base$p") || true
    width=-; height=-
    if [ "$code" = 200 ]; then
      width=$(vipsheader -f width "$file" 2>/dev/null || echo -)
      height=$(vipsheader -f height "$file" 2>/dev/null || echo -)
    fi
    printf '%d\t%s\t%s\t%s\n' "$n" "$code" "$width" "$height" >> "$out/check/$target/sizes.tsv"
  done < "$list"
}

measure_once() {   # measure_once TARGET ROUND
  local target="$1" round="$2" dir="$out/$1/round-$2-$attempt" list
  case "$target" in
    libvips | libvips-steps)
      local mode=thumbnail; [ "$target" = libvips-steps ] && mode=thumbd
      quiet_gate
      if [ "$round" = 1 ]; then libvips_run "$mode" "$round" "$out/check/$target"; else libvips_run "$mode" "$round"; fi
      return
      ;;
    cold-*) list="$out/lists/cold.txt" ;;
    filters-baseline) list="$out/lists/thumbd.txt" ;;
    *) list="$out/lists/$target.txt" ;;
  esac
  start_server "$target" "$dir"
  quiet_gate
  http_run "$target" "$round" "$list"
  if [ "$round" = 1 ] && { [ "$target" = thumbd ] || [ "$target" = thumbor ]; }; then fetch_outputs "$target" "$list"; fi
  stop_server
  # The run's logs stay; its cache (sources and thumbnails, up to ~90 MB) does not.
  rm -rf "$dir/cache" "$dir/state/storage" "$dir/state/result_storage"
}
attempt=1
measure() {   # measure TARGET ROUND: an unfair run (see unfair) is repeated, RETRY_NOISY times
  for attempt in $(seq 1 $((retry_noisy + 1))); do
    measure_once "$1" "$2"
    unfair || return 0
    if [ "$attempt" -le "$retry_noisy" ]; then echo "   (noisy, or one worker did nearly all the work: again)"; fi
  done
  return 0
}

targets=()
has_workload filters && targets+=(thumbor thumbd libvips libvips-steps)
has_workload filters && [ -n "$baseline_bin" ] && targets+=(filters-baseline)
has_workload cold && targets+=(cold-thumbd cold-baseline)
echo "== $rounds rounds of ${targets[*]} (odd rounds in this order, even rounds backwards)"
for round in $(seq 1 "$rounds"); do
  order=("${targets[@]}")
  if [ $((round % 2)) = 0 ]; then
    order=()
    for ((i = ${#targets[@]} - 1; i >= 0; i--)); do order+=("${targets[$i]}"); done
  fi
  for target in "${order[@]}"; do measure "$target" "$round"; done
done

# MARK: - Summary

python3 - "$out" "$line_count" "$noisy_share" "$hz" <<'PY' | tee "$out/summary.md"
import json, os, sys
out, line_count, noisy_share, hz = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
runs = [json.loads(line) for line in open(f"{out}/runs.jsonl")]
env = open(f"{out}/env.txt").read().splitlines()

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return 0.0 if n == 0 else xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2

def row(r):
    """(thumbnails/s, CPU ms per thumbnail, p50, p99, answers ok, foreign share, note) of one run."""
    if r["kind"] == "libvips":
        done = r.get("thumbnails", 0)
        rate = r.get("thumbs_per_s", 0.0)
        cpu_ms = r.get("cpu_s", 0.0) * 1000 / max(done, 1)   # the timed part (the program's own count)
        ok = f"{done} of {r['list_len']}" if "thumbnails" in r else "FAILED"
        return rate, cpu_ms, None, None, ok, r["foreign_share"], ""
    c = r.get("check") or {}
    done = r.get("completed", 0) - r.get("extra", 0)
    rate = r.get("rps_wall", 0.0)
    cpu_ms = r["server_ticks"] / hz * 1000 / max(done, 1)
    ok = f"{c.get('ok', 0)} of {r['list_len']}"
    bad = c.get("bad_status", 0) + c.get("bad_type", 0)
    note = f"{bad} bad ({c.get('first_bad', '')})" if bad else ""
    if done < r["list_len"]:
        note = (note + "; " if note else "") + f"only {done} answered before wrk's bound"
    return rate, cpu_ms, r.get("p50_ms"), r.get("p99_ms"), ok, r["foreign_share"], note

by = {}   # the last attempt of each (target, round) counts; earlier ones were noisy
repeated = []
for r in runs:
    if r["round"] in by.get(r["target"], {}):
        old = by[r["target"]][r["round"]]
        busiest = old.get("busiest_worker_share")
        repeated.append(f"{r['target']} round {r['round']} (foreign CPU {old['foreign_share']:.0%}"
                        + (f", busiest worker {busiest:.0%}" if busiest else "") + ")")
    by.setdefault(r["target"], {})[r["round"]] = r
order = [t for t in ("thumbd", "thumbor", "libvips", "libvips-steps", "filters-baseline", "cold-thumbd", "cold-baseline")
         if t in by]
labels = {
    "thumbd": "thumbd (FILTERS)", "thumbor": "thumbor 7.8 (FILTERS)",
    "libvips": "libvips in-process (one vips_thumbnail)", "libvips-steps": "libvips in-process, thumbd's steps",
    "filters-baseline": "baseline build (FILTERS)", "cold-thumbd": "thumbd (COLD plain)", "cold-baseline": "baseline build (COLD plain)",
}
print("FILTERS (issue 16), " + env[0])
for line in env[1:]:
    print(f"    {line}")
print()
print("| target | round | thumbnails/s | CPU ms per thumbnail | p50 ms | p99 ms | 200 + image/jpeg | origin GETs "
      "| mark GETs | foreign CPU | load | waited s | note |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
rates = {t: {} for t in order}
cpu = {t: {} for t in order}
unfair = {t: set() for t in order}   # rounds still noisy (or with an idle thumbor worker) after the repeats
problems = []
for t in order:
    for rnd in sorted(by[t]):
        r = by[t][rnd]
        rate, cpu_ms, p50, p99, ok, foreign, note = row(r)
        rates[t][rnd], cpu[t][rnd] = rate, cpu_ms
        if note or not ok.startswith(f"{r['list_len']} of"):
            problems.append(f"{t} round {rnd}: {ok} ok {note}")
        if foreign > noisy_share:
            note = (note + "; " if note else "") + "noisy"
            unfair[t].add(rnd)
        busiest = r.get("busiest_worker_share")
        if busiest:
            note = (note + "; " if note else "") + f"busiest worker {busiest:.0%}" + (" (one idle)" if busiest > 0.8 else "")
            if busiest > 0.8:
                unfair[t].add(rnd)
        fmt = lambda v: "–" if v is None else f"{v:,.1f}"
        gets = (str(r.get("origin_gets", "–")), str(r.get("mark_gets", "–")))
        print(f"| {labels[t]} | {rnd} | {rate:,.1f} | {cpu_ms:.1f} | {fmt(p50)} | {fmt(p99)} | {ok} | {gets[0]} "
              f"| {gets[1]} | {foreign:.0%} | {r.get('loadavg', '')} | {r.get('quiet_waited_s', 0)} | {note} |")
print()
print("| target | median thumbnails/s | median CPU ms per thumbnail |")
print("|---|---|---|")
for t in order:
    print(f"| {labels[t]} | {median(rates[t].values()):,.1f} | {median(cpu[t].values()):.1f} |")
print()

def ratio(a, b, goal, name):
    if a not in rates or b not in rates:
        return
    common = sorted(k for k in set(rates[a]) & set(rates[b]) if rates[b][k] > 0)
    per = [rates[a][k] / rates[b][k] for k in common]
    if not per:
        return
    # The median over the rounds in which neither run was noisy or had an idle thumbor worker, when there are any.
    fair = [rates[a][k] / rates[b][k] for k in common if k not in unfair[a] | unfair[b]]
    left_out = [k for k in common if k in unfair[a] | unfair[b]]
    m = median(fair or per)
    of_medians = median(rates[a].values()) / max(median(rates[b].values()), 1e-9)
    cpu_ratio = median(cpu[b].values()) / max(median(cpu[a].values()), 1e-9)
    verdict = "" if goal is None else f" (target >= {goal}x: {'met' if m >= goal else 'NOT met'})"
    scope = "" if not left_out or not fair else f" of rounds {', '.join(str(k) for k in common if k not in left_out)} (not {', '.join(map(str, left_out))}: noisy or an idle worker)"
    print(f"{name}: per round {', '.join(f'{x:.2f}x' for x in per)}; median{scope} {m:.2f}x{verdict}; "
          f"ratio of the medians {of_medians:.2f}x; CPU per thumbnail {b} / {a}: {cpu_ratio:.2f}x")

ratio("thumbd", "thumbor", 3.0, "thumbd / thumbor thumbnails/s")
ratio("thumbd", "libvips", 0.9, "thumbd / libvips in-process thumbnails/s")
ratio("thumbd", "libvips-steps", 0.9, "thumbd / libvips in-process by thumbd's steps thumbnails/s")
# The ceiling of any server's ratio to thumbor here: libvips alone, without HTTP, fetches or caches.
ratio("libvips", "thumbor", None, "libvips in-process / thumbor thumbnails/s (no HTTP, no fetch: a ceiling)")
ratio("thumbd", "filters-baseline", 0.97, "FILTERS: thumbd / baseline thumbnails/s")
ratio("cold-thumbd", "cold-baseline", 0.97, "COLD plain: thumbd / baseline thumbnails/s")

# Round 1: each line's output size, thumbd against the others (thumbor and thumbd round differently by a pixel).
def sizes(target):
    path = f"{out}/check/{target}/sizes.tsv"
    if not os.path.exists(path):
        return {}
    result = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if target.startswith("libvips"):   # line, width, height, bytes
            result[int(f[0])] = (int(f[1]), int(f[2]))
        elif f[2] != "-" and f[3] != "-":   # line, status, width, height
            result[int(f[0])] = (int(f[2]), int(f[3]))
    return result
reference = sizes("thumbd")
if reference:
    print()
    print(f"Output sizes, round 1 (thumbd's {len(reference)} answers of {line_count} against each):")
    for t in ("thumbor", "libvips", "libvips-steps"):
        other = sizes(t)
        if not other:
            continue
        same = sum(1 for k, v in reference.items() if other.get(k) == v)
        near = sum(1 for k, v in reference.items() if k in other and max(abs(v[0] - other[k][0]), abs(v[1] - other[k][1])) <= 1)
        print(f"    {t}: {len(other)} outputs; {same} the same width x height as thumbd's, {near} within 1 px")
if repeated:
    print()
    print(f"Measured again (other processes took more than {noisy_share:.0%} of the CPUs, or one of thumbor's two "
          "workers took more than 80 % of their CPU): " + ", ".join(repeated))
if problems:
    print()
    print("PROBLEMS:")
    for p in problems:
        print(f"    {p}")
PY
echo "results in $out"
