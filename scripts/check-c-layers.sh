#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C shim (Sources/CVipsShims) is built in layers, includes pointing only downward (docs/architecture.md):
#
#   0 public    include/CVipsShims.h               the types Swift sees
#   1 geometry  internal/geometry.h  geometry.c    pure arithmetic, no libvips
#   2 codecs    internal/codecs.h    encode/ resample/ quantize/ (libimagequant)
#   3 job       internal/job.h       job.c
#   4 steps     internal/steps.h     steps/        one file per step
#   5 pipeline  internal/pipeline.h  pipeline.c    the one step table
#   6 jobs      internal/jobs.h      jobs/         direct, animation, intermediate, pass-through
#   7 entry                          entry/        what CVipsShims.h declares: render, probe, init
#
# A file may include a header of a lower layer only; a .c file may also include its own layer's header, which
# declares what the file defines (so the compiler checks the two agree). Anything else (a header of the file's
# own layer from another header, a layer above, an unknown header or file) fails. Exit 1 names each violation.
set -euo pipefail
cd "$(dirname "$0")/.."
root=Sources/CVipsShims

# The layer a header (by its path from the target's root or its name as included) belongs to.
header_layer() {
  case "$(basename "$1")" in
  CVipsShims.h) echo 0 ;;
  geometry.h) echo 1 ;;
  codecs.h) echo 2 ;;
  job.h) echo 3 ;;
  steps.h) echo 4 ;;
  pipeline.h) echo 5 ;;
  jobs.h) echo 6 ;;
  *) echo "" ;;
  esac
}

# The layer a file belongs to (a header: its own; a .c file: by its place).
file_layer() {
  case "$1" in
  include/* | internal/*) header_layer "$1" ;;
  geometry.c) echo 1 ;;
  encode/*.c | resample/*.c | quantize/*.c) echo 2 ;;
  job.c) echo 3 ;;
  steps/*.c) echo 4 ;;
  pipeline.c) echo 5 ;;
  jobs/*.c) echo 6 ;;
  entry/*.c) echo 7 ;;
  *) echo "" ;;
  esac
}

status=0
while IFS= read -r path; do
  file=${path#"$root"/}
  layer=$(file_layer "$file")
  if [[ -z "$layer" ]]; then
    echo "$path: not in any layer (add it to scripts/check-c-layers.sh)"
    status=1
    continue
  fi
  while IFS=: read -r line included; do
    [[ -n "$line" ]] || continue
    target=$(header_layer "$included")
    if [[ -z "$target" ]]; then
      echo "$path:$line: includes \"$included\", which is in no layer"
      status=1
    elif ((target > layer)); then
      echo "$path:$line: layer $layer includes \"$included\" of layer $target above it"
      status=1
    elif ((target == layer)) && [[ "$file" != *.c ]]; then
      echo "$path:$line: header of layer $layer includes \"$included\" of its own layer"
      status=1
    fi
  done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$path" | sed -E 's/^([0-9]+):.*"([^"]+)".*/\1:\2/' || true)
done < <(find "$root" -name '*.c' -o -name '*.h' | sort)
exit $status
