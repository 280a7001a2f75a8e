#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets with -sanitize=fuzzer,address in their own scratch path (.build-fuzz, so the
# normal build is untouched) and runs each of them for the same number of executions:
#   FuzzRequestParser     HTTP1.RequestParser (seeds fuzz/corpus, dictionary fuzz/http.dict)
#   FuzzThumbParameters   the /thumb parameter parser (seeds fuzz/corpus-thumb, dictionary fuzz/thumb.dict)
#   FuzzDialectURLs       thumbor's and imgproxy's URL parsers (seeds fuzz/corpus-dialects, dictionary
#                         fuzz/dialects.dict)
#   FuzzObjectKeys        s3:// source URLs: the request stays in the listed bucket (seeds fuzz/corpus-s3,
#                         dictionary fuzz/s3.dict)
#
#   fuzz/run.sh [executions [target...]]      default 1000000, every target
#
# A crash leaves its input in fuzz/FailCases/ (the request parser's as `crash-…`, the /thumb parser's as
# `thumb-crash-…`, the dialects' as `dialect-crash-…`, the s3 keys' as `s3-crash-…`); add a unit test for it in Tests/HTTP1Tests, Tests/URLFormsTests or Tests/ThumbdAppTests. The other targets still
# run; the script fails if any of them did.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000000}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(FuzzRequestParser FuzzThumbParameters FuzzDialectURLs FuzzObjectKeys)

# Swift's own crash backtracer reads the dying process's memory, which AddressSanitizer reports as an overflow,
# and it can outlive the process holding its output open: leave crash reports to libFuzzer and ASan.
export SWIFT_BACKTRACE=enable=no
# The one-time leak of Swift's Regex parser (fuzz/lsan.supp says which); any other leak still fails the run.
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p fuzz/FailCases
status=0

for target in "${targets[@]}"; do
  case "$target" in
    FuzzRequestParser) corpus=fuzz/corpus dict=fuzz/http.dict max_len=512 prefix=fuzz/FailCases/ ;;
    FuzzThumbParameters) corpus=fuzz/corpus-thumb dict=fuzz/thumb.dict max_len=1024 prefix=fuzz/FailCases/thumb- ;;
    FuzzDialectURLs) corpus=fuzz/corpus-dialects dict=fuzz/dialects.dict max_len=1024 prefix=fuzz/FailCases/dialect- ;;
    FuzzObjectKeys) corpus=fuzz/corpus-s3 dict=fuzz/s3.dict max_len=256 prefix=fuzz/FailCases/s3- ;;
    *) echo "unknown fuzz target: $target" >&2; exit 2 ;;
  esac

  THUMBD_FUZZ=1 swift build -c debug --scratch-path .build-fuzz --product "$target" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library

  # The committed seeds stay as they are; new finds go to the temporary corpus.
  mkdir "$work/$target"
  cp "$corpus"/* "$work/$target/"
  echo "== $target: $runs executions"
  ".build-fuzz/debug/$target" "$work/$target" -dict="$dict" -runs="$runs" -max_len="$max_len" -timeout=10 \
    -artifact_prefix="$prefix" -print_final_stats=1 || status=$?
done
exit "$status"
