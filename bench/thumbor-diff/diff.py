# SPDX-License-Identifier: Apache-2.0
"""Differential test: the same signed thumbor URLs asked of thumbor 7.8 and of thumbd's thumbor form.

usage: diff.py --thumbd PATH [--count N] [--seed S] [--out DIR] [--floors FILE] [--workers N]
Run with .venv-thumbor/bin/python (thumbor, libthumbor and Pillow come from there). README.md in this directory
says what it starts, what it compares and how to read the results.
"""
import argparse
import collections
import datetime
import functools
import hashlib
import http.server
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from libthumbor.url_signers.base64_hmac_sha1 import UrlSigner
from PIL import Image, ImageChops, ImageStat

import grammar

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "Sources", "ThumbdTestSupport", "Resources")
SECURITY_KEY = "thumbor-diff-key"
# Both are asked with the same Accept: JPEG, PNG and GIF, no WebP or AVIF. thumbor (no AUTO_WEBP, its default)
# ignores Accept and keeps the source's format; thumbd negotiates from Accept and, without WebP or AVIF in it,
# answers JPEG, or PNG when the picture has transparency, GIF for an animation: the nearest it comes to "keep the
# source's format", and formats both can be compared in. A browser's Accept would turn thumbd's answers into WebP
# or AVIF and every format row into a difference that says nothing about geometry or filters.
ACCEPT = "image/jpeg,image/png,image/gif"
REQUEST_TIMEOUT = 30
START_TIMEOUT = 60
GREY_LIMIT = 8.0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_pictures(directory):
    """Copies the fixtures the cases use into the origin's directory and cuts the two extra aspect ratios."""
    for name in grammar.IMAGES:
        source = os.path.join(FIXTURES, name)
        if os.path.exists(source):
            shutil.copy(source, directory)
    with Image.open(os.path.join(FIXTURES, "progressive.jpg")) as picture:
        picture.convert("RGB").resize((480, 360), Image.Resampling.BICUBIC).crop((0, 100, 480, 260)).save(
            os.path.join(directory, "wide.jpg"), quality=90)
    with Image.open(os.path.join(FIXTURES, "grid.png")) as picture:
        picture.convert("RGB").resize((450, 400), Image.Resampling.NEAREST).crop((150, 0, 300, 400)).save(
            os.path.join(directory, "tall.png"))
    for name, (width, height, _) in grammar.IMAGES.items():
        with Image.open(os.path.join(directory, name)) as picture:
            stored = picture.size
        if stored not in ((width, height), (height, width)):
            raise SystemExit(f"{name}: {stored}, expected {width}x{height}")


class Origin:
    """A loopback HTTP server serving the pictures' directory, in a thread of this process."""

    def __init__(self, directory):
        handler = functools.partial(_QuietHandler, directory=directory)
        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client that went away mid-answer (thumbor crashing while it fetches) is not the origin's error


class Child:
    """A server started as a child process in its own process group, stopped by its pid."""

    def __init__(self, name, argv, log_path, environment=None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=environment,
                                        start_new_session=True)

    def log_text(self):
        with open(self.log_path, "rb") as log:
            return log.read().decode("utf-8", "replace")

    def wait_for(self, predicate, what):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"{self.name} exited ({self.process.returncode}) before {what}:\n{self.log_text()}")
            value = predicate()
            if value:
                return value
            time.sleep(0.1)
        raise SystemExit(f"{self.name}: no {what} in {START_TIMEOUT} s:\n{self.log_text()[-4000:]}")

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self.log.close()


def start_thumbor(state, generation=0, allow_unsafe=False):
    """thumbor on a free port with the face and feature detectors of its documentation's smart-cropping setup
    (the face cascade is thumbor's default, haarcascade_frontalface_alt.xml). no_storage keeps no detector data
    between requests (each `smart/` URL detects again); the file storage's root is inside `state` all the same."""
    port = free_port()
    conf = os.path.join(state, "thumbor.conf")
    with open(conf, "w", encoding="utf-8") as file:
        file.write(f"""# written by bench/thumbor-diff/diff.py
SECURITY_KEY = {SECURITY_KEY!r}
ALLOW_UNSAFE_URL = {allow_unsafe!r}
LOADER = "thumbor.loaders.http_loader"
STORAGE = "thumbor.storages.no_storage"
RESULT_STORAGE = None
FILE_STORAGE_ROOT_PATH = {os.path.join(state, 'storage')!r}
DETECTORS = ["thumbor.detectors.face_detector", "thumbor.detectors.feature_detector"]
RESPECT_ORIENTATION = True
HTTP_LOADER_CONNECT_TIMEOUT = 5
HTTP_LOADER_REQUEST_TIMEOUT = 20
""")
    executable = os.path.join(os.path.dirname(sys.executable), "thumbor")
    child = Child("thumbor", [executable, "-c", conf, "-i", "127.0.0.1", "-p", str(port), "-l", "warning"],
                  os.path.join(state, f"thumbor-{generation}.log"))

    def healthy():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthcheck", timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    child.wait_for(healthy, "healthcheck")
    return child, port


