#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer target over HTTP1.RequestParser with -sanitize=fuzzer,address in its own
# scratch path (.build-fuzz, so the normal build is untouched) and runs it.
#   fuzz/run.sh [executions]      default 1000000
# A crash leaves its input in fuzz/FailCases/ (add a unit test for it in Tests/HTTP1Tests).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1000000}"

THUMBD_FUZZ=1 swift build -c debug --scratch-path .build-fuzz --product FuzzRequestParser \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library

binary=".build-fuzz/debug/FuzzRequestParser"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp fuzz/corpus/* "$work/"   # the committed seeds stay as they are; new finds go to the temp corpus
mkdir -p fuzz/FailCases
"$binary" "$work" -dict=fuzz/http.dict -runs="$runs" -max_len=512 -timeout=10 \
  -artifact_prefix=fuzz/FailCases/ -print_final_stats=1
