# SPDX-License-Identifier: Apache-2.0
"""Where thumbor 7.8 (with its face and feature detectors) and thumbd place the same `smart/` crops.

usage: compare.py --thumbd PATH [--pictures DIR_OR_FILE ...] [--boxes 300x300,480x270,...] [--limit 0.10]
                  [--out FILE.json] [--keep]
Run with .venv-thumbor/bin/python (thumbor, OpenCV and numpy come from there). README.md in this directory says
what it starts, how it finds each crop in its source and where the test photographs come from.
"""
import argparse
import io
import json
import os
import shutil
import sys
import tempfile
import time

import cv2
import numpy as np
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "thumbor-diff"))

import diff  # noqa: E402  (bench/thumbor-diff/diff.py: the servers' start and stop, the origin, fetch)

BOXES = "300x300,480x270,270x480,200x400,400x100"
# What `make smart-crops` unpacks into .build/smart-crops/ (README.md): scikit-image's wheel's pictures and two
# photographs with people from Debian's opencv-doc; a missing one is left out of the default list.
DEFAULT_DIR = os.path.join(ROOT, ".build", "smart-crops", "pictures")
DEFAULT_NAMES = ["astronaut.png", "coffee.png", "chelsea.png", "rocket.jpg", "camera.png", "messi5.jpg",
                 "basketball1.png"]
# Below this normalised correlation an answer is not found in its source (a wrong picture, another geometry).
MATCH_FLOOR = 0.8


def default_pictures():
    paths = [os.path.join(DEFAULT_DIR, name) for name in DEFAULT_NAMES]
    return [path for path in paths if os.path.exists(path)]


def picture_list(arguments):
    paths = []
    for argument in arguments:
        if os.path.isdir(argument):
            paths += sorted(os.path.join(argument, name) for name in os.listdir(argument)
                            if name.lower().endswith((".jpg", ".jpeg", ".png", ".webp")))
        else:
            paths.append(argument)
    return paths


def grey(picture):
    """A Pillow picture (EXIF orientation applied, as both servers apply it) as an 8-bit grey numpy array,
    flattened onto white."""
    picture = ImageOps.exif_transpose(picture)
    rgba = picture.convert("RGBA")
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return np.array(Image.alpha_composite(white, rgba).convert("L"))


def locate(source, body, width, height):
    """Where the answer (W x H) sits in the source scaled to cover the box: (left, top, score, scaled size, axis).

    The cover crop scales the source by s = max(W / srcW, H / srcH) and cuts W x H out of it; the answer is found in
    the scaled source with OpenCV's matchTemplate (TM_CCOEFF_NORMED), both grey. `axis` is the side that was cut
    ("x", "y", or None when the source already has the box's proportions)."""
    answer = grey(Image.open(io.BytesIO(body)))
    if answer.shape != (height, width):
        return None
    src_h, src_w = source.shape
    scale = max(width / src_w, height / src_h)
    scaled_w, scaled_h = max(width, round(src_w * scale)), max(height, round(src_h * scale))
    scaled = cv2.resize(source, (scaled_w, scaled_h), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC)
    result = cv2.matchTemplate(scaled, answer, cv2.TM_CCOEFF_NORMED)
    _, score, _, (left, top) = cv2.minMaxLoc(result)
    axis = "x" if scaled_w > width else "y" if scaled_h > height else None
    return left, top, float(score), (scaled_w, scaled_h), axis


def focal_summary(meta):
    """thumbor's meta focal points, as printed: each face in full, the features as a count and their centre."""
    points = meta.get("thumbor", {}).get("focal_points", []) if meta else []
    if not points:
        return "none"
    faces = [p for p in points if p.get("origin") != "alignment" and (p.get("width", 1) > 1 or p.get("height", 1) > 1)]
    singles = [p for p in points if p not in faces]
    parts = [f"{p['origin']} ({p['x']},{p['y']}) {p['width']}x{p['height']} z={p['z']}" for p in faces]
    if singles:
        weight = sum(p["z"] for p in singles) or 1
        centre = (sum(p["x"] * p["z"] for p in singles) / weight, sum(p["y"] * p["z"] for p in singles) / weight)
        origins = sorted({p["origin"] for p in singles})
        parts.append(f"{len(singles)} point(s) {'/'.join(origins)}, centre ({centre[0]:.0f},{centre[1]:.0f})")
    return "; ".join(parts)


def ask_meta(port, path):
    status, _, body = diff.fetch(port, path)
    if status != 200:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