class Thumbor:
    """thumbor, started again when a URL kills it (some do: its C filters and trim can crash the process).

    The URL whose answer never came while the process died is recorded with status -1 (`thumbor crashed`); the
    other requests in flight at that moment are asked again of the new process."""

    def __init__(self, state):
        self.state = state
        self.lock = threading.Lock()
        self.generation = 0
        self.children = []
        self._start()

    def _start(self):
        child, self.port = start_thumbor(self.state, self.generation)
        self.children.append(child)
        self.child = child

    def ask(self, path):
        for _ in range(3):
            with self.lock:
                port, child = self.port, self.child
            answer = fetch(port, path)
            if answer[0] != 0:
                return answer
            time.sleep(0.2)
            with self.lock:
                if child is self.child and child.process.poll() is not None:
                    crashed = child.process.returncode
                    self.generation += 1
                    self._start()
                    return -1, {}, f"thumbor crashed (exit {crashed})".encode()
        return answer

    def stop(self):
        for child in self.children:
            child.stop()


def tear_down(children, origin, state, keep):
    """Stops the servers (last started first) and the origin, and removes the state directory unless kept."""
    for child in reversed(children):
        child.stop()
    if origin:
        origin.stop()
    if keep:
        print(f"kept: {state}")
    else:
        shutil.rmtree(state, ignore_errors=True)


def start_thumbd(binary, state, imgproxy=False, allow_unsafe=False, settings=None, exact_crop=False):
    """thumbd with thumbor's form at / (or, with imgproxy, imgproxy's at /imgproxy/, unsigned) on a free port;
    allow_unsafe also takes thumbor's /unsafe/ URLs; settings: THUMBD_* variables to set (none is inherited);
    exact_crop: thumbor.exact_crop (the crop mode crops whole pixels as thumbor does)."""
    conf = os.path.join(state, "thumbd.yaml")
    form = """imgproxy:
  enabled: true
  prefix: /imgproxy/
""" if imgproxy else f"""thumbor:
  enabled: true
  prefix: /
  security_keys: [{SECURITY_KEY}]
  allow_unsafe: {str(allow_unsafe).lower()}
  exact_crop: {str(exact_crop).lower()}
"""
    with open(conf, "w", encoding="utf-8") as file:
        file.write(f"""# written by bench/thumbor-diff/diff.py
server:
  listen: 127.0.0.1:0
  threads: 2
fetch:
  allowed_networks: [127.0.0.1/32]
image:
  render_threads: 2
log:
  level: info
  access: false
{form}""")
    cache = os.path.join(state, "thumbd-cache")
    os.makedirs(cache, exist_ok=True)
    environment = {key: value for key, value in os.environ.items() if not key.startswith("THUMBD_")}
    environment.update(settings or {})
    child = Child("thumbd", [binary, "--config", conf, "--cache-dir", cache, "--port", "0"],
                  os.path.join(state, "thumbd.log"), environment)

    def port():
        for line in child.log_text().splitlines():
            if "listening" in line and "address=" in line:
                value = line.split("address=", 1)[1].split(" ", 1)[0].strip('"')
                return int(value.rsplit(":", 1)[1])
        return None

    return child, child.wait_for(port, "listening line")


def fetch(port, path):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Accept": ACCEPT})
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()
    except OSError as error:
        return 0, {}, str(error).encode()


def decode(body):
    """(format, (width, height), greyscale picture flattened onto white) or None when Pillow cannot read it."""
    try:
        picture = Image.open(io.BytesIO(body))
        picture.seek(0)
        size = picture.size
        kind = (picture.format or "?").lower()
        rgba = picture.convert("RGBA")
        white = Image.new("RGBA", size, (255, 255, 255, 255))
        return kind, size, Image.alpha_composite(white, rgba).convert("L")
    except Exception:  # noqa: BLE001 - any undecodable body is recorded as such
        return None


