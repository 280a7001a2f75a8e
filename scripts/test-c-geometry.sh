#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Unit tests of the C shim's geometry layer (Tests/CShims/geometry_test.c). Compiled with the public header only:
# no libvips include path or library, so the build itself checks that the layer stays pure arithmetic.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-clang} -std=c11 -Wall -Werror -ISources/CVipsShims/include -o "$out/geometry_test" \
  Tests/CShims/geometry_test.c Sources/CVipsShims/geometry.c -lm
"$out/geometry_test"
