#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Only a C library's wrapper module may import it, and only ThumbdApp imports URLForms (docs/architecture.md).
# SwiftPM lets any target import a transitive C module, so this check enforces the rule. Exit 1 names each violation.
set -euo pipefail
cd "$(dirname "$0")/.."

# C module -> folders (Sources/X or Tests/XTests) allowed to import it.
declare -A allowed=(
  [CLinuxShims]="EventLoops HTTP1 OriginFetch Thumbnailing ThumbdTestSupport"
  [CCurl]="OriginFetch ThumbdTestSupport"
  [CCurlShims]="OriginFetch ThumbdTestSupport"
  [CVips]="Thumbnailing ThumbdTestSupport"
  [CVipsShims]="Thumbnailing ThumbdTestSupport"
  [CFaceShims]="Thumbnailing"
  [CSQLite]="Caching"
)

status=0
while IFS=: read -r file line text; do
  module=$(sed -E 's/.*import[[:space:]]+([A-Za-z0-9_]+).*/\1/' <<<"$text")
  [[ -n "${allowed[$module]+x}" ]] || continue
  owner=$(sed -E 's#^(Sources|Tests)/([^/]+)/.*#\2#; s/Tests$//' <<<"$file")
  if [[ " ${allowed[$module]} " != *" $owner "* ]]; then
    echo "$file:$line: $module may be imported only by: ${allowed[$module]}"
    status=1
  fi
done < <(grep -rnE '^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((internal|package|public|private|fileprivate)[[:space:]]+)?import[[:space:]]+C[A-Za-z]+' Sources Tests || true)

# URLForms sits between the feature modules and ThumbdApp: of the sources only ThumbdApp imports it (tests and the
# fuzz targets may), and it imports no cache, event loop, metrics, page or app module.
import_line='^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((internal|package|public|private|fileprivate)[[:space:]]+)?import[[:space:]]+'
while IFS=: read -r file line _; do
  owner=$(sed -E 's#^Sources/([^/]+)/.*#\1#' <<<"$file")
  if [[ "$owner" != ThumbdApp ]]; then
    echo "$file:$line: URLForms may be imported only by ThumbdApp, the fuzz targets and tests"
    status=1
  fi
done < <(grep -rnE "${import_line}URLForms\b" Sources || true)
while IFS=: read -r file line _; do
  echo "$file:$line: URLForms may import only Thumbnailing, OriginFetch, HTTP1, ThumbdSettings and Crypto"
  status=1
done < <(grep -rnE "${import_line}(ThumbdApp|Caching|EventLoops|Instrumentation|Pages)\b" Sources/URLForms || true)
exit $status