def error_text(status, body):
    if status == 200:
        return ""
    try:
        return str(json.loads(body).get("error", ""))[:120]
    except ValueError:
        return body[:80].decode("utf-8", "replace").strip()


def compare(path, features, thumbor, thumbd_port, origin, dump=None):
    signer = UrlSigner(security_key=SECURITY_KEY)
    concrete = path.replace("{origin}", origin)
    signed = "/" + signer.signature(concrete).decode("ascii") + "/" + concrete
    t_status, t_headers, t_body = thumbor.ask(signed)
    d_status, d_headers, d_body = fetch(thumbd_port, signed)
    row = {"path": path, "features": features, "thumbor_status": t_status, "thumbd_status": d_status,
           "thumbd_error": error_text(d_status, d_body)}
    if t_status != 200:
        row["thumbor_error"] = t_body[:160].decode("utf-8", "replace").strip()
    if t_status == 200:
        t_image = decode(t_body)
        row["thumbor_format"], row["thumbor_size"] = (t_image[0], list(t_image[1])) if t_image else ("undecodable",
                                                                                                     None)
    if d_status == 200:
        d_image = decode(d_body)
        row["thumbd_format"], row["thumbd_size"] = (d_image[0], list(d_image[1])) if d_image else ("undecodable", None)
    if t_status == 200 and d_status == 200 and t_image and d_image:
        row["same_size"] = t_image[1] == d_image[1]
        if row["same_size"]:
            row["grey_distance"] = round(ImageStat.Stat(ImageChops.difference(t_image[2], d_image[2])).mean[0], 2)
        if dump and disagreement(row):
            name = hashlib.sha1(path.encode()).hexdigest()[:10]
            row["bodies"] = [f"{name}-thumbor.{t_image[0]}", f"{name}-thumbd.{d_image[0]}"]
            for file_name, body in zip(row["bodies"], (t_body, d_body)):
                with open(os.path.join(dump, file_name), "wb") as file:
                    file.write(body)
    return row


def figures(rows):
    served = [row for row in rows if row["thumbor_status"] == 200]
    refused = [row for row in rows if row["thumbor_status"] != 200]
    n = len(served) or 1
    return {
        "urls": len(rows),
        "thumbor_200": len(served),
        "thumbd_200_pct": round(100 * sum(row["thumbd_status"] == 200 for row in served) / n, 1),
        "same_size_pct": round(100 * sum(bool(row.get("same_size")) for row in served) / n, 1),
        "within_8_pct": round(100 * sum(row.get("grey_distance", 999) <= GREY_LIMIT for row in served) / n, 1),
        "same_format_pct": round(100 * sum(row.get("thumbd_format") == row.get("thumbor_format") and
                                           "thumbd_format" in row for row in served) / n, 1),
        "thumbor_refused": len(refused),
        "refused_also_by_thumbd": sum(row["thumbd_status"] != 200 for row in refused),
    }


def disagreement(row):
    """Why a URL thumbor answers 200 is counted against thumbd, or None."""
    if row["thumbor_status"] != 200:
        return None
    if row["thumbd_status"] != 200:
        return "status"
    if not row.get("same_size"):
        return "size"
    if row.get("grey_distance", 999) > GREY_LIMIT:
        return "pixels"
    return None


def breakdown(rows):
    """Per feature, over the URLs both answer 200 (so that a refusal caused by another part of the URL does not
    count here): how many, how many with another size, how many more than 8 grey levels apart, the distances."""
    table = collections.defaultdict(lambda: {"urls": 0, "size": 0, "pixels": 0, "distances": []})
    for row in rows:
        if row["thumbor_status"] != 200 or row["thumbd_status"] != 200:
            continue
        why = disagreement(row)
        for feature in set(row["features"]):
            entry = table[feature]
            entry["urls"] += 1
            if why:
                entry[why] += 1
            if "grey_distance" in row:
                entry["distances"].append(row["grey_distance"])
    return table


def refusal_cause(error):
    """thumbd's error with the argument detail dropped: `invalid quality: …` → `invalid quality(…) argument`."""
    if error.startswith("invalid ") and ":" in error:
        return f"{error.split(':', 1)[0]}(…) argument (thumbor skips the filter or takes the value)"
    return error or "(no JSON error)"


