#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prefetch beside client load (issue 5): does a running prefetch job raise the clients' p50?
# thumbd (release build, 127.0.0.1:18053, fresh cache, admin token) fetches from the peers' origin (nginx with
# the peers' conf/origin.conf moved to :18051 so as not to collide with hot.sh, serving ~/peers/corpus).
# Every source is fetched once first (a prefetch at w=32), so both variants below render from the source cache
# and differ only by the prefetch. Then, ROUNDS times:
#   clients   wrk -t2 -cCONNECTIONS --latency over the peers' cold.tsv pairs (1,040 thumbnails) in the peers'
#             urls.lua "once" mode (each pair requested exactly once, wrk stops when all are answered; DURATION
#             is only an upper bound), widths shifted so that every request is a miss (a render)
#   +prefetch the same with other widths, while a prefetch job of up to 1,000 other thumbnails of the corpus
#             runs; after the run its counts are read and it is cancelled (DELETE)
# Prints p50/p99/req/s per run and the ratio of the mean p50s (goal: with prefetch <= 1.10x without).
#   bench/prefetch.sh    (env: DURATION=120s CONNECTIONS=4 ROUNDS=2 THUMBD_BIN= PEERS=$HOME/peers NICE=-10 when root)
# Results (raw wrk output, prefetch status, summary.md) go to bench/results/<UTC time>-prefetch/.
set -euo pipefail
if [ -n "${THUMBD_BIN:-}" ]; then THUMBD_BIN="$(realpath -m "$THUMBD_BIN")"; fi
if [ -n "${PEERS:-}" ]; then PEERS="$(realpath -m "$PEERS")"; fi
cd "$(dirname "$0")/.."
root="$(pwd)"
duration="${DURATION:-120s}"
connections="${CONNECTIONS:-4}"
rounds="${ROUNDS:-2}"
peers="${PEERS:-$HOME/peers}"
token="bench-prefetch-token-0123456789"
. bench/lib.sh   # niceness and `run`
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)-prefetch"
for tool in wrk nginx python3 curl; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done
for f in conf/origin.conf lua/urls.lua lists/cold.tsv gen_lists.py; do
  [ -e "$peers/$f" ] || { echo "peer kit incomplete: no $peers/$f (PEERS=...)" >&2; exit 1; }
done
if [ $((0$(stat -c %a "$HOME") & 1)) = 0 ]; then echo "nginx workers cannot reach $peers/corpus: chmod 711 $HOME" >&2; exit 1; fi
for port in 18051 18053; do
  if ss -Hltn "sport = :$port" | grep -q .; then echo "port $port is in use (another benchmark running?)" >&2; exit 1; fi
done
mkdir -p "$out"/{lists,thumbd/cache,peers/run/origin/tmp}
ln -s "$peers/corpus" "$out/peers/corpus"
sed 's/127\.0\.0\.1:18001/127.0.0.1:18051/' "$peers/conf/origin.conf" > "$out/peers/origin.conf"

thumbd_release_build "$out"
thumbd_env=(THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false THUMBD_ADMIN_TOKEN="$token")
thumbd_args=(--listen 127.0.0.1:18053 --cache-dir "$root/$out/thumbd/cache")
{
  echo "date_utc: $(date -u +%FT%TZ)"
  echo "host: $(uname -srm), $(nproc) cpus, loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "thumbd: $thumbd_bin ($thumbd_rev)"
  echo "settings: rounds=$rounds wrk -t2 -c$connections -d$duration nice=$niceness peers=$peers"
} > "$out/env.txt"

pids=()
stop() {   # a process we started (and its children), by pid, bounded
  local pid="$1" kids k
  kill -0 "$pid" 2>/dev/null || return 0
  kids="$(pgrep -P "$pid" || true)"
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  for k in $kids; do kill -KILL "$k" 2>/dev/null || true; done
}
cleanup() { local pid; for pid in "${pids[@]}"; do stop "$pid"; done; wait 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT TERM
wait_for() {
  for _ in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1")" != 000 ] && return 0
    kill -0 "$2" 2>/dev/null || { echo "process $2 exited while waiting for $1" >&2; exit 1; }
    sleep 0.1
  done
  echo "server at $1 did not come up" >&2; exit 1
}

"${run[@]}" nginx -p "$root/$out/peers/" -c "$root/$out/peers/origin.conf" > "$out/peers/origin.log" 2>&1 &
origin_pid=$!; pids+=($origin_pid)
env "${thumbd_env[@]}" "${run[@]}" "$thumbd_bin" "${thumbd_args[@]}" > "$out/thumbd/stdout.log" 2> "$out/thumbd/stderr.log" &
thumbd_pid=$!; pids+=($thumbd_pid)
wait_for http://127.0.0.1:18051/ "$origin_pid"
wait_for http://127.0.0.1:18053/health "$thumbd_pid"

