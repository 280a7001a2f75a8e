#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shared tier's latencies (issue 18), every figure from one run on one machine:

- a shared-tier hit (X-Cache: HIT-SHARED: one signed GET to the store, checksum, promotion) against a disk hit
  (HIT-DISK, memory empty after a restart) and a render (MISS: origin fetch and render), p50 and p99;
- a miss's client latency with the PUT queue on (cache.shared.put_queue 256) against the same tier read-only
  (put_queue 0), and against a node without the tier: the PUT happens after the answer, so it should not show.

Processes, all on loopback: the peers' origin (nginx serving the photo corpus on :18001, started if not running),
moto's S3 server from the test virtual environment (`make test-venv`) on :18500 with its signature checks on, and
four release thumbd nodes on :18061-18064, each with its own fresh cache directory:
  tier        cache.shared on, prefix a/, writes on      (misses)
  readonly    cache.shared on, prefix p/, put_queue 0    (misses: the tier without writes)
  plain       no shared tier                             (misses; then restarted: disk hits)
  reader      cache.shared on, prefix a/ (tier's objects) (shared hits, then memory hits)
Each key (a corpus photo at one width) is asked once per phase, one request at a time on a keep-alive connection;
in the miss phase the three nodes take turns first. Latency is measured by this client (time.perf_counter around
send and full read), so it includes ~0.1 ms of Python.

moto is a Python server: its GET is slower than MinIO's or S3's on a LAN would be, so the shared-hit figure is an
upper bound for a store on the same machine.

Usage: bench/shared-tier.py [--sources 100] [--widths 200,240] (env THUMBD_BIN=path, PEERS=~/peers)
Results (summary.md, latencies.json, logs) go to bench/results/<UTC time>-shared-tier/.
"""
import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".venv-test", "bin")


def wait_port(port, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


class Node:
    """One thumbd process, stopped by its pid."""

    def __init__(self, name, binary, port, directory, settings, environment):
        self.name, self.binary, self.port, self.directory = name, binary, port, directory
        self.settings, self.environment = settings, environment
        os.makedirs(directory, exist_ok=True)
        self.process = None
        self.connection = None

    def start(self):
        config = os.path.join(self.directory, "thumbd.yaml")
        with open(config, "w") as file:
            file.write(self.settings)
        log = open(os.path.join(self.directory, "stderr.log"), "a")
        self.process = subprocess.Popen(
            [self.binary, "--config", config, "--cache-dir", os.path.join(self.directory, "cache"),
             "--listen", f"127.0.0.1:{self.port}"],
            stdout=subprocess.DEVNULL, stderr=log, env=self.environment)
        wait_port(self.port)
        self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def stop(self):
        if self.connection:
            self.connection.close()
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def get(self, target):
        start = time.perf_counter()
        self.connection.request("GET", target)
        response = self.connection.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - start
        return response.status, response.getheader("X-Cache"), len(body), elapsed

    def metric(self, name, labels):
        self.connection.request("GET", "/metrics")
        text = self.connection.getresponse().read().decode()
        prefix = f"{name}{{{labels}}} "
        for line in text.splitlines():
            if line.startswith(prefix):
                return float(line[len(prefix):])
        return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sources", type=int, default=100, help="corpus photos asked (default 100)")
    parser.add_argument("--widths", default="200,240", help="widths asked of each photo (default 200,240)")
    args = parser.parse_args()
    widths = [int(w) for w in args.widths.split(",")]
    peers = os.path.expanduser(os.environ.get("PEERS", "~/peers"))
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    results = os.path.join(ROOT, "bench", "results", f"{stamp}-shared-tier")
    os.makedirs(results)
    binary = os.environ.get("THUMBD_BIN") or os.path.join(ROOT, ".build", "release", "thumbd")
    if not os.environ.get("THUMBD_BIN"):
        print("== release build")
        subprocess.run(["swift", "build", "-c", "release", "--product", "thumbd"], cwd=ROOT, check=True,
                       stdout=open(os.path.join(results, "build.log"), "w"), stderr=subprocess.STDOUT)
    if not os.access(os.path.join(VENV, "moto_server"), os.X_OK):
        raise SystemExit("no .venv-test/bin/moto_server: run `make test-venv` first")
    photos = sorted(name for name in os.listdir(os.path.join(peers, "corpus"))
                    if name.endswith((".jpg", ".png", ".webp")))[: args.sources]

    for port in [18500, 18061, 18062, 18063, 18064]:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            raise SystemExit(f"127.0.0.1:{port} is taken: stop what listens there first")
        except OSError:
            pass
    started = []
    all_nodes = []
    try:
        # The origin: the peers' nginx (started here unless one answers already).
        try:
            socket.create_connection(("127.0.0.1", 18001), timeout=0.5).close()
        except OSError:
            os.makedirs(os.path.join(peers, "run", "origin", "tmp"), exist_ok=True)
            origin = subprocess.Popen(["nginx", "-p", peers + "/", "-c", os.path.join(peers, "conf", "origin.conf")],
                                      stderr=open(os.path.join(results, "origin.log"), "w"))
            started.append(origin)
            wait_port(18001)
        # The store: moto with signature checks on after its set-up requests (user, policy, key, bucket).
        moto = subprocess.Popen([os.path.join(VENV, "moto_server"), "-H", "127.0.0.1", "-p", "18500"],
                                env=dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="4"),
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(results, "moto.log"), "w"))
        started.append(moto)
        wait_port(18500)
        pair = json.loads(subprocess.check_output(
            [os.path.join(VENV, "python"), os.path.join(ROOT, "Tests", "Builders", "s3_setup.py"),
             "http://127.0.0.1:18500", "bench"]))
        credentials = os.path.join(results, "credentials")
        with open(credentials, "w") as file:
            file.write(f"[default]\naws_access_key_id = {pair['id']}\naws_secret_access_key = {pair['secret']}\n")

        environment = {k: v for k, v in os.environ.items() if not k.startswith("THUMBD_")}
        base = ("server:\n  threads: 2\nfetch:\n  allowed_networks: [127.0.0.1/32]\nlog:\n  access: false\n"
                "  level: warning\n")

        def tier(prefix, put_queue=256):
            return (base + f"s3:\n  endpoint: http://127.0.0.1:18500\n  credentials_file: {credentials}\n"
                    f"cache:\n  shared:\n    enabled: true\n    bucket: bench\n    prefix: {prefix}\n"
                    f"    put_queue: {put_queue}\n")

        nodes = {
            "tier": Node("tier", binary, 18061, os.path.join(results, "tier"), tier("a/"), environment),
            "readonly": Node("readonly", binary, 18062, os.path.join(results, "readonly"), tier("p/", 0),
                             environment),
            "plain": Node("plain", binary, 18063, os.path.join(results, "plain"), base, environment),
        }
        for node in nodes.values():
            all_nodes.append(node)
            node.start()
        targets = [
            "/thumb?url=" + urllib.parse.quote(f"http://127.0.0.1:18001/{photo}", safe="") + f"&w={width}&format=jpeg"
            for width in widths for photo in photos]
        latencies = {name: [] for name in ["miss-tier", "miss-readonly", "miss-plain", "hit-shared", "hit-disk",
                                           "hit-memory"]}
        unexpected = []

        def record(kind, node, target, expected):
            status, cache, _, elapsed = node.get(target)
            if status != 200 or cache != expected:
                unexpected.append(f"{node.name} {status} {cache} (expected {expected}) {target}")
            latencies[kind].append(elapsed)

        # Misses: the three nodes take turns first.
        order = ["tier", "readonly", "plain"]
        print(f"== misses: {len(targets)} keys on 3 nodes")
        for index, target in enumerate(targets):
            for name in order[index % 3:] + order[: index % 3]:
                record(f"miss-{name}", nodes[name], target, "MISS")
        # The tier's writes settle (a write is queued just after its answer leaves: give the last one a moment).
        time.sleep(1)
        deadline = time.time() + 120
        while time.time() < deadline and nodes["tier"].metric("thumbd_shared_puts_in_flight", "") > 0:
            time.sleep(0.2)
        puts = {result: nodes["tier"].metric("thumbd_shared_puts_total", f'result="{result}"')
                for result in ["stored", "exists", "error", "dropped", "skipped"]}
        # Shared hits: a node on the tier's prefix with an empty disk; then memory hits.
        reader = Node("reader", binary, 18064, os.path.join(results, "reader"), tier("a/"), environment)
        all_nodes.append(reader)
        reader.start()
        print("== shared hits")
        for target in targets:
            record("hit-shared", reader, target, "HIT-SHARED")
        for target in targets:
            record("hit-memory", reader, target, "HIT-MEMORY")
        # Disk hits: the plain node restarted (memory empty, disk warm).
        nodes["plain"].stop()
        nodes["plain"].start()
        print("== disk hits")
        for target in targets:
            record("hit-disk", nodes["plain"], target, "HIT-DISK")

        def row(kind):
            values = latencies[kind]
            return (f"| {kind} | {len(values)} | {percentile(values, 0.5) * 1000:.2f} | "
                    f"{percentile(values, 0.99) * 1000:.2f} | {statistics.mean(values) * 1000:.2f} |")

        p50 = {kind: percentile(values, 0.5) for kind, values in latencies.items()}
        p99 = {kind: percentile(values, 0.99) for kind, values in latencies.items()}
        lines = [
            f"# Shared tier latencies ({stamp}, {len(photos)} photos x widths {args.widths}, "
            f"binary {binary})", "",
            "| kind | requests | p50 ms | p99 ms | mean ms |", "|---|---|---|---|---|",
        ] + [row(kind) for kind in latencies] + [
            "",
            f"- shared hit / disk hit: p50 {p50['hit-shared'] / p50['hit-disk']:.1f}x, "
            f"p99 {p99['hit-shared'] / p99['hit-disk']:.1f}x",
            f"- shared hit / render (plain miss): p50 {p50['hit-shared'] / p50['miss-plain']:.2f}x, "
            f"p99 {p99['hit-shared'] / p99['miss-plain']:.2f}x",
            f"- miss with the PUT queue on / read-only tier: p50 {p50['miss-tier'] / p50['miss-readonly']:.3f}x, "
            f"mean {statistics.mean(latencies['miss-tier']) / statistics.mean(latencies['miss-readonly']):.3f}x "
            f"(goal <= 1.05x)",
            f"- miss with the tier (lookups + PUTs) / no tier: p50 {p50['miss-tier'] / p50['miss-plain']:.3f}x",
            "- the tier node's writes: " + ", ".join(f"{result} {count:.0f}" for result, count in puts.items())
            + f"; unexpected answers: {len(unexpected)}",
        ]
        summary = "\n".join(lines) + "\n"
        with open(os.path.join(results, "summary.md"), "w") as file:
            file.write(summary)
        with open(os.path.join(results, "latencies.json"), "w") as file:
            json.dump({"latencies": latencies, "unexpected": unexpected}, file)
        print(summary)
        for line in unexpected[:10]:
            print("unexpected:", line)
    finally:
        for node in all_nodes:
            node.stop()
        for process in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()


if __name__ == "__main__":
    main()