def single_causes(rows):
    """Disagreements whose URL has one feature that is not an image, a size or an alignment: that feature."""
    causes = collections.Counter()
    plain = ("image:", "size:", "halign:", "valign:", "filters:chain")
    for row in rows:
        why = disagreement(row)
        if not why:
            continue
        suspects = [f for f in row["features"] if not f.startswith(plain) and not f.startswith("filter:") or
                    f.count(":") == 2 and f.startswith("filter:")]
        key = suspects[0] if len(suspects) == 1 else ("geometry only" if not suspects else "several: " +
                                                      " + ".join(sorted(suspects)))
        causes[(why, key)] += 1
    return causes


def write_report(rows, out, command, count, seed, elapsed):
    numbers = figures(rows)
    lines = [f"# thumbor 7.8 against thumbd: {numbers['urls']} URLs (seed {seed})", "",
             f"Made by `{command}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC in "
             f"{elapsed:.0f} s (bench/thumbor-diff/README.md says how to read it). Accept: `{ACCEPT}`.", "",
             "## Figures (issue 27's \"Done when\")", "",
             "| of the URLs thumbor answers 200 | share | goal |", "|---|---:|---:|",
             f"| thumbor answers 200 | {numbers['thumbor_200']} of {numbers['urls']} | |",
             f"| thumbd answers 200 | {numbers['thumbd_200_pct']} % | ≥ 99 % |",
             f"| same dimensions | {numbers['same_size_pct']} % | ≥ 98 % |",
             f"| ≤ {GREY_LIMIT:g} mean grey levels apart | {numbers['within_8_pct']} % | ≥ 95 % |",
             f"| same format (not a goal: see README) | {numbers['same_format_pct']} % | |", ""]
    refused = [row for row in rows if row["thumbor_status"] != 200]
    lines += [f"## URLs thumbor refuses: {len(refused)}", ""]
    if refused:
        lines += ["| thumbor | thumbd | thumbd's error | URLs | example |", "|---|---|---|---:|---|"]
        groups = collections.defaultdict(list)
        for row in refused:
            groups[(row["thumbor_status"], row["thumbd_status"], row["thumbd_error"])].append(row)
        for (t_status, d_status, error), group in sorted(groups.items(), key=lambda item: -len(item[1])):
            lines.append(f"| {t_status} | {d_status} | {error or '-'} | {len(group)} | `{group[0]['path']}` |")
        lines.append("")
    served = [row for row in rows if row["thumbor_status"] == 200]
    errors = collections.Counter(row["thumbd_error"] for row in served if row["thumbd_status"] != 200)
    statuses = collections.Counter(row["thumbd_status"] for row in served if row["thumbd_status"] != 200)
    lines += ["## Where thumbd refuses what thumbor renders", "",
              "thumbd's status: " + ", ".join(f"{status}: {n}" for status, n in statuses.most_common()) + "", "",
              "| thumbd's error | URLs |", "|---|---:|"]
    lines += [f"| {error or '(no JSON error)'} | {n} |" for error, n in errors.most_common()]
    grouped = collections.Counter(refusal_cause(row["thumbd_error"]) for row in served if row["thumbd_status"] != 200)
    lines += ["", "The same, an argument thumbd refuses (`invalid <filter>: …`) counted under its filter:", "",
              "| cause | URLs |", "|---|---:|"]
    lines += [f"| {cause} | {n} |" for cause, n in grouped.most_common()]
    lines += ["", "## Disagreements by single cause", "",
              "A URL counted here has exactly one feature besides its picture, sizes and alignment (a filter with its "
              "argument form, a fit, a crop kind, a flip, `trim`, `smart`); \"geometry only\" has none; \"several\" "
              "names them all. `status` = thumbd not 200, `size` = other dimensions, `pixels` = more than "
              f"{GREY_LIMIT:g} grey levels apart.", "", "| cause | kind | URLs |", "|---|---|---:|"]
    lines += [f"| {key} | {why} | {n} |" for (why, key), n in single_causes(rows).most_common()]
    lines += ["", "## Sizes and pixels by feature", "",
              "Over the URLs both answer 200 that carry the feature (a URL counts for each of its features; the "
              "refusals are counted above, by thumbd's error, which names the option). Sorted by the disagreements.",
              "", "| feature | both 200 | other size | > 8 grey | mean grey (same size) |", "|---|---:|---:|---:|---:|"]
    table = breakdown(rows)
    for feature, entry in sorted(table.items(), key=lambda item: (-(item[1]["size"] + item[1]["pixels"]),
                                                                  -item[1]["urls"], item[0])):
        distances = entry["distances"]
        mean = f"{sum(distances) / len(distances):.1f}" if distances else "-"
        lines.append(f"| `{feature}` | {entry['urls']} | {entry['size']} | {entry['pixels']} | {mean} |")
    mismatched = [row for row in served if disagreement(row) in ("size", "pixels")]
    if mismatched:
        lines += ["", f"## Size and pixel disagreements ({len(mismatched)})", "", "| URL | thumbor | thumbd | grey |",
                  "|---|---|---|---:|"]
        for row in mismatched:
            lines.append(f"| `{row['path']}` | {row.get('thumbor_size')} {row.get('thumbor_format')} | "
                         f"{row.get('thumbd_size')} {row.get('thumbd_format')} | {row.get('grey_distance', '-')} |")
    with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as file:
        file.write("\n".join(lines) + "\n")
    failing = [dict(row, why=disagreement(row) or "thumbor refused") for row in rows
               if disagreement(row) or (row["thumbor_status"] != 200)]
    with open(os.path.join(out, "failing.json"), "w", encoding="utf-8") as file:
        json.dump({"seed": seed, "count": count, "accept": ACCEPT, "origin": "{origin} = 127.0.0.1:<port>",
                   "figures": numbers, "urls": failing}, file, indent=1)
    with open(os.path.join(out, "figures.json"), "w", encoding="utf-8") as file:
        json.dump(numbers, file, indent=1)
    return numbers


