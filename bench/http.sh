#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# HTTP server benchmark: our server answering a fixed 10 KB in-memory body vs. nginx serving the
# same 10 KB file (bench/nginx.conf), with `wrk -t2 -c64 -d10s --latency` on loopback, alternating,
# twice each. Prints req/s, p50 and p99 per run and the ratio of the means.
#   bench/http.sh                      (env: DURATION=10s CONNECTIONS=64 ROUNDS=2 THREADS=2 CEILING=0)
# NICE=-10 (default when root) runs the servers and wrk at a higher priority than everything else,
# so other work on a shared machine disturbs the comparison less; both sides get the same priority.
# CEILING=1 also measures bench/bare_epoll.c, a C loop that writes a prebuilt response: the kernel's
# share of a request, i.e. the most any server can get out of this machine.
# Results (raw wrk output, summary) go to bench/results/<UTC time>/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
duration="${DURATION:-10s}"
connections="${CONNECTIONS:-64}"
rounds="${ROUNDS:-2}"
threads="${THREADS:-2}"
ceiling="${CEILING:-0}"
. bench/lib.sh   # niceness and `run`, CPU accounting (ticks, busy, irqs, hz, cpus)
out="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out/nginx/www" "$out/nginx/tmp"
for tool in wrk nginx python3; do command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }; done

echo "== release build"
THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-httpbench 2>&1 | grep -v "prohibited flag" | tail -1

# The same 10 KB for both servers (deterministic bytes).
python3 -c "import sys; sys.stdout.buffer.write(bytes((i * 31 + (i >> 8)) & 0xFF for i in range(10240)))" > "$out/nginx/www/10k.bin"

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

"${run[@]}" nginx -p "$root/$out/nginx/" -c "$root/bench/nginx.conf" &
nginx_pid=$!
pids+=($nginx_pid)
"${run[@]}" .build-bench/release/thumbd-httpbench --port 18051 --threads "$threads" --body "$out/nginx/www/10k.bin" > "$out/thumbd.log" 2>&1 &
thumbd_pid=$!
pids+=($thumbd_pid)
targets=(thumbd nginx)
if [ "$ceiling" = 1 ]; then
  cc -O2 -o "$out/bare_epoll" bench/bare_epoll.c -lpthread
  "${run[@]}" "$out/bare_epoll" 18052 "$out/nginx/www/10k.bin" &
  bare_pid=$!
  pids+=($bare_pid)
  targets+=(bare)
fi


wait_for() {
  for _ in $(seq 1 100); do
    if curl -fsS -o /dev/null "$1"; then return 0; fi
    sleep 0.1
  done
  echo "server at $1 did not come up" >&2; exit 1
}
wait_for http://127.0.0.1:18050/10k.bin
wait_for http://127.0.0.1:18051/bench
cmp <(curl -fsS http://127.0.0.1:18050/10k.bin) <(curl -fsS http://127.0.0.1:18051/bench) || { echo "bodies differ" >&2; exit 1; }

declare -A url=([thumbd]=http://127.0.0.1:18051/bench [nginx]=http://127.0.0.1:18050/10k.bin [bare]=http://127.0.0.1:18052/)
echo "== wrk -t2 -c$connections -d$duration --latency, $rounds rounds, alternating, nice $niceness"
printf "target\tround\tserver_ticks\tmachine_ticks\tirq_ticks\twrk_cpu_s\twall_s\n" > "$out/cpu.tsv"
for round in $(seq 1 "$rounds"); do
  for target in "${targets[@]}"; do
    case "$target" in
      thumbd) server_pids=("$thumbd_pid") ;;
      nginx) server_pids=("$nginx_pid" $(pgrep -P "$nginx_pid")) ;;
      bare) server_pids=("$bare_pid") ;;
    esac
    s0=$(ticks "${server_pids[@]}"); m0=$(busy); i0=$(irqs)
    "${run[@]}" /usr/bin/time -f "%U %S %e" -o "$out/time-$target-$round.txt" \
      wrk -t2 -c"$connections" -d"$duration" --latency "${url[$target]}" > "$out/wrk-$target-$round.txt"
    s1=$(ticks "${server_pids[@]}"); m1=$(busy); i1=$(irqs)
    read -r wu ws we < "$out/time-$target-$round.txt"
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$target" "$round" $((s1 - s0)) $((m1 - m0)) $((i1 - i0)) \
      "$(python3 -c "print($wu + $ws)")" "$we" >> "$out/cpu.tsv"
    echo "   $target round $round done"
  done
done

python3 - "$out" "$rounds" "$hz" "$cpus" "${targets[*]}" <<'PY' | tee "$out/summary.md"
import csv, re, sys
out, rounds, hz, cpus = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cpu = {(r["target"], int(r["round"])): r for r in csv.DictReader(open(f"{out}/cpu.tsv"), delimiter="\t")}
unit = {"us": 1e-3, "ms": 1.0, "s": 1000.0}
def parse(path):
    text = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    lat = {p: float(v) * unit[u] for p, v, u in re.findall(r"^\s+(50|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)}
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)|Socket errors: (.*)", text)
    return rps, lat["50"], lat["99"], errors.group(0) if errors else ""
targets = sys.argv[5].split()
rows = {t: [parse(f"{out}/wrk-{t}-{r}.txt") for r in range(1, rounds + 1)] for t in targets}
print("| target | round | req/s | p50 ms | p99 ms | server CPU us/req | wrk CPU us/req | softirq us/req | foreign CPU share | errors |")
print("|---|---|---|---|---|---|---|---|---|---|")
server_us = {t: [] for t in targets}
for t, runs in rows.items():
    for i, (rps, p50, p99, err) in enumerate(runs, 1):
        c = cpu[(t, i)]
        wall = float(c["wall_s"])
        requests = rps * wall
        server_s = int(c["server_ticks"]) / hz
        wrk_s = float(c["wrk_cpu_s"])
        irq_s = int(c["irq_ticks"]) / hz
        foreign = max(0.0, int(c["machine_ticks"]) / hz - server_s - wrk_s) / (wall * cpus)
        server_us[t].append(server_s * 1e6 / requests)
        print(f"| {t} | {i} | {rps:,.0f} | {p50:.3f} | {p99:.3f} | {server_s * 1e6 / requests:.2f} | "
              f"{wrk_s * 1e6 / requests:.2f} | {irq_s * 1e6 / requests:.2f} | {foreign:.0%} | {err} |")
mean = lambda xs: sum(xs) / len(xs)
ours, theirs = mean([r[0] for r in rows["thumbd"]]), mean([r[0] for r in rows["nginx"]])
p99o, p99n = mean([r[2] for r in rows["thumbd"]]), mean([r[2] for r in rows["nginx"]])
print()
print(f"mean req/s: thumbd {ours:,.0f}, nginx {theirs:,.0f}, ratio {ours / theirs:.2f}x (target >= 1.20x)")
print(f"mean p99: thumbd {p99o:.3f} ms, nginx {p99n:.3f} ms ({'no worse' if p99o <= p99n else 'WORSE'} than nginx)")
cu, cn = mean(server_us["thumbd"]), mean(server_us["nginx"])
print(f"mean server CPU per request: thumbd {cu:.2f} us, nginx {cn:.2f} us ({cn / cu:.2f}x less for thumbd)")
if "bare" in rows:
    bare = mean([r[0] for r in rows["bare"]])
    print(f"ceiling (bare C epoll loop): {bare:,.0f} req/s = {bare / theirs:.2f}x nginx; thumbd reaches {ours / bare:.0%} of it")
PY
echo "results in $out"
