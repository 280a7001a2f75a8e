# SPDX-License-Identifier: Apache-2.0
# Shared by the benchmark drivers (bench/http.sh, hot.sh, prefetch.sh, filters.sh): source it after `set -euo pipefail`.

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

# The thumbd binary to measure: $THUMBD_BIN as given, else a release build of this checkout (its log in
# $1/build.log). Sets thumbd_bin and thumbd_rev (the commit, `+changes` when Sources or Package.swift differ).
thumbd_release_build() {
  if [ -n "${THUMBD_BIN:-}" ]; then
    thumbd_bin="$THUMBD_BIN"
    thumbd_rev="given binary"
  else
    echo "== release build"
    # thumbd-decoder too: thumbd starts its decoder sandbox's helpers from its own directory (docs/threat-model.md).
    if ! { swift build -c release --product thumbd && swift build -c release --product thumbd-decoder; } \
      > "$1/build.log" 2>&1; then tail -20 "$1/build.log" >&2; exit 1; fi
    grep -v "prohibited flag" "$1/build.log" | tail -1
    thumbd_bin="$(swift build -c release --product thumbd --show-bin-path)/thumbd"
    thumbd_rev="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift || echo +changes)"
  fi
  [ -x "$thumbd_bin" ] || { echo "no thumbd binary at $thumbd_bin" >&2; exit 1; }
}
