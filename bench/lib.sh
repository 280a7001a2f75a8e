# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark drivers (bench/http.sh, bench/hot.sh): source it after `set -euo pipefail`.

# NICE=-10 (default when root) runs the servers and wrk at a higher priority than everything else, so other
# work on a shared machine disturbs the comparison less; every target gets the same priority.
if [ "$(id -u)" = 0 ]; then niceness="${NICE:--10}"; else niceness="${NICE:-0}"; fi
run=(nice -n "$niceness")   # an array, not a function: `nice` execs, so $! is the server's pid

# CPU accounting in clock ticks: a set of processes (all their threads), and the whole machine, so each run
# records how much CPU *other* processes took. Task time (user+nice+system+steal) and interrupt time
# (irq+softirq) are kept apart: loopback TCP does much of its work in softirq, which is charged to no process.
ticks() { local total=0 f; for p in "$@"; do read -r -a f < "/proc/$p/stat"; total=$((total + f[13] + f[14])); done; echo "$total"; }
busy() { awk '/^cpu /{print $2 + $3 + $4 + $9}' /proc/stat; }
irqs() { awk '/^cpu /{print $7 + $8}' /proc/stat; }
hz=$(getconf CLK_TCK)
cpus=$(nproc)