# Lists: the client's cold pairs with widths shifted per run (every request a miss), and the prefetch bodies.
python3 - "$peers/lists/cold.tsv" "$out/lists" "$rounds" <<'PY'
import json, sys, urllib.parse
cold, out, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
pairs = [line.split("\t") for line in open(cold).read().splitlines() if line.strip()]
files = sorted({p[0] for p in pairs})
origin = "http://127.0.0.1:18051/"
def thumb(f, w, h): return f"/thumb?url={urllib.parse.quote(origin + f, safe='')}&w={w}&h={h}"
def body(items): return json.dumps({"items": items})
open(f"{out}/warm.json", "w").write(body([{"url": origin + f, "w": 32} for f in files]))
for r in range(1, rounds + 1):
    for variant, shift in (("clients", 2 * r - 1), ("prefetch", 2 * r)):
        with open(f"{out}/{variant}-{r}.txt", "w") as list_file:
            for f, w, h in pairs:
                list_file.write(thumb(f, int(w) + shift, int(h)) + "\n")
    items = [{"url": origin + f, "w": 300 + 10 * r + k, "h": 300} for k in range(5) for f in files][:1000]
    open(f"{out}/prefetch-{r}.json", "w").write(body(items))
print(f"   {len(pairs)} client pairs per run, {len(files)} sources, prefetch jobs of {min(1000, 5 * len(files))} items")
PY

api=(-s -m 10 -H "Authorization: Bearer $token")
job() { curl "${api[@]}" "http://127.0.0.1:18053/prefetch/$1"; }
start() { curl "${api[@]}" -H 'Content-Type: application/json' --data-binary "@$1" http://127.0.0.1:18053/prefetch \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])'; }

echo "== every source fetched once (prefetch at w=32)"
warm_id=$(start "$out/lists/warm.json")
for _ in $(seq 1 600); do
  state=$(job "$warm_id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
  [ "$state" = running ] || break
  sleep 0.5
done
echo "   $(job "$warm_id")" | tee "$out/warm.log"

echo "== wrk -t2 -c$connections --latency, each of 1,040 misses once, $rounds rounds: clients alone, then beside a prefetch job"
for round in $(seq 1 "$rounds"); do
  mkdir -p "$out/state/clients-$round" "$out/state/prefetch-$round"
  "${run[@]}" wrk -t2 -c"$connections" -d"$duration" --timeout 30s --latency -s "$peers/lua/urls.lua" \
    http://127.0.0.1:18053 -- "$out/lists/clients-$round.txt" once 2 "$out/state/clients-$round" > "$out/wrk-clients-$round.txt"
  echo "   clients round $round: $(grep -E 'Requests/sec' "$out/wrk-clients-$round.txt" | tr -s ' ')"
  id=$(start "$out/lists/prefetch-$round.json")
  "${run[@]}" wrk -t2 -c"$connections" -d"$duration" --timeout 30s --latency -s "$peers/lua/urls.lua" \
    http://127.0.0.1:18053 -- "$out/lists/prefetch-$round.txt" once 2 "$out/state/prefetch-$round" > "$out/wrk-prefetch-$round.txt"
  job "$id" > "$out/prefetch-status-$round.json"
  curl "${api[@]}" -X DELETE "http://127.0.0.1:18053/prefetch/$id" > "$out/prefetch-deleted-$round.json"
  echo "   +prefetch round $round: $(grep -E 'Requests/sec' "$out/wrk-prefetch-$round.txt" | tr -s ' '); job during the run: $(cat "$out/prefetch-status-$round.json")"
  sleep 2   # the cancelled job's last renders finish before the next run
done

python3 - "$out" "$rounds" <<'PY' | tee "$out/summary.md"
import json, re, sys
out, rounds = sys.argv[1], int(sys.argv[2])
unit = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
def parse(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    lat = {p: float(v) * unit[u] for p, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
    errors = "; ".join(m.group(0) for m in re.finditer(r"Non-2xx or 3xx responses: \d+|Socket errors: .*", text))
    result = json.loads(re.search(r"^RESULT_JSON (.*)$", text, re.M).group(1))
    answered = f'{result["completed"]} (X-Cache MISS {result.get("misses", "?")}, hits {result.get("hits", "?")})'
    return (answered, result["wall_s"], result["rps_wall"]), lat["50"], lat["99"], errors
print("Prefetch beside client misses: " + open(f"{out}/env.txt").read().splitlines()[1])
print()
print("| run | round | responses | wall s | misses/s | p50 ms | p99 ms | prefetch done during the run | errors |")
print("|---|---|---|---|---|---|---|---|---|")
p50 = {"clients": [], "prefetch": []}
for r in range(1, rounds + 1):
    for variant in ("clients", "prefetch"):
        rps, p, p99, errors = parse(f"{out}/wrk-{variant}-{r}.txt")
        p50[variant].append(p)
        done = "-"
        if variant == "prefetch":
            status = json.load(open(f"{out}/prefetch-status-{r}.json"))
            done = f"{status['done']} of {status['total']} (failed {status['failed']})"
        name = "clients alone" if variant == "clients" else "clients + prefetch"
        completed, wall, rate = rps
        print(f"| {name} | {r} | {completed} | {wall:.1f} | {rate:,.1f} | {p:.1f} | {p99:.1f} | {done} | {errors} |")
mean = lambda xs: sum(xs) / len(xs)
ratio = mean(p50["prefetch"]) / mean(p50["clients"])
print()
print(f"mean p50: clients alone {mean(p50['clients']):.1f} ms, beside prefetch {mean(p50['prefetch']):.1f} ms: "
      f"{ratio:.2f}x (goal <= 1.10x: {'met' if ratio <= 1.10 else 'NOT met'})")
PY
echo "results in $out"