def compare(name, source, box, thumbor_port, thumbd_port, origin, limit):
    width, height = box
    url = f"{origin}/{name}"
    path = f"/unsafe/{width}x{height}/smart/{url}"
    row = {"picture": name, "box": f"{width}x{height}", "path": path.replace(origin, "{origin}")}
    centres = {}
    for server, port in (("thumbor", thumbor_port), ("thumbd", thumbd_port)):
        status, _, body = diff.fetch(port, path)
        row[f"{server}_status"] = status
        if status != 200:
            row[f"{server}_error"] = body[:160].decode("utf-8", "replace")
            continue
        found = locate(source, body, width, height)
        if found is None:
            row[f"{server}_error"] = "answer is not W x H"
            continue
        left, top, score, scaled, axis = found
        row[f"{server}_offset"], row[f"{server}_score"] = [left, top], round(score, 3)
        row["scaled"], row["axis"] = list(scaled), axis
        centres[server] = (left + width / 2, top + height / 2)
        row[f"{server}_centre"] = [round(v, 1) for v in centres[server]]
    meta = ask_meta(thumbor_port, f"/unsafe/meta/{width}x{height}/smart/{url}")
    row["thumbor_meta_focal_points"] = meta.get("thumbor", {}).get("focal_points") if meta else None
    row["thumbor_meta_operations"] = meta.get("thumbor", {}).get("operations") if meta else None
    row["focal"] = focal_summary(meta)
    # thumbd's meta/ answers the same JSON; its focal points, once it lists them, are printed beside thumbor's.
    thumbd_meta = ask_meta(thumbd_port, f"/unsafe/meta/{width}x{height}/smart/{url}")
    row["thumbd_meta_focal_points"] = thumbd_meta.get("thumbor", {}).get("focal_points") if thumbd_meta else None
    row["thumbd_focal"] = focal_summary(thumbd_meta)
    if len(centres) < 2:
        row["result"], row["why"] = "FAIL", "an answer is missing or not the box's size"
    elif min(row["thumbor_score"], row["thumbd_score"]) < MATCH_FLOOR:
        row["result"], row["why"] = "FAIL", f"an answer is not found in the source (score < {MATCH_FLOOR})"
    else:
        index, side = (0, width) if row["axis"] == "x" else (1, height)
        distance = abs(centres["thumbor"][index] - centres["thumbd"][index]) / side if row["axis"] else 0.0
        row["distance"] = round(distance, 3)
        row["result"] = "PASS" if distance <= limit else "FAIL"
    return row


def print_row(row):
    def centre(server):
        value = row.get(f"{server}_centre")
        return f"({value[0]:.0f},{value[1]:.0f})" if value else str(row.get(f"{server}_status"))

    distance = f"{100 * row['distance']:.1f} %" if "distance" in row else row.get("why", "")
    axis = row.get("axis") or "-"
    print(f"{row['result']}  {row['picture']:<16} {row['box']:>8}  cut {axis}  thumbor {centre('thumbor'):<11} "
          f"thumbd {centre('thumbd'):<11} {distance:<8}  focal points: thumbor {row['focal']} | thumbd "
          f"{row['thumbd_focal']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--thumbd", required=True, help="the thumbd executable")
    parser.add_argument("--pictures", nargs="*", help="pictures or directories of them (default: the ones "
                        f"`make smart-crops` unpacks into {os.path.relpath(DEFAULT_DIR, ROOT)})")
    parser.add_argument("--boxes", default=BOXES, help=f"WxH,… (default {BOXES})")
    parser.add_argument("--limit", type=float, default=0.10,
                        help="largest distance of the crop centres, a fraction of the box's cut side (default 0.10)")
    parser.add_argument("--out", help="write every row (offsets, scores, thumbor's meta focal points) as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the state directory (both servers' logs)")
    parser.add_argument("--thumbd-setting", action="append", default=[], metavar="THUMBD_KEY=VALUE",
                        help="an environment setting for thumbd, e.g. THUMBD_IMAGE_FACE_SIDE=0 (repeatable)")
    args = parser.parse_args()
    paths = picture_list(args.pictures) if args.pictures else default_pictures()
    if not paths:
        raise SystemExit(f"no pictures: run `make smart-crops` (it unpacks them into {DEFAULT_DIR}) or give --pictures")
    boxes = [tuple(int(v) for v in box.split("x")) for box in args.boxes.split(",")]
    started = time.monotonic()
    state = tempfile.mkdtemp(prefix="smart-crops-")
    children, origin, rows = [], None, []
    try:
        pictures = os.path.join(state, "origin")
        os.makedirs(pictures)
        sources = {}
        for path in paths:
            name = os.path.basename(path)
            if name in sources:
                raise SystemExit(f"two pictures named {name}")
            shutil.copy(path, os.path.join(pictures, name))
            with Image.open(path) as picture:
                sources[name] = grey(picture)
        origin = diff.Origin(pictures)
        thumbor, thumbor_port = diff.start_thumbor(state, allow_unsafe=True)
        children.append(thumbor)
        thumbd, thumbd_port = diff.start_thumbd(
            os.path.abspath(args.thumbd), state, allow_unsafe=True,
            settings=dict(setting.split("=", 1) for setting in args.thumbd_setting))
        children.append(thumbd)
        host = f"127.0.0.1:{origin.port}"
        for name, source in sources.items():
            for box in boxes:
                row = compare(name, source, box, thumbor_port, thumbd_port, host, args.limit)
                print_row(row)
                rows.append(row)
    finally:
        diff.tear_down(children, origin, state, args.keep)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as file:
            json.dump({"limit": args.limit, "rows": rows}, file, indent=1)
    passed = sum(row["result"] == "PASS" for row in rows)
    failed = len(rows) - passed
    print(f"({len(sources)} pictures x {len(boxes)} boxes in {time.monotonic() - started:.0f} s; a crop passes when "
          f"its centre is within {100 * args.limit:g} % of the box's cut side of thumbor's)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
