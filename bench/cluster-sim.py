#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Simulate thumbd on N nodes: how many origin fetches and renders each routing costs.

A model, not a measurement: requests are drawn from a Zipf distribution over a catalogue of sources, each asked
in a few sizes, and sent to N nodes by one of three routings; each node keeps an LRU of thumbnails and an LRU of
source originals, and an optional shared tier (S3) sits behind all of them. It counts what thumbd would pay:
origin fetches and renders. docs/scaling.md explains the choices and shows a run.

    bench/cluster-sim.py                    # the table: N in 10, 100, 1000; three routings; shared tier off/on
    bench/cluster-sim.py --json             # the same figures as JSON
    bench/cluster-sim.py --nodes 10,100 --requests 200000 --zipf 0.8

Python 3 standard library only. Deterministic: the same arguments (and --seed) give the same output.
"""

import argparse
import bisect
import itertools
import json
import random
import sys
import time
from collections import Counter, OrderedDict

MASK64 = (1 << 64) - 1


def mix64(x):
    """splitmix64's finaliser: a fast, well-mixed 64-bit hash of an integer.

    Stands for the load balancer's hash of a key (HAProxy hashes the `url` parameter, nginx's ketama uses CRC32
    and MD5); all the model needs is that keys and ring points land uniformly and independently."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


# Salts so that a source's hash and its variants' hashes are independent of each other and of the ring points.
SALT_SOURCE = 0x5EED_0001 << 32
SALT_VARIANT = 0x5EED_0002 << 40


class Ring:
    """A consistent-hash ring: `points` points per node, a key goes to the node of the first point at or after
    its hash (wrapping around).

    HAProxy 2.6 with `hash-type consistent` and `weight 100` puts weight x 16 = 1,600 points per server, placed by
    the server's `id`; nginx's `hash ... consistent` (ketama) puts 160 x weight = 1,600 with `weight=10`
    (deploy/cluster/). Points here are drawn from a generator seeded with the node's number, so a node's points do
    not depend on the others: removing a node removes exactly its points and moves only its keys, as on both load
    balancers (adding a 4th node to 3 moves 25.4 % of 100,000 keys here; ClusterTests measured 25.2-25.8 %)."""

    def __init__(self, nodes, points):
        # Points of a node: `points` 48-bit numbers from a generator seeded with the node's number (its `id`).
        # One sorted list of integers, point * 2**16 + node: sorting plain integers is several times faster
        # than sorting pairs, and the node comes back as the low 16 bits.
        values = []
        for node in nodes:
            assert node < 1 << 16
            rng = random.Random(0x9E3779B9 + node)
            values.extend((rng.getrandbits(48) << 16) | node for _ in range(points))
        values.sort()
        self.values = values

    def without(self, node):
        """The same ring with one node's points taken out: what the load balancer has once that node is down."""
        ring = Ring([], 0)
        ring.values = [v for v in self.values if v & 0xFFFF != node]
        return ring

    def owner(self, key_hash):
        """The node of a key: the first point at or after the key's 48-bit hash, wrapping around."""
        values = self.values
        i = bisect.bisect_left(values, key_hash << 16)
        return values[i if i < len(values) else 0] & 0xFFFF


class Counters:
    """What one run costs. `requests` includes every request; the rest count events."""

    FIELDS = ("requests", "node_hits", "shared_gets", "shared_hits", "renders", "fetches")

    def __init__(self):
        for f in self.FIELDS:
            setattr(self, f, 0)

    def copy(self):
        c = Counters()
        for f in self.FIELDS:
            setattr(c, f, getattr(self, f))
        return c

    def minus(self, other):
        c = Counters()
        for f in self.FIELDS:
            setattr(c, f, getattr(self, f) - getattr(other, f))
        return c


