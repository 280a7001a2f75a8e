# SPDX-License-Identifier: Apache-2.0
"""imgproxy's result sizes as a table, asked of thumbd's imgproxy form (imgproxy's server does not run here).

usage: imgproxy_table.py --thumbd PATH [--out DIR]
Run with .venv-thumbor/bin/python (Pillow). README.md in this directory says where the rows come from.

Every row is an imgproxy URL's options on a 200x100 picture and the size imgproxy answers, worked out from
imgproxy's size rules (processing/prepare.go: the shrink per resizing type, enlarge, dpr, zoom, min sizes, the
fill-down crop) and checked against the behaviours its processing tests state (processing/*_test.go). A row thumbd
cannot pass today is marked with the reason; the run fails when an unmarked row fails, and when a marked row
passes (then the mark goes, so the table ratchets).
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
import urllib.parse

from PIL import Image

import diff

SOURCE = (200, 100)

# (options, expected width, expected height, why thumbd fails it today or None)
ROWS = [
    # fit: inside the box, never enlarged without el
    ("rs:fit:80:80", 80, 40, None),
    ("rs:fit:90:30", 60, 30, None),
    ("rs:fit:400:400", 200, 100, None),
    ("rs:fit:0:60", 120, 60, None),
    ("rs:fit:500:0", 200, 100, None),
    ("rs:fit:5000:5000", 200, 100, None),
    ("s:70:70", 70, 35, None),
    ("w:50", 50, 25, None),
    # fit with enlarge
    ("rs:fit:400:400/el:1", 400, 200, None),
    ("rs:fit:0:150/el:1", 300, 150, None),
    ("h:150/el:1", 300, 150, None),
    ("el:1", 200, 100, None),
    # fit with extend: the canvas is the box; a missing side is the picture's
    ("rs:fit:80:80/ex:1", 80, 80, None),
    ("rs:fit:400:300/ex:1", 400, 300, None),
    ("rs:fit:300:200/ex:1:so", 300, 200, None),
    ("rs:fit:0:160/ex:1", 200, 160, None),
    ("rs:fit:260:0/ex:1", 260, 100, None),
    # fit with extend_aspect_ratio: the canvas grows to the box's aspect around the (not enlarged) picture
    ("rs:fit:400:400/exar:1", 200, 200, None),
    ("rs:fit:400:100/exar:1", 400, 100, None),
    ("rs:fit:150:300/exar:1", 150, 300, None),
    ("rs:fit:150:300/exar:1/el:1", 150, 300, None),
    # fill: the box filled and cropped; without el each side stops at the source's
    ("rs:fill:80:80", 80, 80, None),
    ("rs:fill:120:30/g:so", 120, 30, None),
    ("rs:fill:30:90/g:ea", 30, 90, None),
    ("rs:fill:50:50/g:nowe", 50, 50, None),
    ("rs:fill:400:400/el:1", 400, 400, None),
    ("rs:fill:400:60", 200, 60, None),
    ("rs:fill:150:250", 150, 100, None),
    ("rs:fill:100:30/g:no:0:5", 100, 30, None),
    ("rs:fill:30:100/g:we:5:0", 30, 100, None),
    # fill with extend: the canvas is the box
    ("rs:fill:400:250/ex:1", 400, 250, None),
    ("rs:fill:400:250/ex:1/el:1", 400, 250, None),
    # fill-down: never enlarged; the crop keeps the box's aspect inside the source
    ("rs:fill-down:80:40", 80, 40, None),
    ("rs:fill-down:400:400", 100, 100, None),
    ("rs:fill-down:400:100", 200, 50, None),
    ("rs:fill-down:100:400", 25, 100, None),
    ("rs:fill-down:400:400/el:1", 400, 400, None),
    # force: the box exactly; without el the box shrinks until nothing is enlarged
    ("rs:force:80:50", 80, 50, None),
    ("rs:force:400:50", 200, 25, None),
    # auto: fill when picture and box have the same orientation, else fit
    ("rs:auto:120:60", 120, 60, None),
    ("rs:auto:60:120", 60, 30, None),
    # dpr and zoom multiply the box; dpr never enlarges past the source without el
    ("rs:fit:80:80/dpr:2", 160, 80, None),
    ("rs:fit:150:150/dpr:2", 200, 100, None),
    ("rs:fill:80:80/dpr:2", 100, 100, None),
    ("rs:fit:80:80/z:2", 160, 80, None),
    # min-width / min-height raise the scale, even past the source without el
    ("h:50/mw:150", 150, 75, None),
    ("w:100/mh:80", 160, 80, None),
    ("w:100/mw:300", 300, 150, None),
    # crop before the resize, clamped to the picture
    ("c:80:60:nowe", 80, 60, None),
    ("c:0.5:0.5", 100, 50, None),
    ("c:80:60", 80, 60, None),
    ("c:300:300:nowe", 200, 100, None),
    ("c:80:60:nowe/rs:fit:40:40", 40, 30, None),
    # padding after the resize, in CSS order, times dpr
    ("rs:fit:100:100/pd:10", 120, 70, None),
    ("pd:10:20:30:40", 260, 140, None),
    ("rs:fit:100:100/pd:10:20/dpr:2", 280, 140, None),
    # turns
    ("rot:90", 100, 200, None),
    ("rs:fit:80:80/rot:90", 40, 80, None),
    ("rs:fill:60:30/rot:270", 60, 30, None),
    # raw and skip_processing: the source's own bytes (its size); skp only for a listed source format
    ("raw:1", 200, 100, None),
    ("rs:fit:80:80/skp:png", 200, 100, None),
    ("rs:fit:80:80/skp:jpg:webp", 80, 40, None),
]


def source_picture(directory):
    """200x100: grid.png's nine cells squeezed to 2:1, so that crops and gravities move colours."""
    with Image.open(os.path.join(diff.FIXTURES, "grid.png")) as grid:
        grid.convert("RGB").resize(SOURCE, Image.Resampling.NEAREST).save(os.path.join(directory, "geometry.png"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--thumbd", required=True)
    parser.add_argument("--out", default=os.path.join(diff.ROOT, "bench", "results", "imgproxy-table"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    state = tempfile.mkdtemp(prefix="imgproxy-table-")
    origin, thumbd = None, None
    results = []
    try:
        pictures = os.path.join(state, "origin")
        os.makedirs(pictures)
        source_picture(pictures)
        origin = diff.Origin(pictures)
        thumbd, port = diff.start_thumbd(os.path.abspath(args.thumbd), state, imgproxy=True)
        source = urllib.parse.quote(f"http://127.0.0.1:{origin.port}/geometry.png", safe="")
        for options, width, height, known in ROWS:
            # imgproxy ignores the extension beside raw; thumbd refuses it (docs/compatibility.md), so none is written
            extension = "" if options.startswith("raw:") else "@png"
            path = f"/imgproxy/insecure/{options}/plain/{source}{extension}"
            status, _, body = diff.fetch(port, path)
            got = None
            if status == 200:
                picture = diff.decode(body)
                got = list(picture[1]) if picture else None
            passed = got == [width, height]
            results.append({"options": options, "expected": [width, height], "status": status, "got": got,
                            "error": diff.error_text(status, body), "passes": passed, "known_failure": known})
    finally:
        if thumbd:
            thumbd.stop()
        if origin:
            origin.stop()
        shutil.rmtree(state, ignore_errors=True)
    lines = ["# imgproxy's sizes asked of thumbd", "",
             f"Source 200x100 PNG; URL `/imgproxy/insecure/<options>/plain/<source>@png`. Made by "
             f"`bench/thumbor-diff/imgproxy_table.py`. {sum(r['passes'] for r in results)} of {len(results)} rows "
             "pass.", "", "| options | imgproxy | thumbd | passes | known failure |", "|---|---|---|---|---|"]
    for row in results:
        answer = "x".join(map(str, row["got"])) if row["got"] else f"{row['status']} {row['error']}"
        lines.append(f"| `{row['options']}` | {row['expected'][0]}x{row['expected'][1]} | {answer} | "
                     f"{'yes' if row['passes'] else 'no'} | {row['known_failure'] or ''} |")
    with open(os.path.join(args.out, "results.md"), "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as file:
        json.dump(results, file, indent=1)
    unexpected = [r for r in results if not r["passes"] and not r["known_failure"]]
    newly = [r for r in results if r["passes"] and r["known_failure"]]
    print(f"imgproxy table: {sum(r['passes'] for r in results)} of {len(results)} rows pass "
          f"({sum(1 for r in results if r['known_failure'])} marked as known failures); "
          f"{os.path.join(args.out, 'results.md')}")
    for row in unexpected:
        print(f"FAILS: {row['options']}: expected {row['expected']}, got {row['got'] or row['status']} "
              f"{row['error']}", file=sys.stderr)
    for row in newly:
        print(f"PASSES NOW (remove its known-failure mark): {row['options']}", file=sys.stderr)
    return 1 if unexpected or newly else 0


if __name__ == "__main__":
    sys.exit(main())
