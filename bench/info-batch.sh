#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# POST /info of warm sources (issue 28's goal: a batch of 100 warm URLs answered in under 20 ms).
# thumbd (release build, 127.0.0.1:18062, fresh cache) fetches ENTRIES photographs of the peers' corpus
# ($PEERS/corpus, else the test fixtures under other names) from a local origin (python3 http.server on
# 127.0.0.1:18061); one batch fetches and keeps them, then ROUNDS batches of the same body are timed on one
# keep-alive connection (send to last byte of the answer, as a client sees it), after WARMUP untimed ones.
# WARM=thumb asks a thumbnail of each source first (a page's grid), so each has its analysis record and the batch
# is answered from the records; WARM=info (the default) has only the batch see them: each answer reads the header.
# Prints min/p50/p90/max in ms and thumbd's CPU time per batch (all its threads, from /proc: what the batch costs
# whatever else the machine runs), and checks that every element is an object without an error.
#   bench/info-batch.sh    (env: ENTRIES=100 ROUNDS=200 WARMUP=20 WARM=info|thumb THUMBD_BIN= PEERS=$HOME/peers
#                           NICE=-10 when root)
# Every process started here is stopped by its pid; the origin and the cache live in a temporary directory.
set -euo pipefail
if [ -n "${THUMBD_BIN:-}" ]; then THUMBD_BIN="$(realpath -m "$THUMBD_BIN")"; fi
cd "$(dirname "$0")/.."
entries="${ENTRIES:-100}"
rounds="${ROUNDS:-200}"
warmup="${WARMUP:-20}"
warm="${WARM:-info}"
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
for port in 18061 18062; do
  if ss -Hltn "sport = :$port" | grep -q .; then echo "port $port is in use (another benchmark running?)" >&2; exit 1; fi
done
thumbd_release_build "$work"

# The origin: ENTRIES files named 0.jpg … (photographs of the corpus in turn, else the fixtures).
mkdir -p "$work/origin" "$work/cache"
mapfile -t pictures < <(find "$corpus" -maxdepth 1 -name '*.jpg' 2>/dev/null | sort)
if [ "${#pictures[@]}" = 0 ]; then
  pictures=(Sources/ThumbdTestSupport/Resources/{copyright,progressive,metadata,orientation-6}.jpg)
fi
for i in $(seq 0 $((entries - 1))); do cp "${pictures[$((i % ${#pictures[@]}))]}" "$work/origin/$i.jpg"; done
python3 -m http.server --bind 127.0.0.1 --directory "$work/origin" 18061 >"$work/origin.log" 2>&1 &
pids+=($!)
THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false THUMBD_INFO_BATCH_MAX="$entries" \
  "${run[@]}" "$thumbd_bin" --listen 127.0.0.1:18062 --cache-dir "$work/cache" >"$work/thumbd.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:18062/ready && break; sleep 0.1; done
for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:18061/0.jpg && break; sleep 0.1; done

echo "== thumbd $thumbd_rev, $entries entries of ${#pictures[@]} pictures, $(nproc) CPUs, WARM=$warm"
"${run[@]}" python3 - "$entries" "$rounds" "$warmup" "${pids[1]}" "$warm" <<'PY'
import http.client, json, os, sys, time, urllib.parse
entries, rounds, warmup, pid = (int(a) for a in sys.argv[1:5])
warm = sys.argv[5]
def cpu_seconds():  # thumbd's user + system time, all threads
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
body = json.dumps([f"http://127.0.0.1:18061/{i}.jpg" for i in range(entries)]).encode()
connection = http.client.HTTPConnection("127.0.0.1", 18062, timeout=60)
def batch():
    started = time.perf_counter()
    connection.request("POST", "/info", body, {"Content-Type": "application/json"})
    response = connection.getresponse()
    answer = response.read()
    elapsed = time.perf_counter() - started
    assert response.status == 200, (response.status, answer[:200])
    elements = json.loads(answer)
    assert len(elements) == entries and all("error" not in e and e["width"] > 0 for e in elements), answer[:400]
    return elapsed
if warm == "thumb":
    for i in range(entries):
        url = urllib.parse.quote(f"http://127.0.0.1:18061/{i}.jpg", safe="")
        connection.request("GET", f"/thumb?url={url}&w=64")
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
cold = batch()
print(f"first batch ({'after their thumbnails' if warm == 'thumb' else 'fetch and keep the sources'}): "
      f"{cold * 1000:.1f} ms")
for _ in range(warmup):
    batch()
cpu = cpu_seconds()
times = sorted(batch() * 1000 for _ in range(rounds))
cpu = (cpu_seconds() - cpu) / rounds * 1000
pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
print(f"warm POST /info of {entries} over {rounds} rounds: min {times[0]:.2f} ms, p50 {pick(0.5):.2f} ms, "
      f"p90 {pick(0.9):.2f} ms, max {times[-1]:.2f} ms; thumbd CPU {cpu:.1f} ms per batch "
      f"(over {os.cpu_count()} CPUs: {cpu / os.cpu_count():.1f} ms if nothing else ran)")
PY