def read_floors(path):
    floors = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.split("#", 1)[0].strip()
            if line:
                name, value = line.split()
                floors[name] = float(value)
    return floors


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--thumbd", required=True, help="the thumbd executable")
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "thumbor-diff"))
    parser.add_argument("--floors", help="fail (exit 1) when a figure is below its floor in this file")
    parser.add_argument("--workers", type=int, default=1,
                        help="URLs asked at once (1: a URL that crashes thumbor is known exactly)")
    parser.add_argument("--keep", action="store_true", help="keep the state directory (both servers' logs)")
    parser.add_argument("--exact-crop", action="store_true",
                        help="run thumbd with thumbor.exact_crop: true (thumbor's whole-pixel crops, docs/configuration.md)")
    parser.add_argument("--dump", action="store_true",
                        help="write both answers of each size or pixel disagreement into <out>/bodies/")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    started = time.monotonic()
    state = tempfile.mkdtemp(prefix="thumbor-diff-")
    children, origin = [], None
    try:
        pictures = os.path.join(state, "origin")
        os.makedirs(pictures)
        make_pictures(pictures)
        origin = Origin(pictures)
        thumbor = Thumbor(state)
        children.append(thumbor)
        thumbd, thumbd_port = start_thumbd(os.path.abspath(args.thumbd), state, exact_crop=args.exact_crop)
        children.append(thumbd)
        host = f"127.0.0.1:{origin.port}"
        cases = grammar.cases(args.count, args.seed)
        dump = os.path.join(args.out, "bodies") if args.dump else None
        if dump:
            os.makedirs(dump, exist_ok=True)
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            rows = list(pool.map(lambda case: compare(case[0], case[1], thumbor, thumbd_port, host, dump), cases))
    finally:
        tear_down(children, origin, state, args.keep)
    command = " ".join(["bench/thumbor-diff/diff.py"] + [a for a in sys.argv[1:]])
    numbers = write_report(rows, args.out, command, args.count, args.seed, time.monotonic() - started)
    print(json.dumps(numbers))
    print(f"report: {os.path.join(args.out, 'results.md')}, failing URLs: {os.path.join(args.out, 'failing.json')}")
    if args.floors:
        floors = read_floors(args.floors)
        low = {name: (numbers[name], floor) for name, floor in floors.items() if numbers[name] < floor}
        if low:
            for name, (value, floor) in low.items():
                print(f"below the floor: {name} = {value} < {floor} ({args.floors})", file=sys.stderr)
            return 1
        print(f"every figure at or above its floor in {args.floors}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
