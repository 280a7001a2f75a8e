#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The time of one face and feature detection (FaceDetector.detect) on a 512 px intermediate of scikit-image's
# astronaut (from .venv-test: `make test-venv`), release build, one thread: the default Haar cascade, then the two
# LBP frontal-face cascades of opencv-data (CASCADES="..." for others).
#
#   bench/face-detection.sh                 # 50 runs per cascade
#   RUNS=200 BAND=256 bench/face-detection.sh
#   FILE=some.jpg bench/face-detection.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-50}
BAND=${BAND:-512}
FILE=${FILE:-$(ls .venv-test/lib/python3*/site-packages/skimage/data/astronaut.png 2>/dev/null | head -1)}
[[ -n "$FILE" && -f "$FILE" ]] || { echo "no astronaut.png: run make test-venv (scikit-image), or set FILE" >&2; exit 1; }
THUMBD_BENCH=1 swift build -c release --scratch-path .build-bench --product thumbd-face-bench >&2
for cascade in ${CASCADES:-/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml \
  /usr/share/opencv4/lbpcascades/lbpcascade_frontalface_improved.xml /usr/share/opencv4/lbpcascades/lbpcascade_frontalface.xml}; do
  .build-bench/release/thumbd-face-bench -n "$RUNS" --band "$BAND" --face-side "${FACE_SIDE:-0}" --cascade "$cascade" "$FILE"
done