class Cluster:
    """The caches of N nodes and of the shared tier; the state a run carries from one request to the next.

    Each node has two LRUs, by entry count, as thumbd has two budgets:
      - thumbs: the memory tier (`cache.memory.max_bytes`) and the disk tier (`cache.disk.max_bytes`) taken as one.
        A hit in either answers without a render; they differ in latency (µs against a disk read), not in what
        this model counts, and a disk hit is promoted to memory anyway. One LRU of the disk tier's size.
      - sources: the source originals (`cache.sources`, `cache.disk.sources_max_bytes`, plus the last 64 MB in
        memory). A thumbnail miss on a node that holds the source costs a render and no origin fetch.
    The 512 px intermediate (decoded pixels, `image.intermediate_cache_bytes`) is not modelled: it makes the
    second size of a *recent* source cheaper to render on the node that decoded it, so it favours the same routing
    as the source cache does, and it does not change the number of renders.

    shared: the S3 tier, one set of object keys for thumbnails and one for sources (a bucket is not an LRU:
    without a bound objects stay; with `shared_entries` the oldest PUT goes first, as a lifecycle rule that expires
    objects by age would do)."""

    def __init__(self, n_nodes, node_thumbs, node_sources, shared, shared_entries):
        self.thumbs = [OrderedDict() for _ in range(n_nodes)]
        self.sources = [OrderedDict() for _ in range(n_nodes)]
        self.node_thumbs = node_thumbs
        self.node_sources = node_sources
        self.shared = shared
        self.shared_entries = shared_entries  # 0: unbounded
        self.shared_thumbs = OrderedDict()  # insertion order = PUT order (FIFO when bounded)
        self.shared_sources = OrderedDict()
        self.counters = Counters()
        self.renders_by_node = [0] * n_nodes

    def copy(self):
        c = Cluster.__new__(Cluster)
        c.thumbs = [OrderedDict(d) for d in self.thumbs]
        c.sources = [OrderedDict(d) for d in self.sources]
        c.node_thumbs, c.node_sources = self.node_thumbs, self.node_sources
        c.shared, c.shared_entries = self.shared, self.shared_entries
        c.shared_thumbs = OrderedDict(self.shared_thumbs)
        c.shared_sources = OrderedDict(self.shared_sources)
        c.counters = self.counters.copy()
        c.renders_by_node = list(self.renders_by_node)
        return c

    def lose(self, node):
        """A node dies: its caches are gone (a replacement starts with an empty disk)."""
        self.thumbs[node] = OrderedDict()
        self.sources[node] = OrderedDict()


def run(cluster, nodes, srcs, variants):
    """Send requests through the cluster: request i asks for variant `variants[i]` of source `srcs[i]` and goes to
    node `nodes[i]` (the routing, decided beforehand). What each step stands for in thumbd is on its line; the
    shared tier's order is the issue's: memory -> disk -> shared tier -> coalesced fetch and render, one GET per
    lookup."""
    c = cluster.counters
    node_misses = shared_gets = shared_hits = renders = fetches = 0
    thumbs, sources = cluster.thumbs, cluster.sources
    cap_t, cap_s = cluster.node_thumbs, cluster.node_sources
    shared = cluster.shared
    sh_t, sh_s, sh_cap = cluster.shared_thumbs, cluster.shared_sources, cluster.shared_entries
    renders_by_node = cluster.renders_by_node
    for node, src, var in zip(nodes, srcs, variants):
        tc = thumbs[node]
        if var in tc:  # memory or disk hit on this node
            tc.move_to_end(var)
            continue
        node_misses += 1
        if shared:
            shared_gets += 1  # GET of the thumbnail's object
            if var in sh_t:  # shared-tier hit: no render, promoted to the node's tiers
                shared_hits += 1
                tc[var] = None
                if len(tc) > cap_t:
                    tc.popitem(last=False)
                continue
        # A render on this node (coalesced in thumbd; requests here come one at a time). It needs the source:
        renders += 1
        renders_by_node[node] += 1
        sc = sources[node]
        if src in sc:  # the node's source originals cache: no origin fetch
            sc.move_to_end(src)
        else:
            from_shared = False
            if shared:
                shared_gets += 1  # GET of the source's object
                if src in sh_s:
                    shared_hits += 1
                    from_shared = True
            if not from_shared:
                fetches += 1  # the origin is asked
                if shared:  # PUT of the source (If-None-Match: *), after the client's answer
                    sh_s[src] = None
                    if sh_cap and len(sh_s) > sh_cap:
                        sh_s.popitem(last=False)
            sc[src] = None  # kept on the node's disk as soon as it arrives
            if len(sc) > cap_s:
                sc.popitem(last=False)
        tc[var] = None  # the thumbnail is stored in memory and on disk
        if len(tc) > cap_t:
            tc.popitem(last=False)
        if shared and var not in sh_t:  # PUT of the thumbnail (a 412 if another node did it first: nothing)
            sh_t[var] = None
            if sh_cap and len(sh_t) > sh_cap:
                sh_t.popitem(last=False)
    c.requests += len(nodes)
    c.node_hits += len(nodes) - node_misses
    c.shared_gets += shared_gets
    c.shared_hits += shared_hits
    c.renders += renders
    c.fetches += fetches


