#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The parts of bench/purge-storm.sh that are easier in Python (standard library only).

  purge_storm.py origin PORT FILE           serves FILE's bytes (image/png) at every path, threaded, until killed
  purge_storm.py hook PORT COUNTS           answers every POST 204 and counts them (and their tags) into COUNTS
  purge_storm.py warm PORT URLS THREADS     GETs every target of URLS (one per line) on THREADS keep-alive clients;
                                            prints how many answered 200, exits 1 if not all
  purge_storm.py storm PORT TOKEN SOURCES COUNT SECONDS
                                            sends COUNT `POST /purge {"sources": [<url>]}` spread evenly over
                                            SECONDS (open loop: each at its own time, whatever the answers take),
                                            cycling through SOURCES (one source URL per line); prints the purges
                                            answered 200, the others, and the latency percentiles of the purges
"""
import http.client
import http.server
import json
import sys
import threading
import time


def origin(port, path):
    body = open(path, "rb").read()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("ETag", '"v1"')
            self.send_header("Cache-Control", "max-age=86400")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def hook(port, counts_path):
    lock = threading.Lock()
    state = {"posts": 0, "tags": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                state["posts"] += 1
                state["tags"] += len(body.get("tags", []))
                with open(counts_path, "w") as f:
                    json.dump(state, f)
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def warm(port, urls_path, threads):
    targets = [line.strip() for line in open(urls_path) if line.strip()]
    ok = [0] * threads

    def work(index):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for target in targets[index::threads]:
            connection.request("GET", target)
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                ok[index] += 1

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(f"warmed {sum(ok)} of {len(targets)}")
    sys.exit(0 if sum(ok) == len(targets) else 1)


def storm(port, token, sources_path, count, seconds):
    sources = [line.strip() for line in open(sources_path) if line.strip()]
    start = time.monotonic()
    interval = seconds / count
    latencies = []
    statuses = {}
    # Two clients, each taking every other purge, so a slow answer does not hold the next one back (open loop).
    lock = threading.Lock()

    def work(parity):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        for index in range(parity, count, 2):
            due = start + index * interval
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            body = json.dumps({"sources": [sources[index % len(sources)]]})
            sent = time.monotonic()
            connection.request("POST", "/purge", body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            with lock:
                latencies.append(time.monotonic() - sent)
                statuses[response.status] = statuses.get(response.status, 0) + 1

    workers = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.monotonic() - start
    latencies.sort()

    def percentile(p):
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000

    print(
        f"purges {count} in {elapsed:.1f} s ({count / elapsed * 60:.0f}/min), statuses {statuses}, "
        f"purge latency p50 {percentile(0.5):.2f} ms p99 {percentile(0.99):.2f} ms, "
        f"the purge client's own CPU {time.process_time():.1f} s"
    )


if __name__ == "__main__":
    command, arguments = sys.argv[1], sys.argv[2:]
    if command == "origin":
        origin(int(arguments[0]), arguments[1])
    elif command == "hook":
        hook(int(arguments[0]), arguments[1])
    elif command == "warm":
        warm(int(arguments[0]), arguments[1], int(arguments[2]))
    elif command == "storm":
        storm(int(arguments[0]), arguments[1], arguments[2], int(arguments[3]), float(arguments[4]))
    else:
        sys.exit(f"unknown command {command}")
