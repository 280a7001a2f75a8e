#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The time of one per-source analysis (Thumbnailer.analyse) on a 512 px intermediate of scikit-image's astronaut
# (from .venv-test: `make test-venv`), release build, one thread.
#
#   bench/analysis.sh                  # 200 runs
#   RUNS=1000 BAND=256 bench/analysis.sh
#   FILE=some.jpg bench/analysis.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-200}
BAND=${BAND:-512}
FILE=${FILE:-$(ls .venv-test/lib/python3*/site-packages/skimage/data/astronaut.png 2>/dev/null | head -1)}
[[ -n "$FILE" && -f "$FILE" ]] || { echo "no astronaut.png: run make test-venv (scikit-image), or set FILE" >&2; exit 1; }
THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-analysis-bench >&2
.build-bench/release/thumbd-analysis-bench -n "$RUNS" --band "$BAND" "$FILE"