def make_stream(args):
    """The requests, as two lists: source ids and variant ids (variant = source * sizes + size index).

    `--draw sources` (default): a source by Zipf rank, then a size by `--size-weights`; a page that shows an image
    asks for its sizes in the same proportions whatever the image. `--draw pairs`: Zipf over the (source, size)
    pairs themselves, ranks given to pairs in a seeded random order, so the sizes of one source are unrelated in
    popularity. Source ids are ranks: popularity has nothing to do with where a key hashes.

    Each request is drawn independently of the previous ones: nothing makes the sizes of a new image come
    together in time, as a page published with a `srcset` would. That is the worst case for a node's source cache
    (see --node-sources)."""
    rng = random.Random(args.seed)
    S, K = args.sources, args.sizes
    if args.draw == "sources":
        cum = list(itertools.accumulate(1.0 / (r ** args.zipf) for r in range(1, S + 1)))
        srcs = rng.choices(range(S), cum_weights=cum, k=args.requests)
        weights = args.size_weights or [1.0] * K
        sizes = rng.choices(range(K), weights=weights, k=args.requests)
        return srcs, [s * K + z for s, z in zip(srcs, sizes)]
    cum = list(itertools.accumulate(1.0 / (r ** args.zipf) for r in range(1, S * K + 1)))
    order = list(range(S * K))
    rng.shuffle(order)
    variants = [order[r] for r in rng.choices(range(S * K), cum_weights=cum, k=args.requests)]
    return [v // K for v in variants], variants


def owners(ring, ring_after, lost, hashes, keys):
    """Two lists indexed by key: its node on `ring`, and on `ring_after` (the same node unless it was `lost`)."""
    before, after = [0] * len(hashes), [0] * len(hashes)
    for k in keys:
        node = ring.owner(hashes[k])
        before[k] = node
        after[k] = node if node != lost else ring_after.owner(hashes[k])
    return before, after


def simulate(args, srcs, variants, n, key_hashes, d_src, d_var):
    """All the configurations for N = n: routings x shared tier off/on, each also with a node lost at the middle of
    the stream. Returns one result dict per configuration."""
    src_hashes, var_hashes = key_hashes
    R = len(srcs)
    half = R // 2
    lost = 0  # the node that dies: any one would do, each holds about 1/N of the ring
    ring = Ring(range(n), args.points)
    ring_after = ring.without(lost)

    # The owner of every key the stream asks for, before and after the loss: only the lost node's keys move.
    by_source, by_source_after = owners(ring, ring_after, lost, src_hashes, set(srcs))
    by_url, by_url_after = owners(ring, ring_after, lost, var_hashes, set(variants))

    # Each routing as the node of every request, before the loss and, for the second half, after it. The keys:
    #   source-hash: the `url` parameter (HAProxy `balance url_param url`, nginx `hash $arg_url consistent`);
    #   url-hash: the whole URI (`balance uri whole`, nginx `hash $request_uri consistent`): each size its own key;
    #   round-robin: no key (`balance roundrobin`; also what thumbor's and imgproxy's path forms get today).
    alive = list(range(1, n))
    routings = [
        ("source-hash", [by_source[s] for s in srcs], [by_source_after[s] for s in srcs[half:]]),
        ("url-hash", [by_url[v] for v in variants], [by_url_after[v] for v in variants[half:]]),
        ("round-robin", [i % n for i in range(R)], [alive[i % (n - 1)] for i in range(half, R)]),
    ]
    first_s, first_v, second_s, second_v = srcs[:half], variants[:half], srcs[half:], variants[half:]
    results = []
    for name, nodes, nodes_after in routings:
        for shared in (False, True):
            t0 = time.perf_counter()
            cl = Cluster(n, args.node_thumbs, args.node_sources, shared, args.shared_entries)
            run(cl, nodes[:half], first_s, first_v)
            mid = cl.counters.copy()
            other = cl.copy()  # the same cluster at the middle, about to lose a node
            run(cl, nodes[half:], second_s, second_v)
            other.lose(lost)
            run(other, nodes_after, second_s, second_v)
            busiest = (max(Counter(nodes).values()) * n / R,
                       max(cl.renders_by_node) * n / max(1, sum(cl.renders_by_node)))
            results.append(make_result(n, name, shared, cl.counters, cl.counters.minus(mid),
                                       other.counters.minus(mid), busiest, time.perf_counter() - t0, d_src, d_var))
    return results


def make_result(n, routing, shared, total, steady_second, lost_second, busiest, seconds, d_src, d_var):
    """One row: the whole run's figures, and the node loss's extra cost over the second half."""
    t = total
    node_misses = t.requests - t.node_hits
    return {
        "nodes": n,
        "routing": routing,
        "shared": shared,
        "requests": t.requests,
        "node_hit_ratio": t.node_hits / t.requests,
        # of the lookups the shared tier gets (a node's thumbnail miss, then the source when a render needs it)
        "shared_hit_ratio": (t.shared_hits / t.shared_gets) if t.shared_gets else None,
        "shared_gets_per_request": t.shared_gets / t.requests,
        "node_misses": node_misses,
        "origin_fetches": t.fetches,
        "renders": t.renders,
        "fetches_per_source": t.fetches / d_src,
        "renders_per_variant": t.renders / d_var,
        # the busiest node's requests and renders over the average node's: what a hot source does to its node
        "busiest_node_requests": busiest[0],
        "busiest_node_renders": busiest[1],
        # the node lost at the middle: what the second half cost more than the same half without the loss
        "lost_extra_fetches": lost_second.fetches - steady_second.fetches,
        "lost_extra_renders": lost_second.renders - steady_second.renders,
        "second_half_fetches": steady_second.fetches,
        "second_half_renders": steady_second.renders,
        "seconds": round(seconds, 2),
    }


def parse_floats(text):
    return [float(x) for x in text.split(",")] if text else None


# The defaults, and what they stand for:
# - 100,000 sources x 4 widths: a catalogue scaled down 100 times (a site with 10 million originals).
# - A node's caches, thumbd's default budgets scaled down by the same 100: `cache.memory.max_bytes` +
#   `cache.disk.max_bytes` (256 MB + 10 GB) of thumbnails at ~25 KB is ~410,000 of them -> 4,000; originals,
#   `cache.disk.sources_max_bytes` + the 64 MB in memory (2 GB + 64 MB) at ~500 KB (the peers' corpus of 208 photos
#   averages ~400 KB) is ~4,100 -> 40. A node thus holds
#   1 % of the catalogue's 400,000 variants: 10 nodes hold a tenth of it, 100 nodes all of it, 1,000 nodes ten times
#   it, the three regimes worth seeing. thumbd keeps 100 thumbnails for each original it keeps: originals are ~20
#   times larger and get a fifth of the bytes.
# - 500,000 requests: the same stream for every configuration, so that the rows differ by the routing and the tier
#   alone; it is the same traffic spread over more nodes: 50,000, 5,000 and 500 requests per node. From 100 nodes on
#   no node's cache fills, and every node miss is the first time that node is asked for the thing: the rows of a
#   cluster larger than its traffic needs. More requests raise every row's node hit ratio and, at 100 and 1,000 nodes,
#   round-robin's and the whole-URL key's fetches (more chances that a second node gets a key); the order of the
#   rows stays (checked at 1,000,000). Each request costs ~1 µs per configuration, and the run has to stay well under
#   a minute on a slow core: 500,000 takes ~20 s of CPU on the project's machine (`--requests` to change it).
# - Zipf s = 1.0 over sources, then one of the 4 sizes with equal odds: the top source gets ~8 % of the requests,
#   and each request is independent of the last (see make_stream).
def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", default="10,100,1000", help="comma-separated node counts (default 10,100,1000)")
    p.add_argument("--sources", type=int, default=100_000, help="catalogue: distinct source URLs (100,000)")
    p.add_argument("--sizes", type=int, default=4, help="sizes (widths) asked of each source (4)")
    p.add_argument("--size-weights", type=parse_floats, default=None,
                   help="relative popularity of the sizes, comma-separated (default: equal)")
    p.add_argument("--draw", choices=("sources", "pairs"), default="sources",
                   help="Zipf over sources then a size (default), or over (source, size) pairs")
    p.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent s (1.0)")
    p.add_argument("--requests", type=int, default=500_000, help="requests per configuration (500,000)")
    p.add_argument("--node-thumbs", type=int, default=4_000, help="thumbnails a node's cache holds (4,000)")
    p.add_argument("--node-sources", type=int, default=40, help="source originals a node's cache holds (40)")
    p.add_argument("--shared-entries", type=int, default=0,
                   help="objects of each kind the shared tier keeps, oldest PUT first (0: unbounded)")
    p.add_argument("--points", type=int, default=1600, help="ring points per node (1,600: HAProxy weight 100)")
    p.add_argument("--seed", type=int, default=1, help="random seed (1)")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = p.parse_args(argv)
    if args.size_weights and len(args.size_weights) != args.sizes:
        p.error("--size-weights needs one weight per size")
    node_counts = [int(x) for x in args.nodes.split(",")]
    if min(node_counts) < 2:
        p.error("--nodes: at least 2 (one is lost halfway)")

    t0 = time.perf_counter()
    srcs, variants = make_stream(args)
    d_src, d_var = len(set(srcs)), len(set(variants))  # what the stream asks for at least once
    # Where each key hashes, 48 bits (a ring point is 48 bits too): sources for the url parameter, variants for the
    # whole URL.
    key_hashes = ([mix64(SALT_SOURCE + s) >> 16 for s in range(args.sources)],
                  [mix64(SALT_VARIANT + v) >> 16 for v in range(args.sources * args.sizes)])
    rows = []
    for n in node_counts:
        rows.extend(simulate(args, srcs, variants, n, key_hashes, d_src, d_var))
    seconds = time.perf_counter() - t0
    if args.json:
        out = {"parameters": {k: v for k, v in vars(args).items() if k != "json"},
               "distinct_sources": d_src, "distinct_variants": d_var, "seconds": round(seconds, 1), "rows": rows}
        json.dump(out, sys.stdout, indent=1)
        print()
    else:
        print_table(args, rows, d_src, d_var, seconds)


def print_table(args, rows, d_src, d_var, seconds):
    print(f"{args.requests:,} requests per configuration, Zipf s={args.zipf} over {args.draw} "
          f"({args.sources:,} sources x {args.sizes} sizes); asked: {d_src:,} sources, {d_var:,} (source, size)")
    print(f"node cache: {args.node_thumbs:,} thumbnails + {args.node_sources:,} sources; shared tier: "
          f"{'unbounded' if not args.shared_entries else f'{args.shared_entries:,} objects of each kind'}; "
          f"{args.points:,} ring points per node; seed {args.seed}")
    print()
    print("| nodes | routing | shared tier | node hit | fetches/source | renders/variant | shared GETs/req "
          "| shared hit | busiest node: requests, renders | node lost: +fetches | +renders |")
    print("|" + "|".join("---" if i in (1, 2) else "---:" for i in range(11)) + "|")

    def extra(added, base):
        return f"{added:+,} ({100 * added / base:+.1f} %)" if base else f"{added:+,}"

    for r in rows:
        shared_hit = "-" if r["shared_hit_ratio"] is None else f"{100 * r['shared_hit_ratio']:.1f} %"
        gets = f"{r['shared_gets_per_request']:.3f}" if r["shared"] else "-"
        print(f"| {r['nodes']:,} | {r['routing']} | {'on' if r['shared'] else 'off'} "
              f"| {100 * r['node_hit_ratio']:.1f} % | {r['fetches_per_source']:.2f} | {r['renders_per_variant']:.2f} "
              f"| {gets} | {shared_hit} "
              f"| {r['busiest_node_requests']:.1f}x, {r['busiest_node_renders']:.1f}x "
              f"| {extra(r['lost_extra_fetches'], r['second_half_fetches'])} "
              f"| {extra(r['lost_extra_renders'], r['second_half_renders'])} |")
    print()
    print("node hit: requests answered by the node's own thumbnails (memory or disk). fetches/source: origin fetches "
          "over distinct sources asked;")
    print("renders/variant: renders over distinct (source, size) asked (1.00 is the floor of both). shared GETs/req: "
          "GETs per client request")
    print("(a node's thumbnail miss, then the source when a render needs it); shared hit: of those GETs. busiest node: "
          "its requests and")
    print("renders over the average node's. node lost: node 0 killed after half the requests, then what the second "
          "half cost more")
    print("than without the loss (in brackets: against that half's own fetches or renders).")
    print(f"({seconds:.0f} s)")


if __name__ == "__main__":
    main()
