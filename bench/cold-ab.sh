#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The peers kit's COLD workload restricted to one source format, for two thumbd set-ups in alternating pairs: two
# builds (main's and a new one), or one build with two environments (`image.sandbox: untrusted` against `all`).
#   bench/cold-ab.sh BIN_A BIN_B   (env: FORMAT=jpg|png|webp|any (jpg) PAIRS=10 ENV_A= ENV_B= PEERS=$HOME/peers)
#   FORMAT=png ENV_B=THUMBD_IMAGE_SANDBOX=all bench/cold-ab.sh .build/release/thumbd .build/release/thumbd
# A temporary copy of the kit (links to its files, its own lists/ and results/) holds a `cold.tsv` of only the
# lines whose source has that extension; each pair runs `run_peers.sh --targets thumbd --workloads cold --runs 1`
# for A and B, the order swapped every pair. Prints each run's thumbnails/s and CPU ms per thumbnail (the kit's
# process-tree accounting: thumbd and its helpers), then B over A: the medians and the pairs' range.
set -euo pipefail
[ $# = 2 ] || { sed -n 3,5p "$0" >&2; exit 2; }
bin_a="$(realpath "$1")"; bin_b="$(realpath "$2")"
format="${FORMAT:-jpg}"; pairs="${PAIRS:-10}"
peers="$(realpath "${PEERS:-$HOME/peers}")"
[ -x "$peers/run_peers.sh" ] || { echo "no peers kit at $peers" >&2; exit 1; }
kit="$(mktemp -d)"
chmod 755 "$kit"   # nginx's workers (an unprivileged user) read the corpus through it
trap 'rm -rf "$kit"' EXIT
for entry in "$peers"/* "$peers"/.[!.]*; do
  case "$(basename "$entry")" in lists | results | run | run_peers.sh) ;; *) ln -s "$entry" "$kit/" ;; esac
done
cp "$peers/run_peers.sh" "$kit/"   # it finds its files next to itself
mkdir "$kit/lists" "$kit/results"
cp "$peers"/lists/* "$kit/lists/"
if [ "$format" != any ]; then
  awk -F'\t' -v suffix=".$format" 'substr($1, length($1) - length(suffix) + 1) == suffix' \
    "$peers/lists/cold.tsv" > "$kit/lists/cold.tsv"
fi
echo "== COLD, $(wc -l < "$kit/lists/cold.tsv") lines ($format), $pairs pairs; A: $bin_a ${ENV_A:-}; B: $bin_b ${ENV_B:-}"
results="$kit/figures.tsv"
for pair in $(seq 1 "$pairs"); do
  if [ $((pair % 2)) = 1 ]; then order="A B"; else order="B A"; fi
  for side in $order; do
    if [ "$side" = A ]; then bin="$bin_a"; extra="${ENV_A:-}"; else bin="$bin_b"; extra="${ENV_B:-}"; fi
    out="results/$pair-$side"
    # shellcheck disable=SC2086 # ENV_A/ENV_B are lists of NAME=value words
    (cd "$kit" && env $extra THUMBD_FETCH_ALLOW_PRIVATE_NETWORKS=true THUMBD_LOG_ACCESS=false \
      THUMBD_CMD="$bin --port \$THUMBD_PORT --cache-dir \$THUMBD_CACHE_DIR" \
      ./run_peers.sh --targets thumbd --workloads cold --runs 1 --quiet-max 5 --quiet-budget 10 --retry-noisy 0 \
      --out "$out" > "$kit/$pair-$side.log" 2>&1) || { tail -20 "$kit/$pair-$side.log" >&2; exit 1; }
    # The summary's row: | thumbd | cold | req/s | p50 | p99 | errors | CPU ms/req | foreign % | notes |
    row="$(grep '^| thumbd | cold' "$kit/$out/summary.md")"
    rate="$(echo "$row" | cut -d'|' -f4 | tr -d ' ')"; cpu="$(echo "$row" | cut -d'|' -f8 | tr -d ' ')"
    foreign="$(echo "$row" | cut -d'|' -f9 | tr -d ' ')"; errors="$(echo "$row" | cut -d'|' -f7 | tr -d ' ')"
    if [ "$errors" != "0+0" ]; then echo "pair $pair $side: errors $errors (see $out): not a measurement" >&2; exit 1; fi
    printf '%s\t%s\t%s\t%s\n' "$pair" "$side" "$rate" "$cpu" >> "$results"
    echo "pair $pair $side: $rate thumbnails/s, $cpu CPU ms each, foreign CPU $foreign %"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    pair, side, rate, cpu = line.split()
    runs.setdefault(int(pair), {})[side] = (float(rate), float(cpu))
a = [p["A"] for p in runs.values()]
b = [p["B"] for p in runs.values()]
rates = [y[0] / x[0] for x, y in zip(a, b)]
cpus = [y[1] / x[1] for x, y in zip(a, b)]
print(f"A: median {statistics.median(r for r, _ in a):.1f}/s, {statistics.median(c for _, c in a):.2f} ms; "
      f"B: median {statistics.median(r for r, _ in b):.1f}/s, {statistics.median(c for _, c in b):.2f} ms")
print(f"B/A thumbnails/s: median {statistics.median(rates):.3f} (pairs {min(rates):.3f}-{max(rates):.3f}); "
      f"CPU per thumbnail: median {statistics.median(cpus):.3f} (pairs {min(cpus):.3f}-{max(cpus):.3f})")
PY
