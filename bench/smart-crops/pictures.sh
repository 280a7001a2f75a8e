#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The test photographs of bench/smart-crops/compare.py, unpacked into .build/smart-crops/pictures/ from what two
# package registries ship (README.md beside this script): scikit-image's wheel (pip download, not installed: only
# its skimage/data/ pictures are read) and Debian's opencv-doc (apt-get download, not installed: only two pictures of
# its examples' data are read). A second run finds them and does nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
python=${PYTHON:-.venv-thumbor/bin/python}
skimage=scikit-image==0.26.0
opencv_doc=opencv-doc=4.6.0+dfsg-12
work=.build/smart-crops
pictures=$work/pictures
skimage_names="astronaut.png coffee.png chelsea.png rocket.jpg camera.png"
opencv_names="messi5.jpg basketball1.png"
[ -f "$pictures/.unpacked" ] && exit 0
mkdir -p "$work/download" "$pictures"
if ! ls "$work"/download/scikit_image-*.whl >/dev/null 2>&1; then
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$work/download" "$skimage"
fi
"$python" - "$work"/download/scikit_image-*.whl "$pictures" $skimage_names <<'PY'
import os, sys, zipfile
wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as archive:
    for name in names:
        with open(os.path.join(out, name), "wb") as file:
            file.write(archive.read("skimage/data/" + name))
PY
if ! ls "$work"/download/opencv-doc_*.deb >/dev/null 2>&1; then
  # Debian 12's version, else the one the package lists have; lists never read are read first (as root).
  download() { apt-get download "$opencv_doc" 2>/dev/null || apt-get download opencv-doc; }
  (cd "$work/download" && { download || { [ "$(id -u)" = 0 ] && apt-get update -qq && download; }; })
fi
members=""
for name in $opencv_names; do members="$members ./usr/share/doc/opencv-doc/examples/data/$name"; done
# shellcheck disable=SC2086  # the member list is split on purpose
dpkg-deb --fsys-tarfile "$work"/download/opencv-doc_*.deb | tar -x -C "$pictures" --strip-components=7 $members
touch "$pictures/.unpacked"
ls "$pictures"
